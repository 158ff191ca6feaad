// benchmarks/baselines/: hand-written and library implementations Strata's
// generated kernels are measured against. None of this is used by Strata's own
// paths; everything here is a baseline and says so in its name.
//
//   EigenSpmmBaseline            Eigen's SparseMatrix (row-major) x dense product
//   HandwrittenCsrSpmmBaseline   CSR SpMM with F compiled in (template) and the
//                                output row in AVX-512 registers, nnz-balanced rows
//   plain_sddmm_baseline         a plain per-edge dot-product loop (OpenMP over rows)
//   measure_stream_triad_gbs     a STREAM-like triad: the memory-bandwidth floor
#pragma once

#include <memory>

#include "core/graph.h"
#include "core/tensor.h"

namespace strata::baselines {

class EigenSpmmBaseline {
 public:
  explicit EigenSpmmBaseline(const Graph& A);  // unweighted: values 1
  ~EigenSpmmBaseline();
  void run(const Tensor& X, Tensor& Y) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class HandwrittenCsrSpmmBaseline {
 public:
  // Supported F: 32, 64, 128, 256 (compiled in); others throw UserError.
  HandwrittenCsrSpmmBaseline(const Graph& A, int64_t F);
  void run(const Tensor& X, Tensor& Y) const;
  static bool supports(int64_t F);

 private:
  Graph A_;
  int64_t F_;
};

// O[e] = X[i] . Y[j] for every non-zero e = (i, j) of A (int32 indices).
void plain_sddmm_baseline(const Graph& A, const Tensor& X, const Tensor& Y, Tensor& O);

// Memory bandwidth in GB/s of a triad a[i] = b[i] + s * c[i] over `bytes_per_array`
// bytes per array on the current OpenMP threads (median of repeats).
double measure_stream_triad_gbs(int64_t bytes_per_array = int64_t{256} << 20, int repeats = 5);

}  // namespace strata::baselines
