#include "sparse_compiler/ops/reference_kernels.h"

namespace strata::sc {
namespace {
template <class F>
void for_rows(const Graph& A, F&& body) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < A.num_rows(); ++i) body(i);
}
}  // namespace

void reference_spmm(const Graph& A, const Tensor& X, const Tensor& values, const Tensor& rs, const Tensor& cs, bool mean,
                    Tensor& Y) {
  const int64_t F = X.dim(1);
  const float* x = X.data<float>();
  float* y = Y.data<float>();
  const float* v = values.defined() ? values.data<float>() : nullptr;
  const float* r = rs.defined() ? rs.data<float>() : nullptr;
  const float* c = cs.defined() ? cs.data<float>() : nullptr;
  for_rows(A, [&](int64_t i) {
    float* yi = y + i * F;
    for (int64_t f = 0; f < F; ++f) yi[f] = 0;
    // The row scale multiplies every term, as in the program (ops/programs.h: w =
    // A[i, j] * rs[i] * cs[j]), not the sum: a mean of values near FLT_MAX stays
    // finite instead of overflowing, as in the generated kernels.
    float scale = r ? r[i] : 1.0f;
    if (mean) scale = A.degree(i) > 0 ? scale / static_cast<float>(A.degree(i)) : 0.0f;
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      const int64_t j = A.column(p);
      float w = v ? v[p] : 1.0f;
      if (r || mean) w *= scale;
      if (c) w *= c[j];
      for (int64_t f = 0; f < F; ++f) yi[f] += w * x[j * F + f];
    }
  });
}

void reference_sddmm_dot(const Graph& A, const Tensor& X, const Tensor& Y, Tensor& O) {
  const int64_t F = X.dim(1);
  const float* x = X.data<float>();
  const float* y = Y.data<float>();
  float* o = O.data<float>();
  for_rows(A, [&](int64_t i) {
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      const int64_t j = A.column(p);
      float s = 0;
      for (int64_t f = 0; f < F; ++f) s += x[i * F + f] * y[j * F + f];
      o[p] = s;
    }
  });
}

void reference_sddmm_add(const Graph& A, const Tensor& XL, const Tensor& XR, Tensor& O) {
  const int64_t H = XL.dim(1);
  const float* l = XL.data<float>();
  const float* r = XR.data<float>();
  float* o = O.data<float>();
  for_rows(A, [&](int64_t i) {
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      const int64_t j = A.column(p);
      for (int64_t h = 0; h < H; ++h) o[p * H + h] = l[i * H + h] + r[j * H + h];
    }
  });
}

}  // namespace strata::sc
