// Runs generated CUDA C on the host, for tests on machines without a GPU.
//
// The emitter's source is compiled by the host C++ compiler (through the JIT layer)
// after a small SIMT emulation prelude: every GPU thread of a block is an OS thread
// with its own threadIdx/blockIdx, blocks run one after another, __shared__ arrays
// are shared by the block's threads, __syncthreads() is a barrier over the block,
// and __shfl_xor_sync exchanges values among the lanes its mask names (a barrier per
// lane group), so warp reductions, write predicates, lane-distributed registers,
// guards and horizontally fused parts run with the semantics they have on a GPU.
// A shuffle that some lane of its group never reaches (a divergence bug) is reported
// after a timeout instead of hanging. This checks what the emitter means, not how
// fast it is; the *GpuTest suites run the same code on a device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/codegen/jit_compiler.h"
#include "sparse_compiler/codegen/kernel_cache.h"

namespace strata::sc::cuda_testing {

class HostEmulatedCuda {
 public:
  // Compiles every kernel of `source` for the host.
  explicit HostEmulatedCuda(const CudaSource& source);

  // Runs kernel `k`'s preprocess and body launches (in order) on host buffers bound
  // in `args`, with grids sized from its scalars, as CompiledCudaKernel would.
  void run(size_t k, const KernelArgs& args) const;
  const CudaSource& source() const { return source_; }

 private:
  void run_launches(const CudaKernelPlan& plan, const std::vector<CudaLaunch>& launches, const KernelArgs& args) const;

  CudaSource source_;
  std::shared_ptr<SharedLibrary> library_;
};

}  // namespace strata::sc::cuda_testing
