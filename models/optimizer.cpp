#include "models/optimizer.h"

#include <algorithm>
#include <cmath>

namespace strata::nn {
namespace {

bool is_decayed(const Parameter& p, DecayScope scope) {
  switch (scope) {
    case DecayScope::All: return true;
    case DecayScope::Weights: return !p.is_bias;
    case DecayScope::FirstLayer: return !p.is_bias && p.layer == 0;
  }
  return true;
}

std::vector<Tensor> zeros_like(const std::vector<Parameter>& params) {
  std::vector<Tensor> v;
  for (const Parameter& p : params) v.push_back(Tensor::zeros(p.var.shape(), DType::F32));
  return v;
}

class Adam final : public Optimizer {
 public:
  Adam(const OptimizerConfig& c, std::vector<Parameter> p)
      : Optimizer(c, std::move(p)), m_(zeros_like(params_)), v_(zeros_like(params_)) {}

 protected:
  void update(size_t i, const std::pair<int64_t, int64_t>* ranges, size_t count, float* p, const float* g,
              float wd) override {
    const float b1 = static_cast<float>(config_.beta1), b2 = static_cast<float>(config_.beta2);
    const double t = static_cast<double>(steps_ + 1);
    const float c1 = static_cast<float>(1.0 - std::pow(config_.beta1, t));
    const float c2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(config_.beta2, t)));
    const float step = static_cast<float>(lr_) / c1;
    const float eps = static_cast<float>(config_.eps);
    float* m = m_[i].data<float>();
    float* v = v_[i].data<float>();
    // PyTorch's form: p -= lr/c1 · m / (sqrt(v)/sqrt(c2) + eps).
    for (size_t r = 0; r < count; ++r) {
      // Not a structured binding: Clang (14) cannot name one inside an OpenMP simd loop.
      const int64_t begin = ranges[r].first, end = ranges[r].second;
#pragma omp simd
      for (int64_t k = begin; k < end; ++k) {
        const float gk = g[k] + wd * p[k];
        m[k] = b1 * m[k] + (1.0f - b1) * gk;
        v[k] = b2 * v[k] + (1.0f - b2) * gk * gk;
        p[k] -= step * m[k] / (std::sqrt(v[k]) / c2_sqrt + eps);
      }
    }
  }
  std::vector<std::pair<std::string, std::vector<Tensor>*>> buffers() override {
    return {{"adam.m", &m_}, {"adam.v", &v_}};
  }

 private:
  std::vector<Tensor> m_, v_;
};

class Sgd final : public Optimizer {
 public:
  Sgd(const OptimizerConfig& c, std::vector<Parameter> p) : Optimizer(c, std::move(p)), buf_(zeros_like(params_)) {}

 protected:
  void update(size_t i, const std::pair<int64_t, int64_t>* ranges, size_t count, float* p, const float* g,
              float wd) override {
    const float lr = static_cast<float>(lr_), mu = static_cast<float>(config_.momentum);
    float* b = buf_[i].data<float>();
    // PyTorch: the buffer starts as the first gradient, then b = mu·b + g.
    const bool first = steps_ == 0;
    for (size_t r = 0; r < count; ++r) {
      // Not a structured binding: Clang (14) cannot name one inside an OpenMP simd loop.
      const int64_t begin = ranges[r].first, end = ranges[r].second;
      if (mu == 0.0f) {
#pragma omp simd
        for (int64_t k = begin; k < end; ++k) p[k] -= lr * (g[k] + wd * p[k]);
        continue;
      }
      for (int64_t k = begin; k < end; ++k) {
        const float gk = g[k] + wd * p[k];
        b[k] = first ? gk : mu * b[k] + gk;
        const float d = config_.nesterov ? gk + mu * b[k] : b[k];
        p[k] -= lr * d;
      }
    }
  }
  std::vector<std::pair<std::string, std::vector<Tensor>*>> buffers() override {
    return {{"sgd.momentum", &buf_}};
  }

 private:
  std::vector<Tensor> buf_;
};

}  // namespace

const char* optimizer_kind_name(OptimizerKind k) { return k == OptimizerKind::Adam ? "adam" : "sgd"; }

const char* decay_scope_name(DecayScope s) {
  switch (s) {
    case DecayScope::All: return "all";
    case DecayScope::Weights: return "weights";
    case DecayScope::FirstLayer: return "first_layer";
  }
  return "?";
}

std::vector<ag::Var> decayed_parameters(const std::vector<Parameter>& params, DecayScope scope) {
  std::vector<ag::Var> out;
  for (const Parameter& p : params)
    if (is_decayed(p, scope)) out.push_back(p.var);
  return out;
}

namespace {
constexpr int64_t kParallelElements = int64_t{1} << 20;  // below this one thread does it
constexpr int64_t kChunk = int64_t{1} << 16;
}  // namespace

Optimizer::Optimizer(const OptimizerConfig& config, std::vector<Parameter> params)
    : config_(config), params_(std::move(params)) {
  STRATA_CHECK(config.lr > 0 && std::isfinite(config.lr), "optimizer.lr must be positive, got {}", config.lr);
  STRATA_CHECK(config.weight_decay >= 0, "optimizer.weight_decay must be >= 0, got {}", config.weight_decay);
  lr_ = config.lr;
  for (const Parameter& p : params_) decayed_.push_back(is_decayed(p, config.decay_scope));
  for (size_t i = 0; i < params_.size(); ++i) {
    // Where the gradient is zero on every step and nothing decays, the update is
    // the identity (moments stay 0, so does the step): only the support is updated.
    const bool decay = config_.weight_decay > 0 && decayed_[i];
    const GradientSupport all = {{0, params_[i].var.value().numel()}};
    const GradientSupport& ranges = params_[i].support && !decay ? *params_[i].support : all;
    // Large parameters (embedding tables, R-GCN's bases: millions of elements) in
    // tasks of up to kChunk elements across threads: the update streams several
    // arrays and one core's bandwidth is not the machine's. Elementwise, so the
    // result is the same. A task is a run of whole ranges (R-GCN's support: many
    // rows of 16 floats), a long range cut into pieces.
    UpdatePlan plan;
    plan.task_start.push_back(0);
    int64_t in_task = 0;
    for (const auto& [begin, end] : ranges)
      for (int64_t b = begin; b < end; b += kChunk) {
        const int64_t e = std::min(end, b + kChunk);
        if (in_task > 0 && in_task + (e - b) > kChunk) {
          plan.task_start.push_back(plan.pieces.size());
          in_task = 0;
        }
        plan.pieces.emplace_back(b, e);
        in_task += e - b;
        plan.elements += e - b;
      }
    plan.task_start.push_back(plan.pieces.size());
    plans_.push_back(std::move(plan));
  }
}

void Optimizer::step() {
  const float shrink = static_cast<float>(1.0 - lr_ * config_.weight_decay);
  for (size_t i = 0; i < params_.size(); ++i) {
    const ag::Var& v = params_[i].var;
    if (!v.has_grad()) continue;
    float* p = v.mutable_value().data<float>();
    const bool decay = config_.weight_decay > 0 && decayed_[i];
    const float* g = v.grad().data<float>();
    const float wd = decay && !config_.decoupled ? static_cast<float>(config_.weight_decay) : 0.0f;
    const UpdatePlan& plan = plans_[i];
    const int64_t tasks = static_cast<int64_t>(plan.task_start.size()) - 1;
#pragma omp parallel for schedule(static) if (plan.elements >= kParallelElements && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const size_t first = plan.task_start[static_cast<size_t>(t)], last = plan.task_start[static_cast<size_t>(t) + 1];
      if (decay && config_.decoupled)
        for (size_t r = first; r < last; ++r)
          for (int64_t k = plan.pieces[r].first; k < plan.pieces[r].second; ++k) p[k] *= shrink;
      update(i, plan.pieces.data() + first, last - first, p, g, wd);
    }
  }
  ++steps_;
}

void Optimizer::zero_grad() {
  for (const Parameter& p : params_) p.var.zero_grad();
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  out.emplace_back("step", Tensor::from_vector(std::vector<int64_t>{steps_}));
  for (const auto& [prefix, tensors] : const_cast<Optimizer*>(this)->buffers())
    for (size_t i = 0; i < params_.size(); ++i) out.emplace_back(prefix + "/" + params_[i].name, (*tensors)[i]);
  return out;
}

void Optimizer::check_state(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& source) {
  load_or_check(state, source, false);
}

void Optimizer::load_state(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& source) {
  load_or_check(state, source, true);
}

void Optimizer::load_or_check(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& source,
                              bool load) {
  auto find = [&](const std::string& name) -> const Tensor& {
    for (const auto& [n, t] : state)
      if (n == name) return t;
    STRATA_FAIL("optimizer state in '{}': no entry '{}' (the checkpoint was saved by another optimizer or model)",
                source, name);
  };
  const Tensor& step = find("step");
  STRATA_CHECK(step.dtype() == DType::I64 && step.numel() == 1 && step.data<int64_t>()[0] >= 0,
               "optimizer state in '{}': 'step' is {}, expected one non-negative i64", source, step.describe());
  for (const auto& [prefix, tensors] : buffers()) {
    for (size_t i = 0; i < params_.size(); ++i) {
      const std::string name = prefix + "/" + params_[i].name;
      const Tensor& t = find(name);
      STRATA_CHECK(t.dtype() == DType::F32 && t.shape() == params_[i].var.shape(),
                   "optimizer state '{}' in '{}' is {}, but the parameter is {}", name, source, t.describe(),
                   shape_str(params_[i].var.shape()));
      const int64_t bad = ag::count_nonfinite(t);
      STRATA_CHECK(bad == 0, "optimizer state '{}' in '{}' holds {} NaN or infinite values of {}", name, source, bad,
                   t.numel());
      if (load) (*tensors)[i].copy_from(t);
    }
  }
  if (load) steps_ = step.data<int64_t>()[0];
}

std::string Optimizer::describe() const {
  std::string s = fmt::format("{} lr {:g}", optimizer_kind_name(config_.kind), config_.lr);
  if (config_.kind == OptimizerKind::Adam)
    s += fmt::format(" (betas {:g}, {:g}, eps {:g})", config_.beta1, config_.beta2, config_.eps);
  else
    s += fmt::format(" (momentum {:g}{})", config_.momentum, config_.nesterov ? ", nesterov" : "");
  if (config_.weight_decay > 0)
    s += fmt::format(", weight decay {:g} {} on {} parameters", config_.weight_decay,
                     config_.decoupled ? "decoupled" : "(L2, added to the gradient)", decay_scope_name(config_.decay_scope));
  else
    s += ", no weight decay";
  // Parameters updated on their gradient support only (nn::GradientSupport).
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].support || (config_.weight_decay > 0 && decayed_[i])) continue;
    const int64_t n = plans_[i].elements;
    const int64_t all = params_[i].var.value().numel();
    s += fmt::format("; {}: {} of {} elements updated ({:.1f}%, the others never get a gradient)", params_[i].name, n,
                     all, all > 0 ? 100.0 * static_cast<double>(n) / static_cast<double>(all) : 0.0);
  }
  return s;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::vector<Parameter> params) {
  if (config.kind == OptimizerKind::Adam) return std::make_unique<Adam>(config, std::move(params));
  return std::make_unique<Sgd>(config, std::move(params));
}

}  // namespace strata::nn
