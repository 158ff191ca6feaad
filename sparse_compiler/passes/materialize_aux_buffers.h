// Stage I -> I. Declares, for every axis that stores structure, a sparse buffer
// over that structure so lowering can read it like any other buffer:
//   variable axis A (parent P): A.indptr as an int64 buffer over P's chain
//     (root .. P); the entry at P's position p starts A's positions, p+1 ends them;
//   sparse axis A: A.indices as a buffer over A's chain (root .. A).
// Buffers are named after their parameters, so flattening them yields loads of
// the indptr/indices arrays themselves.
#pragma once

#include <map>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

struct AuxBuffers {
  std::map<const AxisNode*, SparseBuffer> indptr;
  std::map<const AxisNode*, SparseBuffer> indices;
};

Kernel materialize_aux_buffers(const Kernel& k);
// The aux buffers of a kernel that already went through materialize_aux_buffers.
AuxBuffers find_aux_buffers(const Kernel& k);

}  // namespace strata::sc
