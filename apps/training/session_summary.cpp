#include "apps/training/session_summary.h"

#include <vector>

#include "apps/training/resume_point.h"
#include "core/timer.h"

namespace strata::train {

void summarize_runs(Summary& s) {
  std::vector<double> tests, vals, macro_f1s, epoch_means, epoch_medians;
  for (const RunResult& r : s.runs) {
    tests.push_back(r.best.test_acc);
    vals.push_back(r.best.val_acc);
    macro_f1s.push_back(r.best.test_macro_f1);
    epoch_means.push_back(r.mean_epoch_ms);
    epoch_medians.push_back(r.median_epoch_ms);
  }
  std::tie(s.test_mean, s.test_std) = mean_std(tests);
  std::tie(s.val_mean, s.val_std) = mean_std(vals);
  std::tie(s.test_macro_f1_mean, s.test_macro_f1_std) = mean_std(macro_f1s);
  s.mean_epoch_ms = mean_std(epoch_means).first;
  s.median_epoch_ms = median(epoch_medians);
}

nlohmann::ordered_json summary_json(const Config& config, const Summary& s, const SummaryParts& parts) {
  nlohmann::ordered_json j = {{"config", config.source()},
                              {"provenance", provenance_json()},
                              {"config_hash", config.hash().hex()},
                              {"overrides", config.overrides()}};
  if (!parts.task.empty()) j["task"] = parts.task;
  j["dataset"] = parts.dataset;
  j["model"] = parts.model;
  j["num_parameters"] = parts.num_parameters;
  j["runs"] = parts.runs;
  j["metric"] = parts.metric;
  j["test_acc"] = {{"mean", s.test_mean}, {"std", s.test_std}};
  const SummaryParts::Score second =
      parts.second_score.value_or(SummaryParts::Score{"test_macro_f1", s.test_macro_f1_mean, s.test_macro_f1_std});
  j[second.key] = {{"mean", second.mean}, {"std", second.std}};
  j["val_acc"] = {{"mean", s.val_mean}, {"std", s.val_std}};
  j["mean_epoch_ms"] = s.mean_epoch_ms;
  j["median_epoch_ms"] = s.median_epoch_ms;
  j["kernels"] = parts.kernels;
  return j;
}

void finish_session(RunDirectory& dir, Console& out, const nlohmann::ordered_json& summary) {
  dir.write("summary.json", summary.dump(2) + "\n");
  dir.write("log.txt", out.text());
  commit_run_dir(dir, out);
}

}  // namespace strata::train
