// The lowering pipeline, as one readable list of passes: stage I -> stage III.
// Schedules act on its result; passes/codegen_prep.h then lowers the scheduled
// loops (unrolling, vectorization, register promotion) for the emitters.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// materialize_aux_buffers -> lower_sparse_iter -> hoist_binary_search ->
// lower_sparse_buffer -> simplify -> rebase_loops -> simplify -> hoist_invariant_ifs.
Kernel lower_to_loops(const Kernel& stage1);
// The same, stopping after stage II (for `strata compile --emit stage2`).
Kernel lower_to_positions(const Kernel& stage1);
// Lowers a scheduled stage-III kernel for the emitters: unroll_loops -> simplify
// -> vectorize_loops -> simplify -> lower_cross_thread_reduction (GPU reductions
// bound to threadIdx.x; nothing on CPU kernels) -> promote_registers.
Kernel lower_schedule(const Kernel& scheduled);

}  // namespace strata::sc
