// Tensor: a dense, contiguous, row-major array with a dtype, a shape and a device.
//
// Host storage is 64-byte aligned (one cache line, one AVX-512 vector) so generated
// kernels may use aligned vector loads on row starts when the row length allows.
// Storage is shared between a tensor and its reshaped views; clone() copies. Host
// buffers of 64 KiB and more come from the process-wide pool (core/buffer_pool.h):
// a new tensor's memory holds whatever its last user left (zeros() clears it).
// On CPU, as_matrix<T>() gives a zero-copy Eigen::Map for dense math.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"

namespace strata {

class Rng;
using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);  // "[2708, 1433]"

inline constexpr int64_t kTensorAlignment = 64;

// A block of memory on one device. Freed by its deleter when the last owner goes.
class Storage {
 public:
  static std::shared_ptr<Storage> allocate(int64_t bytes, Device dev);
  // Wraps memory owned elsewhere (an mmap, a caller's buffer); deleter may be empty.
  static std::shared_ptr<Storage> wrap(void* data, int64_t bytes, Device dev,
                                       std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  Storage() = default;
  void* data_ = nullptr;
  int64_t bytes_ = 0;
  Device device_;
  std::function<void(void*)> deleter_;
};

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <class T>
using VectorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstVectorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;

class Tensor {
 public:
  Tensor() = default;  // undefined tensor

  static Tensor empty(Shape shape, DType dtype, Device dev = Device::cpu());
  static Tensor zeros(Shape shape, DType dtype, Device dev = Device::cpu());
  static Tensor full(Shape shape, DType dtype, double value);
  template <class T>
  static Tensor from_vector(const std::vector<T>& v, Shape shape = {});
  template <class T>
  static Tensor from_list(std::initializer_list<T> v, Shape shape = {}) {
    return from_vector(std::vector<T>(v), std::move(shape));
  }
  // [0, n) as int64.
  static Tensor arange(int64_t n, DType dtype = DType::I64);
  // Uniform in [lo, hi) and normal(mean, std), drawn from rng; float types only.
  static Tensor uniform(Shape shape, double lo, double hi, Rng& rng, DType dtype = DType::F32);
  static Tensor normal(Shape shape, double mean, double stddev, Rng& rng, DType dtype = DType::F32);
  // Wraps existing storage (shared), starting `offset` bytes in.
  static Tensor from_storage(std::shared_ptr<Storage> s, Shape shape, DType dtype, int64_t offset = 0);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const;
  int64_t numel() const { return numel_; }
  int64_t nbytes() const { return numel_ * dtype_size(dtype_); }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  void* raw_data() const { return storage_ ? static_cast<char*>(storage_->data()) + offset_ : nullptr; }
  template <class T>
  T* data() const {
    STRATA_ASSERT(dtype_of<T> == dtype_, "tensor is {}, accessed as {}", dtype_name(dtype_),
                  dtype_name(dtype_of<T>));
    return static_cast<T*>(raw_data());
  }
  // Element access for host tensors (slow path: tests, loaders, small data).
  template <class T>
  T& at(int64_t i) const { return data<T>()[i]; }
  // Reads element i as double whatever the dtype (host only).
  double item_as_double(int64_t i) const;

  // Zero-copy Eigen views of a host tensor; 1-D tensors map as column vectors and
  // 2-D tensors as row-major matrices.
  template <class T>
  MatrixMap<T> as_matrix() const;
  template <class T>
  VectorMap<T> as_vector() const;

  // A view with a new shape (same storage, same number of elements).
  Tensor reshape(Shape shape) const;
  // Rows [begin, end) of a tensor with ndim >= 1, as a view.
  Tensor slice_rows(int64_t begin, int64_t end) const;
  // The rows `rows` (first-axis indices; repeats allowed) copied into a new CPU
  // tensor of shape [rows.size(), ...], on every thread when large.
  Tensor gather_rows(const std::vector<int64_t>& rows) const;
  // A copy on `dev` (a no-op share when already there).
  Tensor to(Device dev) const;
  Tensor clone() const;
  // A copy converted to `dtype` (host only).
  Tensor cast(DType dtype) const;
  // Copies src's contents into this tensor (same shape and dtype; any devices).
  void copy_from(const Tensor& src);
  void fill(double value);
  void zero();

  // "float32[2708, 1433] cpu"
  std::string describe() const;

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Shape shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::F32;
};

// Throws a UserError naming `what` unless t is defined with the given properties.
void check_tensor(const Tensor& t, const std::string& what, DType dtype, int ndim);
void check_shape(const Tensor& t, const std::string& what, const Shape& expected);
// Both of the above for a float32 host tensor of exactly `shape` (what a CPU kernel's
// front door takes), and that it lives on the CPU.
void check_host_f32(const Tensor& t, const std::string& what, const Shape& shape);

// Largest |a - b| over all elements (host tensors of one shape, any dtypes).
double max_abs_diff(const Tensor& a, const Tensor& b);
// True when |a - b| <= atol + rtol * |b| element-wise; reports the worst element.
struct CloseReport {
  bool ok = true;
  int64_t worst_index = -1;
  double worst_a = 0, worst_b = 0, worst_excess = 0;
  std::string str() const;
};
CloseReport all_close(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6);

// ---- template definitions -------------------------------------------------

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& v, Shape shape) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  Tensor t = empty(shape, dtype_of<T>);
  STRATA_ASSERT(t.numel() == static_cast<int64_t>(v.size()), "from_vector: {} values for shape {}",
                v.size(), shape_str(shape));
  std::copy(v.begin(), v.end(), t.data<T>());
  return t;
}

template <class T>
MatrixMap<T> Tensor::as_matrix() const {
  STRATA_ASSERT(device().is_cpu(), "as_matrix on a {} tensor", device().str());
  STRATA_ASSERT(ndim() == 2 || ndim() == 1, "as_matrix on a {}-d tensor", ndim());
  int64_t rows = shape_[0], cols = ndim() == 2 ? shape_[1] : 1;
  return MatrixMap<T>(data<T>(), rows, cols);
}

template <class T>
VectorMap<T> Tensor::as_vector() const {
  STRATA_ASSERT(device().is_cpu(), "as_vector on a {} tensor", device().str());
  return VectorMap<T>(data<T>(), numel_);
}

}  // namespace strata
