#include "tests/sparse_compiler/reference_ops.h"

#include <vector>

namespace strata::testing {

Tensor reference_spmm(const Graph& A, const Tensor& X, const Tensor& values, const Tensor& rs, const Tensor& cs,
                      bool mean) {
  const int64_t F = X.dim(1);
  Tensor Y = Tensor::zeros({A.num_rows(), F}, DType::F32);
  std::vector<double> acc(static_cast<size_t>(F));
  for (int64_t i = 0; i < A.num_rows(); ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      const int64_t j = A.column(p);
      double w = values.defined() ? values.data<float>()[p] : 1.0;
      if (cs.defined()) w *= cs.data<float>()[j];
      for (int64_t f = 0; f < F; ++f) acc[f] += w * X.data<float>()[j * F + f];
    }
    double scale = rs.defined() ? rs.data<float>()[i] : 1.0;
    if (mean) scale = A.degree(i) ? scale / static_cast<double>(A.degree(i)) : 0.0;
    for (int64_t f = 0; f < F; ++f) Y.data<float>()[i * F + f] = static_cast<float>(acc[f] * scale);
  }
  return Y;
}

Tensor reference_sddmm_dot(const Graph& A, const Tensor& X, const Tensor& Y) {
  const int64_t F = X.dim(1);
  Tensor O = Tensor::zeros({A.nnz()}, DType::F32);
  for (int64_t i = 0; i < A.num_rows(); ++i)
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
      double s = 0;
      for (int64_t f = 0; f < F; ++f) s += double(X.data<float>()[i * F + f]) * Y.data<float>()[A.column(p) * F + f];
      O.data<float>()[p] = static_cast<float>(s);
    }
  return O;
}

Tensor reference_sddmm_add(const Graph& A, const Tensor& XL, const Tensor& XR) {
  const int64_t H = XL.dim(1);
  Tensor O = Tensor::zeros({A.nnz(), H}, DType::F32);
  for (int64_t i = 0; i < A.num_rows(); ++i)
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p)
      for (int64_t h = 0; h < H; ++h)
        O.data<float>()[p * H + h] = XL.data<float>()[i * H + h] + XR.data<float>()[A.column(p) * H + h];
  return O;
}

}  // namespace strata::testing
