// The reference path: plain, obviously-correct CPU loops for every op, selectable
// as Backend::Reference in the op front doors, configs and `strata bench`. They are
// hand-written on purpose (a baseline users can trust and compare against), not
// generated, and make no attempt to be fast beyond an OpenMP loop over rows.
// (Backend::Interpreter runs the compiler's own IR instead: slower still, and the
// ground truth the compiler's tests use.)
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace strata::sc {

// Y[i] = sum_p (values[p] * rs[i] * cs[j]) * X[j] over row i's non-zeros (j = column
// of p; the row scale inside the sum, as in the program); any of values, rs, cs may
// be undefined (= 1); mean divides by the degree.
void reference_spmm(const Graph& A, const Tensor& X, const Tensor& values, const Tensor& row_scale,
                    const Tensor& col_scale, bool mean, Tensor& Y);
// O[p] = X[i] . Y[j]
void reference_sddmm_dot(const Graph& A, const Tensor& X, const Tensor& Y, Tensor& O);
// O[p, h] = XL[i, h] + XR[j, h]
void reference_sddmm_add(const Graph& A, const Tensor& XL, const Tensor& XR, Tensor& O);

}  // namespace strata::sc
