#include "core/autograd.h"

#include <omp.h>

#include <cmath>
#include <cstdlib>

#include "core/timer.h"

namespace strata::ag {

Tensor empty(Shape shape) { return Tensor::empty(std::move(shape), DType::F32); }

Tensor zeros(Shape shape) {
  Tensor t = empty(std::move(shape));
  t.zero();
  return t;
}

SerialIfSmall::SerialIfSmall(int64_t work) {
  if (work < kParallelWork) {
    saved_ = omp_get_max_threads();
    omp_set_num_threads(1);
  }
}

SerialIfSmall::~SerialIfSmall() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

const char* category_name(OpCategory c) {
  switch (c) {
    case OpCategory::Sparse: return "sparse";
    case OpCategory::Dense: return "dense";
    case OpCategory::Other: return "other";
  }
  return "?";
}

Var Var::constant(Tensor value, std::string name) {
  Var v;
  v.data_ = std::make_shared<VarData>();
  v.data_->value = std::move(value);
  v.data_->name = std::move(name);
  return v;
}

Var Var::parameter(Tensor value, std::string name) {
  Var v = constant(std::move(value), std::move(name));
  v.data_->requires_grad = true;
  return v;
}

Var Var::result(Tensor value, bool requires_grad) {
  Var v = constant(std::move(value));
  v.data_->requires_grad = requires_grad;
  return v;
}

void Var::accumulate_grad(const Tensor& g, bool owned) const {
  if (!requires_grad()) return;
  STRATA_ASSERT(g.shape() == data_->value.shape(), "gradient of shape {} for a value of shape {} ('{}')",
                shape_str(g.shape()), shape_str(data_->value.shape()), data_->name);
  STRATA_ASSERT(g.dtype() == DType::F32, "gradient of dtype {}", dtype_name(g.dtype()));
  if (!data_->grad.defined()) {
    data_->grad = g;
    data_->grad_shared = !owned;
    return;
  }
  const int64_t n = g.numel();
  const float* src = g.data<float>();
  if (data_->grad_shared) {
    Tensor sum = empty(g.shape());
    const float* a = data_->grad.data<float>();
    float* dst = sum.data<float>();
    for_blocks(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) dst[i] = a[i] + src[i];
    });
    data_->grad = sum;
    data_->grad_shared = false;
    return;
  }
  float* dst = data_->grad.data<float>();
  for_blocks(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) dst[i] += src[i];
  });
}

Tape::Scope::Scope(Tape& tape, const std::string& label) : tape_(tape), previous_size_(tape.scope_.size()) {
  if (!tape_.scope_.empty()) tape_.scope_ += '.';
  tape_.scope_ += label;
}

Tape::Scope::~Scope() { tape_.scope_.resize(previous_size_); }

void Tape::record(const char* op, OpCategory category, const Var& out, double forward_ms,
                  std::function<void()> backward) {
  if (profiling_) profile_.add(category, forward_ms);
  if (!grad_enabled_) backward = nullptr;
  entries_.push_back(Entry{op, category, scope_, {out}, std::move(backward)});
}

void Tape::record(const char* op, OpCategory category, const std::vector<Var>& outs, double forward_ms,
                  std::function<void()> backward) {
  if (profiling_) profile_.add(category, forward_ms);
  if (!grad_enabled_) backward = nullptr;
  entries_.push_back(Entry{op, category, scope_, outs, std::move(backward)});
}

void Tape::backward(const Var& out) {
  STRATA_ASSERT(out.defined() && out.value().numel() == 1, "backward() without a seed needs a one-element output, got {}",
                out.defined() ? shape_str(out.shape()) : "undefined");
  backward(out, Tensor::full(out.shape(), DType::F32, 1.0));
}

void Tape::backward(const Var& out, const Tensor& seed) {
  STRATA_ASSERT(grad_enabled_, "backward() on a tape with gradients off");
  STRATA_ASSERT(out.requires_grad(), "backward() from a value that does not depend on any parameter");
  out.accumulate_grad(seed, false);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (!it->backward) continue;
    bool any = false;
    for (const Var& o : it->outs) any = any || o.has_grad();
    if (!any) continue;
    if (profiling_) {
      Timer t;
      it->backward();
      profile_.add(it->category, t.ms());
    } else {
      it->backward();
    }
  }
}

void Tape::clear() { entries_.clear(); }

std::string Tape::NonFinite::str() const {
  return fmt::format("{} ({}): {} of {} values non-finite", label.empty() ? "outside any layer" : label, op, count,
                     total);
}

std::optional<Tape::NonFinite> Tape::first_nonfinite() const {
  for (const Entry& e : entries_) {
    for (const Var& o : e.outs) {
      const Tensor& v = o.value();
      if (v.dtype() != DType::F32) continue;
      const int64_t bad = count_nonfinite(v);
      if (bad > 0) return NonFinite{e.label, e.op, bad, v.numel()};
    }
  }
  return std::nullopt;
}

int64_t count_nonfinite(const Tensor& t) {
  const float* p = t.data<float>();
  const int64_t n = t.numel();
  int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n >= kParallelWork)
  for (int64_t i = 0; i < n; ++i) bad += !std::isfinite(p[i]);
  return bad;
}

bool all_finite(const Tensor& t) { return count_nonfinite(t) == 0; }

}  // namespace strata::ag
