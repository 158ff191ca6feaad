#include "tests/training/grad_check.h"

#include <algorithm>
#include <cmath>

namespace strata::testing {
namespace {

double weighted_sum(const Tensor& y, const std::vector<double>& r) {
  double s = 0;
  const float* p = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) s += r[i] * static_cast<double>(p[i]);
  return s;
}

std::vector<ag::Var> make_vars(const std::vector<Tensor>& inputs, const std::vector<bool>& differentiable) {
  std::vector<ag::Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i)
    vars.push_back(differentiable[i] ? ag::Var::parameter(inputs[i], "input" + std::to_string(i))
                                     : ag::Var::constant(inputs[i]));
  return vars;
}

}  // namespace

int64_t check_gradients(const GradFn& f, const std::vector<Tensor>& inputs, const std::vector<bool>& differentiable,
                        const GradCheckOptions& o) {
  // Analytic gradients.
  std::vector<Tensor> work;
  for (const Tensor& t : inputs) work.push_back(t.clone());
  std::vector<ag::Var> vars = make_vars(work, differentiable);
  ag::Tape tape;
  ag::Var y = f(tape, vars);
  Rng rng(o.seed);
  std::vector<double> r(static_cast<size_t>(y.value().numel()));
  Tensor seed = Tensor::empty(y.shape(), DType::F32);
  for (size_t i = 0; i < r.size(); ++i) {
    r[i] = static_cast<float>(rng.uniform(-1.0, 1.0));  // exactly representable in float32
    seed.data<float>()[i] = static_cast<float>(r[i]);
  }
  tape.backward(y, seed);

  int64_t compared = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!differentiable[i]) continue;
    const Tensor& grad = vars[i].grad();
    const int64_t n = work[i].numel();
    EXPECT_TRUE(grad.defined()) << "input " << i << " received no gradient";
    if (!grad.defined()) continue;
    std::vector<int64_t> elems(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) elems[k] = k;
    if (n > o.max_elements) {
      auto perm = rng.permutation(n);
      elems.assign(perm.begin(), perm.begin() + o.max_elements);
    }
    for (int64_t k : elems) {
      float* x = work[i].data<float>() + k;
      const float saved = *x;
      auto eval = [&](float v) {
        *x = v;
        ag::Tape t;
        return weighted_sum(f(t, make_vars(work, differentiable)).value(), r);
      };
      const float hi = saved + static_cast<float>(o.eps), lo = saved - static_cast<float>(o.eps);
      const double numeric = (eval(hi) - eval(lo)) / (static_cast<double>(hi) - static_cast<double>(lo));
      *x = saved;
      const double analytic = grad.data<float>()[k];
      EXPECT_LE(std::abs(numeric - analytic), o.atol + o.rtol * std::abs(numeric))
          << "input " << i << " element " << k << ": finite difference " << numeric << ", backward " << analytic;
      ++compared;
    }
  }
  return compared;
}

int64_t check_parameter_gradients(const std::function<ag::Var(ag::Tape&)>& f, const std::vector<ag::Var>& params,
                                  const GradCheckOptions& o) {
  for (const ag::Var& p : params) p.zero_grad();
  ag::Tape tape;
  ag::Var y = f(tape);
  Rng rng(o.seed);
  std::vector<double> r(static_cast<size_t>(y.value().numel()));
  Tensor seed = Tensor::empty(y.shape(), DType::F32);
  for (size_t i = 0; i < r.size(); ++i) {
    r[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
    seed.data<float>()[i] = static_cast<float>(r[i]);
  }
  tape.backward(y, seed);
  int64_t compared = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const ag::Var& p = params[i];
    EXPECT_TRUE(p.has_grad()) << "parameter " << p.name() << " received no gradient";
    if (!p.has_grad()) continue;
    const Tensor grad = p.grad().clone();
    const int64_t n = p.value().numel();
    std::vector<int64_t> elems(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) elems[k] = k;
    if (n > o.max_elements) {
      auto perm = rng.permutation(n);
      elems.assign(perm.begin(), perm.begin() + o.max_elements);
    }
    for (int64_t k : elems) {
      float* x = p.mutable_value().data<float>() + k;
      const float saved = *x;
      auto eval = [&](float v) {
        *x = v;
        ag::Tape t;
        return weighted_sum(f(t).value(), r);
      };
      const float hi = saved + static_cast<float>(o.eps), lo = saved - static_cast<float>(o.eps);
      const double numeric = (eval(hi) - eval(lo)) / (static_cast<double>(hi) - static_cast<double>(lo));
      *x = saved;
      const double analytic = grad.data<float>()[k];
      EXPECT_LE(std::abs(numeric - analytic), o.atol + o.rtol * std::abs(numeric))
          << p.name() << " element " << k << ": finite difference " << numeric << ", backward " << analytic;
      ++compared;
    }
  }
  return compared;
}

Tensor away_from_zero(Shape shape, double lo, double hi, Rng& rng) {
  Tensor t = Tensor::empty(std::move(shape), DType::F32);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double m = rng.uniform(lo, hi);
    t.data<float>()[i] = static_cast<float>(rng.bernoulli(0.5) ? m : -m);
  }
  return t;
}

}  // namespace strata::testing
