// Stage III -> III. A loop `for (j, 0, hi - lo)` whose body indexes `lo + j`
// becomes `for (j, lo, hi - lo)` with j's uses rewritten to j - lo, which the
// simplifier cancels: CSR loops then run directly over non-zero positions
// (`for p in [indptr[i], indptr[i+1])`) with no per-access offset arithmetic.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel rebase_loops(const Kernel& k);

}  // namespace strata::sc
