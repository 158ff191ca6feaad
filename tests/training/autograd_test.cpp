// The tape and every dense op: each backward against central finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "core/autograd_ops.h"
#include "core/parallel.h"
#include "tests/training/grad_check.h"

namespace strata {
namespace {

using ag::Tape;
using ag::Var;
using testing::away_from_zero;
using testing::check_gradients;

Tensor uniform(Shape s, Rng& rng, double lo = -1, double hi = 1) { return Tensor::uniform(std::move(s), lo, hi, rng); }

TEST(AutogradTest, MatmulGradients) {
  Rng rng(1);
  const int64_t n = check_gradients(
      [](Tape& t, const std::vector<Var>& v) { return ag::matmul(t, v[0], v[1]); },
      {uniform({5, 4}, rng), uniform({4, 3}, rng)}, {true, true});
  EXPECT_EQ(n, 5 * 4 + 4 * 3);
}

TEST(AutogradTest, MatmulMatchesPlainLoops) {
  Rng rng(2);
  Tensor a = uniform({7, 5}, rng), b = uniform({5, 3}, rng);
  Tape t;
  Tensor y = ag::matmul(t, Var::constant(a), Var::constant(b)).value();
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 5; ++k) s += a.data<float>()[i * 5 + k] * b.data<float>()[k * 3 + j];
      EXPECT_NEAR(y.data<float>()[i * 3 + j], s, 1e-5);
    }
}

// Large enough for the products to split across threads (kParallelWork): the
// forward, ∂A = ∂Y·Bᵀ and ∂B = Aᵀ·∂Y (per-thread partial sums of (∂Yᵀ·A)ᵀ) against
// double-precision products, on 1 and 2 threads, with odd sizes.
TEST(AutogradTest, ThreadedMatmulAndItsGradientsMatchDoubleProducts) {
  Rng rng(12);
  const Tensor a = uniform({2051, 173}, rng), b = uniform({173, 37}, rng), dy = uniform({2051, 37}, rng);
  const Eigen::MatrixXd A = a.as_matrix<float>().cast<double>(), B = b.as_matrix<float>().cast<double>(),
                        DY = dy.as_matrix<float>().cast<double>();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Var av = Var::parameter(a, "a"), bv = Var::parameter(b, "b");
    Tape t;
    const Var y = ag::matmul(t, av, bv);
    t.backward(y, dy);
    EXPECT_LT((y.value().as_matrix<float>().cast<double>() - A * B).cwiseAbs().maxCoeff(), 1e-4) << threads;
    EXPECT_LT((av.grad().as_matrix<float>().cast<double>() - DY * B.transpose()).cwiseAbs().maxCoeff(), 1e-4)
        << threads;
    EXPECT_LT((bv.grad().as_matrix<float>().cast<double>() - A.transpose() * DY).cwiseAbs().maxCoeff(), 1e-3)
        << threads;
  }
  set_num_threads(0);
}

TEST(AutogradTest, AddAndBiasAddGradients) {
  Rng rng(3);
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::add(t, v[0], v[1]); },
                  {uniform({4, 3}, rng), uniform({4, 3}, rng)}, {true, true});
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::bias_add(t, v[0], v[1]); },
                  {uniform({6, 3}, rng), uniform({3}, rng)}, {true, true});
}

TEST(AutogradTest, ActivationGradients) {
  Rng rng(4);
  Tensor x = away_from_zero({6, 5}, 0.05, 1.5, rng);
  EXPECT_GT(check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::relu(t, v[0]); }, {x}, {true}), 0);
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::elu(t, v[0], 0.7f); }, {x}, {true});
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::leaky_relu(t, v[0], 0.2f); }, {x}, {true});
}

TEST(AutogradTest, ActivationValues) {
  Tensor x = Tensor::from_vector<float>({-2.0f, -0.5f, 0.0f, 0.5f, 3.0f}, {1, 5});
  Tape t;
  Var v = Var::constant(x);
  const float* r = ag::relu(t, v).value().data<float>();
  const float* e = ag::elu(t, v, 1.0f).value().data<float>();
  const float* l = ag::leaky_relu(t, v, 0.1f).value().data<float>();
  EXPECT_EQ(r[0], 0.0f);
  EXPECT_EQ(r[4], 3.0f);
  EXPECT_NEAR(e[0], std::expm1(-2.0), 1e-6);
  EXPECT_EQ(e[3], 0.5f);
  EXPECT_FLOAT_EQ(l[1], -0.05f);
  EXPECT_EQ(l[4], 3.0f);
}

TEST(AutogradTest, EluMatchesExpm1InVectorsAndInTheTail) {
  // 3 x 37 values: six full vectors of 16 and a tail of 15 (core/fast_math.h).
  std::vector<float> v(3 * 37);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -20.0f + 25.0f * static_cast<float>(i) / static_cast<float>(v.size());
  v[5] = -0.0f;
  v[40] = -1e-30f;
  v[100] = -0.3f;   // polynomial side of expm1, in the tail
  v[110] = -0.5f;   // exp side, in the tail
  Tape t;
  const float alpha = 0.7f;
  const float* e = ag::elu(t, Var::constant(Tensor::from_vector<float>(v, {3, 37})), alpha).value().data<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const double want = v[i] > 0 ? v[i] : alpha * std::expm1(static_cast<double>(v[i]));
    EXPECT_NEAR(e[i], want, 4e-7 * std::fabs(want)) << "x = " << v[i];
  }
  EXPECT_TRUE(std::signbit(e[5]));
  EXPECT_EQ(e[40], alpha * -1e-30f);
}

TEST(AutogradTest, DropoutGradientsAndScaling) {
  Rng rng(5);
  const uint64_t seed = 99;
  check_gradients([&](Tape& t, const std::vector<Var>& v) { return ag::dropout(t, v[0], 0.4f, seed); },
                  {uniform({8, 6}, rng)}, {true});
  // Kept elements are scaled by 1/(1-p); the kept fraction is close to 1 - p.
  Tensor x = Tensor::full({200, 50}, DType::F32, 1.0);
  Tape t;
  Tensor y = ag::dropout(t, Var::constant(x), 0.3f, seed).value();
  int64_t kept = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float v = y.data<float>()[i];
    ASSERT_TRUE(v == 0.0f || std::abs(v - 1.0f / 0.7f) < 1e-6) << v;
    kept += v != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / y.numel(), 0.7, 0.02);
}

TEST(AutogradTest, DropoutIsIdentityInEvalModeAndIndependentOfThreads) {
  Rng rng(6);
  Tensor x = uniform({300, 200}, rng);  // above the parallel threshold
  Tape t;
  t.set_training(false);
  Var v = Var::constant(x);
  EXPECT_TRUE(ag::dropout(t, v, 0.5f, 1).same_as(v));
  t.set_training(true);
  const int threads = num_threads();
  set_num_threads(1);
  Tensor one = ag::dropout(t, v, 0.5f, 1).value();
  set_num_threads(2);
  Tensor two = ag::dropout(t, v, 0.5f, 1).value();
  set_num_threads(threads);
  EXPECT_EQ(max_abs_diff(one, two), 0.0);
  Tensor other = ag::dropout(t, v, 0.5f, 2).value();
  EXPECT_GT(max_abs_diff(one, other), 0.0) << "different seeds must give different masks";
}

TEST(AutogradTest, ConcatAndNarrowGradients) {
  Rng rng(7);
  check_gradients(
      [](Tape& t, const std::vector<Var>& v) { return ag::concat_cols(t, {v[0], v[1], v[2]}); },
      {uniform({4, 2}, rng), uniform({4, 3}, rng), uniform({4, 1}, rng)}, {true, false, true});
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::narrow_cols(t, v[0], 1, 3); },
                  {uniform({5, 6}, rng)}, {true});
  // A sampled block's destinations: the first rows (all, some, none).
  for (int64_t rows : {7, 3, 0})
    check_gradients([rows](Tape& t, const std::vector<Var>& v) { return ag::narrow_rows(t, v[0], rows); },
                    {uniform({7, 5}, rng)}, {true});
  Tape t;
  const Tensor x = uniform({4, 3}, rng);
  const Tensor y = ag::narrow_rows(t, Var::constant(x), 2).value();
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], x.data<float>()[i]);
}

TEST(AutogradTest, SplitColsGradients) {
  Rng rng(17);
  // Both parts used (one twice), then only the second part used.
  check_gradients(
      [](Tape& t, const std::vector<Var>& v) {
        const auto parts = ag::split_cols(t, v[0], {2, 3});
        return ag::concat_cols(t, {parts[1], ag::relu(t, parts[0]), parts[1]});
      },
      {away_from_zero({4, 5}, 0.1, 1.0, rng)}, {true});
  check_gradients(
      [](Tape& t, const std::vector<Var>& v) { return ag::split_cols(t, v[0], {1, 2, 2})[2]; },
      {uniform({3, 5}, rng)}, {true});
  Tape t;
  const Tensor x = uniform({2, 4}, rng);
  const auto parts = ag::split_cols(t, Var::constant(x), {3, 1});
  EXPECT_EQ(parts[0].value().data<float>()[4], x.data<float>()[5]);
  EXPECT_EQ(parts[1].value().data<float>()[1], x.data<float>()[7]);
}

TEST(AutogradTest, L2NormalizeRowsGradients) {
  Rng rng(8);
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::l2_normalize_rows(t, v[0]); },
                  {away_from_zero({5, 4}, 0.2, 1.0, rng)}, {true}, {.eps = 3e-3});
}

TEST(AutogradTest, LogSoftmaxGradientsAndValues) {
  Rng rng(9);
  Tensor x = uniform({6, 5}, rng, -3, 3);
  check_gradients([](Tape& t, const std::vector<Var>& v) { return ag::log_softmax(t, v[0]); }, {x}, {true});
  Tape t;
  Tensor y = ag::log_softmax(t, Var::constant(x)).value();
  for (int r = 0; r < 6; ++r) {
    double s = 0;
    for (int c = 0; c < 5; ++c) s += std::exp(y.data<float>()[r * 5 + c]);
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
  // Stable for large logits.
  Tensor big = Tensor::from_vector<float>({1000.0f, 0.0f, -1000.0f}, {1, 3});
  Tensor yb = ag::log_softmax(t, Var::constant(big)).value();
  EXPECT_EQ(yb.data<float>()[0], 0.0f);
  EXPECT_TRUE(std::isfinite(yb.data<float>()[2]));
}

TEST(AutogradTest, NllLossGradientsAndValue) {
  Rng rng(10);
  Tensor labels = Tensor::from_vector<int64_t>({2, 0, -1, 1, 2, 0});
  Tensor index = Tensor::from_vector<int64_t>({0, 1, 3, 5});
  Tensor x = uniform({6, 3}, rng, -2, 2);
  check_gradients(
      [&](Tape& t, const std::vector<Var>& v) { return ag::nll_loss(t, ag::log_softmax(t, v[0]), labels, index); },
      {x}, {true});
  Tape t;
  Tensor lp = ag::log_softmax(t, Var::constant(x)).value();
  const float* p = lp.data<float>();
  const double want = -(p[0 * 3 + 2] + p[1 * 3 + 0] + p[3 * 3 + 1] + p[5 * 3 + 0]) / 4.0;
  EXPECT_NEAR(ag::nll_loss(t, Var::constant(lp), labels, index).value().data<float>()[0], want, 1e-6);
}

TEST(AutogradTest, BceWithLogitsGradientsAndValue) {
  Rng rng(12);
  // Row 2 is unlabelled (-1) and not indexed; row 4 is indexed twice.
  Tensor labels = Tensor::from_vector<int64_t>({1, 0, 1, 0, 0, 0, -1, -1, -1, 1, 1, 0, 0, 1, 1}, {5, 3});
  Tensor index = Tensor::from_vector<int64_t>({0, 1, 3, 4, 4});
  Tensor x = uniform({5, 3}, rng, -3, 3);
  check_gradients([&](Tape& t, const std::vector<Var>& v) { return ag::bce_with_logits(t, v[0], labels, index); }, {x},
                  {true});
  // The value against the plain formula -[y log s + (1 - y) log(1 - s)] in double.
  double want = 0;
  for (int64_t r : {0, 1, 3, 4, 4})
    for (int c = 0; c < 3; ++c) {
      const double z = x.data<float>()[r * 3 + c], s = 1 / (1 + std::exp(-z));
      want -= labels.data<int64_t>()[r * 3 + c] ? std::log(s) : std::log(1 - s);
    }
  Tape t;
  EXPECT_NEAR(ag::bce_with_logits(t, Var::constant(x), labels, index).value().data<float>()[0], want / 15, 1e-6);
  // Stable where exp overflows: a confident right answer costs ~0, a confident wrong one |z|.
  Tensor big = Tensor::from_vector<float>({200.0f, -200.0f}, {1, 2});
  Tensor yes = Tensor::from_vector<int64_t>({1, 1}, {1, 2});
  Tensor row = Tensor::from_vector<int64_t>({0});
  EXPECT_NEAR(ag::bce_with_logits(t, Var::constant(big), yes, row).value().data<float>()[0], 100.0, 1e-4);
  // A label other than 0/1 in an indexed row is an internal error naming it.
  Tensor bad = Tensor::from_vector<int64_t>({1, 2}, {1, 2});
  try {
    ag::bce_with_logits(t, Var::constant(big), bad, row);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("row 0 column 1 has label 2 (expected 0 or 1)"), std::string::npos)
        << e.what();
  }
}

TEST(AutogradTest, L2PenaltyGradients) {
  Rng rng(11);
  const int64_t n = check_gradients(
      [](Tape& t, const std::vector<Var>& v) { return ag::l2_penalty(t, {v[0], v[1]}, 5e-2f); },
      {uniform({3, 4}, rng), uniform({4}, rng)}, {true, true});
  EXPECT_EQ(n, 16);
}

TEST(AutogradTest, ComposedNetworkGradients) {
  // A two-layer MLP with dropout and a loss: gradients flow through reused values.
  Rng rng(12);
  Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 1, 0});
  Tensor index = Tensor::from_vector<int64_t>({0, 1, 2, 3, 4});
  auto net = [&](Tape& t, const std::vector<Var>& v) {
    Var h = ag::elu(t, ag::bias_add(t, ag::matmul(t, v[0], v[1]), v[2]));
    h = ag::dropout(t, h, 0.25f, 3);
    Var y = ag::add(t, ag::matmul(t, h, v[3]), ag::matmul(t, h, v[3]));  // h and W2 used twice
    Var loss = ag::nll_loss(t, ag::log_softmax(t, y), labels, index);
    return ag::add(t, loss, ag::l2_penalty(t, {v[1], v[3]}, 1e-2f));
  };
  check_gradients(net, {uniform({5, 4}, rng), uniform({4, 6}, rng), uniform({6}, rng), uniform({6, 3}, rng)},
                  {false, true, true, true});
}

TEST(AutogradTest, GradientsAccumulateAcrossBackwardCalls) {
  Var w = Var::parameter(Tensor::full({2, 2}, DType::F32, 1.0), "w");
  Var x = Var::constant(Tensor::full({1, 2}, DType::F32, 2.0));
  for (int step = 0; step < 2; ++step) {
    Tape t;
    Var y = ag::matmul(t, x, w);
    t.backward(y, Tensor::full({1, 2}, DType::F32, 1.0));
  }
  EXPECT_EQ(w.grad().data<float>()[0], 4.0f);
  w.zero_grad();
  EXPECT_FALSE(w.has_grad());
}

TEST(AutogradTest, SharedGradientsAreCopiedOnWrite) {
  // add passes its output's gradient through to both operands without copying; the
  // second accumulation into x must not write into the first (shared) tensor.
  Var x = Var::parameter(Tensor::full({2, 2}, DType::F32, 1.0), "x");
  Tape t;
  Var y = ag::add(t, x, x);
  Tensor seed = Tensor::full({2, 2}, DType::F32, 3.0);
  t.backward(y, seed);
  EXPECT_EQ(x.grad().data<float>()[0], 6.0f);
  EXPECT_EQ(y.grad().data<float>()[0], 3.0f) << "the output's gradient was modified";
  EXPECT_EQ(seed.data<float>()[0], 3.0f) << "the caller's seed was modified";
  EXPECT_NE(x.grad().raw_data(), y.grad().raw_data());
}

TEST(AutogradTest, GradientsOffRecordsNoBackward) {
  Var w = Var::parameter(Tensor::full({2, 2}, DType::F32, 1.0), "w");
  Tape t;
  t.set_grad_enabled(false);
  Var y = ag::relu(t, ag::matmul(t, Var::constant(Tensor::full({3, 2}, DType::F32, 1.0)), w));
  EXPECT_EQ(t.size(), 2u);  // remembered for NaN tracing, but nothing to differentiate
  EXPECT_FALSE(y.requires_grad());
}

TEST(AutogradTest, FirstNonFiniteNamesTheScope) {
  Tape t;
  Var x = Var::constant(Tensor::full({2, 3}, DType::F32, 1.0));
  Var w = Var::parameter(Tensor::full({3, 3}, DType::F32, 1.0), "w");
  {
    Tape::Scope s(t, "layers.0");
    x = ag::relu(t, ag::matmul(t, x, w));
  }
  EXPECT_FALSE(t.first_nonfinite().has_value());
  w.mutable_value().data<float>()[4] = std::numeric_limits<float>::infinity();
  {
    Tape::Scope s(t, "layers.1");
    Tape::Scope inner(t, "inner");
    x = ag::matmul(t, x, w);
  }
  auto bad = t.first_nonfinite();
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->label, "layers.1.inner");
  EXPECT_EQ(bad->op, std::string("matmul"));
  EXPECT_EQ(bad->count, 2);
  EXPECT_EQ(bad->str(), "layers.1.inner (matmul): 2 of 6 values non-finite");
  EXPECT_EQ(t.scope(), "");
}

TEST(AutogradTest, MatmulSplitAcrossThreadsMatchesOneThread) {
  // Large enough to be split into row blocks; the transposed products too.
  Rng rng(14);
  Var a = Var::parameter(uniform({3000, 40}, rng), "a");
  Var b = Var::parameter(uniform({40, 50}, rng), "b");
  Tensor seed = uniform({3000, 50}, rng);
  auto run = [&](int threads) {
    set_num_threads(threads);
    a.zero_grad();
    b.zero_grad();
    Tape t;
    Var y = ag::matmul(t, a, b);
    t.backward(y, seed);
    return std::vector<Tensor>{y.value().clone(), a.grad().clone(), b.grad().clone()};
  };
  const int threads = num_threads();
  const auto one = run(1), two = run(2);
  set_num_threads(threads);
  for (int i = 0; i < 3; ++i) EXPECT_LT(max_abs_diff(one[i], two[i]), 1e-3) << i;
  // Against plain loops for the weight gradient aᵀ·seed.
  for (int r = 0; r < 40; r += 13)
    for (int c = 0; c < 50; c += 17) {
      double s = 0;
      for (int n = 0; n < 3000; ++n) s += a.value().data<float>()[n * 40 + r] * seed.data<float>()[n * 50 + c];
      EXPECT_NEAR(two[2].data<float>()[r * 50 + c], s, 1e-3);
    }
}

TEST(AutogradTest, ProfileSplitsCategories) {
  Rng rng(13);
  Tape t;
  Var w = Var::parameter(uniform({64, 64}, rng), "w");
  Var y = ag::relu(t, ag::matmul(t, Var::constant(uniform({256, 64}, rng)), w));
  t.backward(y, Tensor::full(y.shape(), DType::F32, 1.0));
  const ag::OpProfile& p = t.profile();
  EXPECT_EQ(p.calls[static_cast<int>(ag::OpCategory::Dense)], 2);  // forward + backward
  EXPECT_EQ(p.calls[static_cast<int>(ag::OpCategory::Other)], 2);
  EXPECT_EQ(p.calls[static_cast<int>(ag::OpCategory::Sparse)], 0);
  EXPECT_GT(p.total_ms(), 0.0);
}

}  // namespace
}  // namespace strata
