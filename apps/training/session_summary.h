// How every `strata train` driver (trainer.cpp, rgcn.cpp, link_prediction.cpp) ends
// its session: the figures over its runs, summary.json's keys, and the last writes
// before the run dir is committed (resume_point.h: commit_run_dir).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apps/training/config.h"
#include "apps/training/run_dir.h"
#include "apps/training/run_report.h"
#include "apps/training/trainer.h"

namespace strata::train {

// Fills `s`'s means and deviations of the test and validation scores and the test
// macro-F1 (each run's best.test_acc, best.val_acc and best.test_macro_f1), its mean epoch time (mean over runs of each
// run's mean) and median epoch time (median of the runs' medians), from s.runs.
void summarize_runs(Summary& s);

// What summary.json holds besides the config, its provenance and the run figures.
struct SummaryParts {
  std::string task = "";  // "link"; empty for node classification, which writes no "task" key
  nlohmann::ordered_json dataset;
  std::string model;
  int64_t num_parameters = 0;
  nlohmann::ordered_json runs;  // one row a run
  std::string metric;           // what test_acc and val_acc hold (metric_key)
  nlohmann::ordered_json kernels;
  // summary.json's second test score: the runs' macro-F1 (Summary::test_macro_f1_*) unless a
  // driver scores otherwise (link prediction: "test_rocauc").
  struct Score {
    std::string key;
    double mean = 0, std = 0;
  };
  std::optional<Score> second_score = std::nullopt;
};
nlohmann::ordered_json summary_json(const Config& config, const Summary& s, const SummaryParts& parts);

// Writes summary.json and log.txt (the console so far), then commits the run dir.
void finish_session(RunDirectory& dir, Console& out, const nlohmann::ordered_json& summary);

}  // namespace strata::train
