// Stage II -> III: sparse buffers are flattened to offsets into their value arrays.
//
// Walking a buffer's axes with the positions of an access (SparseTIR §1.3):
//   the first axis, or a root axis starting a new tree:  offset = offset * extent + p
//   a variable axis:                                      offset = indptr[offset] + p
//   a fixed axis under a parent:                           offset = offset * width + p
// So CSR values sit at indptr[i] + j, ELL at i * w + j, BSR at
// ((indptr[ib] + jb) * b + ii) * b + jj, and a dense [n, F] operand at j * F + f.
// Stage-III kernels read and write only flat parameter buffers.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel lower_sparse_buffer(const Kernel& k);
// The flat offset of `positions` in buffer b (exposed for tests and inspectors).
Expr flat_offset(const SparseBuffer& b, const std::vector<Expr>& positions);

}  // namespace strata::sc
