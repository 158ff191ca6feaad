// Adam and SGD against the update rules written out in float64, weight decay
// (L2 in the loss and decoupled), and state save/restore.
#include "models/optimizer.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>

#include "core/autograd_ops.h"

namespace strata {
namespace {

using nn::OptimizerConfig;
using nn::OptimizerKind;

std::vector<nn::Parameter> make_params(std::vector<float> w, std::vector<float> b) {
  return {{"layers.0.weight", ag::Var::parameter(Tensor::from_vector(w, {static_cast<int64_t>(w.size()), 1}), "w"), 0, false},
          {"layers.1.bias", ag::Var::parameter(Tensor::from_vector(b), "b"), 1, true}};
}

// Gradients that change every step (deterministic).
float grad_at(int step, int i) { return std::sin(1.3f * static_cast<float>(step) + 0.7f * static_cast<float>(i)) * 0.5f; }

void set_grads(const std::vector<nn::Parameter>& ps, int step) {
  int i = 0;
  for (const auto& p : ps) {
    Tensor g = Tensor::empty(p.var.shape(), DType::F32);
    for (int64_t k = 0; k < g.numel(); ++k) g.data<float>()[k] = grad_at(step, i++);
    p.var.set_grad(g);
  }
}

std::vector<double> values(const std::vector<nn::Parameter>& ps) {
  std::vector<double> v;
  for (const auto& p : ps)
    for (int64_t k = 0; k < p.var.value().numel(); ++k) v.push_back(p.var.value().data<float>()[k]);
  return v;
}

TEST(OptimizerTest, AdamFollowsTheUpdateRule) {
  OptimizerConfig c;
  c.lr = 0.05;
  auto ps = make_params({0.5f, -1.0f, 2.0f}, {0.1f});
  auto opt = nn::make_optimizer(c, ps);
  std::vector<double> p = values(ps), m(4, 0), v(4, 0);
  for (int t = 1; t <= 5; ++t) {
    set_grads(ps, t);
    opt->step();
    for (int i = 0; i < 4; ++i) {
      const double g = grad_at(t, i);
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
      p[i] -= 0.05 * mh / (std::sqrt(vh) + 1e-8);
    }
    const auto got = values(ps);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], p[i], 2e-6) << "step " << t << " element " << i;
  }
  EXPECT_EQ(opt->steps(), 5);
}

// A parameter past the parallel threshold (2^20 elements) is updated in chunks
// across threads: bit for bit what one thread computes, and what an unchunked
// update of a small parameter holding the same trailing elements computes (the
// last, partial chunk included), for Adam and for SGD with momentum and decoupled
// decay.
TEST(OptimizerTest, LargeParametersUpdateInParallelChunksExactlyAsOneThread) {
  const int64_t n = (int64_t{1} << 20) + 12345, tail = 20000;
  // Elements [first, first + count) of the same parameter and gradients.
  auto run = [&](const OptimizerConfig& c, int threads, int64_t first, int64_t count) {
    Tensor w = Tensor::empty({count}, DType::F32);
    for (int64_t k = 0; k < count; ++k) w.data<float>()[k] = std::cos(0.001f * static_cast<float>(first + k));
    std::vector<nn::Parameter> ps = {{"layers.0.basis", ag::Var::parameter(w, "V"), 0, false}};
    auto opt = nn::make_optimizer(c, ps);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    for (int t = 1; t <= 3; ++t) {
      Tensor g = Tensor::empty({count}, DType::F32);
      for (int64_t k = 0; k < count; ++k) g.data<float>()[k] = grad_at(t, static_cast<int>((first + k) % 1000));
      ps[0].var.set_grad(g);
      opt->step();
    }
    omp_set_num_threads(saved);
    return ps[0].var.value().clone();
  };
  OptimizerConfig adam;
  adam.weight_decay = 5e-4;
  OptimizerConfig sgd;
  sgd.kind = OptimizerKind::Sgd;
  sgd.momentum = 0.9;
  sgd.weight_decay = 1e-3;
  sgd.decoupled = true;
  for (const OptimizerConfig& c : {adam, sgd}) {
    const Tensor one = run(c, 1, 0, n), two = run(c, 2, 0, n), small = run(c, 1, n - tail, tail);
    const char* what = nn::optimizer_kind_name(c.kind);
    EXPECT_EQ(std::memcmp(one.data<float>(), two.data<float>(), sizeof(float) * n), 0) << what;
    EXPECT_EQ(std::memcmp(two.data<float>() + (n - tail), small.data<float>(), sizeof(float) * tail), 0) << what;
    EXPECT_NE(two.data<float>()[n - 1], std::cos(0.001f * static_cast<float>(n - 1))) << what;  // the tail moved
  }
}

// A gradient support (nn::GradientSupport): elements outside it have zero gradient
// on every step. Without weight decay the optimizer leaves them alone, which is
// what the full update does to them: the same parameters and state, bit for bit.
// With weight decay every element moves, so the support is not used.
TEST(OptimizerTest, GradientSupportSkipsOnlyWhatTheFullUpdateLeavesAlone) {
  const int64_t rows = 10, width = 4;
  const nn::GradientSupport ranges = {{4, 8}, {12, 20}, {32, 36}};  // rows 1, 3-4, 8
  auto in_support = [&](int64_t k) {
    for (const auto& [b, e] : ranges)
      if (k >= b && k < e) return true;
    return false;
  };
  auto run = [&](const OptimizerConfig& c, bool with_support) {
    Tensor w = Tensor::empty({rows, width}, DType::F32);
    for (int64_t k = 0; k < rows * width; ++k) w.data<float>()[k] = std::cos(0.3f * static_cast<float>(k));
    std::vector<nn::Parameter> ps = {{"layers.0.weight", ag::Var::parameter(w, "W"), 0, false}};
    if (with_support) ps[0].support = std::make_shared<nn::GradientSupport>(ranges);
    auto opt = nn::make_optimizer(c, ps);
    for (int t = 1; t <= 4; ++t) {
      Tensor g = Tensor::zeros({rows, width}, DType::F32);
      for (int64_t k = 0; k < rows * width; ++k)
        if (in_support(k)) g.data<float>()[k] = grad_at(t, static_cast<int>(k));
      ps[0].var.set_grad(g);
      opt->step();
    }
    std::vector<Tensor> out = {ps[0].var.value().clone()};
    for (const auto& [name, t] : opt->state()) out.push_back(t.clone());
    return out;
  };
  OptimizerConfig adam;
  adam.lr = 0.05;
  OptimizerConfig sgd;
  sgd.kind = OptimizerKind::Sgd;
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  OptimizerConfig plain_sgd = sgd;
  plain_sgd.momentum = 0;
  plain_sgd.nesterov = false;
  for (const OptimizerConfig& c : {adam, sgd, plain_sgd}) {
    const std::vector<Tensor> full = run(c, false), sparse = run(c, true);
    ASSERT_EQ(full.size(), sparse.size());
    for (size_t i = 0; i < full.size(); ++i)
      EXPECT_EQ(std::memcmp(full[i].raw_data(), sparse[i].raw_data(), full[i].nbytes()), 0)
          << nn::optimizer_kind_name(c.kind) << " momentum " << c.momentum << ", tensor " << i;
    EXPECT_NE(sparse[0].data<float>()[5], std::cos(0.3f * 5)) << "an element of the support moved";
  }
  for (bool decoupled : {false, true}) {
    OptimizerConfig decay = adam;
    decay.weight_decay = 0.1;
    decay.decoupled = decoupled;
    const std::vector<Tensor> full = run(decay, false), sparse = run(decay, true);
    EXPECT_EQ(std::memcmp(full[0].raw_data(), sparse[0].raw_data(), full[0].nbytes()), 0) << decoupled;
    EXPECT_NE(sparse[0].data<float>()[0], 1.0f) << "decay moves an element outside the support";
  }
}

TEST(OptimizerTest, SgdWithMomentumAndNesterov) {
  for (bool nesterov : {false, true}) {
    OptimizerConfig c;
    c.kind = OptimizerKind::Sgd;
    c.lr = 0.1;
    c.momentum = 0.8;
    c.nesterov = nesterov;
    auto ps = make_params({1.0f, 2.0f}, {-0.5f});
    auto opt = nn::make_optimizer(c, ps);
    std::vector<double> p = values(ps), buf(3, 0);
    for (int t = 1; t <= 4; ++t) {
      set_grads(ps, t);
      opt->step();
      for (int i = 0; i < 3; ++i) {
        const double g = grad_at(t, i);
        buf[i] = t == 1 ? g : 0.8 * buf[i] + g;
        p[i] -= 0.1 * (nesterov ? g + 0.8 * buf[i] : buf[i]);
      }
      const auto got = values(ps);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], p[i], 1e-6) << "nesterov " << nesterov << " step " << t;
    }
  }
}

TEST(OptimizerTest, PlainSgdAndParametersWithoutGradients) {
  OptimizerConfig c;
  c.kind = OptimizerKind::Sgd;
  c.momentum = 0;
  c.lr = 0.5;
  auto ps = make_params({1.0f}, {3.0f});
  ps[0].var.set_grad(Tensor::full({1, 1}, DType::F32, 2.0));
  auto opt = nn::make_optimizer(c, ps);
  opt->step();
  EXPECT_FLOAT_EQ(ps[0].var.value().data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(ps[1].var.value().data<float>()[0], 3.0f);  // no gradient: untouched
  opt->zero_grad();
  EXPECT_FALSE(ps[0].var.has_grad());
}

// The schedules' rates per epoch against what torch.optim.lr_scheduler gives (torch
// 2.2.1: CosineAnnealingLR(T_max=10), StepLR(step_size=3, gamma=0.5), base 0.1,
// lr read before each epoch's steps; PyTorch's cosine is computed recursively, hence
// the 1e-12 tolerance).
TEST(LrScheduleTest, RatesPerEpochMatchPyTorch) {
  const double cosine[] = {0.1,
                           0.09755282581475769,
                           0.09045084971874738,
                           0.07938926261462367,
                           0.06545084971874739,
                           0.05000000000000001,
                           0.03454915028125264,
                           0.020610737385376353,
                           0.009549150281252635,
                           0.002447174185242324};
  const double step[] = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125};
  nn::LrSchedule cos{nn::LrScheduleKind::Cosine}, stp{nn::LrScheduleKind::Step, 3, 0.5}, constant;
  for (int e = 1; e <= 10; ++e) {
    EXPECT_NEAR(cos.lr_at(0.1, e, 10), cosine[e - 1], 1e-12) << e;
    EXPECT_DOUBLE_EQ(stp.lr_at(0.1, e, 10), step[e - 1]) << e;
    EXPECT_EQ(constant.lr_at(0.1, e, 10), 0.1);
  }
  EXPECT_EQ(cos.describe(10), ", lr cosine to 0 over 10 epochs");
  EXPECT_EQ(stp.describe(10), ", lr x0.5 every 3 epochs");
  EXPECT_EQ(constant.describe(10), "");
}

// set_lr changes the rate of the next steps (the schedule's value), not the base.
TEST(OptimizerTest, SetLrScalesTheNextUpdates) {
  OptimizerConfig c;
  c.kind = OptimizerKind::Sgd;
  c.momentum = 0;
  c.lr = 0.5;
  auto ps = make_params({1.0f}, {3.0f});
  auto opt = nn::make_optimizer(c, ps);
  EXPECT_EQ(opt->lr(), 0.5);
  opt->set_lr(0.125);
  ps[0].var.set_grad(Tensor::full({1, 1}, DType::F32, 2.0));
  opt->step();
  EXPECT_FLOAT_EQ(ps[0].var.value().data<float>()[0], 0.75f);  // 1 - 0.125 * 2
  EXPECT_EQ(opt->config().lr, 0.5);
}

TEST(OptimizerTest, CoupledWeightDecayEqualsAnL2TermInTheLoss) {
  // The optimizer's weight decay adds wd·p to the gradient: the same steps as
  // training on loss + (wd/2)·Σ‖p‖² (ag::l2_penalty) without weight decay.
  for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::Sgd}) {
    OptimizerConfig with, without;
    with.kind = without.kind = kind;
    with.weight_decay = 0.1;
    with.decay_scope = nn::DecayScope::Weights;
    auto a = make_params({1.0f, -2.0f}, {0.5f});
    auto b = make_params({1.0f, -2.0f}, {0.5f});
    auto oa = nn::make_optimizer(with, a), ob = nn::make_optimizer(without, b);
    for (int t = 1; t <= 3; ++t) {
      set_grads(a, t);
      set_grads(b, t);
      ag::Tape tape;
      std::vector<ag::Var> decayed = nn::decayed_parameters(b, nn::DecayScope::Weights);
      ASSERT_EQ(decayed.size(), 1u);
      tape.backward(ag::l2_penalty(tape, decayed, 0.1f));  // adds 0.1·p to b's weight gradient
      oa->step();
      ob->step();
      const auto va = values(a), vb = values(b);
      for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], 1e-6) << nn::optimizer_kind_name(kind) << t;
    }
  }
  auto ps = make_params({1.0f, -2.0f}, {0.5f});
  ag::Tape t;
  EXPECT_NEAR(ag::l2_penalty(t, nn::decayed_parameters(ps, nn::DecayScope::All), 0.1f).value().data<float>()[0],
              0.05 * (1 + 4 + 0.25), 1e-7);
  EXPECT_EQ(nn::decayed_parameters(ps, nn::DecayScope::All).size(), 2u);
  EXPECT_EQ(nn::decayed_parameters(ps, nn::DecayScope::FirstLayer).size(), 1u);
}

TEST(OptimizerTest, DecoupledWeightDecayShrinksBeforeTheUpdate) {
  OptimizerConfig c;
  c.kind = OptimizerKind::Sgd;
  c.momentum = 0;
  c.lr = 0.1;
  c.weight_decay = 0.5;
  c.decoupled = true;
  c.decay_scope = nn::DecayScope::Weights;
  auto ps = make_params({2.0f}, {2.0f});
  ps[0].var.set_grad(Tensor::full({1, 1}, DType::F32, 1.0));
  ps[1].var.set_grad(Tensor::full({1}, DType::F32, 1.0));
  nn::make_optimizer(c, ps)->step();
  EXPECT_FLOAT_EQ(ps[0].var.value().data<float>()[0], 2.0f * 0.95f - 0.1f);
  EXPECT_FLOAT_EQ(ps[1].var.value().data<float>()[0], 2.0f - 0.1f);  // biases not decayed
}

TEST(OptimizerTest, StateRoundTripContinuesIdentically) {
  for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::Sgd}) {
    OptimizerConfig c;
    c.kind = kind;
    auto a = make_params({0.5f, 0.25f, -1.0f}, {0.0f});
    auto b = make_params({0.0f, 0.0f, 0.0f}, {0.0f});
    auto oa = nn::make_optimizer(c, a);
    for (int t = 1; t <= 3; ++t) {
      set_grads(a, t);
      oa->step();
    }
    // b gets a's parameters and optimizer state, then both take the same steps.
    for (size_t i = 0; i < a.size(); ++i) b[i].var.mutable_value().copy_from(a[i].var.value());
    auto ob = nn::make_optimizer(c, b);
    ob->load_state(oa->state(), "a.ckpt");
    EXPECT_EQ(ob->steps(), 3);
    for (int t = 4; t <= 6; ++t) {
      set_grads(a, t);
      set_grads(b, t);
      oa->step();
      ob->step();
    }
    EXPECT_EQ(values(a), values(b)) << nn::optimizer_kind_name(kind);
  }
}

TEST(OptimizerErrorTest, StateFromAnotherOptimizerIsRejected) {
  auto ps = make_params({1.0f}, {1.0f});
  OptimizerConfig adam, sgd;
  sgd.kind = OptimizerKind::Sgd;
  auto state = nn::make_optimizer(sgd, ps)->state();
  try {
    nn::make_optimizer(adam, ps)->load_state(state, "sgd.ckpt");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer state in 'sgd.ckpt': no entry 'adam.m/layers.0.weight'"),
              std::string::npos)
        << e.what();
  }
}

TEST(OptimizerTest, Describe) {
  OptimizerConfig c;
  c.weight_decay = 5e-4;
  auto ps = make_params({1.0f}, {1.0f});
  EXPECT_EQ(nn::make_optimizer(c, ps)->describe(),
            "adam lr 0.01 (betas 0.9, 0.999, eps 1e-08), weight decay 0.0005 (L2, added to the gradient) on all "
            "parameters");
  // A gradient support is named where it is used (no decay on that parameter).
  c.weight_decay = 0;
  ps[0].support = std::make_shared<nn::GradientSupport>(nn::GradientSupport{{0, 1}});
  EXPECT_EQ(nn::make_optimizer(c, ps)->describe(),
            "adam lr 0.01 (betas 0.9, 0.999, eps 1e-08), no weight decay; layers.0.weight: 1 of 1 elements updated "
            "(100.0%, the others never get a gradient)");
}

}  // namespace
}  // namespace strata
