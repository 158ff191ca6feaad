# Decides whether the CUDA backend is built (STRATA_CUDA = AUTO | ON | OFF).
# AUTO turns it on when nvcc, NVRTC and cuSPARSE are all found. The backend never
# links libcuda: the driver API is loaded at run time (core/cuda_driver.h), so one
# binary runs on machines with and without a GPU.
set(STRATA_WITH_CUDA OFF)
string(TOUPPER "${STRATA_CUDA}" _strata_cuda_mode)
if(NOT _strata_cuda_mode STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  set(_strata_cuda_ok OFF)
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND TARGET CUDA::cusparse AND TARGET CUDA::cublas
     AND CUDAToolkit_NVCC_EXECUTABLE)
    set(_strata_cuda_ok ON)
  endif()
  if(_strata_cuda_ok)
    set(STRATA_WITH_CUDA ON)
  elseif(_strata_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "STRATA_CUDA=ON but the CUDA toolkit (nvcc, NVRTC, cuSPARSE, cuBLAS) was not found")
  endif()
endif()
if(STRATA_WITH_CUDA)
  add_compile_definitions(STRATA_WITH_CUDA=1)
endif()
