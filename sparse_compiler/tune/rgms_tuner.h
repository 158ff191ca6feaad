// Choosing the RGMS order (fused, aggregate-first, transform-first, mixed) per relational
// graph and feature sizes: each order's kernels are compiled together, checked
// against the reference loops on random inputs, timed, and the fastest kept; the
// choice is recorded like any tuning record (so a second load measures nothing).
#pragma once

#include <vector>

#include "sparse_compiler/ops/rgms.h"

namespace strata::sc {

struct RgmsTuneResult {
  RgmsOrder chosen = RgmsOrder::Fused;
  std::vector<std::pair<RgmsOrder, double>> measured_ms;  // empty when from a record
  bool from_record = false;
  double tune_ms = 0;
  std::string record_file;  // the record read or written (empty without records)
};

RgmsTuneResult tune_rgms(const RelationalGraph& g, const RgmsSpec& spec, bool use_records = true);

}  // namespace strata::sc
