// Stage III: scalar replacement of register-scope locals. After unrolling and
// vectorization, an accumulator like acc[128] is only ever accessed as
// acc[ramp(0,1,16)], acc[ramp(16,1,16)], ... ; it is split into acc_0, acc_16, ...
// each accessed as a whole, which the emitters turn into plain vector variables
// (one AVX-512 register each) instead of a stack array. GCC compiles a local
// `float acc[F]` into stack traffic and gathers (1.2-3.6x slower, DESIGN.md);
// named vector variables stay in registers. A local whose accesses do not tile it
// into whole segments is left as an array.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel promote_registers(const Kernel& k);

}  // namespace strata::sc
