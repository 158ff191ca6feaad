// Neighbour aggregation and sparse-feature products through the kernels of
// layers/graph_kernels.h: forward against dense formulas, backward against finite
// differences, on a small non-symmetric graph with empty rows, for the generated
// kernels and for the reference path.
#include "layers/graph_ops.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <cmath>
#include <set>

#include "core/autograd_ops.h"
#include "core/file_util.h"
#include "core/parallel.h"
#include "tests/support/test_support.h"
#include "tests/training/grad_check.h"

namespace strata {
namespace {

using ag::Tape;
using ag::Var;
using nn::Aggregation;
using testing::check_gradients;

// 7 nodes, rows = destinations. Row 2 and row 5 are empty; node 5 has no out-edges
// either (isolated); node 4 has a self-loop; node 2 sends but never receives.
Graph hand_graph() {
  std::vector<int64_t> dst = {0, 0, 0, 1, 3, 3, 3, 3, 4, 4, 6};
  std::vector<int64_t> src = {1, 2, 6, 0, 0, 2, 4, 6, 4, 1, 3};
  return Graph::from_coo(7, 7, Tensor::from_vector(dst), Tensor::from_vector(src));
}

// The dense matrix M with agg(X) = M X.
Eigen::MatrixXd aggregation_matrix(const Graph& g, Aggregation kind) {
  const int64_t n = g.num_rows();
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) a(r, g.column(p)) += 1.0;
  const Eigen::VectorXd din = a.rowwise().sum(), dout = a.colwise().sum().transpose();
  Eigen::MatrixXd m = a;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      switch (kind) {
        case Aggregation::Sum: break;
        case Aggregation::Mean: m(i, j) = din(i) > 0 ? a(i, j) / din(i) : 0.0; break;
        case Aggregation::GcnNorm:
          m(i, j) = a(i, j) / std::sqrt(std::max(din(i), 1.0)) / std::sqrt(std::max(dout(j), 1.0));
          break;
        case Aggregation::SageGcn: m(i, j) = (a(i, j) + (i == j ? 1.0 : 0.0)) / (din(i) + 1.0); break;
        case Aggregation::Max:
          ADD_FAILURE() << "max aggregation is not linear";
          break;
      }
    }
  return m;
}

Eigen::MatrixXd to_eigen(const Tensor& t) { return t.as_matrix<float>().cast<double>(); }

constexpr Aggregation kAll[] = {Aggregation::Sum, Aggregation::Mean, Aggregation::GcnNorm, Aggregation::SageGcn};

class GraphOpsTest : public ::testing::TestWithParam<sc::Backend> {
 protected:
  nn::KernelRuntime runtime() const { return {GetParam(), false}; }
};

TEST_P(GraphOpsTest, AggregationForwardMatchesDenseFormula) {
  const Graph g = hand_graph();
  nn::KernelRequests req;
  for (Aggregation a : kAll) req.add_aggregation(a, 3);
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, req, runtime());
  Rng rng(1);
  Tensor x = Tensor::uniform({7, 3}, -1, 1, rng);
  for (Aggregation a : kAll) {
    Tape t;
    Tensor y = nn::aggregate(t, k.aggregation(a, 3), Var::constant(x)).value();
    const Eigen::MatrixXd want = aggregation_matrix(g, a) * to_eigen(x);
    EXPECT_LT((to_eigen(y) - want).cwiseAbs().maxCoeff(), 1e-5) << nn::aggregation_name(a);
  }
  // Rows 2 and 5 have no in-neighbours: sum and mean give exact zeros there.
  Tape t;
  Tensor mean = nn::aggregate(t, k.aggregation(Aggregation::Mean, 3), Var::constant(x)).value();
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(mean.data<float>()[2 * 3 + c], 0.0f);
    EXPECT_EQ(mean.data<float>()[5 * 3 + c], 0.0f);
  }
}

TEST_P(GraphOpsTest, AggregationBackwardMatchesFiniteDifferences) {
  const Graph g = hand_graph();
  nn::KernelRequests req;
  for (Aggregation a : kAll) req.add_aggregation(a, 3);
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, req, runtime());
  Rng rng(2);
  for (Aggregation a : kAll) {
    SCOPED_TRACE(nn::aggregation_name(a));
    const auto& kernels = k.aggregation(a, 3);
    const int64_t n = check_gradients([&](Tape& t, const std::vector<Var>& v) { return nn::aggregate(t, kernels, v[0]); },
                                      {Tensor::uniform({7, 3}, -1, 1, rng)}, {true});
    EXPECT_EQ(n, 21);
  }
}

TEST_P(GraphOpsTest, BackwardIsTheTransposeOnARandomGraph) {
  // <agg(X), R> = <X, agg_backward(R)> exactly for the adjoint; checked against the
  // dense transpose on a larger random graph with empty rows and a long row.
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 60;
  spec.avg_degree = 5;
  spec.empty_row_fraction = 0.2;
  spec.long_row_length = 40;
  spec.seed = 3;
  const Graph g = testing::random_graph(spec);
  nn::KernelRequests req;
  for (Aggregation a : kAll) req.add_aggregation(a, 4);
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, req, runtime());
  Rng rng(4);
  for (Aggregation a : kAll) {
    Var x = Var::parameter(Tensor::uniform({60, 4}, -1, 1, rng), "x");
    Tensor r = Tensor::uniform({60, 4}, -1, 1, rng);
    Tape t;
    Var y = nn::aggregate(t, k.aggregation(a, 4), x);
    t.backward(y, r);
    const Eigen::MatrixXd want = aggregation_matrix(g, a).transpose() * to_eigen(r);
    EXPECT_LT((to_eigen(x.grad()) - want).cwiseAbs().maxCoeff(), 1e-4) << nn::aggregation_name(a);
  }
}

// GCN with edge weights (data.edge_weights: use): M = D_in^-1/2 A_w D_out^-1/2 with
// weighted degrees and a zero scale where a degree is 0 (PyG's gcn_norm). Forward and
// backward against the dense matrix on a random weighted graph with empty rows, a
// long row, zero weights and self-loops of weight 1; finite differences on the hand
// graph; and the unweighted aggregations refuse a weighted graph.
TEST_P(GraphOpsTest, WeightedGcnNormMatchesTheDenseFormula) {
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 50;
  spec.avg_degree = 4;
  spec.empty_row_fraction = 0.2;
  spec.long_row_length = 30;
  spec.seed = 31;
  Rng rng(32);
  Graph g = testing::random_graph(spec);
  Tensor w = Tensor::uniform({g.nnz()}, 0, 3, rng);
  for (int64_t k = 0; k < g.nnz(); k += 7) w.data<float>()[k] = 0;  // zero weights are legal
  g = g.with_values(w).with_self_loops();
  const int64_t n = g.num_rows();
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) a(r, g.column(p)) += g.values().data<float>()[p];
  const Eigen::VectorXd din = a.rowwise().sum(), dout = a.colwise().sum().transpose();
  Eigen::MatrixXd m = a;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      m(i, j) = (din(i) > 0 ? 1 / std::sqrt(din(i)) : 0.0) * a(i, j) * (dout(j) > 0 ? 1 / std::sqrt(dout(j)) : 0.0);
  nn::KernelRequests req;
  req.add_aggregation(Aggregation::GcnNorm, 5);
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, req, runtime());
  EXPECT_NE(k.records()[0].program.find("_w_"), std::string::npos) << k.records()[0].program;
  Var x = Var::parameter(Tensor::uniform({n, 5}, -1, 1, rng), "x");
  const Tensor r = Tensor::uniform({n, 5}, -1, 1, rng);
  Tape t;
  const Var y = nn::aggregate(t, k.aggregation(Aggregation::GcnNorm, 5), x);
  EXPECT_LT((to_eigen(y.value()) - m * to_eigen(x.value())).cwiseAbs().maxCoeff(), 1e-5);
  t.backward(y, r);
  EXPECT_LT((to_eigen(x.grad()) - m.transpose() * to_eigen(r)).cwiseAbs().maxCoeff(), 1e-5);

  Graph hw = hand_graph();
  hw = hw.with_values(Tensor::uniform({hw.nnz()}, 0.5, 2, rng));
  const nn::GraphKernels hk = nn::build_graph_kernels(hw, nullptr, req, runtime());
  const int64_t checked = check_gradients(
      [&](Tape& tt, const std::vector<Var>& v) {
        return nn::aggregate(tt, hk.aggregation(Aggregation::GcnNorm, 5), v[0]);
      },
      {Tensor::uniform({7, 5}, -1, 1, rng)}, {true});
  EXPECT_EQ(checked, 35);

  nn::KernelRequests mean;
  mean.add_aggregation(Aggregation::Mean, 5);
  testing::expect_user_error([&] { nn::build_graph_kernels(g, nullptr, mean, runtime()); },
                             {"the graph has edge weights, which only the gcn-norm aggregation uses; mean aggregates "
                              "without them"});
}

TEST_P(GraphOpsTest, SparseFeatureProductForwardAndBackward) {
  // S [7, 5] with values and two empty rows; W [5, 3].
  std::vector<int64_t> indptr = {0, 2, 2, 5, 6, 6, 8, 9};
  std::vector<int32_t> indices = {0, 3, 1, 2, 4, 0, 1, 3, 2};
  std::vector<float> values = {0.5f, 1.0f, 2.0f, -1.0f, 0.25f, 1.5f, 0.75f, -0.5f, 1.0f};
  const nn::SparseFeatures f = nn::SparseFeatures::from_csr(7, 5, Tensor::from_vector(indptr),
                                                            Tensor::from_vector(indices), Tensor::from_vector(values));
  nn::KernelRequests req;
  req.add_feature_product(3);
  req.feature_dropout = true;
  const nn::GraphKernels k = nn::build_graph_kernels(hand_graph(), &f, req, runtime());
  const auto& fp = k.feature_product(3);
  ASSERT_TRUE(fp.weighted);
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(7, 5);
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t p = indptr[r]; p < indptr[r + 1]; ++p) dense(r, indices[p]) = values[p];
  Rng rng(5);
  Tensor w = Tensor::uniform({5, 3}, -1, 1, rng);
  Tape t;
  t.set_training(false);  // no dropout: exactly S·W
  Tensor y = nn::sparse_features_matmul(t, fp, Var::constant(w), 0.4f, 11).value();
  EXPECT_LT((to_eigen(y) - dense * to_eigen(w)).cwiseAbs().maxCoeff(), 1e-5);
  // Training mode: entry p of S kept iff dropout_keep(seed, p), scaled by 1/(1-p).
  Tape tt;
  Tensor yd = nn::sparse_features_matmul(tt, fp, Var::constant(w), 0.4f, 11).value();
  Eigen::MatrixXd dropped = Eigen::MatrixXd::Zero(7, 5);
  int kept = 0;
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t p = indptr[r]; p < indptr[r + 1]; ++p)
      if (ag::dropout_keep(11, p, 0.4f)) {
        dropped(r, indices[p]) = values[p] / 0.6;
        ++kept;
      }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 9);
  EXPECT_LT((to_eigen(yd) - dropped * to_eigen(w)).cwiseAbs().maxCoeff(), 1e-5);
  // Weight gradients, with and without dropout.
  for (bool training : {false, true}) {
    check_gradients(
        [&](Tape& tp, const std::vector<Var>& v) {
          tp.set_training(training);
          return nn::sparse_features_matmul(tp, fp, v[0], 0.4f, 11);
        },
        {w}, {true});
  }
}

TEST_P(GraphOpsTest, KernelsAreBuiltInOneBatchWithTransposes) {
  const Graph g = hand_graph();
  nn::KernelRequests req;
  for (Aggregation a : kAll) req.add_aggregation(a, 3);
  req.add_aggregation(Aggregation::Mean, 3);  // a repeated request is built once
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, req, runtime());
  ASSERT_EQ(k.records().size(), 8u);
  for (size_t i = 0; i < 8; i += 2) {
    EXPECT_EQ(k.records()[i].graph, "A");
    EXPECT_EQ(k.records()[i + 1].graph, "Aᵀ");
    EXPECT_NE(k.records()[i].describe.find("csr"), std::string::npos) << k.records()[i].describe;
  }
  EXPECT_TRUE(k.aggregation(Aggregation::Mean, 3).backward->graph().same_structure(g.transpose()));
  if (GetParam() == sc::Backend::Generated) {
    // sum, mean (rs), its backward (cs), gcn (rs+cs, both directions) -> 4 programs.
    EXPECT_EQ(k.distinct_programs(), 4);
    // One batch: the kernels no earlier unit held compiled in at most one translation
    // unit (one library) per thread; the others were loaded from the units that hold
    // them (the kernel cache is shared by every test).
    std::set<const void*> libraries, compiled_now;
    for (Aggregation a : kAll)
      for (const auto* kernel : {k.aggregation(a, 3).forward.get(), k.aggregation(a, 3).backward.get()}) {
        libraries.insert(kernel->compiled()->library.get());
        if (kernel->compiled()->outcome == sc::CacheOutcome::Compiled)
          compiled_now.insert(kernel->compiled()->library.get());
      }
    EXPECT_GE(libraries.size(), 1u);
    EXPECT_LE(compiled_now.size(), static_cast<size_t>(std::min(num_threads(), 4)));
  } else {
    EXPECT_EQ(k.distinct_programs(), 0);
    EXPECT_EQ(k.compile_ms(), 0.0);
  }
  EXPECT_TRUE(k.note().empty());
  const nn::GraphKernels tuned = nn::build_graph_kernels(g, nullptr, req, {GetParam(), true});
  if (GetParam() == sc::Backend::Generated) {
    // Every kernel's plan was chosen by the tuner; a second load of the same graph
    // reuses the tuning records instead of measuring again.
    const std::string n = fmt::format("tuned {} kernels", tuned.records().size());
    EXPECT_EQ(tuned.note().rfind(n, 0), 0u) << tuned.note();
    EXPECT_GT(tuned.tune_ms(), 0.0);
    const nn::GraphKernels again = nn::build_graph_kernels(g, nullptr, req, {GetParam(), true});
    EXPECT_NE(again.note().find(fmt::format("({} from tuning records)", again.records().size())), std::string::npos)
        << again.note();
    for (size_t i = 0; i < again.records().size(); ++i)
      EXPECT_EQ(again.records()[i].plan.str(), tuned.records()[i].plan.str()) << again.records()[i].role;
  } else {
    EXPECT_TRUE(tuned.note().empty()) << "the reference path has no plans to tune";
    EXPECT_EQ(tuned.tune_ms(), 0.0);
  }
}

// Evaluation builds the forward kernels only: the same forwards (same results), no
// kernel over Aᵀ or Sᵀ, and a pass that asks for gradients is refused by name.
TEST_P(GraphOpsTest, ForwardOnlyBuildsRunTheForwardsAndRefuseGradients) {
  const Graph g = hand_graph();
  ASSERT_EQ(g.num_rows(), 7);
  const nn::SparseFeatures f =
      nn::SparseFeatures::from_csr(7, 5, Tensor::from_vector(std::vector<int64_t>{0, 1, 3, 3, 4, 6, 7, 8}),
                                   Tensor::from_vector(std::vector<int32_t>{0, 1, 4, 2, 0, 3, 4, 1}), Tensor());
  nn::KernelRequests req;
  for (Aggregation a : kAll) req.add_aggregation(a, 3);
  req.add_feature_product(3);
  nn::KernelRequests fwd_req = req;
  fwd_req.backward = false;
  const nn::GraphKernels all = nn::build_graph_kernels(g, &f, req, runtime());
  const nn::GraphKernels fwd = nn::build_graph_kernels(g, &f, fwd_req, runtime());
  ASSERT_EQ(all.records().size(), 10u);
  ASSERT_EQ(fwd.records().size(), 5u);
  for (const nn::KernelRecord& r : fwd.records()) {
    EXPECT_TRUE(r.graph == "A" || r.graph == "S") << r.role << " over " << r.graph;
    EXPECT_NE(r.role.find("forward"), std::string::npos) << r.role;
  }
  Rng rng(4);
  const Var x = Var::constant(Tensor::uniform({g.num_rows(), 3}, -1, 1, rng));
  const Var w = Var::parameter(Tensor::uniform({5, 3}, -1, 1, rng), "w");
  for (Aggregation a : kAll) {
    SCOPED_TRACE(nn::aggregation_name(a));
    EXPECT_EQ(fwd.aggregation(a, 3).backward, nullptr);
    Tape t1, t2;
    t1.set_grad_enabled(false);
    t2.set_grad_enabled(false);
    const Tensor y1 = nn::aggregate(t1, fwd.aggregation(a, 3), x).value();
    const Tensor y2 = nn::aggregate(t2, all.aggregation(a, 3), x).value();
    EXPECT_EQ(max_abs_diff(y1, y2), 0.0f);
    Tape grad;
    const Var xg = Var::parameter(x.value().clone(), "x");
    testing::expect_user_error([&] { (void)nn::aggregate(grad, fwd.aggregation(a, 3), xg); },
                               {fmt::format("aggregate: a pass that needs gradients over the {} f=3 kernel, built "
                                            "without its backward (for inference)",
                                            nn::aggregation_name(a))});
  }
  Tape t1, t2;
  t1.set_grad_enabled(false);
  t2.set_grad_enabled(false);
  EXPECT_EQ(max_abs_diff(nn::sparse_features_matmul(t1, fwd.feature_product(3), w, 0.0f, 1).value(),
                         nn::sparse_features_matmul(t2, all.feature_product(3), w, 0.0f, 1).value()),
            0.0f);
  Tape grad;
  testing::expect_user_error([&] { (void)nn::sparse_features_matmul(grad, fwd.feature_product(3), w, 0.0f, 1); },
                             {"sparse_features_matmul: a pass that needs gradients over the f=3 feature product, "
                              "built without its weight-gradient kernel"});
}

TEST_P(GraphOpsTest, GeneratedAndReferenceAgree) {
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 80;
  spec.seed = 9;
  const Graph g = testing::random_graph(spec);
  nn::KernelRequests req;
  for (Aggregation a : kAll) req.add_aggregation(a, 4);
  const nn::GraphKernels gen = nn::build_graph_kernels(g, nullptr, req, {sc::Backend::Generated, false});
  const nn::GraphKernels ref = nn::build_graph_kernels(g, nullptr, req, {sc::Backend::Reference, false});
  Rng rng(10);
  Tensor x = Tensor::uniform({80, 4}, -1, 1, rng);
  for (Aggregation a : kAll) {
    Tape t;
    EXPECT_LT(max_abs_diff(nn::aggregate(t, gen.aggregation(a, 4), Var::constant(x)).value(),
                           nn::aggregate(t, ref.aggregation(a, 4), Var::constant(x)).value()),
              1e-5);
  }
}

// KernelRuntime::plan_template (the plain-CSR baseline of strata_bench_train): every
// kernel gets the plan template where the untuned plan would add knobs, and the
// values are the same. Y = 9,000 x 256 floats (9 MB) is past the untuned plan's
// streaming-store threshold (untuned_knobs.h).
TEST(GraphKernelPlans, PlanTemplateReplacesTheUntunedPlansWithTheSameValues) {
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 9000;
  spec.avg_degree = 4;
  spec.seed = 21;
  const Graph g = testing::random_graph(spec);
  nn::KernelRequests req;
  req.add_aggregation(Aggregation::Mean, 256);
  nn::KernelRuntime plain{sc::Backend::Generated, false};
  plain.plan_template = true;
  const nn::GraphKernels untuned = nn::build_graph_kernels(g, nullptr, req, {sc::Backend::Generated, false});
  const nn::GraphKernels baseline = nn::build_graph_kernels(g, nullptr, req, plain);
  ASSERT_EQ(untuned.records().size(), 2u);
  ASSERT_EQ(baseline.records().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const nn::KernelRecord &u = untuned.records()[i], &b = baseline.records()[i];
    SCOPED_TRACE(u.role);
    EXPECT_NE(u.plan.str().find("stream"), std::string::npos) << u.plan.str();
    EXPECT_EQ(b.plan.str(), "csr lanes=16,grain=4096,prefetch=0");
    EXPECT_EQ(b.program, u.program);
  }
  Rng rng(22);
  const Var x = Var::parameter(Tensor::uniform({9000, 256}, -1, 1, rng), "x");
  Tape t1, t2;
  const Var y1 = nn::aggregate(t1, untuned.aggregation(Aggregation::Mean, 256), x);
  const Var y2 = nn::aggregate(t2, baseline.aggregation(Aggregation::Mean, 256), x);
  EXPECT_EQ(max_abs_diff(y1.value(), y2.value()), 0.0f);
  const Tensor dy = Tensor::uniform({9000, 256}, -1, 1, rng);
  t1.backward(y1, dy);
  const Tensor g1 = x.grad().clone();
  x.zero_grad();
  t2.backward(y2, dy);
  EXPECT_EQ(max_abs_diff(g1, x.grad()), 0.0f);
}

// runtime.plans: every kernel runs the plan an earlier run recorded for its role
// (recorded_plans.h), whatever tuning or the size rules would pick; the values match
// the untuned kernels'. A role the file lacks, a plan recorded for another program or
// one that does not fit the kernel is refused naming the file and the role.
TEST(GraphKernelPlans, RecordedPlansAreReplayedAndCheckedAgainstTheirProgram) {
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 600;
  spec.avg_degree = 6;
  spec.seed = 23;
  const Graph g = testing::random_graph(spec);
  nn::KernelRequests req;
  req.add_aggregation(Aggregation::Mean, 16);
  const nn::GraphKernels untuned = nn::build_graph_kernels(g, nullptr, req, {sc::Backend::Generated, false});
  ASSERT_EQ(untuned.records().size(), 2u);
  const std::string fwd_program = untuned.records()[0].program, bwd_program = untuned.records()[1].program;
  const fs::path dir = fs::temp_directory_path() / fmt::format("strata-recorded-plans-{}", ::getpid());
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    write_file_atomic(dir / name, text);
    return (dir / name).string();
  };
  const std::string hyb = R"({"format": "hyb:c=1,B=2", "lanes": 8, "grain": 512, "prefetch": 4, "tile": 0})";
  const std::string tiled = R"({"format": "csr", "lanes": 8, "grain": 1024, "prefetch": 0, "tile": 8})";
  const std::string file = write("kernels.json", fmt::format(R"({{"kernels": [
      {{"role": "mean f=16 forward", "program": "{}", "plan": {}}},
      {{"role": "mean f=16 backward", "program": "{}", "plan": {}}},
      {{"role": "relation 0", "order": "fused"}}]}})",
                                                             fwd_program, hyb, bwd_program, tiled));
  nn::KernelRuntime replay{sc::Backend::Generated, true};  // tuning on: the recorded plans win
  replay.plans = std::make_shared<const sc::RecordedPlans>(sc::RecordedPlans::read(file));
  const nn::GraphKernels replayed = nn::build_graph_kernels(g, nullptr, req, replay);
  ASSERT_EQ(replayed.records().size(), 2u);
  EXPECT_EQ(replayed.records()[0].plan.str(), "hyb:c=1,B=2 lanes=8,grain=512,prefetch=4");
  EXPECT_EQ(replayed.records()[1].plan.str(), "csr lanes=8,grain=1024,prefetch=0,tile=8");
  EXPECT_EQ(replayed.tune_ms(), 0.0);
  EXPECT_NE(replayed.note().find("2 plans replayed from '" + file + "' (runtime.plans)"), std::string::npos)
      << replayed.note();
  Rng rng(24);
  const Var x = Var::parameter(Tensor::uniform({600, 16}, -1, 1, rng), "x");
  Tape t1, t2;
  const Var y1 = nn::aggregate(t1, untuned.aggregation(Aggregation::Mean, 16), x);
  const Var y2 = nn::aggregate(t2, replayed.aggregation(Aggregation::Mean, 16), x);
  EXPECT_LT(max_abs_diff(y1.value(), y2.value()), 1e-5f);
  const Tensor dy = Tensor::uniform({600, 16}, -1, 1, rng);
  t1.backward(y1, dy);
  const Tensor g1 = x.grad().clone();
  x.zero_grad();
  t2.backward(y2, dy);
  EXPECT_LT(max_abs_diff(g1, x.grad()), 1e-5f);

  // Another width: no plan for its roles.
  nn::KernelRequests wider;
  wider.add_aggregation(Aggregation::Mean, 32);
  testing::expect_user_error([&] { nn::build_graph_kernels(g, nullptr, wider, replay); },
                             {"runtime.plans '" + file + "' has no plan for the kernel 'mean f=32 forward'",
                              "it holds: mean f=16 backward; mean f=16 forward"});
  // The same role recorded for another program (a sum, not a mean).
  nn::KernelRequests sum;
  sum.add_aggregation(Aggregation::Sum, 16);
  const std::string other = write("other.json", fmt::format(R"({{"kernels": [
      {{"role": "sum f=16 forward", "program": "{}", "plan": {}}}]}})",
                                                            fwd_program, hyb));
  replay.plans = std::make_shared<const sc::RecordedPlans>(sc::RecordedPlans::read(other));
  sum.backward = false;
  testing::expect_user_error([&] { nn::build_graph_kernels(g, nullptr, sum, replay); },
                             {"the plan for 'sum f=16 forward' was recorded for program " + fwd_program,
                              "this run builds spmm_f16_i32 for it"});
  // A plan that does not fit its kernel: a feature tile that does not divide 16.
  const std::string misfit = write("misfit.json", fmt::format(R"({{"kernels": [
      {{"role": "sum f=16 forward", "program": "spmm_f16_i32", "plan": {}}}]}})",
                                                              R"({"format": "csr", "lanes": 8, "grain": 512,
                                                                  "prefetch": 0, "tile": 12})"));
  replay.plans = std::make_shared<const sc::RecordedPlans>(sc::RecordedPlans::read(misfit));
  testing::expect_user_error([&] { nn::build_graph_kernels(g, nullptr, sum, replay); },
                             {"runtime.plans '" + misfit + "': the plan for 'sum f=16 forward' does not fit",
                              "feature tile 12 does not divide the feature size 16"});
  // Files that are not a run's plans.
  testing::expect_user_error([&] { sc::RecordedPlans::read(write("bad.json", "{\"kernels\": [")); },
                             {"bad.json': not valid JSON"});
  testing::expect_user_error([&] { sc::RecordedPlans::read(write("plan.json", hyb)); },
                             {"plan.json': no \"kernels\" list; expected a run dir's kernels.json"});
  // An R-GCN run's orders: read, but they hold no plan for a GNN's kernels.
  replay.plans = std::make_shared<const sc::RecordedPlans>(sc::RecordedPlans::read(
      write("orders.json", R"({"kernels": [{"role": "r0", "order": "fused"}, {"role": "r1", "order": "-"}]})")));
  EXPECT_EQ(replay.plans->order_for("r0", "runtime.plans"), "fused");
  testing::expect_user_error([&] { replay.plans->order_for("r1", "runtime.plans"); },
                             {"runtime.plans '",
                              "orders.json' has no relational order for the kernel set 'r1' (it "
                              "holds: r0)"});
  testing::expect_user_error([&] { nn::build_graph_kernels(g, nullptr, sum, replay); },
                             {"has no plan for the kernel 'sum f=16 forward' (it records none: an R-GCN run's "
                              "relational orders only)"});
  testing::expect_user_error(
      [&] { sc::RecordedPlans::read(write("dash.json", R"({"kernels": [{"role": "r1", "order": "-"}]})")); },
      {"dash.json': holds no kernel plan and no relational order"});
  testing::expect_user_error(
      [&] { sc::RecordedPlans::read(write("unknown.json", R"({"kernels": [{"role": "r0", "order": "sideways"}]})")); },
      {"unknown.json': kernels[0].order: unknown RGMS order 'sideways' (expected fused, aggregate-first"});
  testing::expect_user_error(
      [&] { sc::RecordedPlans::read(write("norole.json", R"({"kernels": [{"order": "fused"}]})")); },
      {"norole.json': kernels[0]: an order without a string \"role\" and \"order\""});
  // Scoped: the plans under a prefix, without it (an R-GCN run's feature kernels).
  const sc::RecordedPlans typed = sc::RecordedPlans::read(write("typed.json", fmt::format(R"({{"kernels": [
      {{"role": "paper sum f=16 forward", "program": "spmm_f16_i32", "plan": {0}}},
      {{"role": "term sum f=16 forward", "program": "spmm_f32_i32", "plan": {0}}}]}})",
                                                                                          hyb)));
  const sc::RecordedPlans paper = typed.scoped("paper ");
  EXPECT_EQ(paper.roles(), std::vector<std::string>{"sum f=16 forward"});
  EXPECT_EQ(paper.at("sum f=16 forward", "k").program, "spmm_f16_i32");
  EXPECT_TRUE(typed.scoped("author ").roles().empty());
  // Messages name the role as the file writes it.
  testing::expect_user_error([&] { typed.scoped("author ").at("sum f=16 forward", "runtime.plans"); },
                             {"has no plan for the kernel 'author sum f=16 forward' (it records no kernel of "
                              "'author': the recorded run built none for it)"});
  testing::expect_user_error([&] { paper.at("sum f=8 forward", "runtime.plans"); },
                             {"has no plan for the kernel 'paper sum f=8 forward' (it holds: paper sum f=16 forward)"});
  testing::expect_user_error([&] { sc::RecordedPlans::read(write("none.json", R"({"kernels": []})")); },
                             {"none.json': its \"kernels\" list is empty"});
  testing::expect_user_error([&] { sc::RecordedPlans::read("/dev/null"); }, {"'/dev/null' is not a regular file"});
  testing::expect_user_error(
      [&] {
        sc::RecordedPlans::read(write("twice.json", fmt::format(R"({{"kernels": [
            {{"role": "a", "program": "p", "plan": {0}}}, {{"role": "a", "program": "p", "plan": {0}}}]}})",
                                                                hyb)));
      },
      {"twice.json': kernels[1]: role 'a' is listed twice"});
  testing::expect_user_error(
      [&] {
        sc::RecordedPlans::read(
            write("badplan.json", R"({"kernels": [{"role": "a", "program": "p", "plan": {"format": "csv"}}]})"));
      },
      {"badplan.json': kernels[0].plan"});
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Backends, GraphOpsTest, ::testing::Values(sc::Backend::Generated, sc::Backend::Reference),
                         [](const auto& info) { return std::string(sc::backend_name(info.param)); });

}  // namespace
}  // namespace strata
