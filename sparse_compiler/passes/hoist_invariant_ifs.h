// Stage III -> III (loop unswitching). A loop whose whole body is `if (c) S` with c
// independent of the loop becomes `if (c) for ... S`; conjunctions are split first so
// each condition rises to the innermost loop it depends on. Format decomposition
// guards padding slots (eid >= 0) and BSR's edge blocks (row < m, col < n) inside
// the feature loop; after this pass the guards sit outside it and the feature
// loop can be vectorized.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel hoist_invariant_ifs(const Kernel& k);

}  // namespace strata::sc
