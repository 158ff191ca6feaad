#include "apps/training/run_book.h"

#include <fmt/format.h>

#include "models/checkpoint.h"

namespace strata::train {

void RunBook::resume(const RunProgress& p, ResumePoint& point, Rng& dropout, Rng* sampler,
                     const std::vector<nn::Parameter>& params, nn::Optimizer& optimizer, Console& out) {
  first_epoch_ = p.epoch + 1;
  best_epoch_ = p.best_epoch;
  epochs_ = p.epoch;
  epoch_ms_ = p.epoch_ms;
  optimizer_ms_ = p.optimizer_ms;
  sample_ms_ = p.sample_ms;
  RunTensors t = restore_run_in_progress(p, point, dropout, sampler, selection_, tape_, params, optimizer);
  best_params_ = std::move(t.best_params);
  best_optimizer_ = std::move(t.best_optimizer);
  out(fmt::format("Run {}/{} (seed {}): resumed after epoch {}", run_, c_.training.runs, seed_, epoch_str(p.epoch)));
}

void RunBook::add_epoch(double ms, double optimizer_ms, double sample_ms) {
  epoch_ms_.push_back(ms);
  optimizer_ms_ += optimizer_ms;
  sample_ms_ += sample_ms;
}

bool RunBook::offer(int64_t epoch, double val_score, double val_loss, const std::vector<nn::Parameter>& params,
                    const nn::Optimizer* optimizer) {
  if (!selection_.offer(epoch, val_score, val_loss)) return false;
  best_epoch_ = epoch;
  if (c_.output.checkpoint == CheckpointPolicy::Best) {
    nn::refresh_snapshot(best_params_, params);
    if (optimizer) nn::refresh_snapshot(best_optimizer_, optimizer->state());
  }
  return true;
}

bool RunBook::end_epoch(int64_t epoch, bool evaluated, const Printer& out) {
  epochs_ = epoch;
  stopped_early_ = evaluated && selection_.stop_early(epoch, out);
  return stopped_early_;
}

void RunBook::save_if_due(ResumeRecorder& recorder, int64_t epoch, nlohmann::ordered_json best,
                          nlohmann::ordered_json last, const Rng& dropout, const Rng* sampler,
                          const std::vector<nn::Parameter>& params, const nn::Optimizer& optimizer) {
  if (!recorder.due(epoch, c_.training.epochs)) return;
  recorder.save({run_, epoch, best_epoch_, epoch_ms_, optimizer_ms_, std::move(best), std::move(last), dropout.state(),
                 sampler ? sampler->state() : std::string(), selection_.state(), tape_.profile(), sample_ms_},
                params, optimizer, best_params_, best_optimizer_);
}

}  // namespace strata::train
