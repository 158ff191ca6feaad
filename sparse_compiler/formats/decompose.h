// Format decomposition, an IR transformation on stage-I programs (SparseTIR §1.6).
//
// The op programs are written over CSR (axes I -> J). decompose_format rewrites the
// program's sparse iteration for a decomposed format as the sum of one iteration
// per part, all writing the same output:
//   - each part has its own axis chain (row-subset ELL: O -> R (row ids) -> C (width
//     w); DCSR: O -> R -> C; BSR(b): IO -> JO -> II(b) -> JI(b)) and replaces the
//     iterators over I and J by iterators over its axes; the old coordinates are
//     expressions of the new ones (the index map: i = coord(R), j = coord(C) for
//     ELL; i = io*b + ii, j = jo*b + ji for BSR), so accesses to node-indexed
//     buffers (X, Y, scales) need no rewriting at all;
//   - buffers over the old structure (edge values A, the SDDMM output O) are read
//     and written through the part's edge-id buffer: A[i, j] becomes A[eid] over a
//     flat axis E of length nnz, padding slots (eid < 0) read 0 and write nothing;
//   - when the output is indexed by nodes (SpMM's Y, a softmax's row max), its
//     init becomes one dense iteration over all rows before the parts, which then
//     accumulate (a padding slot adds 0 to a sum, -inf to a max); when it is
//     indexed by edges (SDDMM), every edge lives in exactly one slot and each part
//     keeps its own init.
// The inspectors (inspected_format.h) supply the parts' arrays at bind time.
#pragma once

#include "sparse_compiler/formats/format_spec.h"
#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel decompose_format(const Kernel& program, const FormatSpec& spec);

// Moves the init of a node-indexed output out of the program's sparse iteration
// into a dense iteration of its own (a no-op when the output is edge-indexed).
Kernel split_init(const Kernel& program);

// COO: split_init, then rows and columns fused into one loop over non-zeros (the
// row of each non-zero from a search hoisted to preprocess), plus the task arrays
// that keep each output row with one thread.
Kernel coo_program(const Kernel& program);

}  // namespace strata::sc
