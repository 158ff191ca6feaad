// The tuner: picks a plan (format + schedule knobs) for an op on one graph.
//
//   1. A recorded choice for this graph fingerprint, op, target and compiler is
//      used as is (no search, no measurement).
//   2. Otherwise the search space is ranked by the cost model; the top candidates
//      (plus the default CSR plan, the baseline, and at each task grain the
//      best-ranked plan of each kind the model cannot rank on this graph: feature
//      tiles when X outgrows the cache, column parts when a much-reused X
//      outgrows L2) are compiled in one batch,
//      each is checked against the reference path on random inputs (a candidate
//      that fails is reported and never chosen) and timed (warm-up, median); then
//      the fastest one's untried neighbours in the space (plans one knob away) are
//      measured the same way, the fastest few are timed again interleaved, and
//      the fastest of those is kept. --exhaustive measures the whole space instead.
//   3. The choice and every measurement are saved as a tuning record.
#pragma once

#include <optional>

#include <string>
#include <vector>

#include "core/graph.h"
#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/tune/records.h"

namespace strata::sc {

struct TuneOptions {
  bool exhaustive = false;
  bool use_records = true;  // read and write tuning records
  int top_k = 4;            // candidates measured besides the default plan
  int neighbours = 6;       // then the best one's untried one-knob neighbours (default search only)
  // Candidates are timed interleaved: at most max_repeats rounds, fewer once budget_ms
  // per candidate has passed (at least 3), each sample a batch of at least 0.5 ms.
  int max_repeats = 15;
  double budget_ms = 250;
  int finalists = 3;        // the fastest candidates (and the default plan) timed again, interleaved
  int final_rounds = 7;     // interleaved rounds of that final timing
  // Another plan replaces the untuned one (SpMM: default_plan(spec, A); SDDMM: the
  // template) only when the final round times it at least this much faster: closer
  // than that is within this VM's noise between runs (the same plan twice in one
  // process: up to 1.4x apart on Cora), and a plan that won by noise can lose
  // badly in the next run (a panel-tiled Cora plan: 0.064 ms in the tuner, 0.2 ms
  // in the benchmark that followed).
  double min_gain = 0.05;
  bool quiet = true;        // log progress at info level when false
  // SpMM: also consider plans that read X in a panel or padded layout; SDDMM: plans
  // that read X and Y panel by panel. The caller then passes them in the chosen
  // plan's x_layout (to_layout, or written so by the op producing them). Off by
  // default: row-major operands are what most callers hold.
  bool x_layouts = false;
};

struct TuneResult {
  KernelPlan chosen;
  std::vector<MeasuredCandidate> candidates;  // in the order they were ranked
  bool from_record = false;
  double tune_ms = 0, compile_ms = 0;
  std::string record_file;
  double default_ms = -1;  // the plan template's time, when measured
  double chosen_ms = -1;
  // The untuned plan was kept although `fastest` (not kept) measured faster, by
  // less than min_gain.
  std::optional<KernelPlan> fastest_within_noise;
};

// The plan template: CSR with the host's vector width, no prefetch, plain stores
// (the untuned SpMM plan adds knobs by the graph's sizes: SpmmKernel::default_plan).
KernelPlan default_cpu_plan(int64_t feat);
// The target a plan was tuned for: "cpu lanes=16 threads=2".
std::string cpu_target();

TuneResult tune_spmm(const Graph& A, const SpmmSpec& spec, const TuneOptions& options = {});
TuneResult tune_spmm(const Graph& A, int64_t feat, const TuneOptions& options = {});
TuneResult tune_sddmm(const Graph& A, int64_t feat, const TuneOptions& options = {});

}  // namespace strata::sc
