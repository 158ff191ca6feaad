// Stage III -> III (after a GPU schedule). A reduction loop bound to threadIdx.x,
//
//   for (t, 0, W) bound threadIdx.x { acc[k] = acc[k] + e(t) }     (k independent of t)
//
// means "the W threads each contribute e(t) to one accumulator". Run serially that
// is a plain loop; on a GPU the threads run at once, so the sum must be a reduction
// across them. This pass rewrites the loop into a per-thread value and an explicit
// cross-lane sum (TVM's cross-thread reduction lowering):
//
//   allocate red[W] { for (t, 0, W) bound threadIdx.x { red[t] = e(t) }
//                     acc[k] = acc[k] + warp_reduce_add(red, W) }
//
// which keeps its serial meaning (the interpreter sums red after the loop) and
// which the CUDA emitter turns into one register per thread and a shuffle
// reduction. W must be a power of two no larger than a warp (32); a bound reduction
// of another shape is refused with a ScheduleError naming the loop.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel lower_cross_thread_reduction(const Kernel& k);

}  // namespace strata::sc
