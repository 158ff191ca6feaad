// GAT on the tape: the gat_attention op (forward against a dense float64 formula,
// gradients w.r.t. x, att_dst and att_src against central finite differences) for
// fused and unfused forwards, with and without attention dropout and self-loops,
// heads 1 and 3, odd feature sizes, generated and reference kernels, on a graph
// with empty rows and an isolated node; GATConv (shapes, parameters, behaviour on
// isolated nodes, dropout, gradients); the GAT model and its config keys.
#include <gtest/gtest.h>

#include <cmath>

#include "apps/training/config.h"
#include "core/autograd_ops.h"
#include "layers/gat_conv.h"
#include "layers/gat_ops.h"
#include "models/gnn.h"
#include "tests/support/test_support.h"
#include "tests/training/grad_check.h"

namespace strata {
namespace {

using ag::Tape;
using ag::Var;
using nn::AttentionMode;
using nn::AttentionPath;
using nn::AttentionRequest;
using nn::NodeFeatures;

// 7 nodes, rows = destinations. Rows 2 and 5 are empty; node 5 has no out-edges
// either (isolated); node 4 has a self-loop; node 2 sends but never receives.
Graph hand_graph() {
  std::vector<int64_t> dst = {0, 0, 0, 1, 3, 3, 3, 3, 4, 4, 6};
  std::vector<int64_t> src = {1, 2, 6, 0, 0, 2, 4, 6, 4, 1, 3};
  return Graph::from_coo(7, 7, Tensor::from_vector(dst), Tensor::from_vector(src));
}

// y [n, H·F] by the GAT formula in float64 over graph g (rows = destinations),
// with the attention dropout mask of gat_attention when p > 0.
std::vector<double> reference_gat(const Graph& g, const Tensor& x, const Tensor& al, const Tensor& ar, int64_t H,
                                  int64_t F, double slope, float p, uint64_t seed) {
  const int64_t n = g.num_rows();
  const float* xp = x.data<float>();
  std::vector<double> el(n * H, 0), er(n * H, 0), y(n * H * F, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t f = 0; f < F; ++f) {
        el[i * H + h] += double(xp[(i * H + h) * F + f]) * al.data<float>()[h * F + f];
        er[i * H + h] += double(xp[(i * H + h) * F + f]) * ar.data<float>()[h * F + f];
      }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < H; ++h) {
      double mx = -INFINITY, sum = 0;
      std::vector<double> e;
      for (int64_t q = g.row_begin(i); q < g.row_end(i); ++q) {
        const double s = el[i * H + h] + er[g.column(q) * H + h];
        e.push_back(s > 0 ? s : slope * s);
        mx = std::max(mx, e.back());
      }
      for (double v : e) sum += std::exp(v - mx);
      for (int64_t q = g.row_begin(i); q < g.row_end(i); ++q) {
        double a = std::exp(e[q - g.row_begin(i)] - mx) / sum;
        if (p > 0) a = ag::dropout_keep(seed, q * H + h, p) ? a / (1.0 - p) : 0.0;
        for (int64_t f = 0; f < F; ++f) y[(i * H + h) * F + f] += a * xp[(g.column(q) * H + h) * F + f];
      }
    }
  return y;
}

struct OpCase {
  sc::Backend backend;
  int64_t heads;
  AttentionMode mode;
};

class GatAttentionTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(GatAttentionTest, ForwardMatchesFormulaAndGradientsMatchFiniteDifferences) {
  const OpCase c = GetParam();
  const int64_t H = c.heads, F = 5;
  testing::RandomGraphSpec spec;  // a random graph with empty rows, beside the hand-made one
  spec.rows = spec.cols = 9;
  spec.avg_degree = 2;
  spec.empty_row_fraction = 0.25;
  spec.seed = 3;
  int64_t compared = 0, expected = 0;
  for (const Graph& g : {hand_graph(), testing::random_graph(spec)}) {
    const int64_t n = g.num_rows();
    AttentionRequest with_loops{H, F, 0.2, true}, without{H, F, 0.2, false};
    nn::KernelRequests req;
    req.add_attention(with_loops);
    req.add_attention(without);
    nn::KernelRuntime rt;
    rt.backend = c.backend;
    rt.attention = c.mode;
    const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, req, rt);
    Rng rng(11 + H + n);
    const Tensor x = testing::away_from_zero({n, H * F}, 0.1, 1.0, rng);
    const Tensor al = testing::away_from_zero({H, F}, 0.1, 0.8, rng);
    const Tensor ar = testing::away_from_zero({H, F}, 0.1, 0.8, rng);
    int64_t empty_rows = 0;
    for (int64_t i = 0; i < n; ++i) empty_rows += g.degree(i) == 0;
    EXPECT_GE(empty_rows, 1);
    for (const AttentionRequest& r : {with_loops, without}) {
      const nn::AttentionKernels& ak = k.attention(r);
      EXPECT_EQ(ak.graph.nnz(), r.self_loops ? g.with_self_loops().nnz() : g.nnz());
      EXPECT_EQ(ak.fused, c.mode == AttentionMode::Fused);
      for (float p : {0.0f, 0.5f}) {
        SCOPED_TRACE(::testing::Message() << n << " nodes, self-loops " << r.self_loops << ", attention dropout " << p);
        const uint64_t seed = 99;
        // Forward: the dense formula, the path taken, and exact zeros on empty rows.
        Tape t;
        AttentionPath path;
        const Tensor y =
            nn::gat_attention(t, ak, Var::constant(x), Var::constant(al), Var::constant(ar), p, seed, &path).value();
        EXPECT_EQ(path, p == 0 && c.mode == AttentionMode::Fused ? AttentionPath::Fused : AttentionPath::Unfused);
        const std::vector<double> want = reference_gat(ak.graph, x, al, ar, H, F, 0.2, p, seed);
        double err = 0;
        for (int64_t i = 0; i < n * H * F; ++i) err = std::max(err, std::abs(want[i] - y.data<float>()[i]));
        EXPECT_LT(err, 2e-5);
        if (!r.self_loops) {
          for (int64_t i = 0; i < n; ++i) {
            if (g.degree(i) != 0) continue;
            for (int64_t f = 0; f < H * F; ++f) EXPECT_EQ(y.data<float>()[i * H * F + f], 0.0f) << "row " << i;
          }
        }
        // Gradients w.r.t. x, att_dst and att_src (the same mask in every evaluation).
        auto fn = [&](Tape& tape, const std::vector<Var>& in) {
          return nn::gat_attention(tape, ak, in[0], in[1], in[2], p, seed);
        };
        compared +=
            testing::check_gradients(fn, {x, al, ar}, {true, true, true}, {.eps = 2e-3, .atol = 1e-3, .rtol = 5e-3});
        expected += n * H * F + 2 * H * F;
      }
    }
  }
  EXPECT_EQ(compared, expected);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GatAttentionTest,
    ::testing::Values(OpCase{sc::Backend::Generated, 1, AttentionMode::Fused},
                      OpCase{sc::Backend::Generated, 3, AttentionMode::Fused},
                      OpCase{sc::Backend::Generated, 1, AttentionMode::Unfused},
                      OpCase{sc::Backend::Generated, 3, AttentionMode::Unfused},
                      OpCase{sc::Backend::Reference, 3, AttentionMode::Fused},
                      OpCase{sc::Backend::Reference, 1, AttentionMode::Unfused}),
    [](const auto& info) {
      return fmt::format("{}_h{}_{}", sc::backend_name(info.param.backend), info.param.heads,
                         nn::attention_mode_name(info.param.mode));
    });

TEST(GatAttentionTest, EvalModeIgnoresAttentionDropoutAndFusedEqualsUnfused) {
  const Graph g = hand_graph();
  AttentionRequest r{3, 7, 0.2, true};
  nn::KernelRequests req;
  req.add_attention(r);
  nn::KernelRuntime fused_rt, unfused_rt;
  fused_rt.attention = AttentionMode::Fused;
  unfused_rt.attention = AttentionMode::Unfused;
  const nn::GraphKernels kf = nn::build_graph_kernels(g, nullptr, req, fused_rt);
  const nn::GraphKernels ku = nn::build_graph_kernels(g, nullptr, req, unfused_rt);
  Rng rng(3);
  const Var x = Var::constant(Tensor::uniform({7, 21}, -1, 1, rng));
  const Var al = Var::constant(Tensor::uniform({3, 7}, -1, 1, rng)), ar = Var::constant(Tensor::uniform({3, 7}, -1, 1, rng));
  Tape e1, e2, tr1, tr2;
  e1.set_training(false);
  e2.set_training(false);
  const Tensor yf = nn::gat_attention(e1, kf.attention(r), x, al, ar, 0.6f, 1).value();
  const Tensor yu = nn::gat_attention(e2, ku.attention(r), x, al, ar, 0.6f, 2).value();
  EXPECT_LT(max_abs_diff(yf, yu), 1e-5);
  // Training mode: the mask depends on the seed, and is the same for the same seed.
  const Tensor a = nn::gat_attention(tr1, kf.attention(r), x, al, ar, 0.6f, 1).value();
  const Tensor b = nn::gat_attention(tr2, ku.attention(r), x, al, ar, 0.6f, 1).value();
  EXPECT_LT(max_abs_diff(a, b), 1e-6);
  Tape tr3;
  EXPECT_GT(max_abs_diff(a, nn::gat_attention(tr3, kf.attention(r), x, al, ar, 0.6f, 2).value()), 1e-3);
  EXPECT_GT(max_abs_diff(a, yf), 1e-3);
}

// Kernels built without a backward (evaluation) hold GAT's forwards only: the same
// forward as a training build, and a pass that needs gradients refused by name.
TEST(GatAttentionTest, ForwardOnlyBuildsRunTheForwardAndRefuseGradients) {
  const Graph g = hand_graph();
  AttentionRequest r{3, 7, 0.2, true};
  nn::KernelRequests req;
  req.add_attention(r);
  nn::KernelRequests fwd_req = req;
  fwd_req.backward = false;
  const nn::GraphKernels all = nn::build_graph_kernels(g, nullptr, req, {});
  const nn::GraphKernels fwd = nn::build_graph_kernels(g, nullptr, fwd_req, {});
  EXPECT_EQ(fwd.attention(r).kernels->kernel_set(), sc::GatKernelSet::Inference);
  EXPECT_EQ(all.attention(r).kernels->kernel_set(), sc::GatKernelSet::Training);
  ASSERT_EQ(fwd.attention_lines().size(), 1u);
  EXPECT_NE(fwd.attention_lines()[0].find("(generated, forwards only) unfused (default; tuning off)"),
            std::string::npos)
      << fwd.attention_lines()[0];
  Rng rng(5);
  const Var x = Var::constant(Tensor::uniform({7, 21}, -1, 1, rng));
  const Var al = Var::constant(Tensor::uniform({3, 7}, -1, 1, rng)),
            ar = Var::constant(Tensor::uniform({3, 7}, -1, 1, rng));
  Tape e1, e2;
  for (Tape* t : {&e1, &e2}) {
    t->set_training(false);
    t->set_grad_enabled(false);
  }
  EXPECT_EQ(max_abs_diff(nn::gat_attention(e1, fwd.attention(r), x, al, ar, 0.6f, 1).value(),
                         nn::gat_attention(e2, all.attention(r), x, al, ar, 0.6f, 1).value()),
            0.0f);
  Tape train;
  const Var xg = Var::parameter(x.value().clone(), "x");
  testing::expect_user_error([&] { (void)nn::gat_attention(train, fwd.attention(r), xg, al, ar, 0.6f, 1); },
                             {"gat_attention: a pass that needs gradients over kernels built for inference (gat "
                              "h3_f7_s0.2_i32 (generated, forwards only))"});
}

TEST(GatAttentionTest, PassesWithABackwardTakeTheTrainingChoice) {
  // The tuner chooses the forward of inference and of training apart (a fused
  // forward's backward recomputes the edge probabilities); each pass takes the one
  // for what follows it, and both paths give the same values and gradients.
  const Graph g = hand_graph().with_self_loops();
  const int64_t H = 2, F = 5;
  nn::AttentionKernels ak;
  ak.request = AttentionRequest{H, F, 0.2, false};
  ak.graph = g;
  ak.kernels = std::make_unique<sc::GatKernels>(g, sc::GatSpec{H, F, 0.2, g.index_dtype()});
  Rng rng(5);
  const Tensor x0 = Tensor::uniform({7, H * F}, -1, 1, rng);
  const Var al = Var::constant(Tensor::uniform({H, F}, -1, 1, rng));
  const Var ar = Var::constant(Tensor::uniform({H, F}, -1, 1, rng));
  const Tensor dy = Tensor::uniform({7, H * F}, -1, 1, rng);
  // Either fused form (the tuner's pick, AttentionKernels::fused_form) alike, and
  // training through the fused forward that keeps scores and attention.
  struct Choice {
    bool fused, fused_training, saving_training;
  };
  std::vector<Tensor> grads, values;
  for (const sc::FusedSoftmax form : {sc::FusedSoftmax::TwoPass, sc::FusedSoftmax::Online})
    for (const Choice c : {Choice{true, false, false}, Choice{false, true, false}, Choice{false, false, true}}) {
      ak.fused = c.fused;
      ak.fused_training = c.fused_training;
      ak.saving_training = c.saving_training;
      ak.fused_form = form;
      AttentionPath path;
      Tape eval;
      values.push_back(nn::gat_attention(eval, ak, Var::constant(x0), al, ar, 0.0f, 1, &path).value());
      EXPECT_EQ(path, ak.fused ? AttentionPath::Fused : AttentionPath::Unfused) << "a pass without gradients";
      Tape train;
      const Var x = Var::parameter(x0.clone(), "x");
      const Var y = nn::gat_attention(train, ak, x, al, ar, 0.0f, 1, &path);
      EXPECT_EQ(path, c.saving_training  ? AttentionPath::FusedSaving
                      : c.fused_training ? AttentionPath::Fused
                                         : AttentionPath::Unfused)
          << "a pass with gradients";
      train.backward(y, dy);
      grads.push_back(x.grad().clone());
    }
  for (size_t v = 1; v < values.size(); ++v) {
    EXPECT_LT(max_abs_diff(values[0], values[v]), 1e-5) << v;
    EXPECT_LT(max_abs_diff(grads[0], grads[v]), 1e-5) << v;
  }
  EXPECT_GT(max_abs_diff(grads[0], Tensor::zeros({7, H * F}, DType::F32)), 1e-3);
}

TEST(GatAttentionTest, HeadMeanAveragesHeadsAndDifferentiates) {
  Rng rng(4);
  const Tensor x = Tensor::uniform({5, 12}, -1, 1, rng);
  Tape t;
  const Tensor y = nn::head_mean(t, Var::constant(x), 4).value();
  ASSERT_EQ(y.shape(), (Shape{5, 3}));
  EXPECT_NEAR(y.data<float>()[1 * 3 + 2],
              (x.data<float>()[12 + 2] + x.data<float>()[12 + 5] + x.data<float>()[12 + 8] + x.data<float>()[12 + 11]) / 4,
              1e-6);
  auto fn = [](Tape& tape, const std::vector<Var>& in) { return nn::head_mean(tape, in[0], 4); };
  EXPECT_EQ(testing::check_gradients(fn, {x}, {true}), 60);
}

// ---- GATConv ----

nn::GatConvOptions options(int64_t heads, bool concat, bool residual, float attn = 0.0f, float feat = 0.0f) {
  nn::GatConvOptions o;
  o.heads = heads;
  o.concat = concat;
  o.residual = residual;
  o.attn_dropout = attn;
  o.feat_dropout = feat;
  return o;
}

nn::GraphKernels kernels_for(const Graph& g, const nn::GraphLayer& layer, const nn::SparseFeatures* f = nullptr) {
  nn::KernelRequests r;
  layer.request_kernels(r, f != nullptr);
  return nn::build_graph_kernels(g, f, r, {});
}

std::vector<Var> vars(const std::vector<nn::Parameter>& ps) {
  std::vector<Var> v;
  for (const auto& p : ps) v.push_back(p.var);
  return v;
}

TEST(GatConvTest, ShapesParametersAndGlorotInit) {
  Rng rng(5);
  nn::GATConv concat(9, 5, options(3, true, true), rng, 0);
  nn::GATConv mean(15, 4, options(2, false, false), rng, 1);
  EXPECT_EQ(concat.out_features(), 15);
  EXPECT_EQ(mean.out_features(), 4);
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  for (const auto& p : concat.parameters()) {
    names.push_back(p.name);
    shapes.push_back(p.var.shape());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0.weight", "layers.0.att_src", "layers.0.att_dst",
                                             "layers.0.res_weight", "layers.0.bias"}));
  EXPECT_EQ(shapes, (std::vector<Shape>{{9, 15}, {3, 5}, {3, 5}, {9, 15}, {15}}));
  EXPECT_EQ(mean.parameters().back().var.shape(), (Shape{4}));
  EXPECT_EQ(mean.parameters().size(), 4u);  // no residual
  // Glorot bound sqrt(6 / (in + H·F)) on the weight, and a non-degenerate draw.
  const float bound = static_cast<float>(std::sqrt(6.0 / (9 + 15)));
  const Tensor& w = concat.parameters()[0].var.value();
  float mx = 0;
  for (int64_t i = 0; i < w.numel(); ++i) mx = std::max(mx, std::abs(w.data<float>()[i]));
  EXPECT_LE(mx, bound);
  EXPECT_GT(mx, 0.5f * bound);
  EXPECT_EQ(concat.describe(), "GATConv(9 -> 5 x 3 heads, concat, slope 0.2, residual, bias, self-loops)");
  const Graph g = hand_graph();
  const nn::GraphKernels k = kernels_for(g, concat);
  Tape t;
  const Var y = concat.forward(t, k, NodeFeatures::from_dense(Var::constant(Tensor::uniform({7, 9}, -1, 1, rng))));
  EXPECT_EQ(y.shape(), (Shape{7, 15}));
}

TEST(GatConvTest, IsolatedNodeAttendsToItselfOnlyWithSelfLoops) {
  Rng rng(6);
  nn::GatConvOptions o = options(2, true, false);
  nn::GATConv with(4, 3, o, rng, 0);
  o.add_self_loops = false;
  nn::GATConv without(4, 3, o, rng, 0);
  const Graph g = hand_graph();
  const Tensor x = Tensor::uniform({7, 4}, -1, 1, rng);
  const nn::GraphKernels kw = kernels_for(g, with), ko = kernels_for(g, without);
  // Node 5 is isolated: with self-loops its attention is 1 on itself, so y_5 = x_5·W.
  Tape t;
  const Tensor y = with.forward(t, kw, NodeFeatures::from_dense(Var::constant(x))).value();
  const Tensor& w = with.parameters()[0].var.value();
  for (int64_t c = 0; c < 6; ++c) {
    double want = 0;
    for (int64_t f = 0; f < 4; ++f) want += double(x.data<float>()[5 * 4 + f]) * w.data<float>()[f * 6 + c];
    EXPECT_NEAR(y.data<float>()[5 * 6 + c], want, 1e-5);
  }
  // Without self-loops nodes without in-edges (2 and 5) get only the bias (0).
  Tape t2;
  const Tensor y2 = without.forward(t2, ko, NodeFeatures::from_dense(Var::constant(x))).value();
  for (int64_t c = 0; c < 6; ++c) {
    EXPECT_EQ(y2.data<float>()[2 * 6 + c], 0.0f);
    EXPECT_EQ(y2.data<float>()[5 * 6 + c], 0.0f);
  }
}

TEST(GatConvTest, ParameterGradientsWithDropoutResidualAndSparseInput) {
  Rng rng(8);
  const Graph g = hand_graph();
  // Sparse binary input features [7, 6].
  std::vector<int64_t> indptr = {0, 2, 3, 3, 5, 6, 8, 9};
  std::vector<int32_t> indices = {0, 3, 2, 1, 5, 4, 0, 2, 5};
  const nn::SparseFeatures f =
      nn::SparseFeatures::from_csr(7, 6, Tensor::from_vector(indptr), Tensor::from_vector(indices), Tensor());
  for (bool concat : {true, false}) {
    SCOPED_TRACE(concat ? "concat" : "mean");
    nn::GATConv conv(6, 3, options(3, concat, true, 0.3f, 0.2f), rng, 0);
    const nn::GraphKernels k = kernels_for(g, conv, &f);
    auto output = [&](Tape& t) { return ag::elu(t, conv.forward(t, k, NodeFeatures{Var(), &f, 0.0f, 0}, 77)); };
    // A small step: a larger one (2e-3) moves an attention score across LeakyReLU's kink here.
    // So the output is checked as it is (the checker sums it in double with random
    // weights), not through a float scalar loss such as l2_penalty: rounding that
    // scalar (~1e-6 here) over a step of 4e-4 was as large as the tolerance.
    EXPECT_GT(
        testing::check_parameter_gradients(output, vars(conv.parameters()), {.eps = 2e-4, .atol = 1e-3, .rtol = 5e-3}),
        40);
    EXPECT_EQ(conv.last_path(), AttentionPath::Unfused);  // attention dropout in training mode
    // Eval mode: no dropout, the default (unfused) forward, seed-independent.
    Tape e1, e2;
    e1.set_training(false);
    e2.set_training(false);
    const Tensor a = conv.forward(e1, k, NodeFeatures{Var(), &f, 0.0f, 0}, 1).value();
    EXPECT_EQ(conv.last_path(), AttentionPath::Unfused);
    EXPECT_EQ(max_abs_diff(a, conv.forward(e2, k, NodeFeatures{Var(), &f, 0.0f, 0}, 2).value()), 0.0);
    Tape t1, t2;
    EXPECT_GT(max_abs_diff(conv.forward(t1, k, NodeFeatures{Var(), &f, 0.0f, 0}, 1).value(),
                           conv.forward(t2, k, NodeFeatures{Var(), &f, 0.0f, 0}, 2).value()),
              1e-4);
  }
}

// ---- the GAT model ----

TEST(GatModelTest, StackShapesNamesAndDescription) {
  Rng rng(1);
  nn::ModelConfig c;
  c.kind = nn::ModelKind::Gat;
  c.hidden = 8;
  c.activation = nn::Activation::Elu;
  c.dropout = 0.6f;
  c.input_dropout = 0.6f;
  nn::GnnModel m(c, 1433, 7, rng);
  // layer 0: W 1433x64, att 2x(8x8), bias 64; layer 1: W 64x7, att 2x(1x7), bias 7.
  EXPECT_EQ(m.num_parameters(), 1433 * 64 + 2 * 64 + 64 + 64 * 7 + 2 * 7 + 7);
  EXPECT_EQ(m.layer(0).out_features(), 64);
  EXPECT_EQ(m.layer(1).out_features(), 7);
  EXPECT_EQ(m.describe(),
            "gat: 2 layers 1433 -> 64 -> 7 (8 x 8 heads concat, 1 output head, attention dropout 0.6, slope 0.2, "
            "self-loops), elu, dropout 0.6, input dropout 0.6, 92,373 parameters");
  const nn::KernelRequests r = m.kernel_requests(true);
  ASSERT_EQ(r.attention.size(), 2u);
  EXPECT_EQ(r.attention[0], (AttentionRequest{8, 8, 0.2, true}));
  EXPECT_EQ(r.attention[1], (AttentionRequest{1, 7, 0.2, true}));
  EXPECT_EQ(r.feature_products, std::vector<int64_t>{64});
}

TEST(GatModelTest, WholeModelGradientsWithResidualAndAttentionDropout) {
  Rng rng(2);
  testing::RandomGraphSpec spec;
  spec.rows = spec.cols = 12;
  spec.avg_degree = 2.5;
  spec.empty_row_fraction = 0.2;
  spec.seed = 5;
  const Graph g = testing::random_graph(spec);
  nn::ModelConfig c;
  c.kind = nn::ModelKind::Gat;
  c.hidden = 3;
  c.gat.heads = 3;
  c.gat.output_heads = 2;
  c.gat.residual = true;
  c.gat.attn_dropout = 0.4f;
  c.activation = nn::Activation::Elu;
  c.dropout = 0.3f;
  nn::GnnModel m(c, 5, 3, rng);
  const nn::GraphKernels k = nn::build_graph_kernels(g, nullptr, m.kernel_requests(false), {});
  const Tensor x = Tensor::uniform({12, 5}, -1, 1, rng);
  Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  Tensor train = Tensor::from_vector<int64_t>({0, 2, 3, 5, 7, 8, 11});
  auto loss = [&](Tape& t) {
    Var logits = m.forward(t, k, NodeFeatures::from_dense(Var::constant(x)), 4321);
    return ag::nll_loss(t, ag::log_softmax(t, logits), labels, train);
  };
  EXPECT_GT(testing::check_parameter_gradients(loss, vars(m.parameters()), {.eps = 2e-3, .atol = 1e-3, .rtol = 5e-3}),
            100);
}

// ---- config ----

TEST(GatConfigTest, KeysAreParsedIntoTheModelConfig) {
  const train::Config c = train::Config::parse(
      "version: 1\ndata: {dataset: cora}\n"
      "model: {name: gat, hidden: 8, gat: {heads: 4, output_heads: 2, concat: false, negative_slope: 0.1, "
      "attn_dropout: 0.3, residual: true, self_loops: false}}\n"
      "runtime: {attention: unfused}\n",
      "cfg.yaml");
  const train::TrainingConfig t = train::typed(c);
  EXPECT_EQ(t.model.kind, nn::ModelKind::Gat);
  EXPECT_EQ(t.model.gat.heads, 4);
  EXPECT_EQ(t.model.gat.output_heads, 2);
  EXPECT_FALSE(t.model.gat.concat);
  EXPECT_FLOAT_EQ(t.model.gat.negative_slope, 0.1f);
  EXPECT_FLOAT_EQ(t.model.gat.attn_dropout, 0.3f);
  EXPECT_TRUE(t.model.gat.residual);
  EXPECT_FALSE(t.model.gat.add_self_loops);
  EXPECT_EQ(t.runtime.kernels.attention, AttentionMode::Unfused);
  const train::Config d = train::Config::parse("version: 1\ndata: {dataset: cora}\n", "cfg.yaml");
  EXPECT_EQ(d.get_int("model.gat.heads"), 8);
  EXPECT_EQ(d.get_string("runtime.attention"), "auto");
  EXPECT_NE(train::schema_help().find("model.gat.attn_dropout"), std::string::npos);
  EXPECT_NE(d.to_yaml().find("  gat:\n    heads: 8"), std::string::npos);
}

TEST(GatConfigErrorTest, BadGatKeysNameThePathLineAndNearestKey) {
  auto parse = [](const std::string& yaml, std::vector<std::string> sets = {}) {
    return train::Config::parse(yaml, "cfg.yaml", sets);
  };
  testing::expect_user_error(
      [&] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  name: gat\n  gat:\n    heds: 4\n"); },
      {"cfg.yaml:7:5:", "unknown key 'model.gat.heds'", "did you mean 'model.gat.heads'?"});
  testing::expect_user_error(
      [&] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  attn_dropout: 0.5\n"); },
      {"cfg.yaml:5:3:", "unknown key 'model.attn_dropout'", "did you mean 'model.gat.attn_dropout'?"});
  testing::expect_user_error(
      [&] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  gat:\n    attn_dropout: 1.0\n"); },
      {"cfg.yaml:6:19:", "'model.gat.attn_dropout' expects a number in [0, 1), got '1.0'"});
  testing::expect_user_error([&] { parse("version: 1\ndata: {dataset: cora}\n", {"model.gat.heads=0"}); },
                             {"--set model.gat.heads=0", "'model.gat.heads' expects an integer in [1, 256]"});
  testing::expect_user_error([&] { parse("version: 1\ndata: {dataset: cora}\n", {"runtime.attention=fast"}); },
                             {"'runtime.attention' expects one of: auto, tuned, fused, unfused, got 'fast'"});
  testing::expect_user_error([&] { parse("version: 1\ndata: {dataset: cora}\nmodel: {name: gta}\n"); },
                             {"'model.name' expects one of: graphsage, gcn, gat, rgcn, got 'gta'"});
}

}  // namespace
}  // namespace strata
