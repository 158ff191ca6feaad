#include "core/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "core/error.h"

namespace strata {
namespace {

struct Loaded {
  CudaDriver table{};
  bool ok = false;
  std::string reason;
  std::vector<CUcontext> contexts;
};

template <class Fn>
bool resolve(void* lib, const char* name, Fn*& slot, std::string& reason) {
  slot = reinterpret_cast<Fn*>(dlsym(lib, name));
  if (!slot) reason = fmt::format("libcuda.so.1 lacks symbol {}", name);
  return slot != nullptr;
}

Loaded load() {
  Loaded L;
  if (const char* off = std::getenv("STRATA_DISABLE_CUDA"); off && std::string(off) == "1") {
    L.reason = "disabled by STRATA_DISABLE_CUDA=1";
    return L;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    L.reason = fmt::format("libcuda.so.1 not found ({}): no NVIDIA driver on this machine", dlerror());
    return L;
  }
  CudaDriver& d = L.table;
  std::string& r = L.reason;
  bool ok = resolve(lib, "cuInit", d.cuInit, r) && resolve(lib, "cuDeviceGetCount", d.cuDeviceGetCount, r) &&
            resolve(lib, "cuDeviceGet", d.cuDeviceGet, r) && resolve(lib, "cuDeviceGetName", d.cuDeviceGetName, r) &&
            resolve(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, r) &&
            resolve(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, r) &&
            resolve(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, r) &&
            resolve(lib, "cuCtxSynchronize", d.cuCtxSynchronize, r) &&
            resolve(lib, "cuMemAlloc_v2", d.cuMemAlloc, r) && resolve(lib, "cuMemFree_v2", d.cuMemFree, r) &&
            resolve(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, r) && resolve(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, r) &&
            resolve(lib, "cuMemcpyDtoD_v2", d.cuMemcpyDtoD, r) && resolve(lib, "cuMemsetD8_v2", d.cuMemsetD8, r) &&
            resolve(lib, "cuModuleLoadData", d.cuModuleLoadData, r) &&
            resolve(lib, "cuModuleUnload", d.cuModuleUnload, r) &&
            resolve(lib, "cuModuleGetFunction", d.cuModuleGetFunction, r) &&
            resolve(lib, "cuLaunchKernel", d.cuLaunchKernel, r) &&
            resolve(lib, "cuStreamCreate", d.cuStreamCreate, r) &&
            resolve(lib, "cuStreamSynchronize", d.cuStreamSynchronize, r) &&
            resolve(lib, "cuEventCreate", d.cuEventCreate, r) && resolve(lib, "cuEventRecord", d.cuEventRecord, r) &&
            resolve(lib, "cuEventSynchronize", d.cuEventSynchronize, r) &&
            resolve(lib, "cuEventElapsedTime", d.cuEventElapsedTime, r) &&
            resolve(lib, "cuEventDestroy_v2", d.cuEventDestroy, r) &&
            resolve(lib, "cuGetErrorString", d.cuGetErrorString, r) &&
            resolve(lib, "cuDriverGetVersion", d.cuDriverGetVersion, r) &&
            resolve(lib, "cuStreamDestroy_v2", d.cuStreamDestroy, r) &&
            resolve(lib, "cuMemsetD8Async", d.cuMemsetD8Async, r) &&
            resolve(lib, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, r) &&
            resolve(lib, "cuFuncGetAttribute", d.cuFuncGetAttribute, r);
  if (!ok) return L;
  if (CUresult rc = d.cuInit(0); rc != 0) {
    L.reason = fmt::format("cuInit failed with code {}: the driver found no usable GPU", rc);
    return L;
  }
  if (d.cuDeviceGetCount(&d.device_count) != 0 || d.device_count == 0) {
    L.reason = "the CUDA driver reports no device";
    return L;
  }
  L.contexts.assign(d.device_count, nullptr);
  L.ok = true;
  return L;
}

Loaded& loaded() {
  static Loaded L = load();
  return L;
}

}  // namespace

const CudaDriver* cuda_driver() {
  Loaded& L = loaded();
  return L.ok ? &L.table : nullptr;
}

std::string cuda_unavailable_reason() { return loaded().ok ? std::string() : loaded().reason; }

const CudaDriver& require_cuda_driver(const std::string& what) {
  const CudaDriver* d = cuda_driver();
  STRATA_CHECK(d != nullptr, "{} needs a CUDA GPU, but none is usable: {}", what, cuda_unavailable_reason());
  return *d;
}

void cuda_check(CUresult rc, const char* call) {
  if (rc == 0) return;
  const char* msg = "unknown error";
  if (const CudaDriver* d = cuda_driver(); d && d->cuGetErrorString) d->cuGetErrorString(rc, &msg);
  throw_internal_error(__FILE__, __LINE__, call, fmt::format("CUDA driver error {}: {}", rc, msg));
}

void cuda_set_device(int index) {
  const CudaDriver& d = require_cuda_driver("cuda_set_device");
  Loaded& L = loaded();
  STRATA_CHECK(index >= 0 && index < d.device_count, "device cuda:{} does not exist ({} device(s) present)",
               index, d.device_count);
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!L.contexts[index]) {
    CUdevice dev;
    STRATA_CU(d.cuDeviceGet(&dev, index));
    STRATA_CU(d.cuDevicePrimaryCtxRetain(&L.contexts[index], dev));
  }
  STRATA_CU(d.cuCtxSetCurrent(L.contexts[index]));
}

}  // namespace strata
