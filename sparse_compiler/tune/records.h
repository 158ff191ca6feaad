// Tuning records: the tuner's choice for (graph fingerprint, op, feature size,
// target, compiler), persisted as JSON under $STRATA_CACHE_DIR/tuning/ so loading
// the same graph again uses the recorded plan with no search. Written atomically;
// an unreadable or mismatching record is ignored (and overwritten by the next tune).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "sparse_compiler/ops/plan.h"

namespace strata::sc {

struct MeasuredCandidate {
  KernelPlan plan;
  double predicted_ms = 0;
  double measured_ms = -1;  // -1: not measured
  double padding = 0;       // padding share of the format's slots (when inspected)
  std::string status = "ok";  // "ok", "not measured", or why it was rejected
  bool final_round = false;    // measured_ms is from the tuner's interleaved final round
  bool neighbour = false;      // measured as a one-knob neighbour of the best ranked candidate
};

struct TuningRecord {
  std::string key;
  std::string graph;   // fingerprint digest
  std::string op;      // the program variant, e.g. spmm_f64_i32
  std::string target;  // e.g. "cpu lanes=16 threads=2"
  std::string compiler;
  KernelPlan chosen;
  // For choices that are not a plan (RGMS order, fused or unfused attention):
  // the chosen alternative's name, and each candidate's name in its status.
  std::string choice;
  double tune_ms = 0;
  std::vector<MeasuredCandidate> candidates;
};

// The record key and its file.
std::string record_key(const std::string& graph, const std::string& op, const std::string& target,
                       const std::string& compiler);
fs::path record_path(const std::string& key);
std::optional<TuningRecord> load_record(const std::string& key);
void save_record(const TuningRecord& r);

}  // namespace strata::sc
