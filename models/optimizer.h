// Optimizers over a model's parameters: Adam (Kingma & Ba 2015) and SGD with
// momentum, with PyTorch's update rules so hyper-parameters carry over.
//
// Weight decay. With `decoupled` off (the default) it is L2 regularisation as in
// torch.optim.{Adam,SGD}(weight_decay): wd·p is added to the gradient before the
// update, exactly the gradient of an (wd/2)·Σ‖p‖² term in the loss (ag::l2_penalty
// computes that term; adding it here saves two passes over the parameters and
// keeps the reported loss the plain NLL). With `decoupled` on, the optimizer
// shrinks the decayed parameters directly, p <- p - lr·wd·p, before the update
// (AdamW; for SGD the two are the same). `decay_scope` picks the decayed
// parameters: all, weights only (no biases), or the first layer's weights (Kipf &
// Welling's GCN).
//
// State (moments, momentum buffers, the step count) is exposed by name so that
// checkpoints can save and restore it exactly.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "layers/parameter.h"
#include "models/lr_schedule.h"

namespace strata::nn {

enum class OptimizerKind : uint8_t { Adam, Sgd };
enum class DecayScope : uint8_t { All, Weights, FirstLayer };
const char* optimizer_kind_name(OptimizerKind k);
const char* decay_scope_name(DecayScope s);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  double lr = 0.01;
  double weight_decay = 0.0;
  bool decoupled = false;
  DecayScope decay_scope = DecayScope::All;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
  double momentum = 0.9;                          // sgd
  bool nesterov = false;                          // sgd
  LrSchedule schedule;                            // the rate per epoch (lr_schedule.h)
};

// The parameters weight decay applies to.
std::vector<ag::Var> decayed_parameters(const std::vector<Parameter>& params, DecayScope scope);

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, std::vector<Parameter> params);
  virtual ~Optimizer() = default;

  // Updates every parameter from its gradient (parameters without one are left
  // alone) and counts the step.
  void step();
  void zero_grad();
  int64_t steps() const { return steps_; }
  // The rate of the next steps (a schedule's value for the epoch); config().lr stays the base.
  void set_lr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }
  const OptimizerConfig& config() const { return config_; }

  // Named state tensors, e.g. "adam.m/layers.0.weight"; "step" holds the count.
  std::vector<std::pair<std::string, Tensor>> state() const;
  // Restores state() output; throws UserError naming `source` (the file it was read
  // from) and a missing or mis-shaped entry.
  void load_state(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& source);
  // The checks of load_state without loading: for state kept aside, such as a resume
  // point's best-epoch moments, which become the run's checkpoint later.
  void check_state(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& source);
  // "adam lr 0.01 (betas 0.9, 0.999, eps 1e-08), weight decay 0.0005 as L2 in the loss on all parameters"
  std::string describe() const;

 protected:
  // The elements [begin, end) of each of `count` ranges of parameter `index` (values
  // p, gradient g) updated; wd > 0 adds wd·p to g first. Elementwise, so ranges may
  // run in parallel.
  virtual void update(size_t index, const std::pair<int64_t, int64_t>* ranges, size_t count, float* p, const float* g,
                      float wd) = 0;
  // (prefix, buffer) pairs per parameter, in state order.
  virtual std::vector<std::pair<std::string, std::vector<Tensor>*>> buffers() = 0;

  OptimizerConfig config_;
  std::vector<Parameter> params_;
  std::vector<bool> decayed_;
  int64_t steps_ = 0;
  double lr_ = 0;  // the current rate; config_.lr until set_lr

 private:
  // How step() walks a parameter, fixed at construction: the elements it updates
  // (all, or the gradient support where nothing decays) as pieces of at most
  // kChunk elements, grouped into tasks for the threads.
  struct UpdatePlan {
    std::vector<std::pair<int64_t, int64_t>> pieces;
    std::vector<size_t> task_start;  // task t holds pieces [task_start[t], task_start[t + 1])
    int64_t elements = 0;
  };
  std::vector<UpdatePlan> plans_;

  void load_or_check(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& source, bool load);
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::vector<Parameter> params);

}  // namespace strata::nn
