// Generated kernels vs the reference interpreter vs a dense reference, on fresh
// random inputs over graphs with the edge cases every kernel must survive (empty
// rows, one very long row, a single node, isolated nodes, no edges at all, many
// more columns than rows), int32 and int64 indices, and feature sizes that hit
// every vector-width boundary. All kernels of a suite are compiled in one batch.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>

#include "core/rng.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "tests/sparse_compiler/edge_case_graphs.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

using testing::edge_case_graphs;

const std::vector<int64_t> kFeatures = {1, 3, 7, 8, 16, 17, 31, 32, 33, 64, 127, 128, 257};

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  CloseReport r = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(r.ok) << what << ": " << r.str();
}

struct SpmmVariant {
  std::string name;
  bool weighted = false, mean = false, scales = false;
};
const std::vector<SpmmVariant> kSpmmVariants = {
    {"sum", false, false, false}, {"weighted", true, false, false}, {"mean", false, true, false},
    {"weighted_scaled", true, false, true}};

SpmmOptions spmm_options(const Graph& g, const SpmmVariant& v, int64_t F, Rng& rng) {
  SpmmOptions o;
  o.feat = F;
  o.weighted = v.weighted;
  o.reduce = v.mean ? Reduce::Mean : Reduce::Sum;
  if (v.scales) {
    o.row_scale = Tensor::uniform({g.num_rows()}, 0.5, 2.0, rng);
    o.col_scale = Tensor::uniform({g.num_cols()}, 0.5, 2.0, rng);
  }
  return o;
}

// Accumulator sets per feature size: two, three (a group that leaves remainders
// of one and two non-zeros) or one, on untiled rows only.
int accumulator_sets_for(int64_t F) { return F % 3 == 1 ? 2 : F % 3 == 0 ? 3 : 1; }

class SpmmDifferential : public ::testing::TestWithParam<bool> {};

TEST_P(SpmmDifferential, GeneratedMatchesDenseReferenceOnEveryEdgeCase) {
  const bool int64 = GetParam();
  const auto graphs = edge_case_graphs(int64);
  // One batch: every (variant, feature size) kernel for this index width.
  std::vector<Kernel> lowered;
  std::map<std::string, size_t> index;
  const DType idt = int64 ? DType::I64 : DType::I32;
  for (const auto& v : kSpmmVariants)
    for (int64_t F : kFeatures) {
      SpmmSpec spec;
      spec.feat = F;
      spec.index_dtype = idt;
      spec.weighted = v.weighted;
      spec.row_scale = v.mean || v.scales;
      spec.col_scale = v.scales;
      SpmmPlan plan = SpmmKernel::default_plan(spec);
      plan.knobs.grain = 64;  // many chunks even on small graphs
      plan.knobs.prefetch = F % 2 ? 0 : 8;
      plan.knobs.static_tasks = F % 4 == 1;  // tasks in fixed blocks for some sizes, handed out for the rest
      if (plan.feature_tile == 0) plan.knobs.accumulator_sets = accumulator_sets_for(F);
      index[v.name + std::to_string(F)] = lowered.size();
      lowered.push_back(SpmmKernel::lower(spec, plan));
    }
  const std::vector<CompiledKernel> compiled = compile_cpu(lowered);
  Rng rng(2024);
  for (const auto& gc : graphs) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (const auto& v : kSpmmVariants) {
      for (int64_t F : kFeatures) {
        SpmmOptions o = spmm_options(g, v, F, rng);
        SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(g, o));
        plan.knobs.grain = 64;
        plan.knobs.prefetch = F % 2 ? 0 : 8;
        plan.knobs.static_tasks = F % 4 == 1;
        if (plan.feature_tile == 0) plan.knobs.accumulator_sets = accumulator_sets_for(F);
        o.plan = plan;
        SpmmKernel k(g, o, compiled[index.at(v.name + std::to_string(F))]);
        Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
        Tensor want = testing::reference_spmm(g, X, v.weighted ? g.values() : Tensor(), o.row_scale, o.col_scale, v.mean);
        expect_close(k.run(X), want, gc.name + " " + v.name + " F=" + std::to_string(F));
      }
    }
  }
}

TEST_P(SpmmDifferential, InterpreterMatchesDenseReference) {
  // The interpreter is the ground truth of the other tests: check it on the
  // unscheduled kernel (Backend::Interpreter) and on a scheduled, vectorized one.
  const bool int64 = GetParam();
  Rng rng(7);
  for (const auto& gc : edge_case_graphs(int64)) {
    if (gc.g.num_cols() > 1000) continue;  // keep the interpreter quick
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (int64_t F : {1, 17, 33}) {
      for (const auto& v : kSpmmVariants) {
        SpmmOptions o = spmm_options(g, v, F, rng);
        o.backend = Backend::Interpreter;
        SpmmKernel ref(g, o);
        Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
        Tensor want = testing::reference_spmm(g, X, v.weighted ? g.values() : Tensor(), o.row_scale, o.col_scale, v.mean);
        expect_close(ref.run(X), want, "interpreter " + gc.name + " " + v.name + " F=" + std::to_string(F));
      }
    }
  }
}

TEST_P(SpmmDifferential, ReferenceBackendMatchesDenseReference) {
  const bool int64 = GetParam();
  Rng rng(8);
  for (const auto& gc : edge_case_graphs(int64)) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (const auto& v : kSpmmVariants) {
      SpmmOptions o = spmm_options(g, v, 33, rng);
      o.backend = Backend::Reference;
      SpmmKernel ref(g, o);
      Tensor X = Tensor::uniform({g.num_cols(), 33}, -1, 1, rng);
      expect_close(ref.run(X), testing::reference_spmm(g, X, v.weighted ? g.values() : Tensor(), o.row_scale, o.col_scale, v.mean),
                   "reference backend " + gc.name + " " + v.name);
    }
    SddmmKernel dot(gc.g, {SddmmKind::Dot, 9, Backend::Reference, std::nullopt});
    Tensor X = Tensor::uniform({gc.g.num_rows(), 9}, -1, 1, rng), Y = Tensor::uniform({gc.g.num_cols(), 9}, -1, 1, rng);
    expect_close(dot.run(X, Y), testing::reference_sddmm_dot(gc.g, X, Y), "reference backend sddmm " + gc.name);
  }
}

TEST_P(SpmmDifferential, FeatureTilingAndPrefetchPlans) {
  const bool int64 = GetParam();
  Rng rng(5);
  testing::RandomGraphSpec s;
  s.rows = 400;
  s.cols = 400;
  s.int64_indices = int64;
  s.long_row_length = 350;
  const Graph g = testing::random_graph(s);
  for (int64_t tile : {32, 64}) {
    SpmmOptions o;
    o.feat = 256;
    SpmmPlan p;
    p.knobs.vector_lanes = host_vector_lanes();
    p.knobs.prefetch = 16;
    p.knobs.grain = 128;
    p.feature_tile = tile;
    o.plan = p;
    SpmmKernel k(g, o);
    Tensor X = Tensor::uniform({g.num_cols(), 256}, -1, 1, rng);
    expect_close(k.run(X), testing::reference_spmm(g, X, Tensor(), Tensor(), Tensor(), false),
                 "tile " + std::to_string(tile));
  }
}

TEST_P(SpmmDifferential, WideRowsAreTiledStagedOrSummedInMemory) {
  // Past 256 floats the untuned plan tiles the features by a divisor of F (600:
  // tiles of 200); without one, a row of up to Schedule::kMaxStagedElements floats
  // is staged whole (3703 = 7 * 23 * 23) and a wider one summed in Y itself (4100).
  // Until the schedules knew the staging limit, F = 4100 failed to lower.
  const bool int64 = GetParam();
  Rng rng(41);
  testing::RandomGraphSpec s;
  s.rows = 120;
  s.cols = 90;
  s.int64_indices = int64;
  s.long_row_length = 85;
  const Graph g = testing::random_graph(s);
  const Graph w = g.with_values(Tensor::uniform({g.nnz()}, -1, 1, rng));
  const std::vector<std::pair<int64_t, int64_t>> feat_tile = {{600, 200}, {3703, 0}, {4100, 0}};
  std::vector<Kernel> lowered;
  for (const auto& [F, tile] : feat_tile) {
    EXPECT_EQ(untuned_feature_tile(F), tile) << "F=" << F;
    SpmmSpec spec;
    spec.feat = F;
    spec.index_dtype = g.index_dtype();
    spec.weighted = true;
    SpmmPlan plan = SpmmKernel::default_plan(spec, w);
    plan.knobs.grain = 64;
    lowered.push_back(SpmmKernel::lower(spec, plan));
    lowered.push_back(SddmmKernel::lower({SddmmKind::Dot, F, g.index_dtype()}, SddmmKernel::default_plan()));
  }
  const std::vector<CompiledKernel> compiled = compile_cpu(lowered);
  for (size_t k = 0; k < feat_tile.size(); ++k) {
    const int64_t F = feat_tile[k].first;
    SpmmOptions o;
    o.feat = F;
    o.weighted = true;
    SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(w, o), w);
    plan.knobs.grain = 64;
    o.plan = plan;
    SpmmKernel spmm(w, o, compiled[2 * k]);
    Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
    expect_close(spmm.run(X), testing::reference_spmm(w, X, w.values(), Tensor(), Tensor(), false),
                 "spmm F=" + std::to_string(F));
    SddmmKernel dot(g, {SddmmKind::Dot, F, Backend::Generated, SddmmKernel::default_plan()}, compiled[2 * k + 1]);
    Tensor XR = Tensor::uniform({g.num_rows(), F}, -1, 1, rng);
    Tensor Y = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
    CloseReport r = all_close(dot.run(XR, Y), testing::reference_sddmm_dot(g, XR, Y), 1e-3, 1e-4);
    EXPECT_TRUE(r.ok) << "sddmm F=" << F << ": " << r.str();
  }
  // Streaming stores write staged rows: a plan asking for them on rows summed in
  // Y itself is refused, by name.
  SpmmSpec spec;
  spec.feat = 4112;
  spec.index_dtype = g.index_dtype();
  SpmmPlan plan = SpmmKernel::default_plan(spec);
  plan.feature_tile = 0;
  plan.knobs.stream_stores = true;
  testing::expect_user_error([&] { (void)SpmmKernel::lower(spec, plan); },
                             {"stream_stores(Y): rows wider than 4096 floats are summed in Y itself"});
}

TEST_P(SpmmDifferential, InterpreterRunsScheduledVectorKernels) {
  // The scheduled, vectorized, register-promoted IR means the same as the plain
  // loops: checks every schedule transformation independently of the emitter.
  const bool int64 = GetParam();
  Rng rng(17);
  const Graph g = edge_case_graphs(int64)[0].g;
  for (int64_t F : {7, 33, 64}) {
    SpmmSpec spec;
    spec.feat = F;
    spec.index_dtype = g.index_dtype();
    spec.weighted = true;
    SpmmPlan plan = SpmmKernel::default_plan(spec);
    plan.knobs.prefetch = 4;
    plan.knobs.grain = 32;
    const Kernel lowered = SpmmKernel::lower(spec, plan);
    const Graph w = g.with_values(Tensor::uniform({g.nnz()}, -1, 1, rng));
    Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
    Tensor Y = Tensor::full({g.num_rows(), F}, DType::F32, NAN);
    KernelArgs a;
    a.buffer("A_indptr", w.indptr()).buffer("A_indices", w.indices()).buffer("A", w.values());
    a.buffer("X", X).buffer("Y", Y).scalar("m", w.num_rows()).scalar("n", w.num_cols()).scalar("nnz", w.nnz());
    Interpreter interp;
    a.bind(interp, lowered);
    interp.run(lowered);
    expect_close(Y, testing::reference_spmm(w, X, w.values(), Tensor(), Tensor(), false),
                 "interpreted schedule F=" + std::to_string(F));
  }
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, SpmmDifferential, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

class SddmmDifferential : public ::testing::TestWithParam<bool> {};

TEST_P(SddmmDifferential, GeneratedMatchesDenseReferenceOnEveryEdgeCase) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  std::vector<Kernel> lowered;
  const KernelPlan knobs = [] {
    KernelPlan k = SddmmKernel::default_plan();
    k.knobs.grain = 64;
    k.knobs.prefetch = 4;
    return k;
  }();
  // Dot products with tasks handed out to free threads, sums with tasks in fixed blocks.
  const KernelPlan fixed = [&] {
    KernelPlan k = knobs;
    k.knobs.static_tasks = true;
    return k;
  }();
  for (int64_t F : kFeatures) lowered.push_back(SddmmKernel::lower({SddmmKind::Dot, F, idt}, knobs));
  const std::vector<int64_t> heads = {1, 3, 8, 16};
  for (int64_t H : heads) lowered.push_back(SddmmKernel::lower({SddmmKind::Add, H, idt}, fixed));
  const std::vector<CompiledKernel> compiled = compile_cpu(lowered);
  Rng rng(99);
  for (const auto& gc : edge_case_graphs(int64)) {
    for (size_t k = 0; k < kFeatures.size(); ++k) {
      const int64_t F = kFeatures[k];
      SddmmKernel op(gc.g, {SddmmKind::Dot, F, Backend::Generated, knobs}, compiled[k]);
      Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
      Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
      expect_close(op.run(X, Y), testing::reference_sddmm_dot(gc.g, X, Y), gc.name + " dot F=" + std::to_string(F));
    }
    for (size_t k = 0; k < heads.size(); ++k) {
      const int64_t H = heads[k];
      SddmmKernel op(gc.g, {SddmmKind::Add, H, Backend::Generated, fixed}, compiled[kFeatures.size() + k]);
      Tensor XL = Tensor::uniform({gc.g.num_rows(), H}, -1, 1, rng);
      Tensor XR = Tensor::uniform({gc.g.num_cols(), H}, -1, 1, rng);
      expect_close(op.run(XL, XR), testing::reference_sddmm_add(gc.g, XL, XR), gc.name + " add H=" + std::to_string(H));
    }
  }
}

TEST_P(SddmmDifferential, InterpreterMatchesDenseReference) {
  const bool int64 = GetParam();
  Rng rng(3);
  for (const auto& gc : edge_case_graphs(int64)) {
    if (gc.g.num_cols() > 1000) continue;
    for (int64_t F : {1, 17}) {
      SddmmKernel op(gc.g, {SddmmKind::Dot, F, Backend::Interpreter, std::nullopt});
      Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
      Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
      expect_close(op.run(X, Y), testing::reference_sddmm_dot(gc.g, X, Y), "interpreter " + gc.name);
    }
  }
}

// Dot products panel by panel (x_layout panel:W): O zeroed by its own pass, then
// one pass per panel adding its partial sums. O starts as NaN, so a slot that no
// pass zeroes or reaches shows. Widths with scalar remainders (17), single-float
// panels, several panels, static and dynamic tasks, with and without prefetch.
TEST_P(SddmmDifferential, PanelPlansMatchDenseReferenceOnEveryEdgeCase) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  struct Case {
    int64_t F, W, prefetch;
    bool fixed;
  };
  const std::vector<Case> cases = {
      {3, 1, 0, false}, {34, 17, 0, true}, {64, 16, 4, false}, {96, 32, 8, true}, {128, 64, 4, true}};
  std::vector<KernelPlan> plans;
  std::vector<Kernel> lowered;
  for (const Case& c : cases) {
    KernelPlan p = SddmmKernel::default_plan();
    p.knobs.grain = 64;
    p.knobs.prefetch = c.prefetch;
    p.knobs.static_tasks = c.fixed;
    p.x_layout = DenseLayout::panel(c.W);
    p.feature_tile = c.F % 2 == 0 ? c.W : 0;  // the tile is implied by the panel; both forms are accepted
    plans.push_back(p);
    lowered.push_back(SddmmKernel::lower({SddmmKind::Dot, c.F, idt}, p));
  }
  const std::vector<CompiledKernel> compiled = compile_cpu(lowered);
  Rng rng(41);
  for (const auto& gc : edge_case_graphs(int64)) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const int64_t F = cases[k].F;
      SddmmKernel op(gc.g, {SddmmKind::Dot, F, Backend::Generated, plans[k]}, compiled[k]);
      Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
      Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
      Tensor O = Tensor::full({gc.g.nnz()}, DType::F32, std::nan(""));
      op.run_into(to_layout(X, plans[k].x_layout), to_layout(Y, plans[k].x_layout), O);
      expect_close(O, testing::reference_sddmm_dot(gc.g, X, Y),
                   gc.name + " dot F=" + std::to_string(F) + " " + plans[k].str());
    }
  }
}

// Edge groups (CpuKnobs::edge_groups): a row's edges W = lanes at a time, summed
// by one transposing reduction (lane_sums), the rest of the row edge by edge. Rows
// of every length around the group width (0 to 40 edges), the edge cases (one
// huge row, empty rows), one to four vectors, groups of 16, 8 and 4, with and
// without prefetch, static and dynamic tasks. O starts as NaN, so a slot that
// neither the groups nor the rest of the row store shows.
TEST_P(SddmmDifferential, EdgeGroupPlansMatchDenseReferenceOnEveryEdgeCase) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  struct Case {
    int64_t F;
    int lanes;
    int64_t prefetch;
    bool fixed;
    std::string format = "csr";
  };
  // Over COO the groups cross rows, and each task's last slots go one by one.
  const std::vector<Case> cases = {{16, 16, 0, false},        {32, 16, 4, true},        {48, 16, 0, false},
                                   {64, 16, 8, true},         {32, 8, 0, false},        {8, 4, 2, false},
                                   {16, 16, 0, false, "coo"}, {32, 16, 4, true, "coo"}, {64, 16, 0, false, "coo"},
                                   {32, 8, 2, false, "coo"},  {8, 4, 0, true, "coo"}};
  std::vector<KernelPlan> plans;
  std::vector<Kernel> lowered;
  for (const Case& c : cases) {
    KernelPlan p = SddmmKernel::default_plan();
    p.format = FormatSpec::parse(c.format);
    p.knobs.vector_lanes = c.lanes;
    p.knobs.grain = 64;
    p.knobs.prefetch = c.prefetch;
    p.knobs.static_tasks = c.fixed;
    p.knobs.edge_groups = true;
    plans.push_back(p);
    lowered.push_back(SddmmKernel::lower({SddmmKind::Dot, c.F, idt}, p));
  }
  const std::vector<CompiledKernel> compiled = compile_cpu(lowered);
  std::vector<testing::GraphCase> graphs = edge_case_graphs(int64);
  {
    // Row r holds r edges (columns 0..r-1): every remainder of every group width.
    std::vector<int64_t> rows, cols;
    for (int64_t r = 0; r <= 40; ++r)
      for (int64_t c = 0; c < r; ++c) {
        rows.push_back(r);
        cols.push_back((c * 7 + r) % 45);
      }
    CooOptions o;
    o.force_int64 = int64;
    graphs.push_back({"rows_of_0_to_40_edges", Graph::from_coo(41, 45, Tensor::from_vector<int64_t>(rows),
                                                               Tensor::from_vector<int64_t>(cols), o)});
  }
  Rng rng(47);
  for (const auto& gc : graphs) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const int64_t F = cases[k].F;
      SddmmKernel op(gc.g, {SddmmKind::Dot, F, Backend::Generated, plans[k]}, compiled[k]);
      Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
      Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
      Tensor O = Tensor::full({gc.g.nnz()}, DType::F32, std::nan(""));
      op.run_into(X, Y, O);
      expect_close(O, testing::reference_sddmm_dot(gc.g, X, Y),
                   gc.name + " dot F=" + std::to_string(F) + " " + plans[k].str());
    }
  }
}

// The lowered edge-group kernels, over CSR rows and over COO slots (their row ids
// inlined), interpreted (lane_sums as the interpreter reads it), against the dense
// reference.
TEST_P(SddmmDifferential, InterpretedEdgeGroupScheduleMatchesDenseReference) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  for (const char* format : {"csr", "coo"}) {
    KernelPlan p = SddmmKernel::default_plan();
    p.format = FormatSpec::parse(format);
    p.knobs.vector_lanes = 8;
    p.knobs.grain = 32;
    p.knobs.prefetch = 3;
    p.knobs.edge_groups = true;
    const Kernel lowered = SddmmKernel::lower({SddmmKind::Dot, 16, idt}, p);
    ASSERT_NE(to_string(lowered).find("= lane_sums("), std::string::npos) << format << ": no group sums";
    Rng rng(53);
    for (const auto& gc : edge_case_graphs(int64)) {
      if (gc.g.num_cols() > 1000) continue;
      Tensor X = Tensor::uniform({gc.g.num_rows(), 16}, -1, 1, rng);
      Tensor Y = Tensor::uniform({gc.g.num_cols(), 16}, -1, 1, rng);
      Tensor O = Tensor::full({gc.g.nnz()}, DType::F32, std::nan(""));
      KernelArgs a;
      a.buffer("A_indptr", gc.g.indptr()).buffer("A_indices", gc.g.indices()).buffer("X", X).buffer("Y", Y);
      a.buffer("O", O).scalar("m", gc.g.num_rows()).scalar("n", gc.g.num_cols()).scalar("nnz", gc.g.nnz());
      // COO's task ranges; its row ids are a workspace the preprocess fills.
      std::optional<InspectedFormat> inspected;
      if (needs_inspection(p.format)) {
        inspected = inspect_format(gc.g, p.format, p.knobs.grain);
        inspected->bind(a);
      }
      Interpreter interp;
      a.bind(interp, lowered);
      interp.run(lowered);
      expect_close(O, testing::reference_sddmm_dot(gc.g, X, Y),
                   std::string("interpreted edge groups over ") + format + " " + gc.name);
    }
  }
}

// The interpreter and the reference backend read the same panel layout.
TEST_P(SddmmDifferential, InterpreterAndReferenceReadPanels) {
  const bool int64 = GetParam();
  Rng rng(43);
  KernelPlan p = SddmmKernel::default_plan();
  p.x_layout = DenseLayout::panel(5);
  for (const auto& gc : edge_case_graphs(int64)) {
    if (gc.g.num_cols() > 1000) continue;
    Tensor X = Tensor::uniform({gc.g.num_rows(), 15}, -1, 1, rng);
    Tensor Y = Tensor::uniform({gc.g.num_cols(), 15}, -1, 1, rng);
    const Tensor want = testing::reference_sddmm_dot(gc.g, X, Y);
    for (Backend b : {Backend::Interpreter, Backend::Reference}) {
      SddmmKernel op(gc.g, {SddmmKind::Dot, 15, b, p});
      expect_close(op.run(to_layout(X, p.x_layout), to_layout(Y, p.x_layout)), want,
                   std::string(backend_name(b)) + " " + gc.name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, SddmmDifferential, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

}  // namespace
}  // namespace strata::sc
