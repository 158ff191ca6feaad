// cuSPARSE baselines behind the op front doors (Backend::CuSparse on a CUDA
// device): SpMM on CSR and SDDMM with a CSR output. They exist so every speed claim
// of the generated kernels can be checked against the vendor library in one run.
//
// Hygiene (sparsetir-reference.md §7): the handle, the CSR and dense descriptors
// and the work buffer are created once per bound graph and reused; each call only
// points the dense descriptors at its tensors. SpMM runs cuSPARSE's default
// algorithm, one of the CSR algorithms ALG1/ALG2/ALG3, or (Best) the fastest of
// those three as timed on the device at construction; CUSPARSE_SPMM_CSR_ALG3 is
// also DGL's deterministic choice. Scales and edge values are folded into one CSR
// value array at construction (an unweighted graph gets ones, as in DGL), so mean
// and normalised aggregations run through the same call.
//
// Available in builds with STRATA_WITH_CUDA; the cuSPARSE calls are made only
// when a device is present (construction checks it and says why not).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/cuda_stream.h"
#include "core/graph.h"

namespace strata::sc {

enum class CusparseSpmmAlgorithm : uint8_t { Default, CsrAlg1, CsrAlg2, CsrAlg3, Best };
// "default", "csr_alg1", "csr_alg2", "csr_alg3", "best"
inline const char* to_string(CusparseSpmmAlgorithm a) {
  switch (a) {
    case CusparseSpmmAlgorithm::Default: return "default";
    case CusparseSpmmAlgorithm::CsrAlg1: return "csr_alg1";
    case CusparseSpmmAlgorithm::CsrAlg2: return "csr_alg2";
    case CusparseSpmmAlgorithm::CsrAlg3: return "csr_alg3";
    case CusparseSpmmAlgorithm::Best: return "best";
  }
  return "?";
}

class CusparseSpmm {
 public:
  // Binds A's structure on `device` with per-edge values `values` (host float32 [nnz],
  // scales already folded in; undefined: all ones). For Best, times the three CSR
  // algorithms with F-wide operands (median of `best_repeats` runs each) and keeps
  // the fastest.
  CusparseSpmm(const Graph& A, Device device, int64_t feat, const Tensor& values,
               CusparseSpmmAlgorithm algorithm = CusparseSpmmAlgorithm::Default, int best_repeats = 10);
  ~CusparseSpmm();
  CusparseSpmm(const CusparseSpmm&) = delete;
  CusparseSpmm& operator=(const CusparseSpmm&) = delete;

  // Y = A · X on `stream`; X [cols, F] and Y [rows, F] float32 device tensors.
  // `values` (device float32 [nnz]) replaces the bound values for this call.
  void run(const Tensor& X, Tensor& Y, const CudaStream& stream, const Tensor& values = {}) const;

  // The algorithm in use (for Best: the one chosen).
  CusparseSpmmAlgorithm algorithm() const;
  // For Best: the median time (ms) of each CSR algorithm tried; a negative time means
  // cuSPARSE does not support it for these operands.
  const std::map<CusparseSpmmAlgorithm, double>& timings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CusparseSddmm {
 public:
  // O[e] = X[i] · Y[j] for every non-zero e = (i, j) of A (CSR output in A's order).
  CusparseSddmm(const Graph& A, Device device, int64_t feat);
  ~CusparseSddmm();
  CusparseSddmm(const CusparseSddmm&) = delete;
  CusparseSddmm& operator=(const CusparseSddmm&) = delete;

  // X [rows, F], Y [cols, F], O [nnz], float32 device tensors.
  void run(const Tensor& X, const Tensor& Y, Tensor& O, const CudaStream& stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::sc
