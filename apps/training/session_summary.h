// How every `strata train` driver (trainer.cpp, rgcn.cpp, link_prediction.cpp) ends
// its session: the figures over its runs, summary.json's keys, and the last writes
// before the run dir is committed (resume_point.h: commit_run_dir).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "apps/training/config.h"
#include "apps/training/run_dir.h"
#include "apps/training/run_report.h"
#include "apps/training/trainer.h"

namespace strata::train {

// Fills `s`'s means and deviations of the test and validation scores (each run's
// best.test_acc and best.val_acc), its mean epoch time (mean over runs of each run's
// mean) and median epoch time (median of the runs' medians), from s.runs.
void summarize_runs(Summary& s);

// What summary.json holds besides the config, its provenance and the run figures.
struct SummaryParts {
  std::string task;  // "link"; empty for node classification, which writes no "task" key
  nlohmann::ordered_json dataset;
  std::string model;
  int64_t num_parameters = 0;
  nlohmann::ordered_json runs;  // one row a run
  std::string metric;           // what test_acc and val_acc hold (metric_key)
  // The driver's second test score ("test_macro_f1", "test_rocauc"): its key, mean and deviation.
  std::string second_score;
  std::pair<double, double> second_mean_std;
  nlohmann::ordered_json kernels;
};
nlohmann::ordered_json summary_json(const Config& config, const Summary& s, const SummaryParts& parts);

// Writes summary.json and log.txt (the console so far), then commits the run dir.
void finish_session(RunDirectory& dir, Console& out, const nlohmann::ordered_json& summary);

}  // namespace strata::train
