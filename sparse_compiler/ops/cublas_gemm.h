// Dense matrix products on a CUDA device through cuBLAS (DESIGN.md: dense math on
// GPU goes through cuBLAS; training on GPU uses it for Linear layers):
//
//   C = alpha · op(A) · op(B) + beta · C,   op(M) = M or Mᵀ,
//
// for float32, contiguous row-major 2-D tensors on one CUDA device. cuBLAS is
// column-major, so the product is computed as Cᵀ = op(B)ᵀ · op(A)ᵀ on the same
// memory, without copies. Math is plain FP32 (no TF32 tensor cores), so results
// match a CPU GEMM up to summation order. Available in builds with
// STRATA_WITH_CUDA; the call checks a device is present and says why not.
#pragma once

#include "core/cuda_stream.h"
#include "core/tensor.h"

namespace strata::sc {

// C = op(A) · op(B), a new tensor on A's device, queued on the device's default stream.
Tensor gemm(const Tensor& A, const Tensor& B, bool trans_a = false, bool trans_b = false);
// C = alpha · op(A) · op(B) + beta · C into an existing tensor, queued on `stream`.
void gemm_into(const Tensor& A, const Tensor& B, Tensor& C, bool trans_a, bool trans_b, float alpha, float beta,
               const CudaStream& stream);

}  // namespace strata::sc
