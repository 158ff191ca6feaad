// Stage I -> II: sparse iterations become nested loops in position space.
//
// Each iterator becomes a loop over its axis's positions: dense-fixed and
// sparse-fixed axes have constant or parameter extents; variable axes run over
// indptr[p+1] - indptr[p] for their parent's position p. A fused group of
// iterators (sparse_fuse) becomes one loop over the child's positions, with the
// parent's position recovered by an upper_bound search on indptr (hoisted later).
// The init of a reduction runs at the first reduction loop's depth, over the
// spatial iterators nested below it.
//
// Accesses are rewritten per dimension: when a buffer's axis is the iterator's own
// axis (and its parent dimension matched too) the position is used directly;
// otherwise the coordinate is computed (indices[pos] for sparse iterators) and,
// for a sparse buffer axis, located by binary search in that axis's indices, with
// a guard for coordinates that are absent. A sparse iteration nested in another's
// body is lowered inside it and sees the enclosing iterators. Requires
// materialize_aux_buffers.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel lower_sparse_iter(const Kernel& k);

}  // namespace strata::sc
