// Compiled CUDA kernels: the CUDA emitter's source compiled by NVRTC (through
// CudaBinaryCache), loaded through the driver API lazily on each device that runs
// it, and launched with the geometry the emitter planned.
//
//   std::vector<CompiledCudaKernel> ks = compile_cuda({lower_spmm_gpu(spec, knobs)},
//                                                     cuda_target_for_device(0));
//   CudaGeometry g = ks[0].geometry(args);           // grid sizes for this graph, once
//   ks[0].run_preprocess(args, g, stream);           // once per bound graph
//   ks[0].run(args, g, stream);                      // every call (asynchronous)
//
// Arguments are bound by name in KernelArgs, with device pointers for buffers.
// Compilation needs no GPU (tests compile for sm_80 and sm_90 on machines without
// one); loading and launching need one.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/codegen/cuda_target.h"
#include "sparse_compiler/codegen/kernel_cache.h"

namespace strata::sc {

// A loaded-on-demand module: the binary, and one CUmodule per device that used it.
class CudaModule {
 public:
  // `image` is a cubin or NUL-terminated PTX; `source_path` names the kept source in
  // error messages.
  CudaModule(std::shared_ptr<const std::string> image, std::string target, std::string source_path);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // The function `symbol` on `device`, loading the module there on first use.
  // Throws UserError with the driver's message (and JIT log for PTX) when the
  // module does not load.
  CUfunction function(int device, const std::string& symbol) const;
  const std::string& target() const { return target_; }
  const std::string& source_path() const { return source_path_; }

 private:
  std::shared_ptr<const std::string> image_;
  std::string target_, source_path_;
  mutable std::mutex mu_;
  mutable std::map<int, CUmodule> modules_;
  mutable std::map<std::pair<int, std::string>, CUfunction> functions_;
};

// The launch sizes of one kernel for one bound graph.
struct CudaGeometry {
  struct Launch {
    std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  };
  std::vector<Launch> preprocess, body;
};

struct CompiledCudaKernel {
  CudaKernelPlan plan;  // the lowered kernel and its launches
  std::shared_ptr<CudaModule> module;
  CacheOutcome outcome = CacheOutcome::Compiled;
  double compile_ms = 0;  // NVRTC's time for the whole batch (0 on a cache hit)
  double total_ms = 0;    // emit + cache lookup (+ compile) for the whole batch

  const Kernel& kernel() const { return plan.kernel; }
  // Grid sizes for the scalars bound in `args` (graph sizes). UserError when a
  // grid exceeds the hardware's limits.
  CudaGeometry geometry(const KernelArgs& args) const;
  // Queues the body's launches (or the preprocess's) on `stream`. Buffers in `args`
  // are device pointers; each must be aligned as the code's vector accesses need
  // (UserError naming the buffer otherwise).
  void run(const KernelArgs& args, const CudaGeometry& g, const CudaStream& stream) const;
  void run_preprocess(const KernelArgs& args, const CudaGeometry& g, const CudaStream& stream) const;
  std::vector<std::pair<Param, int64_t>> workspaces(const KernelArgs& args) const {
    return workspace_sizes(plan.kernel, args);
  }
};

// The target for device `device`: its compute capability, as NVRTC can serve it.
CudaTarget cuda_target_for_device(int device);

// Emits the kernels into one translation unit and compiles it once through
// CudaBinaryCache::global() for `target`. UserError in builds without the CUDA
// backend; CompileError (with NVRTC's log and the kept source) when it fails.
std::vector<CompiledCudaKernel> compile_cuda(const std::vector<Kernel>& lowered, const CudaTarget& target);
// The same, split into up to `units` translation units that NVRTC compiles at once
// (results in the order of `lowered`; each unit its own cache entry): for a tuner's
// candidates, whose decomposed-format kernels take NVRTC about a second each.
std::vector<CompiledCudaKernel> compile_cuda(const std::vector<Kernel>& lowered, const CudaTarget& target, int units);

// Why the CUDA backend cannot run here ("" when it can): built without it, or no
// usable GPU (cuda_unavailable_reason()).
std::string cuda_backend_unavailable_reason();
// Throws a UserError saying `what` needs the CUDA backend and why it is unavailable.
void require_cuda_backend(const std::string& what, Device device);

}  // namespace strata::sc
