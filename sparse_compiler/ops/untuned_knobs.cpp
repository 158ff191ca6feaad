#include "sparse_compiler/ops/untuned_knobs.h"

#include <algorithm>

namespace strata::sc {

int64_t default_prefetch_distance(int64_t feat) {
  return std::clamp<int64_t>(16384 / (4 * std::max<int64_t>(feat, 1)), 4, 256);
}

CpuKnobs untuned_spmm_knobs(CpuKnobs base, int64_t feat, int64_t feature_tile, int64_t out_rows, int64_t x_rows) {
  const int64_t row_bytes = feat * static_cast<int64_t>(sizeof(float));
  const bool whole_vectors = feat % base.vector_lanes == 0 && feature_tile % base.vector_lanes == 0;
  if (whole_vectors && out_rows * row_bytes >= kUntunedCacheBytes) base.stream_stores = true;
  if (x_rows * row_bytes >= 2 * kUntunedCacheBytes) base.prefetch = default_prefetch_distance(feat);
  return base;
}

}  // namespace strata::sc
