// Baseline: a hand-written CSR SpMM of the kind DESIGN.md measured (2.5-3.5x
// Eigen): the feature size compiled in, the output row held in F/16 AVX-512
// registers (GCC vector extensions), rows split into nnz-balanced chunks.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "benchmarks/baselines/baselines.h"

namespace strata::baselines {
namespace {

typedef float v16 __attribute__((vector_size(64)));

template <int F>
void spmm_rows(const int64_t* indptr, const int32_t* indices, const float* X, float* Y, int64_t lo, int64_t hi) {
  constexpr int V = F / 16;
  for (int64_t i = lo; i < hi; ++i) {
    v16 acc[V];
    for (int v = 0; v < V; ++v) acc[v] = v16{};
    for (int64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
      const float* x = X + static_cast<int64_t>(indices[p]) * F;
      for (int v = 0; v < V; ++v) {
        v16 xv;
        std::memcpy(&xv, x + 16 * v, sizeof xv);
        acc[v] += xv;
      }
    }
    for (int v = 0; v < V; ++v) std::memcpy(Y + i * F + 16 * v, &acc[v], sizeof(v16));
  }
}

template <int F>
void spmm(const Graph& A, const float* X, float* Y) {
  const int64_t* indptr = A.indptr_data();
  const int32_t* indices = A.indices().data<int32_t>();
  const int64_t m = A.num_rows(), nnz = A.nnz();
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(m, (nnz + 4095) / 4096));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    auto start = [&](int64_t k) {
      return k >= chunks ? m : std::lower_bound(indptr, indptr + m + 1, k * nnz / chunks) - indptr;
    };
    spmm_rows<F>(indptr, indices, X, Y, start(c), start(c + 1));
  }
}

}  // namespace

bool HandwrittenCsrSpmmBaseline::supports(int64_t F) { return F == 32 || F == 64 || F == 128 || F == 256; }

HandwrittenCsrSpmmBaseline::HandwrittenCsrSpmmBaseline(const Graph& A, int64_t F)
    : A_(A.with_index_dtype(DType::I32)), F_(F) {
  STRATA_CHECK(supports(F), "hand-written CSR baseline: feature size {} is not compiled in (32, 64, 128, 256)", F);
}

void HandwrittenCsrSpmmBaseline::run(const Tensor& X, Tensor& Y) const {
  const float* x = X.data<float>();
  float* y = Y.data<float>();
  switch (F_) {
    case 32: spmm<32>(A_, x, y); break;
    case 64: spmm<64>(A_, x, y); break;
    case 128: spmm<128>(A_, x, y); break;
    case 256: spmm<256>(A_, x, y); break;
  }
}

}  // namespace strata::baselines
