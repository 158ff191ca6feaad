#include "sparse_compiler/tune/interleaved_timing.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/timer.h"

namespace strata::sc {

std::vector<double> time_interleaved(const std::vector<std::function<void()>>& candidates,
                                     const std::vector<double>& estimate_ms, const InterleavedTiming& timing) {
  STRATA_ASSERT(estimate_ms.empty() || estimate_ms.size() == candidates.size(),
                "time_interleaved: {} estimates for {} candidates", estimate_ms.size(), candidates.size());
  STRATA_ASSERT(timing.rounds >= 1 && timing.min_rounds >= 1, "time_interleaved: {} rounds (at least {})",
                timing.rounds, timing.min_rounds);
  std::vector<double> estimates = estimate_ms;
  if (estimates.empty() && timing.min_sample_ms > 0)
    for (const auto& candidate : candidates) {
      Timer warm_up;
      candidate();
      estimates.push_back(warm_up.ms());
    }
  std::vector<int> batch(candidates.size(), 1);
  if (!estimates.empty() && timing.min_sample_ms > 0)
    for (size_t c = 0; c < candidates.size(); ++c)
      batch[c] = std::clamp(static_cast<int>(std::ceil(timing.min_sample_ms / std::max(1e-4, estimates[c]))), 1, 1000);
  std::vector<std::vector<double>> samples(candidates.size());
  const Timer budget;
  for (int r = 0; r < timing.rounds; ++r) {
    if (timing.budget_ms > 0 && r >= timing.min_rounds && budget.ms() >= timing.budget_ms) break;
    for (size_t c = 0; c < candidates.size(); ++c) {
      // Untimed, as many calls as the sample: back to this candidate's own state.
      for (int b = 0; b < batch[c]; ++b) candidates[c]();
      Timer t;
      for (int b = 0; b < batch[c]; ++b) candidates[c]();
      samples[c].push_back(t.ms() / batch[c]);
    }
  }
  std::vector<double> out;
  for (const auto& s : samples) out.push_back(median(s));
  return out;
}

}  // namespace strata::sc
