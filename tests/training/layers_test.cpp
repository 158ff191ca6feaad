// Linear, SAGEConv, GraphConv and the GraphSAGE / GCN stacks: forward against dense
// formulas, parameter gradients against finite differences, sparse inputs against
// the same inputs densified, Glorot initialisation.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>

#include "core/autograd_ops.h"
#include "layers/graph_ops.h"
#include "layers/linear.h"
#include "models/gnn.h"
#include "tests/support/test_support.h"
#include "tests/training/grad_check.h"

namespace strata {
namespace {

using ag::Tape;
using ag::Var;
using nn::Aggregation;
using nn::NodeFeatures;

Graph test_graph(uint64_t seed = 21) {
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 12;
  spec.avg_degree = 2.5;
  spec.empty_row_fraction = 0.2;
  spec.seed = seed;
  return testing::random_graph(spec);
}

Eigen::MatrixXd dense_adjacency(const Graph& g) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(g.num_rows(), g.num_cols());
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) a(r, g.column(p)) += 1.0;
  return a;
}

Eigen::MatrixXd aggregation_matrix(const Graph& g, Aggregation kind) {
  const Eigen::MatrixXd a = dense_adjacency(g);
  const Eigen::VectorXd din = a.rowwise().sum(), dout = a.colwise().sum().transpose();
  const int64_t n = a.rows();
  Eigen::MatrixXd m = a;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) switch (kind) {
        case Aggregation::Sum: break;
        case Aggregation::Mean: m(i, j) = din(i) > 0 ? a(i, j) / din(i) : 0; break;
        case Aggregation::GcnNorm: m(i, j) = a(i, j) / std::sqrt(std::max(din(i), 1.0) * std::max(dout(j), 1.0)); break;
        case Aggregation::SageGcn: m(i, j) = (a(i, j) + (i == j)) / (din(i) + 1); break;
        case Aggregation::Max:
          ADD_FAILURE() << "max aggregation is not linear";
          break;
      }
  return m;
}

Eigen::MatrixXd E(const Tensor& t) { return t.as_matrix<float>().cast<double>(); }
Eigen::MatrixXd E(const Var& v) { return E(v.value()); }
Eigen::VectorXd V(const Var& v) { return v.value().as_vector<float>().cast<double>(); }

const Var& param(const std::vector<nn::Parameter>& ps, const std::string& name) {
  for (const auto& p : ps)
    if (p.name == name) return p.var;
  throw std::runtime_error("no parameter " + name);
}

std::vector<Var> vars(const std::vector<nn::Parameter>& ps) {
  std::vector<Var> v;
  for (const auto& p : ps) v.push_back(p.var);
  return v;
}

// Random sparse features [n, f] with about `density` of the entries set.
nn::SparseFeatures random_features(int64_t n, int64_t f, double density, bool binary, Rng& rng) {
  std::vector<int64_t> indptr = {0};
  std::vector<int32_t> indices;
  std::vector<float> values;
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < f; ++c)
      if (rng.uniform() < density) {
        indices.push_back(static_cast<int32_t>(c));
        values.push_back(binary ? 1.0f : static_cast<float>(rng.uniform(-1, 1)));
      }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  return nn::SparseFeatures::from_csr(n, f, Tensor::from_vector(indptr), Tensor::from_vector(indices),
                                      binary ? Tensor() : Tensor::from_vector(values));
}

Tensor densify(const nn::SparseFeatures& s) {
  Tensor d = Tensor::zeros({s.rows(), s.cols()}, DType::F32);
  for (int64_t r = 0; r < s.rows(); ++r)
    for (int64_t p = s.S.row_begin(r); p < s.S.row_end(r); ++p)
      d.data<float>()[r * s.cols() + s.S.column(p)] = s.S.has_values() ? s.S.values().data<float>()[p] : 1.0f;
  return d;
}

// Finite-difference gradients of a layer on dense input x, for its parameters and x.
void check_layer_gradients(const nn::GraphLayer& layer, const nn::GraphKernels& k, const Tensor& x) {
  Var xv = Var::parameter(x, "x");
  std::vector<Var> ps = vars(layer.parameters());
  ps.push_back(xv);
  testing::check_parameter_gradients([&](Tape& tp) { return layer.forward(tp, k, NodeFeatures::from_dense(xv)); }, ps);
}

nn::GraphKernels kernels_for(const Graph& g, const nn::GraphLayer& layer, const nn::SparseFeatures* f) {
  nn::KernelRequests r;
  layer.request_kernels(r, f != nullptr);
  return nn::build_graph_kernels(g, f, r, {});
}

TEST(LayersTest, GlorotUniformIsSeededAndBounded) {
  Rng a(5), b(5), c(6);
  Tensor x = nn::glorot_uniform(300, 200, a);
  EXPECT_EQ(max_abs_diff(x, nn::glorot_uniform(300, 200, b)), 0.0);
  EXPECT_GT(max_abs_diff(x, nn::glorot_uniform(300, 200, c)), 0.0);
  const double bound = std::sqrt(6.0 / 500.0);
  const auto v = x.as_vector<float>().cast<double>();
  EXPECT_LE(v.cwiseAbs().maxCoeff(), bound);
  EXPECT_NEAR(v.mean(), 0.0, 0.01 * bound);
  EXPECT_NEAR((v.array() * v.array()).mean(), bound * bound / 3.0, 0.02 * bound * bound);
}

TEST(LayersTest, LinearDenseAndSparseMatchAndDifferentiate) {
  Rng rng(1);
  nn::Linear lin(7, 4, true, rng, 0);
  EXPECT_EQ(lin.describe(), "Linear(7 -> 4, bias)");
  const nn::SparseFeatures f = random_features(12, 7, 0.3, false, rng);
  const Graph g = test_graph();
  const nn::GraphKernels k = kernels_for(g, lin, &f);
  Var b = param(lin.parameters(), "layers.0.bias");
  b.mutable_value().fill(0.25);
  Tape t;
  Tensor dense = densify(f);
  const Var ys = lin.forward(t, k, NodeFeatures{Var(), &f, 0.0f, 0});
  const Var yd = lin.forward(t, k, NodeFeatures::from_dense(Var::constant(dense)));
  const Eigen::MatrixXd want = (E(dense) * E(param(lin.parameters(), "layers.0.weight"))).rowwise() + V(b).transpose();
  EXPECT_LT((E(ys) - want).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT((E(yd) - want).cwiseAbs().maxCoeff(), 1e-5);
  testing::check_parameter_gradients([&](Tape& tp) { return lin.forward(tp, k, NodeFeatures{Var(), &f, 0.0f, 0}); },
                                     vars(lin.parameters()));
}

struct SageCase {
  nn::SageAggregator aggregator;
  bool root;
  int64_t in, out;
};

class SageConvTest : public ::testing::TestWithParam<SageCase> {};

TEST_P(SageConvTest, ForwardMatchesFormulaAndGradientsMatch) {
  const SageCase c = GetParam();
  Rng rng(2);
  const Graph g = test_graph();
  nn::SAGEConv conv(c.in, c.out, c.aggregator, c.root, true, rng, 0);
  const nn::GraphKernels k = kernels_for(g, conv, nullptr);
  param(conv.parameters(), "layers.0.bias").mutable_value().fill(-0.5);
  Tensor x = Tensor::uniform({12, c.in}, -1, 1, rng);
  Tape t;
  const Var y = conv.forward(t, k, NodeFeatures::from_dense(Var::constant(x)));
  Eigen::MatrixXd want = aggregation_matrix(g, conv.aggregation()) * E(x) * E(param(conv.parameters(), "layers.0.weight_neigh"));
  if (c.root) want += E(x) * E(param(conv.parameters(), "layers.0.weight_self"));
  want.rowwise() += V(param(conv.parameters(), "layers.0.bias")).transpose();
  EXPECT_LT((E(y) - want).cwiseAbs().maxCoeff(), 1e-5) << conv.describe();
  check_layer_gradients(conv, k, x);
}

INSTANTIATE_TEST_SUITE_P(Variants, SageConvTest,
                         ::testing::Values(SageCase{nn::SageAggregator::Mean, true, 6, 4},  // project first
                                           SageCase{nn::SageAggregator::Mean, true, 3, 5},  // aggregate first
                                           SageCase{nn::SageAggregator::Gcn, false, 6, 4},
                                           SageCase{nn::SageAggregator::Gcn, true, 3, 5},
                                           SageCase{nn::SageAggregator::Sum, false, 3, 5},
                                           SageCase{nn::SageAggregator::Sum, true, 7, 3}));  // one X·[W_self | W_neigh]

// The max aggregator: y_i = W_selfᵀ x_i + W_neighᵀ max_{j -> i} x_j + b (0 where no
// neighbour), aggregating the input itself even where in > out; gradients by finite
// differences (continuous inputs: no ties); a sparse input is refused.
TEST(LayersTest, SageConvMaxAggregatorMatchesFormulaAndGradients) {
  Rng rng(8);
  const Graph g = test_graph();
  for (auto [in, out] : {std::pair<int64_t, int64_t>{6, 4}, {3, 5}}) {
    nn::SAGEConv conv(in, out, nn::SageAggregator::Max, true, true, rng, 0);
    EXPECT_FALSE(conv.projects_first(false)) << "max does not commute with a projection";
    const nn::GraphKernels k = kernels_for(g, conv, nullptr);
    ASSERT_EQ(k.records().size(), 2u);
    EXPECT_EQ(k.records()[0].role, fmt::format("max f={} forward", in));
    EXPECT_EQ(k.records()[0].program, fmt::format("spmm_max_f{}_i32", in));
    // Every column a permutation of values 0.1 apart: no ties, and no two
    // neighbours within the finite-difference step (1e-2) of each other.
    Tensor x = Tensor::empty({12, in}, DType::F32);
    for (int64_t f = 0; f < in; ++f) {
      const std::vector<int64_t> order = rng.permutation(12);
      for (int64_t r = 0; r < 12; ++r) x.data<float>()[r * in + f] = 0.1f * static_cast<float>(order[r] - 6) + 0.013f;
    }
    Tape t;
    const Var y = conv.forward(t, k, NodeFeatures::from_dense(Var::constant(x)));
    Eigen::MatrixXd agg = Eigen::MatrixXd::Zero(12, in);
    for (int64_t i = 0; i < 12; ++i)
      for (int64_t f = 0; f < in; ++f) {
        double m = -1e30;
        for (int64_t p = g.row_begin(i); p < g.row_end(i); ++p)
          m = std::max(m, double(x.data<float>()[g.column(p) * in + f]));
        agg(i, f) = g.degree(i) > 0 ? m : 0.0;
      }
    Eigen::MatrixXd want = agg * E(param(conv.parameters(), "layers.0.weight_neigh")) +
                           E(x) * E(param(conv.parameters(), "layers.0.weight_self"));
    want.rowwise() += V(param(conv.parameters(), "layers.0.bias")).transpose();
    EXPECT_LT((E(y) - want).cwiseAbs().maxCoeff(), 1e-5) << conv.describe();
    check_layer_gradients(conv, k, x);
  }
  nn::SAGEConv conv(6, 4, nn::SageAggregator::Max, true, true, rng, 0);
  const nn::SparseFeatures f = random_features(12, 6, 0.3, true, rng);
  testing::expect_user_error([&] { kernels_for(g, conv, &f); },
                             {"SAGEConv(6 -> 4, max, root weight, bias)", "set data.feature_storage: dense"});
}

TEST(LayersTest, SageConvSparseInputEqualsDensified) {
  Rng rng(3);
  const Graph g = test_graph();
  const nn::SparseFeatures f = random_features(12, 9, 0.25, true, rng);
  for (bool root : {true, false}) {
    nn::SAGEConv conv(9, 4, nn::SageAggregator::Mean, root, true, rng, 0);
    nn::KernelRequests r;
    conv.request_kernels(r, true);
    conv.request_kernels(r, false);
    const nn::GraphKernels k = nn::build_graph_kernels(g, &f, r, {});
    Tape t;
    const Var ys = conv.forward(t, k, NodeFeatures{Var(), &f, 0.0f, 0});
    const Var yd = conv.forward(t, k, NodeFeatures::from_dense(Var::constant(densify(f))));
    EXPECT_LT((E(ys) - E(yd)).cwiseAbs().maxCoeff(), 1e-5);
    testing::check_parameter_gradients([&](Tape& tp) { return conv.forward(tp, k, NodeFeatures{Var(), &f, 0.0f, 0}); },
                                       vars(conv.parameters()));
  }
}

TEST(LayersTest, GraphConvMatchesFormulaForEachNorm) {
  Rng rng(4);
  const Graph g = test_graph().with_self_loops();
  for (nn::GcnNorm norm : {nn::GcnNorm::Both, nn::GcnNorm::Right, nn::GcnNorm::None}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{6, 4}, {3, 5}}) {
      nn::GraphConv conv(in, out, norm, true, rng, 0);
      const nn::GraphKernels k = kernels_for(g, conv, nullptr);
      Tensor x = Tensor::uniform({12, in}, -1, 1, rng);
      Tape t;
      const Var y = conv.forward(t, k, NodeFeatures::from_dense(Var::constant(x)));
      Eigen::MatrixXd want = aggregation_matrix(g, conv.aggregation()) * E(x) * E(param(conv.parameters(), "layers.0.weight"));
      want.rowwise() += V(param(conv.parameters(), "layers.0.bias")).transpose();
      EXPECT_LT((E(y) - want).cwiseAbs().maxCoeff(), 1e-5) << conv.describe();
      check_layer_gradients(conv, k, x);
    }
  }
}

TEST(LayersTest, GcnNormalisationIsSymmetricOnSymmetricGraphs) {
  // With self-loops on a symmetric graph, D^-1/2 (A+I) D^-1/2 is symmetric.
  const Graph g = test_graph().symmetrized().with_self_loops();
  const Eigen::MatrixXd m = aggregation_matrix(g, Aggregation::GcnNorm);
  EXPECT_LT((m - m.transpose()).cwiseAbs().maxCoeff(), 1e-12);
  nn::KernelRequests r;
  r.add_aggregation(Aggregation::GcnNorm, 3);
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, r, {});
  Tensor eye = Tensor::zeros({12, 3}, DType::F32);
  for (int i = 0; i < 3; ++i) eye.data<float>()[i * 3 + i] = 1.0f;
  Tape t;
  const Tensor col = nn::aggregate(t, k.aggregation(Aggregation::GcnNorm, 3), Var::constant(eye)).value();
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(col.data<float>()[i * 3 + j], m(i, j), 1e-6);
}

nn::ModelConfig model_config(nn::ModelKind kind) {
  nn::ModelConfig c;
  c.kind = kind;
  c.layers = 3;
  c.hidden = 5;
  c.dropout = 0.3f;
  c.input_dropout = 0.2f;
  c.activation = nn::Activation::Elu;
  return c;
}

TEST(ModelsTest, GraphSageStackShapesNamesAndDescription) {
  Rng rng(1);
  nn::ModelConfig c;
  nn::GnnModel m(c, 1433, 7, rng);
  EXPECT_EQ(m.num_parameters(), 2 * 1433 * 16 + 16 + 2 * 16 * 7 + 7);
  EXPECT_EQ(m.describe(),
            "graphsage: 2 layers 1433 -> 16 -> 7 (mean aggregator, root weight), relu, dropout 0.5, input dropout 0, "
            "46,103 parameters");
  std::vector<std::string> names;
  for (const auto& p : m.parameters()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0.weight_self", "layers.0.weight_neigh", "layers.0.bias",
                                             "layers.1.weight_self", "layers.1.weight_neigh", "layers.1.bias"}));
  const nn::KernelRequests dense = m.kernel_requests(false);
  EXPECT_EQ(dense.aggregations, (std::vector<std::pair<Aggregation, int64_t>>{{Aggregation::Mean, 16}, {Aggregation::Mean, 7}}));
  EXPECT_TRUE(dense.feature_products.empty());
  const nn::KernelRequests sparse = m.kernel_requests(true);
  EXPECT_EQ(sparse.feature_products, std::vector<int64_t>{16});
  // The same seed builds the same model.
  Rng a(9), b(9);
  nn::GnnModel m1(c, 20, 3, a), m2(c, 20, 3, b);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(max_abs_diff(m1.parameters()[i].var.value(), m2.parameters()[i].var.value()), 0.0);
}

class ModelGradientTest : public ::testing::TestWithParam<nn::ModelKind> {};

TEST_P(ModelGradientTest, WholeModelGradientsWithDropoutAndSparseInput) {
  Rng rng(7);
  Graph g = test_graph(31);
  if (GetParam() == nn::ModelKind::Gcn) g = g.with_self_loops();
  nn::ModelConfig c = model_config(GetParam());
  c.l2_normalize = true;
  const nn::SparseFeatures f = random_features(12, 8, 0.3, true, rng);
  nn::GnnModel m(c, 8, 3, rng);
  const nn::GraphKernels k = nn::build_graph_kernels(g, &f, m.kernel_requests(true), {});
  Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  Tensor train = Tensor::from_vector<int64_t>({0, 2, 3, 5, 7, 8, 11});
  auto loss = [&](Tape& t) {
    Var logits = m.forward(t, k, NodeFeatures{Var(), &f, 0.0f, 0}, 1234);
    return ag::nll_loss(t, ag::log_softmax(t, logits), labels, train);
  };
  EXPECT_GT(testing::check_parameter_gradients(loss, vars(m.parameters()), {.eps = 3e-3}), 50);
  // Dropout is active in training mode and off in eval mode.
  Tape a, b, e;
  e.set_training(false);
  const Tensor ya = m.forward(a, k, NodeFeatures{Var(), &f, 0.0f, 0}, 1).value();
  const Tensor yb = m.forward(b, k, NodeFeatures{Var(), &f, 0.0f, 0}, 2).value();
  const Tensor ye = m.forward(e, k, NodeFeatures{Var(), &f, 0.0f, 0}, 1).value();
  EXPECT_GT(max_abs_diff(ya, yb), 0.0);
  Tape e2;
  e2.set_training(false);
  EXPECT_EQ(max_abs_diff(ye, m.forward(e2, k, NodeFeatures{Var(), &f, 0.0f, 0}, 2).value()), 0.0);
  // Sparse and densified input give the same logits in eval mode.
  const nn::GraphKernels kd = nn::build_graph_kernels(g, nullptr, m.kernel_requests(false), {});
  Tape e3;
  e3.set_training(false);
  EXPECT_LT(max_abs_diff(ye, m.forward(e3, kd, NodeFeatures::from_dense(Var::constant(densify(f))), 1).value()), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Kinds, ModelGradientTest, ::testing::Values(nn::ModelKind::GraphSage, nn::ModelKind::Gcn),
                         [](const auto& info) { return std::string(nn::model_kind_name(info.param)); });

TEST(ModelsTest, ReferenceBackendGivesTheSameLogits) {
  Rng rng(8);
  const Graph g = test_graph(41);
  nn::ModelConfig c = model_config(nn::ModelKind::GraphSage);
  nn::GnnModel m(c, 6, 3, rng);
  const auto req = m.kernel_requests(false);
  const nn::GraphKernels gen = nn::build_graph_kernels(g, nullptr, req, {sc::Backend::Generated, false});
  const nn::GraphKernels ref = nn::build_graph_kernels(g, nullptr, req, {sc::Backend::Reference, false});
  Var x = Var::constant(Tensor::uniform({12, 6}, -1, 1, rng));
  Tape a, b;
  EXPECT_LT(max_abs_diff(m.forward(a, gen, NodeFeatures::from_dense(x), 5).value(),
                         m.forward(b, ref, NodeFeatures::from_dense(x), 5).value()),
            1e-5);
}

}  // namespace
}  // namespace strata
