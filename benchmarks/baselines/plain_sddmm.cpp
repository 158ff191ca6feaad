// Baseline: SDDMM as a plain per-edge dot-product loop, OpenMP over rows.
#include "benchmarks/baselines/baselines.h"

namespace strata::baselines {

void plain_sddmm_baseline(const Graph& A, const Tensor& X, const Tensor& Y, Tensor& O) {
  const int64_t F = X.dim(1), m = A.num_rows();
  const int64_t* indptr = A.indptr_data();
  const float* x = X.data<float>();
  const float* y = Y.data<float>();
  float* o = O.data<float>();
  const Graph a32 = A.index_dtype() == DType::I32 ? A : A.with_index_dtype(DType::I32);
  const int32_t* indices = a32.indices().data<int32_t>();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
      const float* yr = y + static_cast<int64_t>(indices[p]) * F;
      float s = 0;
      for (int64_t f = 0; f < F; ++f) s += x[i * F + f] * yr[f];
      o[p] = s;
    }
  }
}

}  // namespace strata::baselines
