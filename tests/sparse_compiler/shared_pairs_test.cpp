// Shared neighbour pairs. The inspector (sparse_compiler/formats/shared_pairs.h): every
// rewritten row stands for exactly the columns of its row of A, copies of a column included;
// sums read only ids of earlier rounds; rows list their columns, then their sums, ascending;
// the rewrite gathers fewer rows than A has non-zeros wherever it sums a pair; the same
// rewrite on one thread and on several; its refusals name the option. The SpMM over it
// (ops/shared_pairs_spmm.h, plans with pair rounds) matches the dense reference on every edge
// case and on graphs with shared neighbourhoods, and refuses what a sum cannot stand for.
#include "sparse_compiler/formats/shared_pairs.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>

#include "core/parallel.h"
#include "core/rng.h"
#include "sparse_compiler/ops/shared_pairs_spmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/tune/search_space.h"
#include "sparse_compiler/tune/tuner.h"
#include "tests/sparse_compiler/edge_case_graphs.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

std::vector<int64_t> row_of(const Graph& A, int64_t i) {
  std::vector<int64_t> out;
  for (int64_t k = A.indptr_data()[i]; k < A.indptr_data()[i + 1]; ++k)
    out.push_back(A.index_dtype() == DType::I64 ? A.indices().data<int64_t>()[k] : A.indices().data<int32_t>()[k]);
  std::sort(out.begin(), out.end());
  return out;
}

// Rows that share neighbourhoods: each row takes most of one of a few column groups, some
// random columns, and now and then a column twice (a multigraph).
Graph communities(bool int64, uint64_t seed) {
  Rng rng(seed);
  std::vector<int64_t> r, c;
  const int64_t rows = 400, cols = 300;
  for (int64_t i = 0; i < rows; ++i) {
    if (i % 37 == 5) continue;  // empty rows
    const int64_t group = static_cast<int64_t>(rng.below(4)) * 40;
    for (int64_t j = group; j < group + 24; ++j)
      if (!testing::one_in(rng, 5)) {
        r.push_back(i);
        c.push_back(j);
      }
    for (int k = 0; k < 6; ++k) {
      r.push_back(i);
      c.push_back(static_cast<int64_t>(rng.below(cols)));
    }
    if (testing::one_in(rng, 3)) {
      r.push_back(i);
      c.push_back(c.back());
    }
  }
  CooOptions o;
  o.force_int64 = int64;
  return Graph::from_coo(rows, cols, Tensor::from_vector(r), Tensor::from_vector(c), o);
}

void expect_rewrite_of(const Graph& A, const SharedPairs& s, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(s.indptr.size()), s.row_end - s.row_begin + 1) << what;
  ASSERT_EQ(s.pair_a.size(), s.pair_b.size()) << what;
  // A sum reads X or sums of earlier rounds only.
  for (int64_t r = 0; r < s.rounds(); ++r)
    for (int64_t k = s.round_begin[r]; k < s.round_begin[r + 1]; ++k)
      for (int64_t id : {s.pair_a[k], s.pair_b[k]}) ASSERT_LT(id, s.cols + s.round_begin[r]) << what << ", sum " << k;
  for (int64_t i = 0; i + 1 < static_cast<int64_t>(s.indptr.size()); ++i) {
    ASSERT_EQ(expand_shared_row(s, i), row_of(A, s.row_begin + i)) << what << ", row " << s.row_begin + i;
    const auto b = s.indices.begin() + s.indptr[i], e = s.indices.begin() + s.indptr[i + 1];
    ASSERT_TRUE(std::is_sorted(b, e)) << what << ", row " << i;
    const int64_t first_sum = std::lower_bound(b, e, s.cols) - s.indices.begin();
    ASSERT_EQ(s.first_sum[i], first_sum) << what << ", row " << i;
  }
}

TEST(SharedPairs, RewrittenRowsStandForTheirColumnsAndGatherLess) {
  for (bool int64 : {false, true}) {
    const Graph A = communities(int64, 3);
    SharedPairsOptions o;
    const SharedPairs s = find_shared_pairs(A, 0, A.num_rows(), o);
    expect_rewrite_of(A, s, int64 ? "int64" : "int32");
    EXPECT_GE(s.rounds(), 2);
    EXPECT_GT(s.sums(), 20);
    // Every sum is read by at least min_rows rows or later sums when it is made, so the
    // rewrite reads well under A's non-zeros (this graph: about half).
    EXPECT_LT(s.gathers(), A.nnz() * 3 / 4) << s.gathers() << " of " << A.nnz();
    // Row ranges: each share of the rows gets its own sums.
    const SharedPairs lo = find_shared_pairs(A, 0, 150, o), hi = find_shared_pairs(A, 150, A.num_rows(), o);
    expect_rewrite_of(A, lo, "rows 0-150");
    expect_rewrite_of(A, hi, "rows 150-400");
  }
}

TEST(SharedPairs, EdgeCaseGraphsAndOptionsThatFindNothing) {
  for (bool int64 : {false, true})
    for (const auto& gc : testing::edge_case_graphs(int64)) {
      SharedPairsOptions o;
      o.min_rows = 3;
      expect_rewrite_of(gc.g, find_shared_pairs(gc.g, 0, gc.g.num_rows(), o), gc.name);
      o.rounds = 0;  // the rows as they are
      const SharedPairs s = find_shared_pairs(gc.g, 0, gc.g.num_rows(), o);
      expect_rewrite_of(gc.g, s, gc.name + ", no rounds");
      EXPECT_EQ(s.sums(), 0);
      EXPECT_EQ(s.gathers(), gc.g.nnz());
    }
  const Graph A = communities(false, 4);
  SharedPairsOptions o;
  o.min_rows = 1000;  // more rows than the graph has
  const SharedPairs s = find_shared_pairs(A, 0, A.num_rows(), o);
  EXPECT_EQ(s.rounds(), 0);
  EXPECT_EQ(s.gathers(), A.nnz());
  expect_rewrite_of(A, find_shared_pairs(A, 7, 7, SharedPairsOptions{}), "no rows");
}

TEST(SharedPairs, SameRewriteOnOneThreadAndOnSeveral) {
  const Graph A = communities(false, 5);
  SharedPairsOptions o;
  o.scan = 16;
  o.max_keys = 20000;  // makes the scan halve on this graph
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const SharedPairs one = find_shared_pairs(A, 0, A.num_rows(), o);
  omp_set_num_threads(3);
  const SharedPairs three = find_shared_pairs(A, 0, A.num_rows(), o);
  omp_set_num_threads(before);
  EXPECT_GT(one.sums(), 0);
  EXPECT_EQ(one.pair_a, three.pair_a);
  EXPECT_EQ(one.pair_b, three.pair_b);
  EXPECT_EQ(one.round_begin, three.round_begin);
  EXPECT_EQ(one.indices, three.indices);
  expect_rewrite_of(A, one, "scan 16");
}

TEST(SharedPairs, RefusalsNameTheOption) {
  const Graph A = communities(false, 6);
  SharedPairsOptions o;
  o.min_rows = 2;
  testing::expect_user_error([&] { find_shared_pairs(A, 0, A.num_rows(), o); },
                             {"shared pairs: min_rows is 2, expected at least 3"});
  o = {};
  o.rounds = -1;
  testing::expect_user_error([&] { find_shared_pairs(A, 0, A.num_rows(), o); },
                             {"shared pairs: rounds is -1, expected 0 or more"});
  o = {};
  o.scan = 1;
  testing::expect_user_error([&] { find_shared_pairs(A, 0, A.num_rows(), o); },
                             {"shared pairs: scan is 1, expected at least 2"});
  testing::expect_user_error([&] { find_shared_pairs(A, 10, 5, SharedPairsOptions{}); },
                             {"shared pairs: rows [10, 5) are not a range of the graph's 400 rows"});
  const SharedPairs s = find_shared_pairs(A, 0, 3, SharedPairsOptions{});
  testing::expect_user_error([&] { expand_shared_row(s, 3); },
                             {"shared pairs: row 3 is not one of the 3 covered rows"});
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  const CloseReport r = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(r.ok) << what << ": " << r.str();
}

class SharedPairsSpmmTest : public ::testing::TestWithParam<bool> {};

TEST_P(SharedPairsSpmmTest, MatchesDenseReferenceWithTheKnobsOfCsr) {
  const bool int64 = GetParam();
  std::vector<testing::GraphCase> graphs = testing::edge_case_graphs(int64);
  graphs.push_back({"communities", communities(int64, 7)});
  Rng rng(31);
  int rewritten = 0;
  for (const auto& gc : graphs)
    for (int64_t F : {1, 7, 16, 33, 64}) {
      for (int variant = 0; variant < 4; ++variant) {  // sum, mean, row-scaled, row- and column-scaled
        SpmmOptions o;
        o.feat = F;
        o.reduce = variant == 1 ? Reduce::Mean : Reduce::Sum;
        if (variant >= 2) o.row_scale = Tensor::uniform({gc.g.num_rows()}, 0.5, 2.0, rng);
        if (variant == 3) o.col_scale = Tensor::uniform({gc.g.num_cols()}, 0.5, 2.0, rng);
        SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(gc.g, o));
        plan.pair_rounds = 1 + (F % 4);
        plan.pair_min_rows = 3;
        plan.knobs.grain = 64;  // many tasks even on small graphs
        plan.knobs.prefetch = F % 2 ? 0 : 8;
        plan.knobs.static_tasks = variant == 1;
        plan.knobs.accumulator_sets = F == 7 ? 2 : 1;
        plan.knobs.stream_stores = F % plan.knobs.vector_lanes == 0 && variant == 0;
        plan.feature_tile = F == 64 && variant == 2 ? 16 : 0;
        o.plan = plan;
        const SpmmKernel k(gc.g, o);
        ASSERT_NE(k.shared_pairs(), nullptr);
        rewritten += k.shared_pairs()->sums() > 0;
        const std::string what =
            gc.name + " F=" + std::to_string(F) + " " + plan.str() + " variant " + std::to_string(variant);
        // Twice: a second call must not see the first one's sums.
        for (int call = 0; call < 2; ++call) {
          const Tensor X = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
          const Tensor Y = k.run(X);
          expect_close(Y, testing::reference_spmm(gc.g, X, Tensor(), o.row_scale, o.col_scale, variant == 1), what);
        }
      }
    }
  // The communities and the long row are rewritten at every feature size and variant.
  EXPECT_GE(rewritten, 2 * 5 * 4);
}

// The parts are fixed when the kernel is built; run on fewer threads (a limit set since),
// one thread takes several parts, and on more, the extra threads idle.
TEST_P(SharedPairsSpmmTest, PartsBuiltForSomeThreadsRunOnFewerAndMore) {
  const Graph A = communities(GetParam(), 10);
  const int before = num_threads();
  set_num_threads(3);
  SpmmOptions o;
  o.feat = 16;
  o.reduce = Reduce::Mean;
  SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(A, o));
  plan.pair_rounds = 3;
  o.plan = plan;
  const SpmmKernel k(A, o);
  ASSERT_EQ(k.shared_pairs()->parts().size(), 3u);
  Rng rng(13);
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    const Tensor X = Tensor::uniform({A.num_cols(), 16}, -1, 1, rng);
    expect_close(k.run(X), testing::reference_spmm(A, X, Tensor(), Tensor(), Tensor(), true),
                 "threads " + std::to_string(threads));
  }
  set_num_threads(before);
}

TEST_P(SharedPairsSpmmTest, PlansRoundTripAndRefuseWhatASumCannotStandFor) {
  const Graph A = communities(GetParam(), 8);
  SpmmOptions o;
  o.feat = 16;
  SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(A, o));
  plan.pair_rounds = 3;
  plan.pair_min_rows = 5;
  EXPECT_EQ(SpmmPlan::from_json(plan.to_json()), plan);
  EXPECT_NE(plan.str().find(",pairs=r3m5"), std::string::npos) << plan.str();
  EXPECT_NE(plan.to_json().find("\"pair_rounds\":3,\"pair_min_rows\":5"), std::string::npos) << plan.to_json();
  SpmmPlan off = plan;
  off.pair_rounds = 0;
  EXPECT_EQ(off.to_json().find("pair"), std::string::npos) << "plans without pairs read as before";
  testing::expect_user_error([&] { SpmmPlan::from_json(R"({"format": "csr", "pair_rounds": 2, "pair_min_rows": 2})"); },
                             {"'pair_min_rows' must be in [3,"});
  o.plan = plan;
  o.weighted = true;
  testing::expect_user_error([&] { SpmmKernel(A.with_values(Tensor::zeros({A.nnz()}, DType::F32)), o); },
                             {"spmm plan: a shared pair sums two edges into one", "has edge values"});
  o.weighted = false;
  o.plan->format = FormatSpec::parse("ell:w=4", "test");
  testing::expect_user_error([&] { SpmmKernel(A, o); },
                             {"spmm plan: shared pairs (pairs=r3m5) apply to csr, not ell:w=4"});
  o.plan->format = FormatSpec{};
  o.plan->x_layout = DenseLayout::parse("panel:8", "test");
  testing::expect_user_error([&] { SpmmKernel(A, o); },
                             {"spmm plan: shared pairs read X row-major, not in layout panel:8"});
}

// Where rows average 8 non-zeros or more, the default space holds shared-pairs plans for an
// unweighted SpMM (none for a weighted one, nor on short rows), and the tuner measures the
// best-placed one, checked against the reference like every candidate.
TEST(SharedPairsTuning, TheTunerMeasuresAPairsPlanWhereRowsAreLong) {
  testing::ScopedCacheRoot cache("shared-pairs-tuning");
  const Graph A = communities(false, 9);
  const GraphFingerprint g = GraphFingerprint::of(A);
  SpmmSpec spec;
  spec.feat = 16;
  const auto count_pairs = [](const std::vector<KernelPlan>& space) {
    return std::count_if(space.begin(), space.end(), [](const KernelPlan& p) { return p.pair_rounds > 0; });
  };
  EXPECT_GT(count_pairs(spmm_search_space(g, spec, 16, false, false)), 0);
  SpmmSpec weighted = spec;
  weighted.weighted = true;
  EXPECT_EQ(count_pairs(spmm_search_space(g, weighted, 16, false, false)), 0);
  testing::RandomGraphSpec sparse;
  sparse.rows = sparse.cols = 500;
  sparse.avg_degree = 3;
  EXPECT_EQ(count_pairs(spmm_search_space(GraphFingerprint::of(testing::random_graph(sparse)), spec, 16, false, false)),
            0);
  TuneOptions o;
  o.top_k = 2;
  o.neighbours = 0;
  o.max_repeats = 3;
  const TuneResult r = tune_spmm(A, 16, o);
  int measured = 0;
  for (const auto& c : r.candidates)
    if (c.plan.pair_rounds > 0 && c.measured_ms > 0) {
      ++measured;
      EXPECT_EQ(c.status, "ok") << c.plan.str();
    }
  EXPECT_GE(measured, 1);
  SpmmOptions so;
  so.feat = 16;
  so.plan = r.chosen;
  Rng rng(12);
  const Tensor X = Tensor::uniform({A.num_cols(), 16}, -1, 1, rng);
  expect_close(SpmmKernel(A, so).run(X), testing::reference_spmm(A, X, Tensor(), Tensor(), Tensor(), false),
               r.chosen.str());
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, SharedPairsSpmmTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "int64" : "int32"; });

}  // namespace
}  // namespace strata::sc
