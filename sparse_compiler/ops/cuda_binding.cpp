#include "sparse_compiler/ops/cuda_binding.h"

#include <map>
#include <mutex>
#include <tuple>

namespace strata::sc {

void bind_device_buffer(KernelArgs& args, const std::string& name, const Tensor& t) {
  args.buffer(name, t.raw_data(), t.dtype(), t.numel());
}

void check_on_device(const Tensor& t, const std::string& what, Device device) {
  STRATA_CHECK(t.device() == device, "{}: expected a tensor on {}, got {}", what, device.str(), t.describe());
}

// A graph's arrays on one device. It holds the host arrays too, so their addresses,
// which key the cache, cannot be reused by another graph while it lives.
struct CudaOpBinding::DeviceArrays {
  Tensor host_indptr, host_indices, host_values;
  Tensor indptr, indices, values;
};

CudaOpBinding::CudaOpBinding(const Graph& A, Device device)
    : device_(device), rows_(A.num_rows()), cols_(A.num_cols()), nnz_(A.nnz()) {
  using Key = std::tuple<const void*, const void*, const void*, int64_t, int>;
  static std::mutex mu;
  static auto* cache = new std::map<Key, std::weak_ptr<const DeviceArrays>>();
  const Key key{A.indptr().raw_data(), A.indices().raw_data(), A.has_values() ? A.values().raw_data() : nullptr,
                A.nnz(), device.index};
  std::lock_guard<std::mutex> lock(mu);
  arrays_ = (*cache)[key].lock();
  if (!arrays_) {
    auto a = std::make_shared<DeviceArrays>();
    a->host_indptr = A.indptr();
    a->host_indices = A.indices();
    a->indptr = A.indptr().to(device);
    a->indices = A.indices().to(device);
    if (A.has_values()) {
      a->host_values = A.values();
      a->values = A.values().to(device);
    }
    arrays_ = a;
    (*cache)[key] = arrays_;
    std::erase_if(*cache, [](const auto& kv) { return kv.second.expired(); });
  }
  indptr_ = arrays_->indptr;
  indices_ = arrays_->indices;
  values_ = arrays_->values;
}

std::shared_ptr<const InspectedFormat> CudaOpBinding::device_format(const Graph& A, const FormatSpec& spec,
                                                                   int64_t grain, Device device) {
  // Holds the host CSR arrays too, so the addresses in the key stay A's.
  struct Entry {
    Tensor host_indptr, host_indices;
    InspectedFormat format;
  };
  using Key = std::tuple<const void*, const void*, int64_t, int, std::string, int64_t>;
  static std::mutex mu;
  static auto* cache = new std::map<Key, std::weak_ptr<const Entry>>();
  const Key key{A.indptr().raw_data(), A.indices().raw_data(), A.nnz(), device.index, spec.str(), grain};
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<const Entry> e = (*cache)[key].lock();
  if (!e) {
    e = std::make_shared<const Entry>(Entry{A.indptr(), A.indices(), inspect_format(A, spec, grain).to(device)});
    (*cache)[key] = e;
    std::erase_if(*cache, [](const auto& kv) { return kv.second.expired(); });
  }
  return std::shared_ptr<const InspectedFormat>(e, &e->format);  // shares ownership of the entry
}

KernelArgs CudaOpBinding::args() const {
  KernelArgs a;
  bind_device_buffer(a, "A_indptr", indptr_);
  bind_device_buffer(a, "A_indices", indices_);
  a.scalar("m", rows_).scalar("n", cols_).scalar("nnz", nnz_);
  for (const auto& [name, t] : constants_) bind_device_buffer(a, name, t);
  if (format_) format_->bind(a);
  return a;
}

void CudaOpBinding::attach(CompiledCudaKernel kernel, const std::vector<std::pair<std::string, Tensor>>& extra,
                           std::shared_ptr<const InspectedFormat> format) {
  kernel_ = std::move(kernel);
  constants_ = extra;
  format_ = std::move(format);
  KernelArgs a = args();
  for (const auto& [p, size] : kernel_->workspaces(a)) {
    Tensor w = Tensor::zeros({std::max<int64_t>(size, 1)}, p.dtype, device_);
    bind_device_buffer(a, p.name, w);
    constants_.emplace_back(p.name, std::move(w));
  }
  geometry_ = kernel_->geometry(a);
  if (!kernel_->plan.preprocess.empty()) {
    // The preprocess reads structure only; per-call operands are not bound yet.
    for (const auto& p : kernel_->kernel().params)
      if (p.is_buffer() && !a.has_buffer(p.name)) a.buffer(p.name, nullptr, p.dtype, 0);
    kernel_->run_preprocess(a, geometry_, stream());
  }
}

void CudaOpBinding::run(const KernelArgs& args) const {
  STRATA_ASSERT(kernel_.has_value(), "CudaOpBinding::run without a compiled kernel");
  kernel_->run(args, geometry_, stream());
}

}  // namespace strata::sc
