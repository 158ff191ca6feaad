// RGMS: every order (fused, aggregate-first, transform-first, mixed), generated and
// interpreted, against the reference loops; the weight gradient and the input
// gradient (forward over the reversed relations with W transposed) against dense
// formulas; the inspector's owner tasks.
#include "sparse_compiler/ops/rgms.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <tuple>

#include "core/file_util.h"
#include "core/rng.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/formats/ell3d.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/tune/rgms_tuner.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

RelationalGraph make_graph(int64_t n, int rels, uint64_t seed, int64_t grain, int64_t cols = 0) {
  if (cols == 0) cols = n;
  std::vector<Graph> g;
  for (int r = 0; r < rels; ++r) {
    testing::RandomGraphSpec s;
    s.rows = n;
    s.cols = cols;
    s.avg_degree = 1 + r % 3;
    s.empty_row_fraction = 0.4;
    s.long_row_length = r == 1 ? n / 2 : 0;
    s.seed = seed + r;
    g.push_back(testing::random_graph(s));
  }
  return RelationalGraph::build(n, cols, g, RgmsNormalization::RightByRelation, grain);
}

Tensor transpose_weights(const Tensor& W) {
  const int64_t R = W.dim(0), fin = W.dim(1), fout = W.dim(2);
  Tensor T = Tensor::empty({R, fout, fin}, DType::F32);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t a = 0; a < fin; ++a)
      for (int64_t b = 0; b < fout; ++b) T.data<float>()[(r * fout + b) * fin + a] = W.data<float>()[(r * fin + a) * fout + b];
  return T;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  CloseReport rep = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(rep.ok) << what << ": " << rep.str();
}

class RgmsTest : public ::testing::TestWithParam<Backend> {};

// One task over a few long relations: the register-blocked transforms (blocks of
// pairs or sources of one relation, then a peeled remainder) run many full blocks,
// with int32 and int64 indices.
TEST(RgmsBlockedTest, BlockedTransformsMatchTheReferenceWithInt32AndInt64Indices) {
  for (DType idx : {DType::I32, DType::I64}) {
    RelationalGraph g = make_graph(301, 3, 4, int64_t{1} << 30);
    EXPECT_EQ(g.num_tasks, 1);
    if (idx == DType::I64) {
      g.index_dtype = DType::I64;
      for (Tensor* t : {&g.rel_rows, &g.col_ids, &g.src_ids, &g.jloc}) *t = t->cast(DType::I64);
    }
    Rng rng(5);
    for (auto [fin, fout] : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {32, 32}, {20, 33}, {8, 64}, {7, 1}}) {
      Tensor X = Tensor::uniform({g.cols, fin}, -1, 1, rng), W = Tensor::uniform({g.relations, fin, fout}, -1, 1, rng);
      Tensor want = Tensor::empty({g.rows, fout}, DType::F32);
      reference_rgms(g, X, W, want);
      for (RgmsOrder order : {RgmsOrder::Fused, RgmsOrder::AggregateFirst, RgmsOrder::TransformFirst}) {
        RgmsKernels k(g, {fin, fout, g.index_dtype}, order);
        if (fin == 16 && fout == 16 && host_vector_lanes() == 16) {  // 1 vector per row: blocks of 8 (AVX-512)
          EXPECT_NE(k.describe().find("rows per register block: fused 8, transform 8, source transform 8"),
                    std::string::npos)
              << k.describe();
        }
        if (fin == 7 && fout == 1) {  // no vectors: blocks all the same, refused nowhere
          EXPECT_NE(k.describe().find("fused 8, transform 8, source transform 8"), std::string::npos) << k.describe();
        }
        Tensor Y = Tensor::full({g.rows, fout}, DType::F32, NAN);
        k.forward(X, W, Y);
        expect_close(Y, want,
                     fmt::format("{} fin={} fout={} {}", rgms_order_name(order), fin, fout, dtype_name(idx)));
        // With software prefetch of X rows (the default only once X outgrows the
        // L2 cache): the prefetched positions run past each row and the last one.
        CpuKnobs knobs;
        knobs.vector_lanes = host_vector_lanes();
        knobs.prefetch = 5;
        RgmsKernels kp(g, {fin, fout, g.index_dtype}, order, Backend::Generated, knobs);
        Tensor Yp = Tensor::full({g.rows, fout}, DType::F32, NAN);
        kp.forward(X, W, Yp);
        expect_close(Yp, want,
                     fmt::format("{} prefetch fin={} fout={} {}", rgms_order_name(order), fin, fout, dtype_name(idx)));
      }
    }
  }
}

TEST_P(RgmsTest, EveryOrderMatchesTheReferenceAndGradientsMatchDenseFormulas) {
  const RelationalGraph g = make_graph(90, 5, 10, 32);
  EXPECT_GT(g.num_tasks, 1);
  Rng rng(2);
  for (const auto& sizes : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {16, 16}, {20, 33}}) {
    const int64_t fin = sizes.first, fout = sizes.second;  // captured below: no structured binding
    Tensor X = Tensor::uniform({g.cols, fin}, -1, 1, rng), W = Tensor::uniform({g.relations, fin, fout}, -1, 1, rng);
    Tensor want = Tensor::empty({g.rows, fout}, DType::F32);
    reference_rgms(g, X, W, want);
    const std::string dims = " fin=" + std::to_string(fin) + " fout=" + std::to_string(fout);
    for (RgmsOrder order : {RgmsOrder::Fused, RgmsOrder::AggregateFirst, RgmsOrder::TransformFirst,
                            RgmsOrder::AggregateFirstEll3d, RgmsOrder::Mixed}) {
      RgmsKernels k(g, {fin, fout, g.index_dtype}, order, GetParam());
      Tensor Y = Tensor::full({g.rows, fout}, DType::F32, NAN);
      k.forward(X, W, Y);
      expect_close(Y, want, std::string(rgms_order_name(order)) + dims);
      EXPECT_EQ(max_abs_diff(Y, [&] {
                  Tensor Z = Tensor::empty({g.rows, fout}, DType::F32);
                  k.forward(X, W, Z);
                  return Z;
                }()),
                0.0)
          << "deterministic";
    }
    // Gradients of sum(Y * dY): dW[r] = H_r^T dY, dX = sum_r A_r^T dY W_r^T.
    RgmsKernels k(g, {fin, fout, g.index_dtype}, RgmsOrder::Fused, GetParam());
    Tensor dY = Tensor::uniform({g.rows, fout}, -1, 1, rng);
    Tensor H = Tensor::empty({g.pairs, fin}, DType::F32), dW = Tensor::empty({g.relations, fin, fout}, DType::F32);
    k.aggregate(X, H);
    k.weight_grad(H, dY, dW);
    Tensor wdW = Tensor::zeros({g.relations, fin, fout}, DType::F32), wdX = Tensor::zeros({g.cols, fin}, DType::F32);
    for (int64_t r = 0; r < g.relations; ++r)
      for (int64_t q = g.rel_ptr.data<int64_t>()[r]; q < g.rel_ptr.data<int64_t>()[r + 1]; ++q) {
        const int64_t i = static_cast<int64_t>(g.rel_rows.item_as_double(q));
        for (int64_t p = g.row_ptr.data<int64_t>()[q]; p < g.row_ptr.data<int64_t>()[q + 1]; ++p) {
          const int64_t j = static_cast<int64_t>(g.col_ids.item_as_double(p));
          const double a = g.values.data<float>()[p];
          for (int64_t f = 0; f < fin; ++f)
            for (int64_t o = 0; o < fout; ++o) {
              wdW.data<float>()[(r * fin + f) * fout + o] += static_cast<float>(a * X.data<float>()[j * fin + f] * dY.data<float>()[i * fout + o]);
              wdX.data<float>()[j * fin + f] += static_cast<float>(a * dY.data<float>()[i * fout + o] * W.data<float>()[(r * fin + f) * fout + o]);
            }
        }
      }
    expect_close(dW, wdW, "weight grad" + dims);
    const RelationalGraph rev = g.reversed(32);
    RgmsKernels back(rev, {fout, fin, rev.index_dtype}, RgmsOrder::Fused, GetParam());
    Tensor dX = Tensor::empty({g.cols, fin}, DType::F32);
    back.forward(dY, transpose_weights(W), dX);
    expect_close(dX, wdX, "input grad" + dims);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RgmsTest, ::testing::Values(Backend::Generated, Backend::Interpreter),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

// A register-blocked transform peels the pairs that do not fill a block into a tail
// copy; its feature loops were vectorized at half the width (8 lanes on AVX-512)
// because the vectorizer mistook the copy's loop for the tail of its own split.
// Every kernel at 32 features on 16 lanes must use whole 16-lane vectors only.
TEST(RgmsCodegen, EveryKernelUsesFullWidthVectorsIncludingThePeeledTailPairs) {
  CpuKnobs knobs;
  knobs.vector_lanes = 16;
  for (const std::string& name : rgms_kernel_names()) {
    const RgmsCpuKernel k = rgms_cpu_kernel(name, RgmsSpec{32, 32, DType::I32}, knobs);
    const std::string source = emit_cpu_source({lower_schedule(k.scheduled)});
    const std::string body = source.substr(source.find("extern \"C\""));
    EXPECT_EQ(body.find("f32x8"), std::string::npos) << name << ":\n" << body;
    EXPECT_NE(body.find("f32x16"), std::string::npos) << name << ":\n" << body;
    if (name == "fused" || name == "transform" || name == "source_transform") {
      EXPECT_GT(k.block, 1) << name;
    }
  }
}

TEST(RelationalGraph, FromHeteroAndOwnerTasks) {
  HeteroGraph h;
  h.add_node_type("paper", 4);
  h.add_node_type("author", 3);
  h.add_relation("author", "writes", "paper",
                 Graph::from_coo(4, 3, Tensor::from_list<int64_t>({0, 0, 2, 3}), Tensor::from_list<int64_t>({0, 1, 1, 2})));
  h.add_inverse_relations();
  const RelationalGraph g = RelationalGraph::from_hetero(h, RgmsNormalization::RightByRelation, 1);
  EXPECT_EQ(g.rows, 7);
  EXPECT_EQ(g.relations, 2);
  EXPECT_EQ(g.nnz, 8);
  EXPECT_EQ(g.pairs, 3 + 3);  // papers 0, 2, 3 receive; authors 0, 1, 2 receive
  EXPECT_FLOAT_EQ(g.values.data<float>()[0], 0.5f);  // paper 0 has two authors
  // Tasks cover every row once; each relation's share is within its row list.
  EXPECT_EQ(g.task_rows.data<int64_t>()[0], 0);
  EXPECT_EQ(g.task_rows.data<int64_t>()[g.num_tasks], 7);
  for (int64_t r = 0; r < g.relations; ++r) {
    const int64_t* rt = g.rel_tasks.data<int64_t>() + r * (g.num_tasks + 1);
    EXPECT_EQ(rt[0], g.rel_ptr.data<int64_t>()[r]);
    EXPECT_EQ(rt[g.num_tasks], g.rel_ptr.data<int64_t>()[r + 1]);
  }
  EXPECT_EQ(g.relation_names[1], "paper-rev-writes->author");
}

// Relations of very different shapes, as in HGB's DBLP (a venue relation: 20
// sources, 14,328 destination rows): relation 0 reaches most rows from 3 sources
// (transform-first is cheaper), relation 1 reaches 4 rows from many sources (fused
// is cheaper), relation 2 is in between and random.
RelationalGraph make_skewed_graph(int64_t n, uint64_t seed, int64_t grain) {
  Rng rng(seed);
  std::vector<Graph> rels;
  for (int r = 0; r < 3; ++r) {
    std::vector<int64_t> dst, src;
    for (int64_t i = 0; i < n; ++i) {
      const bool receives = r == 0 ? i % 5 != 0 : r == 1 ? i % (n / 4) == 1 : rng.uniform() < 0.5;
      if (!receives) continue;
      const int64_t d = r == 1 ? n / 3 : 1 + static_cast<int64_t>(rng.uniform() * 3);
      for (int64_t e = 0; e < d; ++e) {
        dst.push_back(i);
        src.push_back(r == 0 ? static_cast<int64_t>(rng.uniform() * 3) : static_cast<int64_t>(rng.uniform() * n));
      }
    }
    CooOptions o;
    o.duplicates = DuplicatePolicy::Sum;
    rels.push_back(Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(src), o));
  }
  return RelationalGraph::build(n, n, rels, RgmsNormalization::RightByRelation, grain, {"few-sources", "few-rows", "random"});
}

RelationalGraph with_int64_indices(RelationalGraph g) {
  g.index_dtype = DType::I64;
  for (Tensor* t : {&g.rel_rows, &g.col_ids, &g.src_ids, &g.jloc}) *t = t->cast(DType::I64);
  return g;
}

TEST(RgmsMixedOrder, SplitsRelationsByTheirCostAndMatchesTheReference) {
  for (DType idx : {DType::I32, DType::I64}) {
    RelationalGraph g = make_skewed_graph(120, 3, 48);
    if (idx == DType::I64) g = with_int64_indices(g);
    ASSERT_GT(g.num_tasks, 1);
    const std::vector<bool> split = rgms_mixed_split(g, {16, 16, g.index_dtype});
    ASSERT_EQ(split.size(), 3u);
    EXPECT_TRUE(split[0]) << "3 sources for ~96 rows: transform-first";
    EXPECT_FALSE(split[1]) << "4 rows from ~100 sources: fused";
    Rng rng(9);
    for (auto [fin, fout] : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {3, 5}, {20, 33}}) {
      Tensor X = Tensor::uniform({g.cols, fin}, -1, 1, rng), W = Tensor::uniform({g.relations, fin, fout}, -1, 1, rng);
      Tensor want = Tensor::empty({g.rows, fout}, DType::F32);
      reference_rgms(g, X, W, want);
      for (Backend backend : {Backend::Generated, Backend::Interpreter}) {
        const std::string what =
            fmt::format("mixed fin={} fout={} {} {}", fin, fout, dtype_name(idx), backend_name(backend));
        RgmsKernels k(g, {fin, fout, g.index_dtype}, RgmsOrder::Mixed, backend);
        const std::vector<bool> s = rgms_mixed_split(g, {fin, fout, g.index_dtype});
        const int64_t tf = std::count(s.begin(), s.end(), true);
        EXPECT_NE(k.describe().find(fmt::format("mixed (fused on {} of 3 relations, transform-first on {})", 3 - tf, tf)),
                  std::string::npos)
            << k.describe();
        Tensor Y = Tensor::full({g.rows, fout}, DType::F32, NAN);  // every row written, none read first
        k.forward(X, W, Y);
        expect_close(Y, want, what);
        Tensor Z = Tensor::full({g.rows, fout}, DType::F32, 7.0f);
        k.forward(X, W, Z);
        EXPECT_EQ(max_abs_diff(Y, Z), 0.0) << what << ": deterministic";
      }
    }
  }
}

TEST(RgmsMixedOrder, OnePartAloneIsStillTheWholeSum) {
  // Only relation 0 (transform-first) or only relation 1 (fused): the mixed
  // order then runs one part, and rows no relation reaches are zero.
  const RelationalGraph g = make_skewed_graph(60, 5, 32);
  Rng rng(4);
  for (int64_t keep : {0, 1}) {
    const RelationalGraph one = g.subset({keep}, 32);
    EXPECT_EQ(one.relations, 1);
    EXPECT_EQ(one.relation_names, std::vector<std::string>{g.relation_names[static_cast<size_t>(keep)]});
    const int64_t fin = 16, fout = 16;
    EXPECT_EQ(rgms_mixed_split(one, {fin, fout, one.index_dtype}).front(), keep == 0);
    Tensor X = Tensor::uniform({g.cols, fin}, -1, 1, rng), W = Tensor::uniform({1, fin, fout}, -1, 1, rng);
    Tensor want = Tensor::empty({g.rows, fout}, DType::F32);
    reference_rgms(one, X, W, want);
    RgmsKernels k(one, {fin, fout, one.index_dtype}, RgmsOrder::Mixed);
    Tensor Y = Tensor::full({g.rows, fout}, DType::F32, NAN);
    k.forward(X, W, Y);
    expect_close(Y, want, "mixed with relation " + std::to_string(keep) + " only");
  }
}

TEST(RelationalGraph, SubsetKeepsEachRelationsArraysAndItsEdges) {
  const RelationalGraph g = make_graph(70, 4, 21, 16);
  const RelationalGraph s = g.subset({1, 3}, 16);
  const int64_t* rp = g.rel_ptr.data<int64_t>();
  const int64_t* qp = g.row_ptr.data<int64_t>();
  EXPECT_EQ(s.relations, 2);
  EXPECT_EQ(s.pairs, (rp[2] - rp[1]) + (rp[4] - rp[3]));
  EXPECT_EQ(s.nnz, (qp[rp[2]] - qp[rp[1]]) + (qp[rp[4]] - qp[rp[3]]));
  EXPECT_EQ(s.sources, (g.src_ptr.data<int64_t>()[2] - g.src_ptr.data<int64_t>()[1]) +
                           (g.src_ptr.data<int64_t>()[4] - g.src_ptr.data<int64_t>()[3]));
  // The subset's non-zeros are relation 1's then relation 3's, with their values
  // and input edge ids.
  for (int64_t p = 0; p < s.nnz; ++p) {
    const int64_t from = p < qp[rp[2]] - qp[rp[1]] ? qp[rp[1]] + p : qp[rp[3]] + p - (qp[rp[2]] - qp[rp[1]]);
    EXPECT_EQ(s.edge_ids.data<int64_t>()[p], g.edge_ids.data<int64_t>()[from]) << p;
    EXPECT_EQ(s.values.data<float>()[p], g.values.data<float>()[from]) << p;
    EXPECT_EQ(s.col_ids.item_as_double(p), g.col_ids.item_as_double(from)) << p;
  }
  // Owner tasks cover every row once.
  EXPECT_EQ(s.task_rows.data<int64_t>()[0], 0);
  EXPECT_EQ(s.task_rows.data<int64_t>()[s.num_tasks], g.rows);
  testing::expect_user_error([&] { (void)g.subset({2, 1}); }, {"relation 1 at position 1", "not increasing"});
  testing::expect_user_error([&] { (void)g.subset({4}); }, {"relation 4 at position 0", "out of range [0, 4)"});
}

// (relation, row, column, value, edge id) of every non-zero.
using NonZero = std::tuple<int64_t, int64_t, int64_t, float, int64_t>;
std::vector<NonZero> non_zeros(const RelationalGraph& g) {
  std::vector<NonZero> out;
  const int64_t* rp = g.rel_ptr.data<int64_t>();
  const int64_t* qp = g.row_ptr.data<int64_t>();
  for (int64_t r = 0; r < g.relations; ++r)
    for (int64_t q = rp[r]; q < rp[r + 1]; ++q)
      for (int64_t p = qp[q]; p < qp[q + 1]; ++p)
        out.emplace_back(r, static_cast<int64_t>(g.rel_rows.item_as_double(q)),
                         static_cast<int64_t>(g.col_ids.item_as_double(p)), g.values.data<float>()[p],
                         g.edge_ids.data<int64_t>()[p]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RelationalGraph, InNeighbourhoodAndInducedSubgraphMatchABruteForceWalk) {
  for (const bool wide : {false, true}) {
    SCOPED_TRACE(wide ? "int64 indices" : "int32 indices");
    RelationalGraph g = make_graph(200, 4, 33, 16);
    if (wide) g = with_int64_indices(g);
    const std::vector<NonZero> all = non_zeros(g);
    const std::vector<int64_t> seeds{17, 3, 17, 150};
    for (const int hops : {1, 2, 3}) {
      // The walk, one hop at a time over every non-zero.
      std::set<int64_t> field(seeds.begin(), seeds.end()), inner;
      for (int h = 0; h < hops; ++h) {
        if (h + 1 == hops) inner = field;
        std::set<int64_t> next = field;
        for (const NonZero& z : all)
          if (field.count(std::get<1>(z))) next.insert(std::get<2>(z));
        field = next;
      }
      std::vector<int64_t> got_inner;
      int64_t got_inner_nnz = -1;
      const std::vector<int64_t> got = g.in_neighbourhood(seeds, hops, &got_inner, &got_inner_nnz);
      EXPECT_EQ(got, std::vector<int64_t>(field.begin(), field.end())) << hops << " hops";
      EXPECT_EQ(got_inner, std::vector<int64_t>(inner.begin(), inner.end())) << hops << " hops";
      ASSERT_LT(got.size(), 200u) << "the test wants a field smaller than the graph";

      const RelationalGraph s = g.induced(got, got_inner, 8);
      EXPECT_EQ(s.rows, static_cast<int64_t>(got.size()));
      EXPECT_EQ(s.cols, s.rows);
      EXPECT_EQ(s.index_dtype, g.index_dtype);
      EXPECT_EQ(s.relations, g.relations);
      std::vector<NonZero> want;
      const auto pos = [&got](int64_t v) { return std::lower_bound(got.begin(), got.end(), v) - got.begin(); };
      for (const NonZero& z : all)
        if (inner.count(std::get<1>(z)) && field.count(std::get<2>(z)))
          want.emplace_back(std::get<0>(z), pos(std::get<1>(z)), pos(std::get<2>(z)), std::get<3>(z), std::get<4>(z));
      std::sort(want.begin(), want.end());
      EXPECT_EQ(non_zeros(s), want) << hops << " hops";
      // Rows inside the field keep every non-zero, so their normalisation is the whole graph's.
      int64_t whole_rows_nnz = 0;
      for (const NonZero& z : all) whole_rows_nnz += inner.count(std::get<1>(z));
      EXPECT_EQ(s.nnz, whole_rows_nnz);
      EXPECT_EQ(got_inner_nnz, whole_rows_nnz);
      // Each relation's source list is the set of its columns, and jloc points into it.
      const int64_t* sp = s.src_ptr.data<int64_t>();
      const int64_t* rp = s.rel_ptr.data<int64_t>();
      const int64_t* qp = s.row_ptr.data<int64_t>();
      for (int64_t r = 0; r < s.relations; ++r) {
        std::set<int64_t> cols;
        for (int64_t p = qp[rp[r]]; p < qp[rp[r + 1]]; ++p) {
          cols.insert(static_cast<int64_t>(s.col_ids.item_as_double(p)));
          EXPECT_EQ(s.src_ids.item_as_double(sp[r] + static_cast<int64_t>(s.jloc.item_as_double(p))),
                    s.col_ids.item_as_double(p));
        }
        EXPECT_EQ(sp[r + 1] - sp[r], static_cast<int64_t>(cols.size()));
      }
      EXPECT_EQ(s.task_rows.data<int64_t>()[s.num_tasks], s.rows);
      // Global columns: the same non-zeros with their sources' ids in g.
      const RelationalGraph wide_cols = s.with_column_ids(got, g.cols);
      EXPECT_EQ(wide_cols.rows, s.rows);
      EXPECT_EQ(wide_cols.cols, g.cols);
      std::vector<NonZero> want_global;
      for (const NonZero& z : want)
        want_global.emplace_back(std::get<0>(z), std::get<1>(z), got[static_cast<size_t>(std::get<2>(z))],
                                 std::get<3>(z), std::get<4>(z));
      std::sort(want_global.begin(), want_global.end());
      EXPECT_EQ(non_zeros(wide_cols), want_global) << hops << " hops";
      EXPECT_EQ(wide_cols.index_dtype, g.index_dtype);
      // jloc still points at each column in its relation's (renamed) sources.
      const int64_t* wsp = wide_cols.src_ptr.data<int64_t>();
      for (int64_t r = 0; r < wide_cols.relations; ++r)
        for (int64_t p = qp[rp[r]]; p < qp[rp[r + 1]]; ++p)
          EXPECT_EQ(wide_cols.src_ids.item_as_double(wsp[r] + static_cast<int64_t>(wide_cols.jloc.item_as_double(p))),
                    wide_cols.col_ids.item_as_double(p));
    }
  }
  const RelationalGraph g = make_graph(20, 2, 1, 64);
  testing::expect_user_error([&] { (void)g.in_neighbourhood({3, 20}, 2); }, {"node 20 is out of range [0, 20)"});
  testing::expect_user_error([&] { (void)g.in_neighbourhood({3}, 0); }, {"in-neighbourhood of 0 hops"});
  testing::expect_user_error([&] { (void)g.induced({4, 2}, {}); }, {"node 2 at position 1", "not increasing"});
  testing::expect_user_error([&] { (void)g.induced({2, 4}, {3}); }, {"row 3 at position 0", "not one of the nodes"});
  const RelationalGraph wide = make_graph(20, 2, 1, 64, 30);
  testing::expect_user_error([&] { (void)wide.induced({1}, {1}); }, {"20 x 30 graph (it must be square)"});
  testing::expect_user_error([&] { (void)g.with_column_ids({0, 1}, 5); }, {"2 column ids for a graph of 20 columns"});
  std::vector<int64_t> ids(20);
  for (int64_t k = 0; k < 20; ++k) ids[static_cast<size_t>(k)] = 2 * k;
  testing::expect_user_error([&] { (void)g.with_column_ids(ids, 30); }, {"column id 30 at position 15", "[0, 30)"});
}

TEST(RgmsTuner, MeasuresTheMixedOrderWhereRelationsDifferInShape) {
  const testing::ScopedCacheRoot cache("rgms-tuner-mixed");
  const RelationalGraph g = make_skewed_graph(150, 8, 64);
  const RgmsSpec spec{16, 16, g.index_dtype};
  ASSERT_EQ(rgms_default_order(g, spec), RgmsOrder::Mixed);
  const RgmsTuneResult t = tune_rgms(g, spec, false);
  ASSERT_EQ(t.measured_ms.size(), 5u);
  EXPECT_EQ(t.measured_ms.back().first, RgmsOrder::Mixed);
  EXPECT_GT(t.measured_ms.back().second, 0.0);
}

TEST(RgmsErrorTest, ArgumentsAreNamed) {
  const RelationalGraph g = make_graph(20, 2, 1, 64);
  RgmsKernels k(g, {4, 4, g.index_dtype}, RgmsOrder::Fused, Backend::Interpreter);
  Tensor X = Tensor::zeros({20, 4}, DType::F32), Y = Tensor::zeros({20, 4}, DType::F32);
  testing::expect_user_error([&] { k.forward(X, Tensor::zeros({3, 4, 4}, DType::F32), Y); },
                             {"rgms weights W", "expected shape [2, 4, 4]"});
  // A one-hot set builds embed and its gradient only, and says so when asked for more.
  RgmsKernels one_hot(g, {1, 4, g.index_dtype}, RgmsOrder::Fused, Backend::Interpreter, std::nullopt,
                      RgmsKernelSet::OneHot);
  EXPECT_EQ(one_hot.describe(), "rgms i1_o4_i32 one-hot input: embed and its gradient only (interpreter)");
  Tensor X1 = Tensor::zeros({20, 1}, DType::F32);
  testing::expect_user_error(
      [&] {
        one_hot.forward(X1, Tensor::zeros({2, 1, 4}, DType::F32), Y);
      },
      {"rgms: kernel fused was not built", "i1_o4_i32", "are the one-hot set (embed, embed_grad)"});
  testing::expect_user_error([] { parse_rgms_order("sideways", "model.rgms_order"); },
                             {"model.rgms_order", "unknown RGMS order 'sideways'", "or mixed"});
}



TEST(RgmsTuner, MeasuresEveryOrderAndReusesTheRecordOfTheSameCode) {
  // Records go to a private cache root, so other runs' records never interfere.
  const testing::ScopedCacheRoot cache("rgms-tuner");
  const RelationalGraph g = make_graph(200, 4, 30, 64);
  const RgmsSpec spec{8, 8, g.index_dtype};
  const RgmsTuneResult first = tune_rgms(g, spec);
  EXPECT_FALSE(first.from_record);
  // Four orders, and mixed where its split has relations each way.
  EXPECT_EQ(first.measured_ms.size(), rgms_default_order(g, spec) == RgmsOrder::Mixed ? 5u : 4u);
  double best = 1e30;
  for (const auto& [o, ms] : first.measured_ms) best = std::min(best, ms);
  for (const auto& [o, ms] : first.measured_ms)
    if (o == first.chosen) {
      EXPECT_DOUBLE_EQ(ms, best);
    }
  // The record names the generated code it was measured on (every order runs
  // kernels of one batch, so they share one code key)...
  ASSERT_TRUE(fs::exists(first.record_file)) << first.record_file;
  const std::string code = RgmsKernels(g, spec, RgmsOrder::Fused).code_key();
  EXPECT_EQ(code, RgmsKernels(g, spec, RgmsOrder::TransformFirst).code_key());
  EXPECT_NE(read_file(first.record_file).find("code " + code), std::string::npos);
  // ... which differs when the code does (here: a prefetch distance compiled in).
  CpuKnobs knobs;
  knobs.vector_lanes = host_vector_lanes();
  knobs.prefetch = 7;
  EXPECT_NE(RgmsKernels(g, spec, RgmsOrder::Fused, Backend::Generated, knobs).code_key(), code);
  const RgmsTuneResult second = tune_rgms(g, spec);
  EXPECT_TRUE(second.from_record);
  EXPECT_EQ(second.chosen, first.chosen);
  EXPECT_TRUE(second.measured_ms.empty());
  EXPECT_EQ(second.record_file, first.record_file);
}

TEST(Ell3d, EveryNonZeroInExactlyOneSlotAndPiecesStayWithTheirPair) {
  const RelationalGraph g = make_graph(120, 3, 50, 16);
  const InspectedEll3d e = inspect_ell3d(g, 2, 16);  // widths 1, 2, 4: long pairs split
  std::vector<int> seen(static_cast<size_t>(g.nnz), 0);
  for (const auto& b : e.buckets) {
    for (int64_t s = 0; s < b.slots; ++s) {
      const int64_t id = static_cast<int64_t>(b.eid.item_as_double(s));
      if (id >= 0) ++seen[id];
      // A real slot's edge belongs to its ELL row's pair.
      const int64_t pair = static_cast<int64_t>(b.pairs.item_as_double(s / b.width));
      if (id >= 0) {
        EXPECT_TRUE(g.row_ptr.data<int64_t>()[pair] <= id && id < g.row_ptr.data<int64_t>()[pair + 1]);
      }
    }
    // Each relation's task ranges cover its ELL rows in order.
    for (int64_t r = 0; r < g.relations; ++r)
      for (int64_t t = 0; t < e.num_tasks; ++t)
        EXPECT_LE(b.tasks.data<int64_t>()[r * (e.num_tasks + 1) + t], b.tasks.data<int64_t>()[r * (e.num_tasks + 1) + t + 1]);
  }
  for (int64_t p = 0; p < g.nnz; ++p) ASSERT_EQ(seen[p], 1) << "non-zero " << p;
  EXPECT_GE(e.slots(), g.nnz);
}



TEST_P(RgmsTest, OneHotInputGathersWeightRowsAndItsGradientScattersThem) {
  const RelationalGraph g = make_graph(60, 3, 70, 16);
  const RelationalGraph rev = g.reversed(16);
  const int64_t F = 9;
  Rng rng(3);
  Tensor W = Tensor::uniform({g.relations, g.cols, F}, -1, 1, rng), dY = Tensor::uniform({g.rows, F}, -1, 1, rng);
  RgmsKernels k(g, {1, F, g.index_dtype}, RgmsOrder::Fused, GetParam());
  // The gradient's kernels as the layers build them: the one-hot set only.
  RgmsKernels kr(rev, {1, F, rev.index_dtype}, RgmsOrder::Fused, GetParam(), std::nullopt, RgmsKernelSet::OneHot);
  Tensor Y = Tensor::empty({g.rows, F}, DType::F32), dW = Tensor::full({g.relations, g.cols, F}, DType::F32, NAN);
  k.forward_embed(W, Y);
  kr.embed_grad(dY, dW);
  Tensor wY = Tensor::zeros({g.rows, F}, DType::F32), wdW = Tensor::zeros({g.relations, g.cols, F}, DType::F32);
  for (int64_t r = 0; r < g.relations; ++r)
    for (int64_t q = g.rel_ptr.data<int64_t>()[r]; q < g.rel_ptr.data<int64_t>()[r + 1]; ++q) {
      const int64_t i = static_cast<int64_t>(g.rel_rows.item_as_double(q));
      for (int64_t p = g.row_ptr.data<int64_t>()[q]; p < g.row_ptr.data<int64_t>()[q + 1]; ++p) {
        const int64_t j = static_cast<int64_t>(g.col_ids.item_as_double(p));
        const float a = g.values.data<float>()[p];
        for (int64_t f = 0; f < F; ++f) {
          wY.data<float>()[i * F + f] += a * W.data<float>()[(r * g.cols + j) * F + f];
          wdW.data<float>()[(r * g.cols + j) * F + f] += a * dY.data<float>()[i * F + f];
        }
      }
    }
  expect_close(Y, wY, "embed forward");
  expect_close(dW, wdW, "embed grad");
}

// One-hot input with bases: the composed rows, gathered, against W_r = sum_b C[r,b] V_b
// composed densely in float64; the gradients of C and V against the float64 chain
// rule through that composition. On the skewed graph (a relation with 3 sources, one
// with 4 rows) and on a graph with empty rows and 250 columns for 70 rows, int32 and int64, outputs pre-filled
// with NaN; every column of V no relation reads gets a zero gradient.
TEST_P(RgmsTest, BasisEmbeddingComposesOnlyTheRowsRelationsReadAndItsGradientsMatchDenseFormulas) {
  for (int shape = 0; shape < 2; ++shape)
    for (DType idx : {DType::I32, DType::I64}) {
      RelationalGraph g = shape == 0 ? make_skewed_graph(90, 5, 32) : make_graph(70, 4, 11, 24, 250);
      if (idx == DType::I64) g = with_int64_indices(g);
      RelationalGraph rev = g.reversed(24);
      if (idx == DType::I64) rev = with_int64_indices(rev);
      ASSERT_EQ(rev.pairs, g.sources);
      const int64_t B = 3, F = shape == 0 ? 16 : 9, R = g.relations, N = g.cols;
      Rng rng(21 + shape);
      const Tensor C = Tensor::uniform({R, B}, -1, 1, rng), V = Tensor::uniform({B, N, F}, -1, 1, rng);
      const Tensor dY = Tensor::uniform({g.rows, F}, -1, 1, rng);
      RgmsKernels k(g, {B, F, g.index_dtype}, RgmsOrder::Fused, GetParam(), std::nullopt, RgmsKernelSet::BasisGather);
      RgmsKernels kr(rev, {B, F, rev.index_dtype}, RgmsOrder::Fused, GetParam(), std::nullopt,
                     RgmsKernelSet::BasisPairs);
      Tensor Y = Tensor::full({g.rows, F}, DType::F32, NAN), dC = Tensor::full({R, B}, DType::F32, NAN),
             dV = Tensor::full({B, N, F}, DType::F32, NAN);
      Tensor T = Tensor::full({rev.pairs, F}, DType::F32, NAN);
      kr.basis_rows(C, V, T);
      k.gather(T, Y);
      kr.basis_embed_grad(C, V, dY, dC, dV);
      // Dense float64: W_r = sum_b C[r,b] V_b; Y = sum_r A_r W_r; dW_r = A_r^T dY;
      // dV_b = sum_r C[r,b] dW_r; dC[r,b] = <dW_r, V_b>.
      const float* c = C.data<float>();
      const float* v = V.data<float>();
      std::vector<double> W(static_cast<size_t>(R * N * F), 0.0), dW(W.size(), 0.0);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t x = 0; x < N * F; ++x) W[r * N * F + x] += double(c[r * B + b]) * v[b * N * F + x];
      std::vector<double> wY(static_cast<size_t>(g.rows * F), 0.0);
      std::vector<bool> read(static_cast<size_t>(N), false);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t q = g.rel_ptr.data<int64_t>()[r]; q < g.rel_ptr.data<int64_t>()[r + 1]; ++q) {
          const int64_t i = static_cast<int64_t>(g.rel_rows.item_as_double(q));
          for (int64_t p = g.row_ptr.data<int64_t>()[q]; p < g.row_ptr.data<int64_t>()[q + 1]; ++p) {
            const int64_t j = static_cast<int64_t>(g.col_ids.item_as_double(p));
            const double a = g.values.data<float>()[p];
            read[static_cast<size_t>(j)] = true;
            for (int64_t f = 0; f < F; ++f) {
              wY[i * F + f] += a * W[(r * N + j) * F + f];
              dW[(r * N + j) * F + f] += a * dY.data<float>()[i * F + f];
            }
          }
        }
      std::vector<double> wdV(static_cast<size_t>(B * N * F), 0.0), wdC(static_cast<size_t>(R * B), 0.0);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t x = 0; x < N * F; ++x) {
            wdV[b * N * F + x] += c[r * B + b] * dW[r * N * F + x];
            wdC[r * B + b] += dW[r * N * F + x] * v[b * N * F + x];
          }
      auto as_tensor = [](const std::vector<double>& d, Shape shape) {
        Tensor t = Tensor::empty(std::move(shape), DType::F32);
        for (size_t x = 0; x < d.size(); ++x) t.data<float>()[x] = static_cast<float>(d[x]);
        return t;
      };
      const std::string what = fmt::format("graph {} {}", shape, dtype_name(idx));
      expect_close(Y, as_tensor(wY, {g.rows, F}), what + " forward");
      expect_close(dV, as_tensor(wdV, {B, N, F}), what + " dV");
      expect_close(dC, as_tensor(wdC, {R, B}), what + " dC");
      int64_t unread = 0;
      for (int64_t j = 0; j < N; ++j)
        if (!read[static_cast<size_t>(j)]) {
          ++unread;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t f = 0; f < F; ++f)
              ASSERT_EQ(dV.data<float>()[(b * N + j) * F + f], 0.0f) << what << " column " << j;
        }
      if (shape == 1) {
        EXPECT_GT(unread, 0) << "the graph should leave some columns unread";
      }
      // The graph-side set builds only the gather.
      Tensor dW2 = Tensor::empty({R, B, F}, DType::F32);
      testing::expect_user_error(
          [&] {
            k.weight_grad(Tensor::empty({g.pairs, B}, DType::F32), dY, dW2);
          },
          {"rgms: kernel weight_grad was not built", "basis gather set (gather)"});
    }
}

// The layers' sets: Forward compiles the order's forward kernels only and gives the
// full set's forward output bit for bit, in every order, refusing the gradients by
// name; Training adds aggregate and weight_grad, bit for bit too. Embed and
// BasisRows build one kernel each.
TEST(RgmsKernelSets, ForwardOnlySetsMatchTheFullSetsAndBuildNothingElse) {
  const RelationalGraph g = make_skewed_graph(90, 5, 32);
  const int64_t fin = 12, fout = 8;
  Rng rng(31);
  const Tensor X = Tensor::uniform({g.cols, fin}, -1, 1, rng),
               W = Tensor::uniform({g.relations, fin, fout}, -1, 1, rng);
  for (RgmsOrder order : {RgmsOrder::Fused, RgmsOrder::AggregateFirst, RgmsOrder::TransformFirst,
                          RgmsOrder::AggregateFirstEll3d, RgmsOrder::Mixed}) {
    RgmsKernels all(g, {fin, fout, g.index_dtype}, order);
    RgmsKernels fwd(g, {fin, fout, g.index_dtype}, order, Backend::Generated, std::nullopt, RgmsKernelSet::Forward);
    Tensor Y1 = Tensor::full({g.rows, fout}, DType::F32, NAN), Y2 = Tensor::full({g.rows, fout}, DType::F32, NAN);
    all.forward(X, W, Y1);
    fwd.forward(X, W, Y2);
    const CloseReport rep = all_close(Y2, Y1, 0, 0);
    EXPECT_TRUE(rep.ok) << rgms_order_name(order) << ": " << rep.str();
    EXPECT_NE(fwd.describe().find("forward kernels only"), std::string::npos) << fwd.describe();
    Tensor H = Tensor::zeros({g.pairs, fin}, DType::F32), dW = Tensor::empty({g.relations, fin, fout}, DType::F32);
    testing::expect_user_error(
        [&] {
          fwd.weight_grad(H, Tensor::zeros({g.rows, fout}, DType::F32), dW);
        },
        {"kernel weight_grad was not built", "forward set (the order's forward kernels only)"});
    // Training adds the weight gradient's two kernels, with the full set's results.
    RgmsKernels train(g, {fin, fout, g.index_dtype}, order, Backend::Generated, std::nullopt, RgmsKernelSet::Training);
    const Tensor dY = Tensor::uniform({g.rows, fout}, -1, 1, rng);
    Tensor Y3 = Tensor::full({g.rows, fout}, DType::F32, NAN), H1 = H.clone(), H2 = H.clone();
    Tensor dW1 = Tensor::full({g.relations, fin, fout}, DType::F32, NAN), dW2 = dW1.clone();
    train.forward(X, W, Y3);
    all.aggregate(X, H1);
    all.weight_grad(H1, dY, dW1);
    train.aggregate(X, H2);
    train.weight_grad(H2, dY, dW2);
    for (const auto& [got, want, what] : {std::tuple{Y3, Y1, "Y"}, {dW2, dW1, "dW"}}) {
      const CloseReport r = all_close(got, want, 0, 0);
      EXPECT_TRUE(r.ok) << rgms_order_name(order) << " training set " << what << ": " << r.str();
    }
  }
  RgmsKernels embed(g, {1, fout, g.index_dtype}, RgmsOrder::Fused, Backend::Generated, std::nullopt,
                    RgmsKernelSet::Embed);
  EXPECT_EQ(embed.describe(), "rgms i1_o8_i32 one-hot input: embed only (generated)");
  const RelationalGraph rev = g.reversed(32);
  RgmsKernels rows(rev, {3, fout, rev.index_dtype}, RgmsOrder::Fused, Backend::Generated, std::nullopt,
                   RgmsKernelSet::BasisRows);
  Tensor C = Tensor::zeros({g.relations, 3}, DType::F32), V = Tensor::zeros({3, g.cols, fout}, DType::F32);
  Tensor dC = C.clone(), dV = V.clone();
  testing::expect_user_error(
      [&] {
        rows.basis_embed_grad(C, V, Tensor::zeros({g.rows, fout}, DType::F32), dC, dV);
      },
      {"kernel pair_sum was not built", "basis rows set (basis_rows)"});
}

}  // namespace
}  // namespace strata::sc
