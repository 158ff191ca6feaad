// Pair scores and products (layers/pair_scores.h) and the link-prediction decoders
// (models/link_predictor.h): the forward against h[u]·h[v] and h[u] ⊙ h[v] in float64,
// the backward (two weighted SpMMs; two gathers) against finite differences, for
// generated kernels and the reference path, int32 and int64 indices, pairs listed
// twice, nodes in no pair and one node in most pairs; the MLP decoder's parameters.
#include "layers/pair_scores.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/autograd_ops.h"
#include "core/rng.h"
#include "models/link_predictor.h"
#include "tests/training/grad_check.h"

namespace strata {
namespace {

using ag::Tape;
using ag::Var;
using testing::check_gradients;

// Pairs (u, v) over `n` nodes: node 0 in a long run of pairs, (2, 3) listed twice, a
// self-pair (4, 4), and node n-1 in none.
struct Pairs {
  std::vector<int64_t> u, v;
};
Pairs hand_pairs(int64_t n) {
  Pairs p;
  for (int64_t j = 1; j < n - 1; ++j) {
    p.u.push_back(0);
    p.v.push_back(j);
  }
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {2, 3}, {4, 4}, {5, 1}, {3, 0}}) {
    p.u.push_back(a);
    p.v.push_back(b);
  }
  return p;
}

Graph pair_graph(int64_t n, const Pairs& p, DType index) {
  return Graph::from_coo(n, n, Tensor::from_vector(p.u), Tensor::from_vector(p.v)).with_index_dtype(index);
}

struct Case {
  sc::Backend backend;
  DType index;
};

class PairScoresTest : public ::testing::TestWithParam<Case> {};

TEST_P(PairScoresTest, ScoresAreDotProductsInPairOrder) {
  const int64_t n = 9, f = 5;  // an odd width
  const Pairs p = hand_pairs(n);
  const Graph g = pair_graph(n, p, GetParam().index);
  const nn::PairKernels k = nn::bind_pair_kernels(g, f, GetParam().backend, /*backward=*/false);
  ASSERT_EQ(k.num_pairs(), static_cast<int64_t>(p.u.size()));
  EXPECT_EQ(k.pairs.index_dtype(), GetParam().index);
  Rng rng(3);
  const Tensor h = Tensor::uniform({n, f}, -1, 1, rng);
  Tape t;
  const Tensor s = nn::pair_scores(t, k, Var::constant(h)).value();
  ASSERT_EQ(s.dim(0), k.num_pairs());
  ASSERT_EQ(s.dim(1), 1);
  // Position q of P is the pair (row, column) of its CSR.
  const float* hp = h.data<float>();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t q = k.pairs.row_begin(r); q < k.pairs.row_end(r); ++q) {
      const int64_t c = k.pairs.column(q);
      double want = 0;
      for (int64_t j = 0; j < f; ++j) want += static_cast<double>(hp[r * f + j]) * hp[c * f + j];
      EXPECT_NEAR(s.data<float>()[q], want, 1e-5) << "pair (" << r << ", " << c << ")";
    }
}

TEST_P(PairScoresTest, BackwardMatchesFiniteDifferences) {
  const int64_t n = 9, f = 3;
  const Graph g = pair_graph(n, hand_pairs(n), GetParam().index);
  const nn::PairKernels k = nn::bind_pair_kernels(g, f, GetParam().backend, /*backward=*/true);
  Rng rng(4);
  const int64_t checked =
      check_gradients([&](Tape& t, const std::vector<Var>& v) { return nn::pair_scores(t, k, v[0]); },
                      {Tensor::uniform({n, f}, -1, 1, rng)}, {true});
  EXPECT_EQ(checked, n * f);
}

TEST_P(PairScoresTest, ThroughALossOnARandomPairGraph) {
  // The loss link prediction trains with: BCE of the scores against 0/1 labels, on
  // a random pair graph of 300 nodes, then a second pair graph bound afterwards
  // (the programs come from the memo) scored right too.
  const int64_t n = 300, f = 16;
  Rng rng(5);
  for (int graph = 0; graph < 2; ++graph) {
    Pairs p;
    for (int64_t e = 0; e < 2000; ++e) {
      p.u.push_back(static_cast<int64_t>(rng.below(n - 10)));  // nodes n-10.. in no pair as u
      p.v.push_back(static_cast<int64_t>(rng.below(n)));
    }
    const Graph g = pair_graph(n, p, GetParam().index);
    const nn::PairKernels k = nn::bind_pair_kernels(g, f, GetParam().backend, /*backward=*/true);
    std::vector<int64_t> labels(k.num_pairs()), index(k.num_pairs());
    for (int64_t q = 0; q < k.num_pairs(); ++q) {
      labels[q] = (q % 3 == 0) ? 1 : 0;
      index[q] = q;
    }
    const Tensor y = Tensor::from_vector(labels).reshape({k.num_pairs(), 1});
    const Tensor idx = Tensor::from_vector(index);
    // The mean over 2000 pairs makes each gradient ~1e-4: tolerances scaled to match.
    testing::GradCheckOptions o;
    o.max_elements = 120;
    o.atol = 2e-5;
    o.rtol = 2e-2;
    const int64_t checked = check_gradients(
        [&](Tape& t, const std::vector<Var>& v) { return ag::bce_with_logits(t, nn::pair_scores(t, k, v[0]), y, idx); },
        {Tensor::uniform({n, f}, -0.5, 0.5, rng)}, {true}, o);
    EXPECT_EQ(checked, 120);
  }
}

TEST_P(PairScoresTest, ProductsAreElementWiseAndTheirBackwardMatchesFiniteDifferences) {
  const int64_t n = 9, f = 5;
  const Graph g = pair_graph(n, hand_pairs(n), GetParam().index);
  const nn::PairKernels k = nn::bind_pair_kernels(g, f, GetParam().backend, /*backward=*/true, nn::PairOp::Product);
  EXPECT_EQ(k.score, nullptr);                                                     // no dot-product SDDMM
  EXPECT_EQ(k.products != nullptr, GetParam().backend == sc::Backend::Generated);  // F heads of one feature
  Rng rng(8);
  const Tensor h = Tensor::uniform({n, f}, -1, 1, rng);
  Tape t;
  const Tensor z = nn::pair_products(t, k, Var::constant(h)).value();
  ASSERT_EQ(z.dim(0), k.num_pairs());
  ASSERT_EQ(z.dim(1), f);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t q = k.pairs.row_begin(r); q < k.pairs.row_end(r); ++q)
      for (int64_t j = 0; j < f; ++j)
        EXPECT_FLOAT_EQ(z.data<float>()[q * f + j],
                        h.data<float>()[r * f + j] * h.data<float>()[k.pairs.column(q) * f + j]);
  const int64_t checked =
      check_gradients([&](Tape& tt, const std::vector<Var>& v) { return nn::pair_products(tt, k, v[0]); },
                      {Tensor::uniform({n, f}, -1, 1, rng)}, {true});
  EXPECT_EQ(checked, n * f);
}

TEST_P(PairScoresTest, ProductsAndTheirGradientOnARandomPairGraphMatchFloat64Loops) {
  // 300 nodes (ten in no pair as u), 2,000 random pairs, an odd width, a seeded
  // upstream gradient: values and the gradient against float64 loops; a second pair
  // graph bound afterwards (the kernels come from the memo) too.
  const int64_t n = 300, f = 37;
  Rng rng(11);
  for (int graph = 0; graph < 2; ++graph) {
    Pairs p;
    for (int64_t e = 0; e < 2000; ++e) {
      p.u.push_back(static_cast<int64_t>(rng.below(n - 10)));
      p.v.push_back(static_cast<int64_t>(rng.below(n)));
    }
    const Graph g = pair_graph(n, p, GetParam().index);
    const nn::PairKernels k = nn::bind_pair_kernels(g, f, GetParam().backend, /*backward=*/true, nn::PairOp::Product);
    const Tensor h = Tensor::uniform({n, f}, -1, 1, rng);
    const Tensor dz = Tensor::uniform({k.num_pairs(), f}, -1, 1, rng);
    Tape t;
    const Var hv = Var::parameter(h, "h");
    const Var z = nn::pair_products(t, k, hv);
    t.backward(z, dz);
    std::vector<double> want(static_cast<size_t>(n * f), 0.0);
    const float* hp = h.data<float>();
    const float* gp = dz.data<float>();
    for (int64_t u = 0; u < n; ++u)
      for (int64_t q = k.pairs.row_begin(u); q < k.pairs.row_end(u); ++q) {
        const int64_t v = k.pairs.column(q);
        for (int64_t j = 0; j < f; ++j) {
          EXPECT_FLOAT_EQ(z.value().data<float>()[q * f + j], hp[u * f + j] * hp[v * f + j]);
          want[u * f + j] += static_cast<double>(gp[q * f + j]) * hp[v * f + j];
          want[v * f + j] += static_cast<double>(gp[q * f + j]) * hp[u * f + j];
        }
      }
    const float* got = hv.grad().data<float>();
    for (int64_t i = 0; i < n * f; ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::abs(want[i])) << "element " << i;
  }
}

TEST_P(PairScoresTest, MlpPredictorGradientsMatchFiniteDifferences) {
  const int64_t n = 9, f = 4;
  const Graph g = pair_graph(n, hand_pairs(n), GetParam().index);
  Rng init(9);
  const nn::LinkPredictor mlp(nn::LinkPredictorKind::Mlp, f, 3, /*dropout=*/0.0f, init);
  ASSERT_EQ(mlp.parameters().size(), 6u);
  EXPECT_EQ(mlp.parameters()[0].name, "predictor.0.weight");
  EXPECT_EQ(mlp.parameters()[5].name, "predictor.2.bias");
  EXPECT_EQ(mlp.describe(), "mlp: (h_u ⊙ h_v) 4 -> 4 -> 4 -> 1, relu, dropout 0, 45 parameters");
  const nn::PairKernels k = nn::bind_pair_kernels(g, f, GetParam().backend, /*backward=*/true, mlp.pair_op());
  // Hidden biases of 5 and non-negative hidden weights keep every relu input positive
  // (finite differences of eps 1e-2 across a kink are not a derivative); relu's own
  // gradient is checked in autograd_test.
  const auto& ps = mlp.parameters();
  for (size_t i = 0; i + 2 < ps.size(); ++i) {
    Tensor v = ps[i].var.value();  // shares the parameter's storage
    if (ps[i].is_bias) {
      v.fill(5.0);
    } else {
      float* w = v.data<float>();
      for (int64_t e = 0; e < v.numel(); ++e) w[e] = std::abs(w[e]);
    }
  }
  Rng rng(10);
  const Tensor h = testing::away_from_zero({n, f}, 0.2, 1.0, rng);
  Tape t;
  const Tensor s = mlp.forward(t, k, Var::constant(h), 0).value();
  ASSERT_EQ(s.dim(0), k.num_pairs());
  ASSERT_EQ(s.dim(1), 1);
  // The embeddings' gradient, and every predictor parameter's.
  EXPECT_GT(
      check_gradients([&](Tape& tt, const std::vector<Var>& v) { return mlp.forward(tt, k, v[0], 0); }, {h}, {true}),
      0);
  std::vector<Var> params;
  for (const nn::Parameter& p : mlp.parameters()) params.push_back(p.var);
  EXPECT_GT(
      testing::check_parameter_gradients([&](Tape& tt) { return mlp.forward(tt, k, Var::constant(h), 0); }, params), 0);
}

TEST(PairScores, DotPredictorIsThePairScores) {
  const Graph g = pair_graph(9, hand_pairs(9), DType::I32);
  Rng init(11);
  const nn::LinkPredictor dot(nn::LinkPredictorKind::Dot, 3, 3, 0.5f, init);
  EXPECT_TRUE(dot.parameters().empty());
  const nn::PairKernels k = nn::bind_pair_kernels(g, 3, sc::Backend::Generated, false, dot.pair_op());
  Rng rng(12);
  const Var h = Var::constant(Tensor::uniform({9, 3}, -1, 1, rng));
  Tape t;
  const Tensor a = dot.forward(t, k, h, 0).value(), b = nn::pair_scores(t, k, h).value();
  for (int64_t q = 0; q < k.num_pairs(); ++q) EXPECT_EQ(a.data<float>()[q], b.data<float>()[q]);
}

TEST(PairScores, EvaluationKernelsRefuseGradients) {
  const Graph g = pair_graph(9, hand_pairs(9), DType::I32);
  const nn::PairKernels k = nn::bind_pair_kernels(g, 4, sc::Backend::Generated, /*backward=*/false);
  Tape t;
  Rng rng(6);
  Var h = Var::parameter(Tensor::uniform({9, 4}, -1, 1, rng), "h");
  try {
    nn::pair_scores(t, k, h);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bound without their backward"), std::string::npos) << e.what();
  }
}

TEST(PairScores, RefusesANonSquarePairGraph) {
  const Graph g =
      Graph::from_coo(3, 4, Tensor::from_vector(std::vector<int64_t>{0}), Tensor::from_vector(std::vector<int64_t>{3}));
  try {
    nn::bind_pair_kernels(g, 4, sc::Backend::Generated, false);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("must be square"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PairScoresTest,
                         ::testing::Values(Case{sc::Backend::Generated, DType::I32},
                                           Case{sc::Backend::Generated, DType::I64},
                                           Case{sc::Backend::Reference, DType::I32}),
                         [](const auto& info) {
                           return std::string(sc::backend_name(info.param.backend)) +
                                  (info.param.index == DType::I32 ? "_int32" : "_int64");
                         });

}  // namespace
}  // namespace strata
