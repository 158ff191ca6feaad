#include "core/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/buffer_pool.h"
#include "core/cuda_driver.h"
#include "core/host_memory.h"
#include "core/rng.h"

namespace strata {

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// ---- Storage ------------------------------------------------------------------

std::shared_ptr<Storage> Storage::allocate(int64_t bytes, Device dev) {
  STRATA_ASSERT(bytes >= 0, "negative allocation of {} bytes", bytes);
  std::shared_ptr<Storage> s(new Storage());
  s->bytes_ = bytes;
  s->device_ = dev;
  // Allocate at least one line so data() is never null for an empty tensor.
  const size_t rounded = static_cast<size_t>((std::max<int64_t>(bytes, 1) + kTensorAlignment - 1) /
                                             kTensorAlignment * kTensorAlignment);
  if (dev.is_cpu() && rounded >= kPooledBytes) {
    const HostBlock block = take_host_block(rounded, kTensorAlignment);
    s->data_ = block.data;
    s->deleter_ = [size = block.bytes](void* p) { give_host_block({p, size}); };
  } else if (dev.is_cpu()) {
    s->data_ = allocate_host(rounded, kTensorAlignment);
    s->deleter_ = [](void* p) { free_host(p); };
  } else {
    const CudaDriver& d = require_cuda_driver("allocating a tensor on " + dev.str());
    cuda_set_device(dev.index);
    CUdeviceptr p = 0;
    CUresult rc = d.cuMemAlloc(&p, rounded);
    STRATA_CHECK(rc == 0, "out of memory on {} allocating {} bytes (driver code {})", dev.str(), bytes, rc);
    s->data_ = reinterpret_cast<void*>(p);
    const int index = dev.index;
    s->deleter_ = [index](void* q) {
      if (const CudaDriver* drv = cuda_driver()) {
        cuda_set_device(index);
        drv->cuMemFree(reinterpret_cast<CUdeviceptr>(q));
      }
    };
  }
  return s;
}

std::shared_ptr<Storage> Storage::wrap(void* data, int64_t bytes, Device dev,
                                       std::function<void(void*)> deleter) {
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->bytes_ = bytes;
  s->device_ = dev;
  s->deleter_ = std::move(deleter);
  return s;
}

Storage::~Storage() {
  if (deleter_ && data_) deleter_(data_);
}

// ---- construction ---------------------------------------------------------------

namespace {
int64_t count_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    STRATA_CHECK(d >= 0, "tensor shape {} has a negative dimension", shape_str(shape));
    n *= d;
  }
  return n;
}

// Copies between any two devices.
void copy_bytes(void* dst, Device ddev, const void* src, Device sdev, int64_t bytes) {
  if (bytes == 0) return;
  if (ddev.is_cpu() && sdev.is_cpu()) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  const CudaDriver& d = require_cuda_driver("copying a tensor between devices");
  if (ddev.is_cuda() && sdev.is_cpu()) {
    cuda_set_device(ddev.index);
    STRATA_CU(d.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes));
  } else if (ddev.is_cpu() && sdev.is_cuda()) {
    cuda_set_device(sdev.index);
    STRATA_CU(d.cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes));
  } else {
    cuda_set_device(ddev.index);
    STRATA_CU(d.cuMemcpyDtoD(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes));
  }
}
}  // namespace

Tensor Tensor::from_storage(std::shared_ptr<Storage> s, Shape shape, DType dtype, int64_t offset) {
  Tensor t;
  t.numel_ = count_elements(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.offset_ = offset;
  STRATA_ASSERT(offset + t.numel_ * dtype_size(dtype) <= s->bytes(),
                "view of {} bytes at offset {} exceeds storage of {} bytes", t.nbytes(), offset, s->bytes());
  t.storage_ = std::move(s);
  return t;
}

Tensor Tensor::empty(Shape shape, DType dtype, Device dev) {
  const int64_t n = count_elements(shape);
  return from_storage(Storage::allocate(n * dtype_size(dtype), dev), std::move(shape), dtype);
}

Tensor Tensor::zeros(Shape shape, DType dtype, Device dev) {
  Tensor t = empty(std::move(shape), dtype, dev);
  t.zero();
  return t;
}

Tensor Tensor::full(Shape shape, DType dtype, double value) {
  Tensor t = empty(std::move(shape), dtype);
  t.fill(value);
  return t;
}

Tensor Tensor::arange(int64_t n, DType dtype) {
  Tensor t = empty({n}, dtype);
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(i);
  });
  return t;
}

Tensor Tensor::uniform(Shape shape, double lo, double hi, Rng& rng, DType dtype) {
  STRATA_ASSERT(dtype_is_float(dtype), "uniform needs a float dtype");
  Tensor t = empty(std::move(shape), dtype);
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(rng.uniform(lo, hi));
  });
  return t;
}

Tensor Tensor::normal(Shape shape, double mean, double stddev, Rng& rng, DType dtype) {
  STRATA_ASSERT(dtype_is_float(dtype), "normal needs a float dtype");
  Tensor t = empty(std::move(shape), dtype);
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(mean + stddev * rng.normal());
  });
  return t;
}

// ---- accessors and views --------------------------------------------------------------

int64_t Tensor::dim(int i) const {
  STRATA_ASSERT(i >= 0 && i < ndim(), "dim({}) of a {}-d tensor", i, ndim());
  return shape_[i];
}

double Tensor::item_as_double(int64_t i) const {
  STRATA_ASSERT(device().is_cpu(), "item_as_double on a {} tensor", device().str());
  STRATA_ASSERT(i >= 0 && i < numel_, "index {} out of {} elements", i, numel_);
  return dispatch_dtype(dtype_, [&](auto zero) {
    using T = decltype(zero);
    return static_cast<double>(static_cast<const T*>(raw_data())[i]);
  });
}

Tensor Tensor::reshape(Shape shape) const {
  STRATA_ASSERT(count_elements(shape) == numel_, "reshape {} to {}", shape_str(shape_), shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::slice_rows(int64_t begin, int64_t end) const {
  STRATA_ASSERT(ndim() >= 1 && begin >= 0 && begin <= end && end <= shape_[0], "slice_rows({}, {}) of {}",
                begin, end, shape_str(shape_));
  const int64_t row = shape_[0] ? numel_ / shape_[0] : 0;
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.numel_ = (end - begin) * row;
  t.offset_ = offset_ + begin * row * dtype_size(dtype_);
  return t;
}

Tensor Tensor::gather_rows(const std::vector<int64_t>& rows) const {
  STRATA_ASSERT(ndim() >= 1 && device().is_cpu(), "gather_rows of {} on {}", shape_str(shape_), device().str());
  Shape shape = shape_;
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor out = empty(shape, dtype_);
  const size_t row = static_cast<size_t>(shape_[0] ? numel_ / shape_[0] : 0) * dtype_size(dtype_);
  const char* from = static_cast<const char*>(raw_data());
  char* to = static_cast<char*>(out.raw_data());
  const int64_t n = static_cast<int64_t>(rows.size());
  for (int64_t r : rows) STRATA_ASSERT(r >= 0 && r < shape_[0], "gather_rows: row {} of {}", r, shape_str(shape_));
    // A batch's input rows can be large (20,000 rows of 4,714 floats): one copy per thread.
#pragma omp parallel for schedule(static) if (static_cast <size_t>(n) * row >= (size_t{1} << 20))
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(to + static_cast<size_t>(i) * row, from + rows[static_cast<size_t>(i)] * row, row);
  return out;
}

Tensor Tensor::to(Device dev) const {
  if (!defined() || device() == dev) return *this;
  Tensor t = empty(shape_, dtype_, dev);
  copy_bytes(t.raw_data(), dev, raw_data(), device(), nbytes());
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t = empty(shape_, dtype_, device());
  copy_bytes(t.raw_data(), t.device(), raw_data(), device(), nbytes());
  return t;
}

Tensor Tensor::cast(DType to_dtype) const {
  STRATA_ASSERT(device().is_cpu(), "cast on a {} tensor", device().str());
  Tensor t = empty(shape_, to_dtype);
  dispatch_dtype(dtype_, [&](auto from_zero) {
    using From = decltype(from_zero);
    dispatch_dtype(to_dtype, [&](auto to_zero) {
      using To = decltype(to_zero);
      const From* s = static_cast<const From*>(raw_data());
      To* d = t.data<To>();
      for (int64_t i = 0; i < numel_; ++i) d[i] = static_cast<To>(s[i]);
    });
  });
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  STRATA_ASSERT(src.shape_ == shape_ && src.dtype_ == dtype_, "copy_from {} into {}", src.describe(),
                describe());
  copy_bytes(raw_data(), device(), src.raw_data(), src.device(), nbytes());
}

void Tensor::fill(double value) {
  if (device().is_cuda()) {
    STRATA_ASSERT(value == 0.0, "fill({}) on a device tensor (only zero is supported)", value);
    const CudaDriver& d = require_cuda_driver("zeroing a device tensor");
    cuda_set_device(device().index);
    STRATA_CU(d.cuMemsetD8(reinterpret_cast<CUdeviceptr>(raw_data()), 0, nbytes()));
    return;
  }
  dispatch_dtype(dtype_, [&](auto zero) {
    using T = decltype(zero);
    std::fill_n(static_cast<T*>(raw_data()), numel_, static_cast<T>(value));
  });
}

void Tensor::zero() {
  if (device().is_cpu()) {
    std::memset(raw_data(), 0, static_cast<size_t>(nbytes()));
  } else {
    fill(0.0);
  }
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  return fmt::format("{}{} {}", dtype_name(dtype_), shape_str(shape_), device().str());
}

// ---- checks and comparisons -----------------------------------------------------------

void check_tensor(const Tensor& t, const std::string& what, DType dtype, int ndim) {
  STRATA_CHECK(t.defined(), "{}: expected a {} tensor with {} dimension(s), got an undefined tensor", what,
               dtype_name(dtype), ndim);
  STRATA_CHECK(t.dtype() == dtype, "{}: expected dtype {}, got {}", what, dtype_name(dtype), t.describe());
  STRATA_CHECK(t.ndim() == ndim, "{}: expected {} dimension(s), got {}", what, ndim, t.describe());
}

void check_shape(const Tensor& t, const std::string& what, const Shape& expected) {
  STRATA_CHECK(t.defined() && t.shape() == expected, "{}: expected shape {}, got {}", what,
               shape_str(expected), t.describe());
}

void check_host_f32(const Tensor& t, const std::string& what, const Shape& shape) {
  check_tensor(t, what, DType::F32, static_cast<int>(shape.size()));
  check_shape(t, what, shape);
  STRATA_CHECK(t.device().is_cpu(), "{}: expected a cpu tensor, got {}", what, t.describe());
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  STRATA_ASSERT(a.shape() == b.shape(), "max_abs_diff of {} and {}", a.describe(), b.describe());
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.item_as_double(i) - b.item_as_double(i)));
  return worst;
}

std::string CloseReport::str() const {
  if (ok) return "all close";
  return fmt::format("element {}: {} vs {} (exceeds tolerance by {:.3g})", worst_index, worst_a, worst_b,
                     worst_excess);
}

CloseReport all_close(const Tensor& a, const Tensor& b, double rtol, double atol) {
  STRATA_ASSERT(a.shape() == b.shape(), "all_close of {} and {}", a.describe(), b.describe());
  CloseReport r;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.item_as_double(i), y = b.item_as_double(i);
    const double excess = std::abs(x - y) - (atol + rtol * std::abs(y));
    if (!(excess <= 0) && (r.ok || excess > r.worst_excess || std::isnan(excess))) {
      r.ok = false;
      r.worst_index = i;
      r.worst_a = x;
      r.worst_b = y;
      r.worst_excess = std::isnan(excess) ? INFINITY : excess;
    }
  }
  return r;
}

}  // namespace strata
