// Stage II -> II. Moves binary searches over the graph's structure (upper_bound on
// indptr to recover a row from a fused position; find on indices to locate a
// coordinate) out of the kernel body into its preprocess body, which runs once per
// bound graph. Each distinct search (memoised by structural hash) gets an int64
// workspace buffer mid_<k> indexed by the loops it depends on; the body loads from
// it. A search is hoisted when it reads only structure (indptr/indices arrays,
// scalar parameters) and the loops it depends on start at 0 with extents that are
// independent of other loops; otherwise it stays in place, still correct.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel hoist_binary_search(const Kernel& k);

}  // namespace strata::sc
