#include "sparse_compiler/ops/cusparse_baseline.h"

#include <cusparse.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <vector>

#include "core/log.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/cuda_kernel.h"

namespace strata::sc {
namespace {

void cusparse_check(cusparseStatus_t st, const char* call) {
  STRATA_ASSERT(st == CUSPARSE_STATUS_SUCCESS, "{}: {}", call, cusparseGetErrorString(st));
}
#define STRATA_CUSPARSE(call) cusparse_check((call), #call)

CUdeviceptr dptr(const Tensor& t) { return reinterpret_cast<CUdeviceptr>(t.raw_data()); }

// One handle per device, created on first use, never destroyed (the library may
// still be in use from static destructors).
cusparseHandle_t handle_for(int device) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cusparseHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find(device);
  if (it != handles->end()) return it->second;
  cuda_set_device(device);
  cusparseHandle_t h = nullptr;
  STRATA_CUSPARSE(cusparseCreate(&h));
  handles->emplace(device, h);
  return h;
}

// A's structure on the device in the index width cuSPARSE wants: both arrays int32
// when the indices are int32 (and nnz fits), else both int64.
struct DeviceCsr {
  Tensor indptr, indices;
  cusparseIndexType_t index_type = CUSPARSE_INDEX_32I;

  DeviceCsr(const Graph& A, Device device) {
    if (A.index_dtype() == DType::I32 && A.nnz() <= std::numeric_limits<int32_t>::max()) {
      Tensor p = Tensor::empty({A.num_rows() + 1}, DType::I32);
      for (int64_t r = 0; r <= A.num_rows(); ++r) p.data<int32_t>()[r] = static_cast<int32_t>(A.indptr_data()[r]);
      indptr = p.to(device);
      indices = A.indices().to(device);
      index_type = CUSPARSE_INDEX_32I;
    } else {
      indptr = A.indptr().to(device);
      indices = A.indices().dtype() == DType::I64 ? A.indices().to(device) : A.indices().cast(DType::I64).to(device);
      index_type = CUSPARSE_INDEX_64I;
    }
  }
};

void check_operand(const Tensor& t, const char* what, const Shape& shape, Device device) {
  check_tensor(t, what, DType::F32, static_cast<int>(shape.size()));
  check_shape(t, what, shape);
  STRATA_CHECK(t.device() == device, "{}: expected a tensor on {}, got {}", what, device.str(), t.describe());
}

cusparseSpMMAlg_t to_cusparse(CusparseSpmmAlgorithm a) {
  switch (a) {
    case CusparseSpmmAlgorithm::CsrAlg1: return CUSPARSE_SPMM_CSR_ALG1;
    case CusparseSpmmAlgorithm::CsrAlg2: return CUSPARSE_SPMM_CSR_ALG2;
    case CusparseSpmmAlgorithm::CsrAlg3: return CUSPARSE_SPMM_CSR_ALG3;
    default: return CUSPARSE_SPMM_ALG_DEFAULT;
  }
}

}  // namespace

struct CusparseSpmm::Impl {
  Graph A;
  Device device;
  int64_t feat = 0;
  DeviceCsr csr;
  Tensor values;
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat_a = nullptr;
  cusparseDnMatDescr_t mat_x = nullptr, mat_y = nullptr;
  mutable const void* bound_x = nullptr;
  mutable const void* bound_y = nullptr;
  mutable const void* bound_values = nullptr;
  Tensor buffer;  // the work buffer: the largest any algorithm in use needs
  CusparseSpmmAlgorithm algorithm = CusparseSpmmAlgorithm::Default;
  std::map<CusparseSpmmAlgorithm, double> timings;

  Impl(const Graph& a, Device dev, int64_t f) : A(a), device(dev), feat(f), csr(a, dev) {}

  ~Impl() {
    if (!cuda_driver()) return;
    if (mat_y) cusparseDestroyDnMat(mat_y);
    if (mat_x) cusparseDestroyDnMat(mat_x);
    if (mat_a) cusparseDestroySpMat(mat_a);
  }

  // The work buffer size of `alg`, or -1 when cuSPARSE does not support it here.
  int64_t buffer_size(CusparseSpmmAlgorithm alg) const {
    const float one = 1, zero = 0;
    size_t size = 0;
    const cusparseStatus_t st =
        cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_a,
                                mat_x, &zero, mat_y, CUDA_R_32F, to_cusparse(alg), &size);
    if (st == CUSPARSE_STATUS_NOT_SUPPORTED) return -1;
    cusparse_check(st, "cusparseSpMM_bufferSize");
    return static_cast<int64_t>(size);
  }

  void ensure_buffer(int64_t bytes) {
    if (!buffer.defined() || buffer.nbytes() < bytes)
      buffer = Tensor::empty({std::max<int64_t>((bytes + 3) / 4, 1)}, DType::F32, device);
  }

  void call(CusparseSpmmAlgorithm alg, cudaStream_t stream) const {
    const float one = 1, zero = 0;
    STRATA_CUSPARSE(cusparseSetStream(handle, stream));
    STRATA_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                 mat_a, mat_x, &zero, mat_y, CUDA_R_32F, to_cusparse(alg),
                                 buffer.defined() ? buffer.raw_data() : nullptr));
  }
};

CusparseSpmm::CusparseSpmm(const Graph& A, Device device, int64_t feat, const Tensor& values,
                           CusparseSpmmAlgorithm algorithm, int best_repeats) {
  require_cuda_backend("the cuSPARSE SpMM baseline", device);
  STRATA_CHECK(feat >= 1, "cusparse spmm: feature size must be at least 1, got {}", feat);
  impl_ = std::make_unique<Impl>(A, device, feat);
  Impl& m = *impl_;
  Tensor host_values = values.defined() ? values : Tensor::full({A.nnz()}, DType::F32, 1.0);
  check_tensor(host_values, "cusparse spmm values", DType::F32, 1);
  check_shape(host_values, "cusparse spmm values", {A.nnz()});
  m.values = host_values.to(device);
  if (A.nnz() == 0 || A.num_rows() == 0 || A.num_cols() == 0) {
    // cuSPARSE rejects empty matrices; run() writes Y = 0 without calling it.
    m.algorithm = algorithm == CusparseSpmmAlgorithm::Best ? CusparseSpmmAlgorithm::Default : algorithm;
    return;
  }
  m.handle = handle_for(device.index);
  cuda_set_device(device.index);
  STRATA_CUSPARSE(cusparseCreateCsr(&m.mat_a, A.num_rows(), A.num_cols(), A.nnz(), m.csr.indptr.raw_data(),
                                    m.csr.indices.raw_data(), m.values.raw_data(), m.csr.index_type,
                                    m.csr.index_type, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  m.bound_values = m.values.raw_data();
  // Operands of the right shape for sizing the work buffer (and timing, for Best);
  // each call re-points the dense descriptors at its own tensors.
  Tensor X = Tensor::zeros({A.num_cols(), feat}, DType::F32, device);
  Tensor Y = Tensor::zeros({A.num_rows(), feat}, DType::F32, device);
  STRATA_CUSPARSE(cusparseCreateDnMat(&m.mat_x, A.num_cols(), feat, feat, X.raw_data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  STRATA_CUSPARSE(cusparseCreateDnMat(&m.mat_y, A.num_rows(), feat, feat, Y.raw_data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  m.bound_x = X.raw_data();
  m.bound_y = Y.raw_data();
  if (algorithm != CusparseSpmmAlgorithm::Best) {
    const int64_t size = m.buffer_size(algorithm);
    STRATA_CHECK(size >= 0, "cuSPARSE does not support SpMM algorithm {} for a {} x {} CSR matrix with {} indices and "
                            "row-major operands of width {}",
                 to_string(algorithm), A.num_rows(), A.num_cols(), dtype_name(A.index_dtype()), feat);
    m.ensure_buffer(size);
    m.algorithm = algorithm;
    return;
  }
  // Best: time ALG1, ALG2 and ALG3 on this graph and width, keep the fastest.
  CudaStream& stream = default_stream(device.index);
  double best = -1;
  for (auto alg : {CusparseSpmmAlgorithm::CsrAlg1, CusparseSpmmAlgorithm::CsrAlg2, CusparseSpmmAlgorithm::CsrAlg3}) {
    const int64_t size = m.buffer_size(alg);
    if (size < 0) {
      m.timings[alg] = -1;
      continue;
    }
    m.ensure_buffer(size);
    std::vector<double> ms;
    CudaEvent start(device.index), stop(device.index);
    for (int r = 0; r < 3 + best_repeats; ++r) {
      start.record(stream);
      m.call(alg, reinterpret_cast<cudaStream_t>(stream.get()));
      stop.record(stream);
      if (r >= 3) ms.push_back(CudaEvent::elapsed_ms(start, stop));
    }
    m.timings[alg] = median(ms);
    if (best < 0 || m.timings[alg] < best) {
      best = m.timings[alg];
      m.algorithm = alg;
    }
  }
  STRATA_CHECK(best >= 0, "cuSPARSE supports none of the CSR SpMM algorithms for this {} x {} matrix", A.num_rows(),
               A.num_cols());
  log_debug("cusparse spmm: best CSR algorithm {} ({:.4f} ms)", to_string(m.algorithm), best);
}

CusparseSpmm::~CusparseSpmm() = default;

CusparseSpmmAlgorithm CusparseSpmm::algorithm() const { return impl_->algorithm; }
const std::map<CusparseSpmmAlgorithm, double>& CusparseSpmm::timings() const { return impl_->timings; }

void CusparseSpmm::run(const Tensor& X, Tensor& Y, const CudaStream& stream, const Tensor& values) const {
  Impl& m = *impl_;
  check_operand(X, "cusparse spmm input X", {m.A.num_cols(), m.feat}, m.device);
  check_operand(Y, "cusparse spmm output Y", {m.A.num_rows(), m.feat}, m.device);
  if (values.defined()) check_operand(values, "cusparse spmm edge values", {m.A.nnz()}, m.device);
  if (!m.mat_a) {  // an empty matrix: Y = 0
    Y.zero();
    return;
  }
  cuda_set_device(m.device.index);
  if (X.raw_data() != m.bound_x) {
    STRATA_CUSPARSE(cusparseDnMatSetValues(m.mat_x, X.raw_data()));
    m.bound_x = X.raw_data();
  }
  if (Y.raw_data() != m.bound_y) {
    STRATA_CUSPARSE(cusparseDnMatSetValues(m.mat_y, Y.raw_data()));
    m.bound_y = Y.raw_data();
  }
  const void* vals = values.defined() ? values.raw_data() : m.values.raw_data();
  if (vals != m.bound_values) {
    STRATA_CUSPARSE(cusparseCsrSetPointers(m.mat_a, m.csr.indptr.raw_data(), m.csr.indices.raw_data(),
                                           const_cast<void*>(vals)));
    m.bound_values = vals;
  }
  m.call(m.algorithm, reinterpret_cast<cudaStream_t>(stream.get()));
}

struct CusparseSddmm::Impl {
  Graph A;
  Device device;
  int64_t feat = 0;
  DeviceCsr csr;
  Tensor out_values, buffer;
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat_o = nullptr;
  cusparseDnMatDescr_t mat_x = nullptr, mat_y = nullptr;
  mutable const void *bound_x = nullptr, *bound_y = nullptr, *bound_o = nullptr;

  Impl(const Graph& a, Device dev, int64_t f) : A(a), device(dev), feat(f), csr(a, dev) {}
  ~Impl() {
    if (!cuda_driver()) return;
    if (mat_y) cusparseDestroyDnMat(mat_y);
    if (mat_x) cusparseDestroyDnMat(mat_x);
    if (mat_o) cusparseDestroySpMat(mat_o);
  }
};

CusparseSddmm::CusparseSddmm(const Graph& A, Device device, int64_t feat) {
  require_cuda_backend("the cuSPARSE SDDMM baseline", device);
  STRATA_CHECK(feat >= 1, "cusparse sddmm: feature size must be at least 1, got {}", feat);
  impl_ = std::make_unique<Impl>(A, device, feat);
  Impl& m = *impl_;
  if (A.nnz() == 0) return;  // nothing to compute; cuSPARSE rejects empty matrices
  m.handle = handle_for(device.index);
  cuda_set_device(device.index);
  Tensor X = Tensor::zeros({A.num_rows(), feat}, DType::F32, device);
  Tensor Y = Tensor::zeros({A.num_cols(), feat}, DType::F32, device);
  m.out_values = Tensor::zeros({std::max<int64_t>(A.nnz(), 1)}, DType::F32, device);
  STRATA_CUSPARSE(cusparseCreateCsr(&m.mat_o, A.num_rows(), A.num_cols(), A.nnz(), m.csr.indptr.raw_data(),
                                    m.csr.indices.raw_data(), m.out_values.raw_data(), m.csr.index_type,
                                    m.csr.index_type, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  // X row-major [rows, F]; Y row-major [cols, F] read as the column-major F x cols
  // matrix Yᵀ, so O = (X · Yᵀ) sampled at A's non-zeros.
  STRATA_CUSPARSE(cusparseCreateDnMat(&m.mat_x, A.num_rows(), feat, feat, X.raw_data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  STRATA_CUSPARSE(cusparseCreateDnMat(&m.mat_y, feat, A.num_cols(), feat, Y.raw_data(), CUDA_R_32F, CUSPARSE_ORDER_COL));
  m.bound_x = X.raw_data();
  m.bound_y = Y.raw_data();
  m.bound_o = m.out_values.raw_data();
  const float one = 1, zero = 0;
  size_t size = 0;
  STRATA_CUSPARSE(cusparseSDDMM_bufferSize(m.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m.mat_x, m.mat_y, &zero, m.mat_o,
                                           CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, &size));
  m.buffer = Tensor::empty({std::max<int64_t>(static_cast<int64_t>(size), 1)}, DType::F32, device);
}

CusparseSddmm::~CusparseSddmm() = default;

void CusparseSddmm::run(const Tensor& X, const Tensor& Y, Tensor& O, const CudaStream& stream) const {
  Impl& m = *impl_;
  check_operand(X, "cusparse sddmm input X", {m.A.num_rows(), m.feat}, m.device);
  check_operand(Y, "cusparse sddmm input Y", {m.A.num_cols(), m.feat}, m.device);
  check_operand(O, "cusparse sddmm output O", {m.A.nnz()}, m.device);
  if (m.A.nnz() == 0) return;
  cuda_set_device(m.device.index);
  if (X.raw_data() != m.bound_x) {
    STRATA_CUSPARSE(cusparseDnMatSetValues(m.mat_x, X.raw_data()));
    m.bound_x = X.raw_data();
  }
  if (Y.raw_data() != m.bound_y) {
    STRATA_CUSPARSE(cusparseDnMatSetValues(m.mat_y, const_cast<void*>(Y.raw_data())));
    m.bound_y = Y.raw_data();
  }
  if (O.raw_data() != m.bound_o) {
    STRATA_CUSPARSE(cusparseCsrSetPointers(m.mat_o, m.csr.indptr.raw_data(), m.csr.indices.raw_data(), O.raw_data()));
    m.bound_o = O.raw_data();
  }
  const float one = 1, zero = 0;
  STRATA_CUSPARSE(cusparseSetStream(m.handle, reinterpret_cast<cudaStream_t>(stream.get())));
  STRATA_CUSPARSE(cusparseSDDMM(m.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                m.mat_x, m.mat_y, &zero, m.mat_o, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT,
                                m.buffer.raw_data()));
}

}  // namespace strata::sc
