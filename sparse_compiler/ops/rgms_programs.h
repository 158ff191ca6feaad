// RGCN's relational gather-matmul-scatter (RGMS) as stage-I programs:
//
//   Y[i, fo] = sum_r sum_{j in N_r(i)} a_r(i, j) * sum_fi X[j, fi] * W[r, fi, fo]
//
// over a relation-major 3-level format (SparseTIR's CSF-3D): R (relations,
// dense) -> I (the destination rows relation r reaches: sparse-variable, indptr
// rel_ptr, indices rel_rows) -> J (each row's sources: sparse-variable, indptr
// row_ptr, indices cols; scalar rels = R). Edge values A (the normalisation 1/|N_r(i)|) live on
// that structure. The orders the tuner chooses between:
//
//   aggregate, then transform   H[r,i,:] = sum_j a X[j,:]  (per relation-row pair),
//                               Y[i,:] += H[r,i,:] W_r       (rgms_aggregate + rgms_transform)
//   fused                       the same two, fused per (relation, row) so H
//                               never leaves registers (fuse_nests in the schedule)
//   transform, then aggregate   T[r,s,:] = X[src_r(s),:] W_r for the sources s of
//                               relation r only, then Y[i,:] += a T[r, s(j), :]
//                               (rgms_source_transform + rgms_gather)
//   mixed                       per relation the cheaper of the two: fused where a
//                               relation reaches fewer rows than it has sources,
//                               transform-first elsewhere (rgms_gather_add adds
//                               those relations into the fused part's Y)
// and the weight gradient dW[r] = sum_i H[r,i,:]^T dY[i,:] (rgms_weight_grad).
// The input gradient is the forward over the reversed relations with W_r^T.
// Y's init is a dense iteration of its own: rows receive from several relations.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

struct RgmsSpec {
  int64_t fin = 16, fout = 16;
  DType index_dtype = DType::I32;
  std::string suffix() const;  // "i16_o16_i32"
};

// Parameters (all programs): rel_ptr (int64 [R+1]), rel_rows, row_ptr (int64
// [pairs+1]), cols, scalars m (rows), n (sources), R, pairs, nnz.
Kernel rgms_aggregate_program(const RgmsSpec& s);       // X, A -> H [pairs, fin]
Kernel rgms_transform_program(const RgmsSpec& s);       // H, W -> Y [m, fout] (includes Y's init)
Kernel rgms_fused_program(const RgmsSpec& s);           // X, A, W -> Y (aggregate + transform in one kernel)
Kernel rgms_source_transform_program(const RgmsSpec& s);  // X, W -> T [sources, fout] (src_ptr, src_ids)
Kernel rgms_gather_program(const RgmsSpec& s);          // T, A, jloc -> Y
// The same without Y's init: adds into Y (the mixed order's transform-first part
// adds its relations to what the fused part wrote).
Kernel rgms_gather_add_program(const RgmsSpec& s);      // T, A, jloc -> Y +=
Kernel rgms_weight_grad_program(const RgmsSpec& s);     // H, dY -> dW [R, fin, fout]
// One-hot (featureless) input, R-GCN's first layer: X is the identity, so the
// layer gathers weight rows: Y[i, fo] = sum_r sum_j a_r(i, j) W[r, j, fo] with W
// [R, n, fout]. Its weight gradient runs over the reversed relations (rows are
// the sources j): dW[r, j, fo] = sum_i a_r(i, j) dY[i, fo] (rows no relation
// reaches stay zero).
Kernel rgms_embed_program(const RgmsSpec& s);           // W, A -> Y (uses s.fout)
Kernel rgms_embed_grad_program(const RgmsSpec& s);      // reversed A, dY -> dW [R, rows, fout]
// One-hot input with R-GCN's basis decomposition W_r = sum_b C[r, b] V_b (s.fin is
// the number of bases B; C [R, B], V [B, n, fout]). Materialising every W_r costs
// R x n x B x fout; only the rows relation r reads (its sources) are needed. The
// reversed relations' (relation, row) pairs are exactly those (relation, source)
// slots, in the order of the forward's source lists, so these run on the reversed
// graph, in its owner tasks (a task's rows of V serve every relation):
//   T[r, i, fo] = sum_b C[r, b] V[b, i, fo]               (rgms_basis_rows; then
//                                                          rgms_gather on the graph)
//   G[r, i, fo] = sum_j a_r(j, i) dY[j, fo]               (rgms_pair_sum: dT)
//   dV[b, i, fo] = sum_r C[r, b] G[r, i, fo]              (rgms_basis_grad; rows no
//                                                          relation reads stay zero)
//   dC[r, b] = sum_i sum_fo G[r, i, fo] V[b, i, fo]       (rgms_basis_coeff_grad)
Kernel rgms_basis_rows_program(const RgmsSpec& s);        // C, V -> T [pairs, fout]
Kernel rgms_pair_sum_program(const RgmsSpec& s);          // A, dY -> G [pairs, fout]
Kernel rgms_basis_grad_program(const RgmsSpec& s);        // C, G -> dV [B, rows, fout]
Kernel rgms_basis_coeff_grad_program(const RgmsSpec& s);  // G, V -> dC [R, B]

}  // namespace strata::sc
