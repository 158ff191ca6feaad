// One training run's bookkeeping, kept alike by every `strata train` driver
// (trainer.cpp, rgcn.cpp, link_prediction.cpp): the epoch counters and times, model
// selection and the best epoch's snapshots, and the run in progress that a resume
// point holds, restored when a session resumes and saved when due. A driver keeps
// what is its own: its step, its evaluation and its metrics lines.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/training/config.h"
#include "apps/training/model_selection.h"
#include "apps/training/resume_point.h"
#include "apps/training/run_report.h"
#include "core/autograd.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/timer.h"
#include "layers/parameter.h"
#include "models/optimizer.h"

namespace strata::train {

class RunBook {
 public:
  RunBook(const TrainingConfig& c, int run, uint64_t seed) : c_(c), run_(run), seed_(seed), selection_(c.training) {}

  // Continues the resume point's run in progress `p`: the counters and times, model
  // selection, the dropout stream (and the sampling stream, where the driver has
  // one), the tensors; prints "Run r/R (seed s): resumed after epoch e". The driver
  // reads its evaluations back from p.best and p.last.
  void resume(const RunProgress& p, ResumePoint& point, Rng& dropout, Rng* sampler,
              const std::vector<nn::Parameter>& params, nn::Optimizer& optimizer, Console& out);

  int64_t first_epoch() const { return first_epoch_; }
  // Whether the driver evaluates after `epoch` (training.eval_period, and the last epoch).
  bool evaluates_after(int64_t epoch) const {
    return epoch % c_.training.eval_period == 0 || epoch == c_.training.epochs;
  }
  // A training epoch done: its time, and the optimizer's and the sampler's share of it.
  void add_epoch(double ms, double optimizer_ms, double sample_ms = 0);
  // An evaluation after `epoch`: true when model selection takes it as the best so far.
  // With output.checkpoint: best, the parameters (and the optimizer's state, when
  // `optimizer` is given) are snapshotted then.
  bool offer(int64_t epoch, double val_score, double val_loss, const std::vector<nn::Parameter>& params,
             const nn::Optimizer* optimizer);
  // After `epoch`'s metrics and log line: true when the run stops early (model_selection.h).
  bool end_epoch(int64_t epoch, bool evaluated, const Printer& out);
  // Saves a resume point after `epoch` when one is due (ResumeRecorder::due); `best`
  // and `last` are the driver's evaluations as it writes them.
  void save_if_due(ResumeRecorder& recorder, int64_t epoch, nlohmann::ordered_json best, nlohmann::ordered_json last,
                   const Rng& dropout, const Rng* sampler, const std::vector<nn::Parameter>& params,
                   const nn::Optimizer& optimizer);

  // The run's figures, into a driver's result (RunResult, or link prediction's own).
  template <class Result>
  void fill(Result& r) {
    r.run = run_;
    r.seed = seed_;
    r.best_epoch = best_epoch_;
    r.epochs = epochs_;
    r.stopped_early = stopped_early_;
    r.optimizer_ms = optimizer_ms_;
    r.profile = tape_.profile();
    r.train_ms = 0;
    for (double ms : epoch_ms_) r.train_ms += ms;
    r.mean_epoch_ms = r.train_ms / static_cast<double>(epoch_ms_.size());
    r.median_epoch_ms = median(epoch_ms_);
  }

  ag::Tape& tape() { return tape_; }
  int64_t best_epoch() const { return best_epoch_; }
  double sample_ms() const { return sample_ms_; }
  // The best epoch's snapshots (empty unless output.checkpoint: best).
  const std::vector<std::pair<std::string, Tensor>>& best_params() const { return best_params_; }
  const std::vector<std::pair<std::string, Tensor>>& best_optimizer() const { return best_optimizer_; }

 private:
  const TrainingConfig& c_;
  const int run_;
  const uint64_t seed_;
  ModelSelection selection_;
  ag::Tape tape_;
  int64_t first_epoch_ = 1, best_epoch_ = 0, epochs_ = 0;
  bool stopped_early_ = false;
  std::vector<double> epoch_ms_;
  double optimizer_ms_ = 0, sample_ms_ = 0;
  std::vector<std::pair<std::string, Tensor>> best_params_, best_optimizer_;
};

}  // namespace strata::train
