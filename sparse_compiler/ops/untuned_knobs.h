// The CPU schedule knobs a kernel gets without tuning, chosen from sizes alone.
//
// The tuner measures; an untuned kernel (tuning off in a config, `strata bench
// --backend generated`) still knows how large its operands are when its graph is
// bound. Two knobs pay by size alone, measured on every graph of the shared data
// root at F = 32..256, 2 threads (docs/BENCHMARKS.md, "Untuned plans"):
//   - streaming (non-temporal) stores once the output Y outgrows the cache: no
//     read-for-ownership of Y's lines, and X is not evicted by them. 0.92-2.2x
//     (median 1.21x; one case in 38 below 1) from Y = 8 MiB up; below, 0.6-1.4x
//     (median 1.03x; a small Y is better left in cache).
//   - software prefetch of the gathered X rows (~16 KiB ahead) once X outgrows
//     twice that cache: 0.99-1.39x there; on graphs whose X stays cached it
//     only costs instructions (down to 0.67-0.78x on Citeseer, bcsstk13 and ddi).
#pragma once

#include <cstdint>

#include "sparse_compiler/ops/cpu_schedules.h"

namespace strata::sc {

// The prefetch distance (in non-zeros) that keeps ~16 KiB of X rows in flight.
int64_t default_prefetch_distance(int64_t feat);

// The cache an untuned kernel assumes (the cost model's effective last-level cache).
inline constexpr int64_t kUntunedCacheBytes = int64_t{8} << 20;

// `base` with streaming stores and X prefetch switched on where the sizes say
// they pay, for a CSR SpMM writing `out_rows` x feat floats and gathering from
// `x_rows` x feat floats. Streaming stores need feat (and `feature_tile`, 0 for
// none) to be multiples of the vector lanes; otherwise they stay off.
CpuKnobs untuned_spmm_knobs(CpuKnobs base, int64_t feat, int64_t feature_tile, int64_t out_rows, int64_t x_rows);

}  // namespace strata::sc
