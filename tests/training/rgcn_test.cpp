// R-GCN on the tape: relational_matmul / relational_embed / relational_basis_embed
// (generated RGMS kernels) against the reference loops and against central finite
// differences (X, full W, basis V and c, one-hot weights, one-hot bases), on random small relational graphs with an
// empty relation and isolated nodes, int32 and int64 indices; RelGraphConv and RgcnModel parameter gradients; tuned
// orders; the model's error texts.
#include <gtest/gtest.h>

#include "core/autograd_ops.h"
#include "layers/rel_graph_conv.h"
#include "layers/relational_ops.h"
#include "models/rgcn.h"
#include "tests/support/test_support.h"
#include "tests/training/grad_check.h"

namespace strata {
namespace {

using ag::Tape;
using ag::Var;

// 14 nodes, 4 relations: relation 2 is empty, node 13 has no edge at all.
sc::RelationalGraph small_graph(bool int64) {
  const int64_t n = 14;
  std::vector<Graph> rels;
  for (int r = 0; r < 4; ++r) {
    std::vector<int64_t> rr, cc;
    if (r != 2) {
      testing::RandomGraphSpec s;
      s.rows = s.cols = n - 1;
      s.avg_degree = 1.5 + r;
      s.empty_row_fraction = 0.25;
      s.seed = 40 + static_cast<uint64_t>(r);
      const Graph g = testing::random_graph(s);
      for (int64_t i = 0; i < g.num_rows(); ++i)
        for (int64_t p = g.row_begin(i); p < g.row_end(i); ++p) {
          rr.push_back(i);
          cc.push_back(g.column(p));
        }
    }
    rels.push_back(Graph::from_coo(n, n, Tensor::from_vector(rr), Tensor::from_vector(cc)));
  }
  sc::RelationalGraph g = sc::RelationalGraph::build(n, n, rels, sc::RgmsNormalization::RightByRelation, 8);
  if (int64) nn::widen_indices(g);
  return g;
}

// Y = Σ_r A_r X W_r with plain loops over the relational graph.
Tensor dense_forward(const sc::RelationalGraph& g, const Tensor& X, const Tensor& W, int64_t fout) {
  Tensor Y = Tensor::empty({g.rows, fout}, DType::F32);
  sc::reference_rgms(g, X, W.reshape({g.relations, X.dim(1), fout}), Y);
  return Y;
}

class RgcnOpTest : public ::testing::TestWithParam<bool> {};

TEST_P(RgcnOpTest, ForwardMatchesReferenceAndGradientsMatchFiniteDifferences) {
  const sc::RelationalGraph g = small_graph(GetParam());
  EXPECT_EQ(g.index_dtype, GetParam() ? DType::I64 : DType::I32);
  EXPECT_EQ(g.rel_ptr.data<int64_t>()[3] - g.rel_ptr.data<int64_t>()[2], 0);  // the empty relation
  nn::RelationalKernelRequests req;
  req.add_matmul(3, 4);
  req.add_embed(4);
  const nn::RelationalKernels k(g, req, {});
  EXPECT_EQ(k.reversed().index_dtype, g.index_dtype);
  Rng rng(5);
  const Tensor X = testing::away_from_zero({g.cols, 3}, 0.1, 1.0, rng);
  const Tensor W = testing::away_from_zero({g.relations, 12}, 0.1, 1.0, rng);

  Tape tape;
  const Var y = nn::relational_matmul(tape, k, Var::constant(X), Var::constant(W), 4);
  const CloseReport rep = all_close(y.value(), dense_forward(g, X, W, 4), 1e-5, 1e-5);
  EXPECT_TRUE(rep.ok) << rep.str();
  for (int64_t f = 0; f < 4; ++f) EXPECT_EQ(y.value().data<float>()[13 * 4 + f], 0.0f);  // isolated node

  // X and full W.
  const int64_t n1 = testing::check_gradients(
      [&](Tape& t, const std::vector<Var>& in) { return nn::relational_matmul(t, k, in[0], in[1], 4); }, {X, W},
      {true, true});
  EXPECT_GT(n1, 80);
  // Basis: W = c·V, gradients of V [B, 12] and c [R, B] through the matmul.
  const Tensor V = testing::away_from_zero({2, 12}, 0.1, 1.0, rng);
  const Tensor c = testing::away_from_zero({g.relations, 2}, 0.1, 1.0, rng);
  const int64_t n2 = testing::check_gradients(
      [&](Tape& t, const std::vector<Var>& in) {
        return nn::relational_matmul(t, k, in[0], ag::matmul(t, in[1], in[2]), 4);
      },
      {X, c, V}, {true, true, true});
  EXPECT_GT(n2, 60);
  // One-hot input: W [R, N·fout]; relation 2's and node 13's rows get zero gradient.
  const Tensor E = testing::away_from_zero({g.relations, g.cols * 4}, 0.1, 1.0, rng);
  const int64_t n3 = testing::check_gradients(
      [&](Tape& t, const std::vector<Var>& in) { return nn::relational_embed(t, k, in[0], 4); }, {E}, {true});
  EXPECT_GT(n3, 100);
  // The one-hot forward is the matmul with the identity as X.
  Tensor I = Tensor::zeros({g.cols, g.cols}, DType::F32);
  for (int64_t i = 0; i < g.cols; ++i) I.data<float>()[i * g.cols + i] = 1.0f;
  Tape t2;
  const Var ye = nn::relational_embed(t2, k, Var::constant(E), 4);
  const CloseReport rep2 = all_close(ye.value(), dense_forward(g, I, E, 4), 1e-5, 1e-5);
  EXPECT_TRUE(rep2.ok) << rep2.str();
}

// One-hot input with bases: the basis embedding kernels (never forming W) give the
// composition's values and gradients (matmul then relational_embed), and their
// gradients of c and V match finite differences; node 13 (no edge) and the empty
// relation 2 read no rows, so V's rows of node 13 get zero gradient.
TEST_P(RgcnOpTest, BasisEmbeddingMatchesTheComposedWeightsAndFiniteDifferences) {
  const sc::RelationalGraph g = small_graph(GetParam());
  nn::RelationalKernelRequests req;
  req.add_embed(4);
  req.add_basis_embed(3, 4);
  const nn::RelationalKernels k(g, req, {});
  Rng rng(8);
  const Tensor V = testing::away_from_zero({3, g.cols * 4}, 0.1, 1.0, rng);
  const Tensor c = testing::away_from_zero({g.relations, 3}, 0.1, 1.0, rng);
  const Tensor seed = testing::away_from_zero({g.rows, 4}, 0.1, 1.0, rng);
  auto run = [&](bool basis_kernels, Tensor& dc, Tensor& dv) {
    Tape tape;
    const Var cv = Var::parameter(c.clone(), "c"), vv = Var::parameter(V.clone(), "V");
    const Var y = basis_kernels ? nn::relational_basis_embed(tape, k, cv, vv, 4)
                                : nn::relational_embed(tape, k, ag::matmul(tape, cv, vv), 4);
    tape.backward(y, seed);
    dc = cv.grad().clone();
    dv = vv.grad().clone();
    return y.value().clone();
  };
  Tensor dc1, dv1, dc2, dv2;
  const Tensor y1 = run(true, dc1, dv1), y2 = run(false, dc2, dv2);
  for (const auto& [got, want, what] : {std::tuple{y1, y2, "Y"}, {dc1, dc2, "dc"}, {dv1, dv2, "dV"}}) {
    const CloseReport rep = all_close(got, want, 1e-5, 1e-5);
    EXPECT_TRUE(rep.ok) << what << ": " << rep.str();
  }
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t f = 0; f < 4; ++f) EXPECT_EQ(dv1.data<float>()[b * g.cols * 4 + 13 * 4 + f], 0.0f);
  const int64_t n = testing::check_gradients(
      [&](Tape& t, const std::vector<Var>& in) { return nn::relational_basis_embed(t, k, in[0], in[1], 4); }, {c, V},
      {true, true});
  EXPECT_GT(n, 100);
}

// Kernels built for inference (requests.backward = false) give the same forward
// values and have no backward kernels to hand out.
TEST_P(RgcnOpTest, InferenceKernelsRunTheForwardPassesOnly) {
  const sc::RelationalGraph g = small_graph(GetParam());
  nn::RelationalKernelRequests req;
  req.add_matmul(3, 4);
  req.add_embed(4);
  req.add_basis_embed(2, 4);
  const nn::RelationalKernels train(g, req, {});
  req.backward = false;
  const nn::RelationalKernels infer(g, req, {});
  EXPECT_EQ(train.records().size(), 6u);
  EXPECT_EQ(infer.records().size(), 4u);  // matmul and embed forwards, the basis gather and rows
  Rng rng(12);
  const Tensor X = testing::away_from_zero({g.cols, 3}, 0.1, 1.0, rng);
  const Tensor W = testing::away_from_zero({g.relations, 12}, 0.1, 1.0, rng);
  const Tensor E = testing::away_from_zero({g.relations, g.cols * 4}, 0.1, 1.0, rng);
  const Tensor c = testing::away_from_zero({g.relations, 2}, 0.1, 1.0, rng);
  const Tensor V = testing::away_from_zero({2, g.cols * 4}, 0.1, 1.0, rng);
  auto outputs = [&](const nn::RelationalKernels& k) {
    Tape tape;
    return std::vector<Tensor>{
        nn::relational_matmul(tape, k, Var::constant(X), Var::constant(W), 4).value().clone(),
        nn::relational_embed(tape, k, Var::constant(E), 4).value().clone(),
        nn::relational_basis_embed(tape, k, Var::constant(c), Var::constant(V), 4).value().clone()};
  };
  const std::vector<Tensor> a = outputs(train), b = outputs(infer);
  for (size_t i = 0; i < a.size(); ++i) {
    const CloseReport rep = all_close(b[i], a[i], 0, 0);
    EXPECT_TRUE(rep.ok) << i << ": " << rep.str();
  }
  EXPECT_THROW(
      {
        try {
          (void)infer.backward(3, 4);
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("built for inference (no backward kernels)"), std::string::npos)
              << e.what();
          throw;
        }
      },
      std::exception);
}

TEST_P(RgcnOpTest, EveryOrderGivesTheSameGradients) {
  const sc::RelationalGraph g = small_graph(GetParam());
  nn::RelationalKernelRequests req;
  req.add_matmul(3, 4);
  Rng rng(6);
  const Tensor X = testing::away_from_zero({g.cols, 3}, 0.1, 1.0, rng);
  const Tensor W = testing::away_from_zero({g.relations, 3, 4}, 0.1, 1.0, rng);
  const Tensor seed = testing::away_from_zero({g.rows, 4}, 0.1, 1.0, rng);
  Tensor ref_dx, ref_dw;
  for (sc::RgmsOrder order : {sc::RgmsOrder::Fused, sc::RgmsOrder::AggregateFirst, sc::RgmsOrder::TransformFirst,
                              sc::RgmsOrder::AggregateFirstEll3d, sc::RgmsOrder::Mixed}) {
    const nn::RelationalKernels k(g, req, {}, order);
    Tape tape;
    const Var x = Var::parameter(X.clone(), "x"), w = Var::parameter(W.clone(), "w");
    const Var y = nn::relational_matmul(tape, k, x, w, 4);
    tape.backward(y, seed);
    if (!ref_dx.defined()) {
      ref_dx = x.grad().clone();
      ref_dw = w.grad().clone();
      continue;
    }
    EXPECT_TRUE(all_close(x.grad(), ref_dx, 1e-5, 1e-5).ok) << sc::rgms_order_name(order);
    EXPECT_TRUE(all_close(w.grad(), ref_dw, 1e-5, 1e-5).ok) << sc::rgms_order_name(order);
  }
}

INSTANTIATE_TEST_SUITE_P(Indices, RgcnOpTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

TEST(RelGraphConv, ParameterGradientsFullBasisAndOneHot) {
  const sc::RelationalGraph g = small_graph(false);
  nn::RelationalKernelRequests req;
  req.add_matmul(3, 4);
  req.add_embed(4);
  req.add_basis_embed(2, 4);  // a one-hot layer with bases runs the basis embedding kernels
  const nn::RelationalKernels k(g, req, {});
  Rng rng(8);
  const Tensor X = testing::away_from_zero({g.cols, 3}, 0.1, 1.0, rng);
  for (int64_t bases : {0, 2}) {
    for (bool one_hot : {false, true}) {
      nn::RelGraphConvOptions o;
      o.in = one_hot ? g.cols : 3;
      o.out = 4;
      o.relations = g.relations;
      o.num_bases = bases;
      o.one_hot = one_hot;
      Rng init(3);
      nn::RelGraphConv conv(o, init, 0);
      // Biases start at zero; move them so the check sees them.
      std::vector<Var> params;
      for (const auto& p : conv.parameters()) {
        if (p.is_bias) p.var.mutable_value().data<float>()[1] = 0.3f;
        params.push_back(p.var);
      }
      EXPECT_EQ(params.size(), bases ? 4u : 3u) << conv.describe();
      nn::RelationalKernelRequests asked;
      conv.request_kernels(asked);
      EXPECT_EQ(asked.basis_embeds.size(), one_hot && bases ? 1u : 0u) << conv.describe();
      const int64_t n = testing::check_parameter_gradients(
          [&](Tape& t) { return conv.forward(t, k, one_hot ? Var() : Var::constant(X), 0); }, params);
      EXPECT_GT(n, 40) << conv.describe();
    }
  }
  nn::RelGraphConvOptions o;
  o.in = 3;
  o.out = 4;
  o.relations = 4;
  o.num_bases = 2;
  o.activation = nn::RelActivation::Relu;
  o.dropout = 0.5f;
  Rng init(1);
  EXPECT_EQ(nn::RelGraphConv(o, init, 1).describe(),
            "RelGraphConv(3 -> 4, 4 relations, 2 bases, self loop, bias, relu, dropout 0.5)");
}

TEST(RgcnModel, TypedInputsProjectFeaturesAndEmbedFeaturelessTypes) {
  const sc::RelationalGraph g = small_graph(false);
  Rng rng(9);
  std::vector<nn::RgcnTypeInput> types(2);
  types[0] = {"paper", 6, 5, testing::away_from_zero({6, 5}, 0.1, 1.0, rng), nullptr, nullptr};
  types[1] = {"term", 8, 0, {}, nullptr, nullptr};
  nn::ModelConfig mc;
  mc.kind = nn::ModelKind::Rgcn;
  mc.layers = 1;  // no relu: finite differences across its kink would not agree
  mc.dropout = 0;
  mc.rgcn.num_bases = 2;
  mc.rgcn.embedding_dim = 3;
  Rng init(2);
  const nn::RgcnModel model(mc, types, g.relations, 3, init);
  EXPECT_FALSE(model.one_hot());
  nn::RelationalKernelRequests req;
  model.request_kernels(req);
  ASSERT_EQ(req.matmuls.size(), 1u);
  const nn::RelationalKernels k(g, req, {});
  std::vector<Var> params;
  for (const auto& p : model.parameters()) params.push_back(p.var);
  EXPECT_EQ(model.parameters()[0].name, "input.paper.weight");
  EXPECT_EQ(model.parameters()[2].name, "input.term.embedding");
  for (const auto& p : model.parameters())
    if (p.is_bias) p.var.mutable_value().data<float>()[0] = 0.2f;
  const int64_t n = testing::check_parameter_gradients(
      [&](Tape& t) { return model.forward(t, k, types, 0); }, params, {1e-2, 1e-3, 5e-3, 300, 7});
  EXPECT_EQ(n, 80);  // every parameter element
  EXPECT_EQ(model.describe(),
            "rgcn: 1 layer 3 -> 3 (4 relations, 2 bases, self loop, input: 1 projected type, 1 embedded), relu, "
            "dropout 0, 80 parameters");

  nn::ModelConfig one = mc;
  one.rgcn.input = nn::RgcnInput::OneHot;
  testing::expect_user_error([&] { nn::RgcnModel m(one, types, g.relations, 3, init); },
                             {"model.input is one_hot", "paper", "model.input: embedding"});
}

// A model's forward over a batch's receptive field (the subgraph induced on the
// seeds' 2-hop in-neighbourhood, rows kept within 1 hop) gives the seeds the whole
// graph's logits: one-hot input with full weights and with bases (weight rows read
// at the field's nodes), and typed input (dense features projected, a featureless
// type's embedding read at its field rows), int32 and int64 indices.
TEST(RgcnModel, ForwardOverTheReceptiveFieldGivesTheSeedsTheWholeGraphsLogits) {
  const int64_t papers = 180, terms = 120, n = papers + terms;
  std::vector<Graph> rels;
  for (int r = 0; r < 5; ++r) {
    testing::RandomGraphSpec s;
    s.rows = s.cols = n;
    s.avg_degree = 0.4 + 0.3 * r;
    s.empty_row_fraction = 0.3;
    s.seed = 90 + static_cast<uint64_t>(r);
    rels.push_back(testing::random_graph(s));
  }
  Rng rng(4);
  const Tensor paper_x = testing::away_from_zero({papers, 7}, 0.1, 1.0, rng);
  const std::vector<int64_t> seeds{5, 170, 5, 250, 42};
  for (const bool int64 : {false, true})
    for (const int input : {0, 1, 2}) {  // one-hot full weights, one-hot bases, typed
      SCOPED_TRACE(fmt::format("{} indices, input {}", int64 ? "int64" : "int32", input));
      sc::RelationalGraph g = sc::RelationalGraph::build(n, n, rels, sc::RgmsNormalization::RightByRelation, 16);
      if (int64) nn::widen_indices(g);
      std::vector<nn::RgcnTypeInput> types(2);
      types[0] = {"paper", papers, input == 2 ? 7 : 0, input == 2 ? paper_x : Tensor(), nullptr, nullptr};
      types[1] = {"term", terms, 0, {}, nullptr, nullptr};
      nn::ModelConfig mc;
      mc.kind = nn::ModelKind::Rgcn;
      mc.layers = 2;
      mc.hidden = 6;
      mc.dropout = 0.5;  // eval mode: no effect
      mc.rgcn.num_bases = input == 1 ? 2 : 0;
      mc.rgcn.embedding_dim = 5;
      Rng init(3);
      const nn::RgcnModel model(mc, types, g.relations, 4, init);
      EXPECT_EQ(model.one_hot(), input != 2);
      nn::RelationalKernelRequests req;
      model.request_kernels(req);
      req.backward = false;
      Tape tape;
      tape.set_training(false);
      tape.set_grad_enabled(false);
      const nn::RelationalKernels whole(g, req, {});
      const Tensor want = model.forward(tape, whole, types, 0).value();

      std::vector<int64_t> inner;
      const std::vector<int64_t> field = g.in_neighbourhood(seeds, 2, &inner);
      ASSERT_LT(field.size(), static_cast<size_t>(n) / 2) << "the test wants a small field";
      ASSERT_GT(field.size(), inner.size());
      // One-hot: layer 0 on the field's rows with global columns, layer 1 on the square field.
      nn::RelationalKernelRequests req_first, req_rest;
      model.layer(0).request_kernels(req_first);
      model.layer(1).request_kernels(req_rest);
      req_first.backward = req_rest.backward = false;
      const sc::RelationalGraph induced = g.induced(field, inner);
      const nn::RelationalKernels part(induced, model.one_hot() ? req_rest : req, {});
      const nn::RelationalKernels first(induced.with_column_ids(field, g.cols), req_first, {});
      std::vector<nn::RgcnTypeInput> sub = types;
      std::vector<int64_t> paper_rows;
      for (int64_t v : field)
        if (v < papers) paper_rows.push_back(v);
      sub[0].count = static_cast<int64_t>(paper_rows.size());
      sub[1].count = static_cast<int64_t>(field.size() - paper_rows.size());
      if (input == 2) {
        sub[0].dense = Tensor::empty({sub[0].count, 7}, DType::F32);
        for (size_t k = 0; k < paper_rows.size(); ++k)
          std::copy_n(paper_x.data<float>() + paper_rows[k] * 7, 7, sub[0].dense.data<float>() + k * 7);
      }
      const Tensor got = model.forward_on(tape, model.one_hot() ? first : part, part, sub, field).value();
      ASSERT_EQ(got.dim(0), static_cast<int64_t>(field.size()));
      for (int64_t seed : seeds) {
        const int64_t row = std::lower_bound(field.begin(), field.end(), seed) - field.begin();
        for (int64_t c = 0; c < 4; ++c)
          EXPECT_NEAR(got.data<float>()[row * 4 + c], want.data<float>()[seed * 4 + c], 1e-5)
              << "seed " << seed << " class " << c;
      }
    }
}

// R-GCN's one-hot first layer with full weights: the gradient support the model
// marks on layers.0.weight is exactly where a real gradient is non-zero (the rows
// (r, j) of each relation's sources j), and other models mark nothing.
TEST(RgcnModel, OneHotWeightSupportIsWhereTheGradientIs) {
  for (bool int64 : {false, true}) {
    SCOPED_TRACE(int64 ? "int64 indices" : "int32 indices");
    const sc::RelationalGraph g = small_graph(int64);
    std::vector<nn::RgcnTypeInput> types(1);
    types[0] = {"entity", g.cols, 0, {}, nullptr, nullptr};
    nn::ModelConfig mc;
    mc.kind = nn::ModelKind::Rgcn;
    mc.layers = 1;  // no relu, whose kink would zero some of the gradient
    mc.dropout = 0;
    mc.rgcn.input = nn::RgcnInput::OneHot;
    Rng init(4);
    nn::RgcnModel model(mc, types, g.relations, 3, init);
    model.mark_gradient_support(g);
    const nn::Parameter& w = model.parameters()[0];
    ASSERT_EQ(w.name, "layers.0.weight");
    ASSERT_TRUE(w.support);
    for (size_t i = 1; i < model.parameters().size(); ++i) EXPECT_FALSE(model.parameters()[i].support);
    nn::RelationalKernelRequests req;
    model.request_kernels(req);
    const nn::RelationalKernels k(g, req, {});
    Tape t;
    Rng rng(5);
    const Var logits = model.forward(t, k, types, 0);
    t.backward(logits, Tensor::uniform(logits.shape(), 0.5, 1.0, rng));
    std::vector<bool> marked(static_cast<size_t>(w.var.value().numel()), false);
    int64_t covered = 0;
    for (const auto& [b, e] : *w.support) {
      ASSERT_LT(b, e);
      for (int64_t q = b; q < e; ++q) {
        EXPECT_FALSE(marked[static_cast<size_t>(q)]) << "element " << q << " in two ranges";
        marked[static_cast<size_t>(q)] = true;
      }
      covered += e - b;
    }
    const float* grad = w.var.grad().data<float>();
    int64_t nonzero = 0;
    for (int64_t q = 0; q < w.var.value().numel(); ++q) {
      if (grad[q] != 0.0f) ++nonzero;
      EXPECT_TRUE(grad[q] == 0.0f || marked[static_cast<size_t>(q)]) << "gradient outside the support at " << q;
    }
    // Every row of the support gets a gradient (dY is positive, a_r(i, j) > 0): the
    // support is no wider than needed. 3 floats (classes) per row; relation 2 is empty.
    EXPECT_EQ(covered, nonzero);
    EXPECT_EQ(covered % 3, 0);
    EXPECT_GT(covered, 0);
  }
  // Bases: nothing is marked (every composed row can move).
  const sc::RelationalGraph g = small_graph(false);
  std::vector<nn::RgcnTypeInput> types(1);
  types[0] = {"entity", g.cols, 0, {}, nullptr, nullptr};
  nn::ModelConfig mc;
  mc.kind = nn::ModelKind::Rgcn;
  mc.rgcn.input = nn::RgcnInput::OneHot;
  mc.rgcn.num_bases = 2;
  Rng init(4);
  nn::RgcnModel model(mc, types, g.relations, 3, init);
  model.mark_gradient_support(g);
  for (const auto& p : model.parameters()) EXPECT_FALSE(p.support) << p.name;
}

TEST(RgcnTuning, TunedKernelsRecordTheirOrderAndMatch) {
  const sc::RelationalGraph g = small_graph(false);
  nn::RelationalKernelRequests req;
  req.add_matmul(3, 4);
  nn::KernelRuntime rt;
  rt.tuning = true;
  const nn::RelationalKernels k(g, req, rt);
  ASSERT_EQ(k.records().size(), 2u);
  for (const auto& r : k.records()) EXPECT_NE(r.origin, "default") << r.role;
  Rng rng(4);
  const Tensor X = testing::away_from_zero({g.cols, 3}, 0.1, 1.0, rng);
  const Tensor W = testing::away_from_zero({g.relations, 12}, 0.1, 1.0, rng);
  Tape tape;
  const Var y = nn::relational_matmul(tape, k, Var::constant(X), Var::constant(W), 4);
  EXPECT_TRUE(all_close(y.value(), dense_forward(g, X, W, 4), 1e-5, 1e-5).ok);
}

}  // namespace
}  // namespace strata
