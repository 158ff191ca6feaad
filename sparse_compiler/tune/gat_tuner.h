// Choosing fused or unfused attention per graph, heads and feature size: DGL's
// fused edge softmax helped on small graphs and hurt on large ones, so Strata
// measures both on the graph at hand. Both forwards are checked against each
// other, timed, and the faster recorded (a second load measures nothing).
#pragma once

#include <vector>

#include "sparse_compiler/ops/attention.h"

namespace strata::sc {

struct GatTuneResult {
  bool fused = true;
  double fused_ms = -1, unfused_ms = -1;  // -1 when from a record
  bool from_record = false;
  double tune_ms = 0;
};

// `kernels` must be GatKernels for `A` (so nothing is compiled twice).
GatTuneResult tune_gat(const GatKernels& kernels, bool use_records = true);

}  // namespace strata::sc
