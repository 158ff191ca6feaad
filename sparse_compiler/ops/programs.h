// The operators Strata compiles, written once as stage-I programs in coordinate
// space over the canonical CSR format. Format decomposition, lowering and
// schedules turn them into kernels; nothing here is a kernel.
//
//   SpMM          Y[i, f] = sum_j  A[i, j] * rs[i] * cs[j] * X[j, f]
//                 (A's values, the row scale rs and the column scale cs are each
//                 optional: mean aggregation is rs = 1/deg, GCN normalisation is
//                 rs = cs = deg^-1/2)
//   SDDMM (dot)   O[i, j]    = sum_f  X[i, f] * Y[j, f]        for (i, j) in A
//   SDDMM (add)   O[i, j, h] = XL[i, h] + XR[j, h]             for (i, j) in A
//
// Parameter names are fixed by these programs and bound by the op front doors:
// A_indptr, A_indices (structure), A (edge values), row_scale, col_scale, X, Y,
// XL, XR, O, and scalars m (rows), n (columns), nnz.
#pragma once

#include <optional>
#include <string>

#include "sparse_compiler/ir/kernel.h"
#include "sparse_compiler/ops/dense_layout.h"

namespace strata::sc {

struct SpmmSpec {
  int64_t feat = 64;
  DType index_dtype = DType::I32;
  bool weighted = false;
  bool row_scale = false;
  bool col_scale = false;
  std::string name() const;  // "spmm_f64_i32", with _w, _rs, _cs suffixes
  // The spec whose name() is `name`; nullopt for any other string.
  static std::optional<SpmmSpec> from_name(const std::string& name);
};

enum class SddmmKind : uint8_t { Dot, Add };

struct SddmmSpec {
  SddmmKind kind = SddmmKind::Dot;
  int64_t feat = 64;  // Dot: feature length; Add: number of heads
  DType index_dtype = DType::I32;
  std::string name() const;  // "sddmm_dot_f64_i32", "sddmm_add_h8_i32"
};

// The CSR axes every program starts from: I = dense_fixed(m), J = sparse_variable
// (parent I, length n, nnz, A_indptr, A_indices), J_detach = dense_fixed(n).
struct CsrAxes {
  Axis I, J, J_detach;
};
CsrAxes csr_axes(DType index_dtype);
// The parameters every program over a CSR graph takes: first the structure
// (A_indptr int64, A_indices), last the sizes (scalars m, n, nnz).
void add_structure_params(Kernel& k, DType index_dtype);
void add_size_params(Kernel& k);

// With a non-row X layout (dense_layout.h), X is declared in that layout: padded
// rows, or panels whose feature iterators are f_o (panel) and f_i (within it), so a
// schedule can run panel by panel (loops f_o, i, j, f_i).
Kernel spmm_program(const SpmmSpec& spec, const DenseLayout& x_layout = {});
// Dot products read X and Y by rows, or both panel by panel (layout panel:W: X, Y
// as [F/W][rows][W], the reduction over f_o and f_i; a schedule then runs one pass
// over the edges per panel, loops f_o, i, j, f_i).
Kernel sddmm_program(const SddmmSpec& spec, const DenseLayout& layout = {});

}  // namespace strata::sc
