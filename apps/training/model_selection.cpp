#include "apps/training/model_selection.h"

#include <fmt/format.h>

#include "apps/training/resume_point.h"
#include "core/error.h"

namespace strata::train {

bool ModelSelection::offer(int64_t epoch, double val_acc, double val_loss) {
  const bool better = loop_.select_by_loss ? best_val_ < 0 || val_loss < best_loss_
                                           : val_acc > best_val_ || (val_acc == best_val_ && val_loss < best_loss_);
  if (!better) {
    ++since_best_;
    return false;
  }
  best_val_ = val_acc;
  best_loss_ = val_loss;
  best_epoch_ = epoch;
  since_best_ = 0;
  return true;
}

nlohmann::ordered_json ModelSelection::state() const {
  return {{"best_val", exact_json(best_val_)},
          {"best_loss", exact_json(best_loss_)},
          {"best_epoch", best_epoch_},
          {"since_best", since_best_}};
}

void ModelSelection::restore(const nlohmann::json& state, const std::string& source) {
  try {
    best_val_ = exact_double(state, "best_val", source);
    best_loss_ = exact_double(state, "best_loss", source);
    best_epoch_ = state.at("best_epoch").get<int64_t>();
    since_best_ = state.at("since_best").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("{}: the model selection's state is malformed ({})", source, e.what());
  }
}

bool ModelSelection::stop_early(int64_t epoch, const Printer& out) const {
  if (loop_.patience <= 0 || since_best_ < loop_.patience || epoch >= loop_.epochs) return false;
  out(fmt::format("Early stopping at epoch {}: no better validation {} in {} evaluations", epoch_str(epoch),
                  loop_.select_by_loss ? "loss" : "score", loop_.patience));
  return true;
}

void log_epoch(const OutputConfig& output, const Printer& out, int64_t epoch, double loss, double train_acc,
               double val_acc, double ms) {
  if (output.log_every > 0 && epoch % output.log_every == 0)
    out(fmt::format("Epoch {} | loss {:.4f} | train {:.3f} | val {:.3f} | {:.2f} ms", epoch_str(epoch), loss,
                    train_acc, val_acc, ms));
}

}  // namespace strata::train
