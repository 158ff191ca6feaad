#include "sparse_compiler/ops/cublas_gemm.h"

#include <cublas_v2.h>

#include <map>
#include <mutex>

#include "sparse_compiler/codegen/cuda_kernel.h"

namespace strata::sc {
namespace {

void cublas_check(cublasStatus_t st, const char* call) {
  STRATA_ASSERT(st == CUBLAS_STATUS_SUCCESS, "{}: {}", call, cublasGetStatusString(st));
}
#define STRATA_CUBLAS(call) cublas_check((call), #call)

// One handle per device, created on first use, never destroyed.
cublasHandle_t handle_for(int device) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cublasHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find(device);
  if (it != handles->end()) return it->second;
  cuda_set_device(device);
  cublasHandle_t h = nullptr;
  STRATA_CUBLAS(cublasCreate(&h));
  STRATA_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  handles->emplace(device, h);
  return h;
}

void check_matrix(const Tensor& t, const char* what, Device device) {
  check_tensor(t, what, DType::F32, 2);
  STRATA_CHECK(t.device() == device, "gemm {}: expected a tensor on {}, got {}", what, device.str(), t.describe());
}

}  // namespace

void gemm_into(const Tensor& A, const Tensor& B, Tensor& C, bool trans_a, bool trans_b, float alpha, float beta,
               const CudaStream& stream) {
  check_tensor(A, "gemm A", DType::F32, 2);
  const Device device = A.device();
  STRATA_CHECK(device.is_cuda(), "gemm: A is {}; the cuBLAS GEMM runs on CUDA tensors", A.describe());
  require_cuda_backend("gemm", device);
  check_matrix(B, "B", device);
  check_matrix(C, "C", device);
  STRATA_CHECK(stream.device() == device.index, "gemm: the stream is on cuda:{}, the tensors on {}", stream.device(),
               device.str());
  const int64_t m = trans_a ? A.dim(1) : A.dim(0), k = trans_a ? A.dim(0) : A.dim(1);
  const int64_t kb = trans_b ? B.dim(1) : B.dim(0), n = trans_b ? B.dim(0) : B.dim(1);
  STRATA_CHECK(k == kb, "gemm: op(A) is {} x {} but op(B) is {} x {}", m, k, kb, n);
  check_shape(C, "gemm C", {m, n});
  if (m == 0 || n == 0) return;
  if (k == 0) {
    STRATA_CHECK(beta == 0.0f, "gemm: an empty inner dimension with beta = {} (only 0 is supported)", beta);
    C.zero();
    return;
  }
  cublasHandle_t h = handle_for(device.index);
  cuda_set_device(device.index);
  STRATA_CUBLAS(cublasSetStream(h, reinterpret_cast<cudaStream_t>(stream.get())));
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, where the
  // column-major view of a row-major matrix is its transpose.
  STRATA_CUBLAS(cublasSgemm(h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                            static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
                            static_cast<const float*>(B.raw_data()), static_cast<int>(B.dim(1)),
                            static_cast<const float*>(A.raw_data()), static_cast<int>(A.dim(1)), &beta,
                            static_cast<float*>(C.raw_data()), static_cast<int>(n)));
}

Tensor gemm(const Tensor& A, const Tensor& B, bool trans_a, bool trans_b) {
  check_tensor(A, "gemm A", DType::F32, 2);
  check_tensor(B, "gemm B", DType::F32, 2);
  STRATA_CHECK(A.device().is_cuda(), "gemm: A is {}; the cuBLAS GEMM runs on CUDA tensors", A.describe());
  require_cuda_backend("gemm", A.device());
  const int64_t m = trans_a ? A.dim(1) : A.dim(0), n = trans_b ? B.dim(0) : B.dim(1);
  Tensor C = Tensor::empty({m, n}, DType::F32, A.device());
  gemm_into(A, B, C, trans_a, trans_b, 1.0f, 0.0f, default_stream(A.device().index));
  return C;
}

}  // namespace strata::sc
