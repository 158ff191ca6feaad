// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1").
//
// Strata never links libcuda: machines without a GPU have no libcuda.so.1, and one
// binary must run on both. Everything that touches a GPU goes through the function
// table here. cuda_driver() returns nullptr when no driver or no device is present;
// require_cuda_driver() throws a UserError that says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata {

// The few driver types Strata uses, declared here so core builds without cuda.h.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

struct CudaDriver {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned int);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned int);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  // options are CUjit_option values; used for the driver's PTX JIT error log.
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned int, int*, void**);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);

  int device_count = 0;
};

// Driver attribute ids used by Strata (values from cuda.h).
inline constexpr int kCuAttrComputeCapabilityMajor = 75;
inline constexpr int kCuAttrComputeCapabilityMinor = 76;
inline constexpr int kCuAttrMultiprocessorCount = 16;
inline constexpr int kCuAttrL2CacheSize = 38;
// Function attribute and JIT option ids (values from cuda.h).
inline constexpr int kCuFuncAttrNumRegs = 4;
inline constexpr int kCuJitErrorLogBuffer = 5;
inline constexpr int kCuJitErrorLogBufferSizeBytes = 6;

// nullptr when libcuda.so.1 is missing, cuInit fails, or there is no device.
const CudaDriver* cuda_driver();
// Why cuda_driver() is null ("libcuda.so.1 not found: ..."), or "" when it is not.
std::string cuda_unavailable_reason();
// The driver table, or a UserError naming `what` and the reason.
const CudaDriver& require_cuda_driver(const std::string& what);
// Makes device `index`'s primary context current on this thread.
void cuda_set_device(int index);
// Throws InternalError with the driver's message when rc != 0.
void cuda_check(CUresult rc, const char* call);

}  // namespace strata

#define STRATA_CU(call) ::strata::cuda_check((call), #call)
