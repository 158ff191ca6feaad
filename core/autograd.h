// Reverse-mode automatic differentiation: a tape over core tensors.
//
//   ag::Tape tape;
//   ag::Var x = ag::Var::constant(features);
//   ag::Var w = ag::Var::parameter(weights, "conv0.weight");
//   ag::Var y = ag::relu(tape, ag::matmul(tape, x, w));
//   ag::Var loss = ag::nll_loss(tape, ag::log_softmax(tape, y), labels, train_ids);
//   tape.backward(loss);             // w.grad() now holds d loss / d w
//
// A Var is a shared handle to a value and, when it requires a gradient, the gradient
// accumulated into it. Parameters are Vars that live across steps; everything an op
// returns lives until the tape is cleared. Each op (core/autograd_ops.h, and the
// graph ops in layers/graph_ops.h) computes its output eagerly and, when some input
// requires a gradient, records a backward closure on the tape. Tape::backward seeds
// the output's gradient and runs the closures in reverse order, so every closure
// sees the complete gradient of its output (the tape is a topological order).
//
// The tape also keeps what training needs around the maths: the label of the layer
// that recorded each op (Tape::Scope), so a NaN can be traced to the layer where it
// first appeared; and per-category wall time (sparse kernels, dense matmul, the
// rest) for profiles. Values are float32, matching the kernels; tests check every
// backward against central finite differences accumulated in float64.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace strata::ag {

// What an op spends its time on, for profiles.
enum class OpCategory : uint8_t { Sparse, Dense, Other };
inline constexpr int kNumOpCategories = 3;
const char* category_name(OpCategory c);

struct VarData {
  Tensor value;
  Tensor grad;               // undefined until something flows into it
  bool grad_shared = false;  // grad is another Var's (complete) gradient: copy before adding into it
  bool requires_grad = false;
  std::string name;
};

class Var {
 public:
  Var() = default;
  // A value that never receives a gradient (inputs, labels, masks).
  static Var constant(Tensor value, std::string name = "");
  // A leaf that accumulates gradients (weights, biases).
  static Var parameter(Tensor value, std::string name);
  // An op output; requires_grad when any input does.
  static Var result(Tensor value, bool requires_grad);

  bool defined() const { return data_ != nullptr; }
  const Tensor& value() const { return data_->value; }
  Tensor& mutable_value() const { return data_->value; }
  const Tensor& grad() const { return data_->grad; }
  bool has_grad() const { return data_->grad.defined(); }
  bool requires_grad() const { return data_ && data_->requires_grad; }
  const std::string& name() const { return data_->name; }
  const Shape& shape() const { return data_->value.shape(); }
  int64_t dim(int i) const { return data_->value.dim(i); }

  // Adds g into the gradient. The first gradient is adopted without a copy: when
  // `owned` is false (g is, say, an op output's complete gradient, passed through by
  // add or bias_add) it is shared read-only, and a later accumulation adds into a
  // fresh tensor instead of writing into it (copy on write).
  void accumulate_grad(const Tensor& g, bool owned) const;
  void zero_grad() const {
    data_->grad = Tensor();
    data_->grad_shared = false;
  }
  // Replaces the gradient (optimizers and tests).
  void set_grad(Tensor g) const {
    data_->grad = std::move(g);
    data_->grad_shared = false;
  }

  bool same_as(const Var& o) const { return data_ == o.data_; }

 private:
  std::shared_ptr<VarData> data_;
};

// Wall time and call counts per category, forward and backward together.
struct OpProfile {
  double ms[kNumOpCategories] = {0, 0, 0};
  int64_t calls[kNumOpCategories] = {0, 0, 0};
  void add(OpCategory c, double t) {
    ms[static_cast<int>(c)] += t;
    calls[static_cast<int>(c)] += 1;
  }
  double total_ms() const { return ms[0] + ms[1] + ms[2]; }
  void clear() { *this = OpProfile(); }
};

class Tape {
 public:
  Tape() = default;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // While a Scope lives, ops are labelled `label` (scopes nest with '.').
  class Scope {
   public:
    Scope(Tape& tape, const std::string& label);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Tape& tape_;
    size_t previous_size_;
  };

  // Training mode: dropout is active. Eval mode: dropout is the identity.
  bool training() const { return training_; }
  void set_training(bool on) { training_ = on; }
  // With gradients off, ops record nothing (inference, evaluation).
  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool on) { grad_enabled_ = on; }

  // Called by ops once the output is computed: remembers `out` (labelled with the
  // current scope) for NaN tracing, `backward` when it is non-empty and gradients
  // are on, and the op's forward time (ms) in the profile.
  void record(const char* op, OpCategory category, const Var& out, double forward_ms,
              std::function<void()> backward);
  // The same for an op with several outputs: the backward runs once, when any of
  // them received a gradient (it must handle outputs that did not).
  void record(const char* op, OpCategory category, const std::vector<Var>& outs, double forward_ms,
              std::function<void()> backward);
  // Whether an op with these inputs needs a backward closure.
  bool needs_grad(std::initializer_list<const Var*> inputs) const {
    if (!grad_enabled_) return false;
    for (const Var* v : inputs)
      if (v->requires_grad()) return true;
    return false;
  }

  // Seeds d out / d out = 1 for a scalar (one-element) output and runs every
  // recorded backward closure in reverse order.
  void backward(const Var& out);
  // Same, with an explicit seed gradient of out's shape.
  void backward(const Var& out, const Tensor& seed);
  // Forgets every recorded op (activations are freed with them).
  void clear();
  size_t size() const { return entries_.size(); }

  // The first recorded op (in forward order) whose output holds a NaN or an
  // infinity: "conv0 (matmul): 12 of 43328 values non-finite"; nullopt if none.
  struct NonFinite {
    std::string label;  // the layer scope, "" outside any scope
    std::string op;
    int64_t count = 0, total = 0;
    std::string str() const;
  };
  std::optional<NonFinite> first_nonfinite() const;

  // Time spent by ops and backward closures, when profiling is on (default on).
  OpProfile& profile() { return profile_; }
  bool profiling() const { return profiling_; }
  void set_profiling(bool on) { profiling_ = on; }
  const std::string& scope() const { return scope_; }

 private:
  struct Entry {
    const char* op;
    OpCategory category;
    std::string label;
    std::vector<Var> outs;
    std::function<void()> backward;
  };
  std::vector<Entry> entries_;
  std::string scope_;
  bool training_ = true;
  bool grad_enabled_ = true;
  bool profiling_ = true;
  OpProfile profile_;
};

// Work (elements touched, or multiply-adds) below which an op runs on the calling
// thread alone. Waking a second thread costs little on an idle machine, but on a
// shared one every parallel region can wait a whole scheduler time slice for a
// descheduled partner, and idle OpenMP workers spin (GOMP_SPINCOUNT) on the cores
// the busy thread needs: a Cora epoch (≈2 ms of work) measured 10-180 ms with two
// threads under load. So only ops with about a millisecond of work or more (4 M
// elements or multiply-adds) use threads; a small graph's epoch then never starts a
// parallel region at all. (OMP_WAIT_POLICY=passive also helps on busy machines.)
inline constexpr int64_t kParallelWork = int64_t{1} << 22;

// Calls body(begin, end) on consecutive blocks covering [0, n), the blocks spread
// over the threads when n >= kParallelWork. Inner loops over a block, written with
// `#pragma omp simd`, vectorise where a `parallel for simd` over the whole range
// with an `if` clause often does not (GCC 12 leaves branches in it).
template <class F>
void for_blocks(int64_t n, F&& body) {
  constexpr int64_t kBlock = int64_t{1} << 14;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelWork)
  for (int64_t b = 0; b < blocks; ++b) body(b * kBlock, b + 1 == blocks ? n : (b + 1) * kBlock);
}

// While alive, OpenMP regions this thread starts (generated kernels included) use
// one thread if `work` is below kParallelWork; otherwise it changes nothing.
class SerialIfSmall {
 public:
  explicit SerialIfSmall(int64_t work);
  ~SerialIfSmall();
  SerialIfSmall(const SerialIfSmall&) = delete;
  SerialIfSmall& operator=(const SerialIfSmall&) = delete;

 private:
  int saved_ = 0;
};

// Float32 tensors for activations and gradients. Like every host tensor of 64 KiB
// and more, their storage comes from the process-wide buffer pool
// (core/buffer_pool.h), so a training step reuses the previous step's buffers
// instead of mapping and page-faulting fresh ones.
Tensor empty(Shape shape);
Tensor zeros(Shape shape);

// True when every element of a float32 tensor is finite.
bool all_finite(const Tensor& t);
// The number of non-finite elements of a float32 tensor.
int64_t count_nonfinite(const Tensor& t);

}  // namespace strata::ag
