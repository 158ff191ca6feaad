// What NVRTC is asked to produce for a GPU: a cubin for sm_<arch>, or PTX for
// compute_<arch> that the driver compiles when the module is loaded (when this
// NVRTC cannot emit machine code for the GPU). Plain data, usable without the
// CUDA toolkit.
#pragma once

#include <fmt/format.h>

#include <string>

namespace strata::sc {

struct CudaTarget {
  int arch = 90;      // compute capability as major * 10 + minor
  bool cubin = true;  // false: PTX
  // "--gpu-architecture=sm_90" or "--gpu-architecture=compute_80"
  std::string option() const { return fmt::format("--gpu-architecture={}_{}", cubin ? "sm" : "compute", arch); }
  // "sm_90 (cubin)", "compute_80 (PTX)"
  std::string str() const { return fmt::format("{}_{} ({})", cubin ? "sm" : "compute", arch, cubin ? "cubin" : "PTX"); }
  std::string extension() const { return cubin ? ".cubin" : ".ptx"; }
};

}  // namespace strata::sc
