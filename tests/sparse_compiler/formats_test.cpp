// Composable formats: every format and every decomposition matches the dense
// reference for SpMM and SDDMM (weighted or not, scaled, mean), over graphs with
// the edge cases of the compiler tests plus graphs whose rows all fall in one
// bucket, graphs with empty buckets and rows longer than the largest bucket; the
// inspectors' invariants; plans round-trip through JSON.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/rng.h"
#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/golden.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

// dcsr:cols=1 gives every column a tile; cols=500 one tile wider than the graph.
const std::vector<std::string> kFormats = {"coo",         "dcsr",        "dcsr:cols=8", "dcsr:cols=1",
                                           "dcsr:cols=500", "ell:w=4",   "ell:w=1",     "bsr:b=2",
                                           "bsr:b=3",     "hyb:c=1,B=3", "hyb:c=2,B=2", "hyb:c=3,B=0"};

struct GraphCase {
  std::string name;
  Graph g;
};

std::vector<GraphCase> format_graphs(bool int64) {
  std::vector<GraphCase> out;
  testing::RandomGraphSpec s;
  s.int64_indices = int64;
  s.rows = 150;
  s.cols = 130;
  s.avg_degree = 5;
  s.empty_row_fraction = 0.15;
  s.long_row_length = 90;  // longer than every bucket: split into pieces
  s.seed = 21;
  out.push_back({"random_long_row", testing::random_graph(s)});
  CooOptions o;
  o.force_int64 = int64;
  out.push_back({"single_node", Graph::from_coo(1, 1, Tensor::from_list<int64_t>({0}), Tensor::from_list<int64_t>({0}), o)});
  out.push_back({"isolated_nodes", Graph::from_coo(40, 41, Tensor::from_list<int64_t>({3, 3, 17, 39}),
                                                   Tensor::from_list<int64_t>({5, 38, 17, 40}), o)});
  out.push_back({"no_edges", Graph::from_coo(9, 7, Tensor::arange(0), Tensor::arange(0), o)});
  // Every row has degree 3: all rows in one bucket, the other buckets empty.
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < 50; ++i)
    for (int64_t k = 0; k < 3; ++k) {
      r.push_back(i);
      c.push_back((i * 7 + k * 13) % 61);
    }
  out.push_back({"one_bucket", Graph::from_coo(50, 61, Tensor::from_vector(r), Tensor::from_vector(c), o)});
  return out;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  CloseReport rep = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(rep.ok) << what << ": " << rep.str();
}

KernelPlan plan_for(const std::string& format, bool static_tasks = false) {
  KernelPlan p;
  p.format = FormatSpec::parse(format);
  p.knobs.vector_lanes = host_vector_lanes();
  p.knobs.grain = 16;  // many tasks even on small graphs
  p.knobs.static_tasks = static_tasks;
  return p;
}

class FormatsDifferential : public ::testing::TestWithParam<bool> {};

TEST_P(FormatsDifferential, SpmmEveryFormatMatchesDenseReference) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  struct Variant {
    std::string name;
    bool weighted, mean, scales;
  };
  const std::vector<Variant> variants = {{"sum", false, false, false}, {"weighted_scaled", true, false, true}};
  const std::vector<int64_t> feats = {7, 33};
  std::vector<Kernel> lowered;
  std::map<std::string, size_t> at;
  for (const auto& f : kFormats)
    for (const auto& v : variants)
      for (int64_t F : feats) {
        SpmmSpec spec;
        spec.feat = F;
        spec.index_dtype = idt;
        spec.weighted = v.weighted;
        spec.row_scale = spec.col_scale = v.scales;
        at[f + v.name + std::to_string(F)] = lowered.size();
        lowered.push_back(SpmmKernel::lower(spec, plan_for(f, F == 33)));  // 33: tasks in fixed blocks
      }
  const auto compiled = compile_cpu(lowered);
  Rng rng(31);
  for (const auto& gc : format_graphs(int64)) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (const auto& f : kFormats)
      for (const auto& v : variants)
        for (int64_t F : feats) {
          SpmmOptions o;
          o.feat = F;
          o.weighted = v.weighted;
          if (v.scales) {
            o.row_scale = Tensor::uniform({g.num_rows()}, 0.5, 2, rng);
            o.col_scale = Tensor::uniform({g.num_cols()}, 0.5, 2, rng);
          }
          o.plan = plan_for(f, F == 33);
          SpmmKernel k(g, o, compiled[at.at(f + v.name + std::to_string(F))]);
          Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
          Tensor want = testing::reference_spmm(g, X, v.weighted ? g.values() : Tensor(), o.row_scale, o.col_scale, false);
          expect_close(k.run(X), want, gc.name + " " + f + " " + v.name + " F=" + std::to_string(F));
          // Deterministic: the same result bit for bit on a second run.
          EXPECT_EQ(max_abs_diff(k.run(X), k.run(X)), 0.0) << gc.name << " " << f;
        }
  }
}

TEST_P(FormatsDifferential, SddmmEveryFormatMatchesDenseReference) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  std::vector<Kernel> lowered;
  for (const auto& f : kFormats) {
    lowered.push_back(SddmmKernel::lower({SddmmKind::Dot, 19, idt}, plan_for(f)));
    lowered.push_back(SddmmKernel::lower({SddmmKind::Add, 4, idt}, plan_for(f, true)));  // tasks in fixed blocks
  }
  const auto compiled = compile_cpu(lowered);
  Rng rng(32);
  for (const auto& gc : format_graphs(int64)) {
    for (size_t k = 0; k < kFormats.size(); ++k) {
      SddmmKernel dot(gc.g, {SddmmKind::Dot, 19, Backend::Generated, plan_for(kFormats[k])}, compiled[2 * k]);
      Tensor X = Tensor::uniform({gc.g.num_rows(), 19}, -1, 1, rng), Y = Tensor::uniform({gc.g.num_cols(), 19}, -1, 1, rng);
      expect_close(dot.run(X, Y), testing::reference_sddmm_dot(gc.g, X, Y), gc.name + " dot " + kFormats[k]);
      SddmmKernel sum(gc.g, {SddmmKind::Add, 4, Backend::Generated, plan_for(kFormats[k], true)}, compiled[2 * k + 1]);
      Tensor XL = Tensor::uniform({gc.g.num_rows(), 4}, -1, 1, rng), XR = Tensor::uniform({gc.g.num_cols(), 4}, -1, 1, rng);
      expect_close(sum.run(XL, XR), testing::reference_sddmm_add(gc.g, XL, XR), gc.name + " add " + kFormats[k]);
    }
  }
}

// X in a padded or panel layout (and feature tiles over row-major X): the CSR
// kernel reads X as the layout stores it, the interpreter runs the same program,
// and both match the dense reference on row-major X.
TEST_P(FormatsDifferential, SpmmXLayoutsAndFeatureTilesMatchDenseReference) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  struct Case {
    int64_t F;
    std::string layout;
    int64_t tile, prefetch;
    bool stream = false;
  };
  const int L = host_vector_lanes();
  const std::vector<Case> cases = {{17, "pad:3", 0, 0},       {64, "pad:16", 32, 8},  {96, "panel:32", 0, 4},
                                   {48, "panel:16", 16, 0},   {64, "panel:64", 0, 0}, {128, "row", 64, 16},
                                   {33, "panel:11", 0, 0},    {4 * L, "row", 0, 0, true},
                                   {8 * L, "panel:" + std::to_string(2 * L), 0, 0, true}};
  std::vector<Kernel> lowered;
  auto plan_of = [&](const Case& c) {
    KernelPlan p = plan_for("csr");
    p.x_layout = DenseLayout::parse(c.layout);
    p.feature_tile = c.tile;
    p.knobs.prefetch = c.prefetch;
    p.knobs.stream_stores = c.stream;
    return p;
  };
  for (const auto& c : cases)
    for (bool weighted : {false, true}) {
      SpmmSpec spec;
      spec.feat = c.F;
      spec.index_dtype = idt;
      spec.weighted = weighted;
      lowered.push_back(SpmmKernel::lower(spec, plan_of(c)));
    }
  const auto compiled = compile_cpu(lowered);
  Rng rng(33);
  for (const auto& gc : format_graphs(int64)) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (size_t k = 0; k < cases.size(); ++k)
      for (bool weighted : {false, true}) {
        const Case& c = cases[k];
        SpmmOptions o;
        o.feat = c.F;
        o.weighted = weighted;
        o.plan = plan_of(c);
        const std::string what = gc.name + " F=" + std::to_string(c.F) + " " + o.plan->str();
        SpmmKernel kern(g, o, compiled[2 * k + (weighted ? 1 : 0)]);
        const Tensor X = Tensor::uniform({g.num_cols(), c.F}, -1, 1, rng);
        const Tensor laid = to_layout(X, o.plan->x_layout);
        EXPECT_EQ(max_abs_diff(from_layout(laid, o.plan->x_layout, g.num_cols(), c.F), X), 0.0) << what;
        const Tensor want = testing::reference_spmm(g, X, weighted ? g.values() : Tensor(), Tensor(), Tensor(), false);
        expect_close(kern.run(laid), want, what);
        SpmmOptions io = o;
        io.backend = Backend::Interpreter;
        expect_close(SpmmKernel(g, io).run(laid), want, what + " (interpreter)");
        io.backend = Backend::Reference;
        expect_close(SpmmKernel(g, io).run(laid), want, what + " (reference)");
      }
  }
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, FormatsDifferential, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

// Every non-zero lands in exactly one slot; padding slots carry edge id -1 (zero
// weight); rows ascend within parts; tasks partition rows and every part.
template <class I>
void check_invariants(const Graph& A, const InspectedFormat& F, const std::string& what) {
  std::vector<int> seen(static_cast<size_t>(A.nnz()), 0);
  for (const auto& p : F.parts) {
    const Tensor& eid = p.arrays.at("eid");
    int64_t real = 0;
    for (int64_t s = 0; s < eid.numel(); ++s) {
      const int64_t e = eid.data<I>()[s];
      ASSERT_GE(e, -1) << what;
      ASSERT_LT(e, A.nnz()) << what;
      if (e >= 0) {
        ++seen[e];
        ++real;
      }
    }
    EXPECT_EQ(real, p.real) << what << " " << p.name;
    // DCSR over column tiles: tile-major, rows ascending within each tile, each
    // tile's columns in its range, and the task ranges of every tile partition
    // that tile's rows.
    if (p.kind == PartKind::Dcsr && p.width > 0) {
      const int64_t tiles = p.scalars.at("tiles"), T = F.num_tasks;
      const int64_t* rptr = p.arrays.at("rptr").data<int64_t>();
      const int64_t* cptr = p.arrays.at("cptr").data<int64_t>();
      const I* rows = p.arrays.at("rows").data<I>();
      const I* cols = p.arrays.at("cols").data<I>();
      const int64_t* tasks = p.arrays.at("tasks").data<int64_t>();
      ASSERT_EQ(tiles, std::max<int64_t>(1, (A.num_cols() + p.width - 1) / p.width)) << what;
      ASSERT_EQ(p.arrays.at("tasks").numel(), tiles * (T + 1)) << what;
      EXPECT_EQ(rptr[tiles], p.outer) << what;
      for (int64_t o = 0; o < tiles; ++o) {
        for (int64_t r = rptr[o]; r < rptr[o + 1]; ++r) {
          if (r > rptr[o]) {
            EXPECT_LT(rows[r - 1], rows[r]) << what << " tile " << o;
          }
          EXPECT_LT(cptr[r], cptr[r + 1]) << what << ": an empty (row, tile) entry";
          for (int64_t q = cptr[r]; q < cptr[r + 1]; ++q) {
            EXPECT_EQ(static_cast<int64_t>(cols[q]) / p.width, o) << what;
            const int64_t e = eid.data<I>()[q];
            EXPECT_EQ(A.column(e), static_cast<int64_t>(cols[q])) << what;
            EXPECT_TRUE(A.row_begin(rows[r]) <= e && e < A.row_end(rows[r])) << what;
          }
        }
        EXPECT_EQ(tasks[o * (T + 1)], rptr[o]) << what;
        EXPECT_EQ(tasks[o * (T + 1) + T], rptr[o + 1]) << what;
        for (int64_t t = 0; t < T; ++t) {
          EXPECT_LE(tasks[o * (T + 1) + t], tasks[o * (T + 1) + t + 1]) << what;
          const int64_t lo = F.task_rows.data<int64_t>()[t], hi = F.task_rows.data<int64_t>()[t + 1];
          for (int64_t r = tasks[o * (T + 1) + t]; r < tasks[o * (T + 1) + t + 1]; ++r)
            EXPECT_TRUE(lo <= rows[r] && rows[r] < hi) << what << ": tile " << o << " task " << t;
        }
      }
      continue;
    }
    if (p.arrays.count("rows")) {
      const Tensor& rows = p.arrays.at("rows");
      for (int64_t k = 1; k < rows.numel(); ++k) EXPECT_LE(rows.data<I>()[k - 1], rows.data<I>()[k]) << what;
    }
    // Column and row of every real slot agree with the CSR entry its edge id names.
    if (p.kind == PartKind::RowSubsetEll) {
      for (int64_t r = 0; r < p.outer; ++r)
        for (int64_t k = 0; k < p.width; ++k) {
          const int64_t e = eid.data<I>()[r * p.width + k];
          if (e < 0) continue;
          EXPECT_EQ(A.column(e), static_cast<int64_t>(p.arrays.at("cols").data<I>()[r * p.width + k])) << what;
          const int64_t row = p.arrays.at("rows").data<I>()[r];
          EXPECT_TRUE(A.row_begin(row) <= e && e < A.row_end(row)) << what;
        }
    }
    const Tensor& tasks = p.arrays.at("tasks");
    ASSERT_EQ(tasks.numel(), F.num_tasks + 1) << what;
    EXPECT_EQ(tasks.data<int64_t>()[0], 0) << what;
    EXPECT_EQ(tasks.data<int64_t>()[F.num_tasks], p.outer) << what;
    for (int64_t t = 0; t < F.num_tasks; ++t) EXPECT_LE(tasks.data<int64_t>()[t], tasks.data<int64_t>()[t + 1]) << what;
  }
  for (int64_t e = 0; e < A.nnz(); ++e) ASSERT_EQ(seen[e], 1) << what << ": non-zero " << e << " is in " << seen[e] << " slots";
  EXPECT_EQ(F.task_rows.data<int64_t>()[0], 0);
  EXPECT_EQ(F.task_rows.data<int64_t>()[F.num_tasks], A.num_rows());
}

TEST(Inspectors, InvariantsHoldForEveryDecomposedFormat) {
  for (bool int64 : {false, true})
    for (const auto& gc : format_graphs(int64))
      for (const auto& f : kFormats) {
        const FormatSpec spec = FormatSpec::parse(f);
        if (!spec.decomposed()) continue;
        const InspectedFormat F = inspect_format(gc.g, spec, 16);
        const std::string what = gc.name + " " + f;
        if (int64) check_invariants<int64_t>(gc.g, F, what);
        else check_invariants<int32_t>(gc.g, F, what);
      }
}

TEST(Inspectors, ColumnTilesSplitRowsAndRefuseOversizedTaskRanges) {
  // Row 0 holds columns 0, 1, 5, 9; row 2 holds 4 and 8; row 1 is empty. Tiles of
  // 4 columns: tile 0 = rows 0 (0, 1); tile 1 = rows 0 (5), 2 (4); tile 2 = rows
  // 0 (9), 2 (8).
  const Graph g = Graph::from_coo(3, 10, Tensor::from_list<int64_t>({0, 0, 0, 0, 2, 2}),
                                  Tensor::from_list<int64_t>({0, 1, 5, 9, 4, 8}));
  const InspectedFormat F = inspect_format(g, FormatSpec::parse("dcsr:cols=4"), 1024);
  ASSERT_EQ(F.parts.size(), 1u);
  const FormatPart& p = F.parts[0];
  EXPECT_EQ(p.scalars.at("tiles"), 3);
  EXPECT_EQ(p.outer, 5);
  EXPECT_EQ(p.describe(), "dcsr, 3 column tiles of 4");
  const std::vector<int64_t> rptr(p.arrays.at("rptr").data<int64_t>(), p.arrays.at("rptr").data<int64_t>() + 4);
  EXPECT_EQ(rptr, (std::vector<int64_t>{0, 1, 3, 5}));
  const int32_t* rows = p.arrays.at("rows").data<int32_t>();
  EXPECT_EQ((std::vector<int32_t>(rows, rows + 5)), (std::vector<int32_t>{0, 0, 2, 0, 2}));
  const int32_t* cols = p.arrays.at("cols").data<int32_t>();
  EXPECT_EQ((std::vector<int32_t>(cols, cols + 6)), (std::vector<int32_t>{0, 1, 5, 4, 9, 8}));
  EXPECT_EQ(F.padding_ratio(), 0.0);
  // 40 rows x 2^25 columns in tiles of one column, one task per row: 41 task
  // ranges per tile would take 10 GiB.
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < 40; ++i) {
    r.push_back(i);
    c.push_back(i * 1000);
  }
  const Graph wide = Graph::from_coo(40, int64_t{1} << 25, Tensor::from_vector(r), Tensor::from_vector(c));
  testing::expect_user_error([&] { inspect_format(wide, FormatSpec::parse("dcsr:cols=1"), 1); },
                             {"dcsr:cols=1: 33554432 column tiles x 40 tasks", "use wider tiles or a coarser grain"});
}

// The column-tiled kernel: one parallel loop over row tasks; in each, the task's
// rows zeroed, then every tile's share of the task's rows, each row's output held
// in registers across its columns in that tile.
TEST(FormatsGolden, ColumnTiledDcsrSpmm) {
  SpmmSpec spec;
  spec.feat = 32;
  KernelPlan p = plan_for("dcsr:cols=64");
  p.knobs.vector_lanes = 16;
  p.knobs.grain = 4096;
  ::strata::testing::expect_golden("sparse_compiler/golden/formats/dcsr_cols_spmm.txt", to_string(SpmmKernel::lower(spec, p)));
}

TEST(Inspectors, HybBucketsAndPaddingAreAsDesigned) {
  // Row degrees 1, 2, 3, 9 with hyb:c=1,B=2 (widths 1, 2, 4): the row of 3 pads one
  // slot in the width-4 bucket; the row of 9 is split into 3 pieces of 4.
  std::vector<int64_t> r, c;
  const int degs[] = {1, 2, 3, 9};
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < degs[i]; ++k) {
      r.push_back(i);
      c.push_back(k);
    }
  const Graph g = Graph::from_coo(4, 10, Tensor::from_vector(r), Tensor::from_vector(c));
  const InspectedFormat F = inspect_format(g, FormatSpec::parse("hyb:c=1,B=2"), 1024);
  ASSERT_EQ(F.parts.size(), 3u);
  EXPECT_EQ(F.parts[0].outer, 1);  // width 1: the row of degree 1
  EXPECT_EQ(F.parts[1].outer, 1);  // width 2
  EXPECT_EQ(F.parts[2].outer, 4);  // width 4: row of 3 + three pieces of the row of 9
  EXPECT_EQ(F.slots(), 1 + 2 + 16);
  EXPECT_NEAR(F.padding_ratio(), (19.0 - 15.0) / 19.0, 1e-12);
  const Tensor& rows = F.parts[2].arrays.at("rows");
  EXPECT_EQ(rows.data<int32_t>()[0], 2);
  EXPECT_EQ(rows.data<int32_t>()[3], 3);
}

TEST(Plans, RoundTripThroughJson) {
  KernelPlan p;
  p.format = FormatSpec::parse("hyb:c=2,B=5");
  p.knobs.vector_lanes = 8;
  p.knobs.grain = 2048;
  p.knobs.prefetch = 24;
  const std::string json = p.to_json();
  EXPECT_EQ(json, R"({"format":"hyb:c=2,B=5","lanes":8,"grain":2048,"prefetch":24,"tile":0,"x_layout":"row","stream":false})");
  EXPECT_TRUE(KernelPlan::from_json(json) == p);
  // The static-task knob is written only when set; a plan without it reads as dynamic.
  KernelPlan fixed = p;
  fixed.knobs.static_tasks = true;
  EXPECT_EQ(fixed.to_json(), json.substr(0, json.size() - 1) + R"(,"static_tasks":true})");
  EXPECT_TRUE(KernelPlan::from_json(fixed.to_json()) == fixed);
  EXPECT_FALSE(KernelPlan::from_json(fixed.to_json()) == p);
  EXPECT_EQ(fixed.str(), "hyb:c=2,B=5 lanes=8,grain=2048,prefetch=24,static");
  // So is the number of accumulator sets; a plan without it reads as one set.
  KernelPlan sets = p;
  sets.format = FormatSpec::parse("csr");
  sets.knobs.accumulator_sets = 2;
  EXPECT_NE(sets.to_json().find(R"("stream":false,"accumulator_sets":2})"), std::string::npos) << sets.to_json();
  EXPECT_TRUE(KernelPlan::from_json(sets.to_json()) == sets);
  EXPECT_EQ(KernelPlan::from_json(R"({"format":"csr"})").knobs.accumulator_sets, 1);
  EXPECT_EQ(sets.str(), "csr lanes=8,grain=2048,prefetch=24,sets=2");
  // And SDDMM's edge groups; a plan without the key reads as without them.
  KernelPlan groups = sets;
  groups.knobs.accumulator_sets = 1;
  groups.knobs.edge_groups = true;
  EXPECT_NE(groups.to_json().find(R"("stream":false,"edge_groups":true})"), std::string::npos) << groups.to_json();
  EXPECT_TRUE(KernelPlan::from_json(groups.to_json()) == groups);
  EXPECT_FALSE(KernelPlan::from_json(R"({"format":"csr"})").knobs.edge_groups);
  EXPECT_EQ(groups.str(), "csr lanes=8,grain=2048,prefetch=24,groups");
  KernelPlan panel;
  panel.x_layout = DenseLayout::panel(64);
  EXPECT_EQ(KernelPlan::from_json(panel.to_json()).x_layout.str(), "panel:64");
  EXPECT_NE(panel.str().find(",x=panel:64"), std::string::npos) << panel.str();
  // The same plan produces the same code.
  SpmmSpec spec;
  spec.feat = 32;
  EXPECT_EQ(to_string(SpmmKernel::lower(spec, KernelPlan::from_json(json))), to_string(SpmmKernel::lower(spec, p)));
}

TEST(FormatsErrorTest, BadSpecsAndPlansAreNamed) {
  testing::expect_user_error([] { FormatSpec::parse("hyb:c=2", "--format"); }, {"--format", "needs parameter B"});
  testing::expect_user_error([] { FormatSpec::parse("ellpack"); }, {"unknown format 'ellpack'", "hyb:c=<parts>"});
  testing::expect_user_error([] { FormatSpec::parse("ell:w=x"); }, {"parameter w must be an integer, got 'x'"});
  testing::expect_user_error([] { FormatSpec::parse("bsr:b=4,z=1"); }, {"unknown parameter z"});
  testing::expect_user_error([] { FormatSpec::parse("ell:w=1,", "--format"); },
                             {"--format: 'ell:w=1,' ends in a comma"});
  testing::expect_user_error([] { FormatSpec::parse("bsr:b=1"); }, {"b must be in [2, 64], got 1"});
  testing::expect_user_error([] { FormatSpec::parse("dcsr:cols=0", "--format"); },
                             {"--format", "'dcsr:cols=0': cols must be in [1, 2^30], got 0"});
  testing::expect_user_error([] { FormatSpec::parse("dcsr:c=4"); }, {"unknown parameter c for format dcsr"});
  testing::expect_user_error([] { KernelPlan::from_json(R"({"format":"csr","lanes":12})", "plan.json"); },
                             {"plan.json", "'lanes' must be a power of two, got 12"});
  testing::expect_user_error([] { KernelPlan::from_json(R"({"format":"csr","speed":1})", "plan.json"); },
                             {"unknown key 'speed'"});
  testing::expect_user_error([] { KernelPlan::from_json("{", "plan.json"); }, {"plan.json: not valid JSON"});
  testing::expect_user_error([] { KernelPlan::from_json(R"({"format":"csr","lanes":8,"lanes":16})", "plan.json"); },
                             {"plan.json: the key \"lanes\" appears twice"});
  testing::expect_user_error([] { KernelPlan::from_json(R"({"format":"csr","static_tasks":1})", "plan.json"); },
                             {"plan.json", "'static_tasks' must be true or false"});
  testing::expect_user_error([] { KernelPlan::from_json(R"({"format":"csr","accumulator_sets":0})", "plan.json"); },
                             {"plan.json", "'accumulator_sets' must be in [1, 8], got 0"});
  testing::expect_user_error([] { KernelPlan::from_json(R"({"format":"csr","edge_groups":2})", "plan.json"); },
                             {"plan.json", "'edge_groups' must be true or false"});
  {
    // Edge groups are an SDDMM dot product's over CSR rows or COO slots of
    // row-major X and Y, with whole vectors of features, on the CPU.
    const SddmmSpec dot{SddmmKind::Dot, 64, DType::I32};
    KernelPlan p = plan_for("csr");
    p.knobs.vector_lanes = 16;
    p.knobs.edge_groups = true;
    SpmmSpec spec;
    spec.feat = 64;
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); }, {"spmm plan: edge groups apply to sddmm only"});
    testing::expect_user_error(
        [&] {
          SddmmKernel::lower({SddmmKind::Add, 8, DType::I32}, p);
        },
        {"sddmm plan: edge groups apply to dot products on csr or coo only, not sddmm_add"});
    p.format = FormatSpec::parse("hyb:c=1,B=2");
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); },
                               {"edge groups apply to dot products on csr or coo only", "on hyb:c=1,B=2"});
    p.format = FormatSpec::parse("csr");
    p.x_layout = DenseLayout::panel(32);
    p.feature_tile = 32;
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); },
                               {"edge groups apply to row-major X and Y, not X and Y layout panel:32"});
    p.x_layout = DenseLayout::row();
    p.feature_tile = 0;
    testing::expect_user_error(
        [&] {
          SddmmKernel::lower({SddmmKind::Dot, 40, DType::I32}, p);
        },
        {"edge groups: the dot product's 40 features must be a whole number of 16-lane vectors"});
  }
  {
    // Accumulator sets are a CSR row's; other formats, feature tiles, panels and
    // SDDMM refuse them by name.
    SpmmSpec spec;
    spec.feat = 64;
    KernelPlan p = plan_for("hyb:c=1,B=2");
    p.knobs.accumulator_sets = 2;
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); }, {"accumulator sets apply to csr only, not hyb"});
    p = plan_for("csr");
    p.knobs.accumulator_sets = 2;
    p.feature_tile = 32;
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); },
                               {"accumulator sets apply to untiled rows, not to feature tile 32"});
    p.feature_tile = 0;
    p.x_layout = DenseLayout::panel(32);
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); }, {"not to feature tile 0 or X layout panel:32"});
    p.x_layout = DenseLayout::row();
    testing::expect_user_error(
        [&] {
          SddmmKernel::lower({SddmmKind::Dot, 64, DType::I32}, p);
        },
        {"sddmm plan: accumulator sets apply to spmm only, got 2"});
    // Rows too wide to stage in registers have no accumulator to copy.
    spec.feat = 5000;
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); },
                               {"2 accumulator sets: they need an untiled row of at most 4096 floats"});
  }
  {
    SpmmSpec spec;
    spec.feat = host_vector_lanes() + 1;
    KernelPlan p = plan_for("csr");
    p.knobs.stream_stores = true;
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); }, {"streaming stores need the feature size"});
  }
  {
    // SDDMM reads X and Y by rows or panel by panel, dot products on csr only; a
    // feature tile is the panel's width.
    const SddmmSpec dot{SddmmKind::Dot, 64, DType::I32};
    KernelPlan p = plan_for("csr");
    p.feature_tile = 32;
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); },
                               {"sddmm plan: feature tiles come from X and Y's panel layout",
                                "got tile 32 with X "
                                "layout row"});
    p.x_layout = DenseLayout::panel(16);
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); }, {"got tile 32 with X layout panel:16"});
    p.feature_tile = 0;
    p.x_layout = DenseLayout::panel(24);
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); },
                               {"layout panel:24 needs a feature size divisible by 24, got 64"});
    p.x_layout = DenseLayout::padded(16);
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); },
                               {"sddmm: layout pad:16: X and Y are read as rows or panels"});
    p.x_layout = DenseLayout::panel(32);
    testing::expect_user_error(
        [&] {
          SddmmKernel::lower({SddmmKind::Add, 64, DType::I32}, p);
        },
        {"X and Y layout panel:32 applies to dot products on csr only, not sddmm_add_h64_i32"});
    p.format = FormatSpec::parse("ell:w=8");
    testing::expect_user_error([&] { SddmmKernel::lower(dot, p); }, {"not sddmm_dot_f64_i32 on ell:w=8"});
  }
  testing::expect_user_error([] { DenseLayout::parse("panel", "--x-layout"); },
                             {"--x-layout", "unknown layout 'panel'", "row, pad:P or panel:W"});
  testing::expect_user_error([] { DenseLayout::parse("pad:0", "--x-layout"); }, {"'pad:0' needs a whole number in [1, 4096]"});
  {
    SpmmSpec spec;
    spec.feat = 48;
    KernelPlan p;
    p.x_layout = DenseLayout::panel(32);
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); },
                               {"layout panel:32 needs a feature size divisible by 32, got 48"});
    p.x_layout = DenseLayout::panel(16);
    p.feature_tile = 24;
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); }, {"runs tiles of its panel width; feature tile 24"});
    p = plan_for("hyb:c=1,B=2");
    p.x_layout = DenseLayout::padded(16);
    testing::expect_user_error([&] { SpmmKernel::lower(spec, p); }, {"X layout pad:16 applies to csr only"});
  }
  {
    // A row-major X given to a kernel whose plan reads panels is refused, naming the shape.
    const Graph g = Graph::from_coo(3, 4, Tensor::from_list<int64_t>({0, 2}), Tensor::from_list<int64_t>({1, 3}));
    SpmmOptions o;
    o.feat = 32;
    o.plan = plan_for("csr");
    o.plan->x_layout = DenseLayout::panel(16);
    o.backend = Backend::Reference;
    SpmmKernel k(g, o);
    testing::expect_user_error([&] { k.run(Tensor::zeros({4, 32}, DType::F32)); },
                               {"spmm input X (in the plan's layout panel:16)", "expected 3 dimension(s)"});
  }
  // BSR holds one value per position.
  const Graph dup = Graph::from_coo(2, 2, Tensor::from_list<int64_t>({0, 0}), Tensor::from_list<int64_t>({1, 1}));
  testing::expect_user_error([&] { inspect_format(dup, FormatSpec::parse("bsr:b=2"), 64); },
                             {"bsr", "(row 0, column 1) more than once"});
}

}  // namespace
}  // namespace strata::sc
