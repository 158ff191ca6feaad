// The cost model: predicts a plan's time from the graph's fingerprint alone (no
// inspection, no compile), so the tuner measures only the candidates worth
// measuring. It models what DESIGN.md measured to matter on CPUs: bytes moved
// (structure, padding, X gathers, Y traffic), how often a gathered X row is still
// in cache (its working set against the cache, per feature tile and column part),
// the stall of cache-missing gathers and what software prefetch recovers, per-row
// overheads, and task balance. It ranks; it does not promise times.
#pragma once

#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/ops/untuned_knobs.h"  // expected_tile_segments, host_l2_bytes
#include "sparse_compiler/tune/graph_fingerprint.h"

namespace strata::sc {

struct MachineModel {
  double bandwidth_gbs = 40;        // streaming memory bandwidth
  double cache_bytes = 8 << 20;     // effective last-level cache for one kernel
  double l2_bytes = 1 << 20;        // one core's L2 (host(): the machine's, when it says)
  double gather_efficiency = 0.55;  // fraction of bandwidth cache-missing gathers get without prefetch
  double prefetch_efficiency = 0.85;
  double flops_per_s = 60e9;        // sustained vector FMA rate, both threads
  double row_overhead_ns = 3;       // per row or ELL row: loop, bounds, stores
  double team_wakeup_us = 4;        // fork/join of a parallel loop (a one-task loop runs inline)
  double task_dispatch_us = 0.2;    // a dynamically handed-out task: the shared counter's line moves
  double static_imbalance = 0.05;   // fixed blocks of tasks: no thread helps one that falls behind
  int threads = 2;
  static MachineModel host();       // threads from the runtime, the rest defaults
};

// Predicted milliseconds for SpMM / SDDMM with `plan` on a graph like `g`.
double predict_spmm_ms(const GraphFingerprint& g, const SpmmSpec& spec, const KernelPlan& plan, const MachineModel& m);
double predict_sddmm_ms(const GraphFingerprint& g, int64_t feat, const KernelPlan& plan, const MachineModel& m);

// Whether X (cols x F floats) outgrows the cache the model assumes. Then feature
// tiles over row-major X can pay (measured: 1.2-1.5x on MUSAE Facebook at F = 128
// and 256) or cost (0.95x on Pubmed at F = 256) for reasons the model does not
// price (how the hardware's set hashing spreads a tile's lines), so the tuner
// measures the best-ranked tiled plan instead of trusting the ranking.
bool x_outgrows_cache(const GraphFingerprint& g, int64_t feat, const MachineModel& m);

// Whether splitting the columns into parts (hyb's c) may pay: X outgrows one
// core's L2 while each X row is gathered many times (64 or more non-zeros per
// column), so a part's share of X staying in L2 saves more than the extra pass
// over the rows costs. The model prices one cache level only; measured: hyb:c=2
// was the exhaustive search's pick on ogbl-ddi (500 non-zeros per column) at
// F = 256, 1.2-1.3x the default pick, in two runs.
bool column_parts_may_pay(const GraphFingerprint& g, int64_t feat, const MachineModel& m);

// Slots (non-zeros + padding) and ELL rows the format would store, estimated
// from the row-degree histogram (each bucket's mid-degree) and, for column parts,
// an even split of each row's degree.
struct FormatEstimate {
  double slots = 0, outer_rows = 0;
};
FormatEstimate estimate_format(const GraphFingerprint& g, const FormatSpec& f);

}  // namespace strata::sc
