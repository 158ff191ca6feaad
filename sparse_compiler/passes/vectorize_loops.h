// Stage III: replaces each Vectorized loop by vector code (Halide's VectorizeLoops).
//
// The loop variable becomes Ramp(min, 1, lanes); expressions that depend on it
// widen, scalars broadcast where they meet vectors, and affine indices stay
// ramps (so the emitter sees dense vector loads and stores). A store whose index
// does not depend on the variable is a reduction when its value is
// `acc[k] + e(lane)`: it becomes `acc[k] + reduce_add(e)`. Anything else that
// cannot be vectorized (a data-dependent branch or loop bound, a search) raises a
// ScheduleError naming the loop.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Stmt vectorize_loop(const ForNode* loop);
Kernel vectorize_loops(const Kernel& k);

}  // namespace strata::sc
