// The rules every training driver applies after each evaluation (through RunBook, run_book.h):
// whether it is the best so far (training.select_by: the validation score of
// training.metric, ties broken by the lower validation loss; or validation loss), when to stop early
// (training.patience evaluations without a better one), and the epoch log line.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/training/config.h"
#include "apps/training/run_report.h"

namespace strata::train {

class ModelSelection {
 public:
  explicit ModelSelection(const LoopConfig& loop) : loop_(loop) {}

  // Records the evaluation after `epoch`; true when it is the new best.
  bool offer(int64_t epoch, double val_acc, double val_loss);
  // After an evaluation at `epoch`: true (and a line printed) when the run stops
  // early, i.e. `patience` evaluations passed without a better one before the last epoch.
  bool stop_early(int64_t epoch, const Printer& out) const;
  int64_t best_epoch() const { return best_epoch_; }

  // Everything offer() and stop_early() remember, for a resume point; restore()
  // throws a UserError naming `source` when a field is missing.
  nlohmann::ordered_json state() const;
  void restore(const nlohmann::json& state, const std::string& source);

 private:
  const LoopConfig& loop_;
  double best_val_ = -1, best_loss_ = 0;
  int64_t best_epoch_ = 0, since_best_ = 0;
};

// "Epoch 0010 | loss 1.2345 | train 0.500 | val 0.400 | 3.21 ms", every
// output.log_every epochs (never when it is 0).
void log_epoch(const OutputConfig& output, const Printer& out, int64_t epoch, double loss, double train_acc,
               double val_acc, double ms);

}  // namespace strata::train
