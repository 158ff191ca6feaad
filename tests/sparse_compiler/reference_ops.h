// Dense references for the sparse ops, computed in double straight from the CSR
// arrays: the ground truth generated kernels and the interpreter are checked against.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace strata::testing {

// Y = diag(rs) · (A ∘ values) · diag(cs) · X; mean divides each row by its degree.
Tensor reference_spmm(const Graph& A, const Tensor& X, const Tensor& values, const Tensor& row_scale,
                      const Tensor& col_scale, bool mean);
// O[e] = X[i] · Y[j] for each non-zero e = (i, j).
Tensor reference_sddmm_dot(const Graph& A, const Tensor& X, const Tensor& Y);
// O[e, h] = XL[i, h] + XR[j, h].
Tensor reference_sddmm_add(const Graph& A, const Tensor& XL, const Tensor& XR);

}  // namespace strata::testing
