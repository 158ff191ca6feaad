// Stage III: replaces each Unrolled loop by copies of its body, one per iteration,
// with the loop variable replaced by its value (then simplified), so indices into
// register-resident locals become constants that promote_registers can split.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel unroll_loops(const Kernel& k);

}  // namespace strata::sc
