#include "sparse_compiler/codegen/cuda_kernel.h"

#include <cstdint>
#include <cstring>

#include "core/log.h"
#include "core/timer.h"

#if STRATA_WITH_CUDA
#include "sparse_compiler/codegen/compile_in_units.h"
#include "sparse_compiler/codegen/nvrtc_compiler.h"
#endif

namespace strata::sc {
namespace {

constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;

// The parameter pointers cuLaunchKernel takes, in the kernel's parameter order.
struct LaunchArgs {
  std::vector<void*> buffers;
  std::vector<int64_t> scalars;
  std::vector<void*> params;

  LaunchArgs(const Kernel& k, const KernelArgs& args) {
    args.pack(k, buffers, scalars);
    size_t b = 0, s = 0;
    for (const auto& p : k.params) params.push_back(p.kind == ParamKind::Scalar ? static_cast<void*>(&scalars[s++])
                                                                                 : static_cast<void*>(&buffers[b++]));
  }
};

void check_alignment(const Kernel& k, const CudaLaunch& L, const KernelArgs& args) {
  std::vector<void*> buffers;
  std::vector<int64_t> scalars;
  args.pack(k, buffers, scalars);
  size_t b = 0;
  for (const auto& p : k.params) {
    if (p.kind == ParamKind::Scalar) continue;
    void* ptr = buffers[b++];
    auto it = L.aligned_buffers.find(p.name);
    if (it == L.aligned_buffers.end()) continue;
    STRATA_CHECK(reinterpret_cast<uintptr_t>(ptr) % static_cast<uintptr_t>(it->second) == 0,
                 "kernel {}: buffer {} at {} is not {}-byte aligned, but the generated code accesses it with vector "
                 "loads and stores (pass a tensor that starts its own allocation, not an offset view)",
                 k.name, p.name, ptr, it->second);
  }
}

void launch_all(const CompiledCudaKernel& ck, const std::vector<CudaLaunch>& launches,
                const std::vector<CudaGeometry::Launch>& sizes, const KernelArgs& args, const CudaStream& stream) {
  const CudaDriver& d = require_cuda_driver("launching kernel " + ck.kernel().name);
  STRATA_ASSERT(launches.size() == sizes.size(), "kernel {}: geometry for {} launches, plan has {}",
                ck.kernel().name, sizes.size(), launches.size());
  LaunchArgs la(ck.kernel(), args);
  cuda_set_device(stream.device());
  for (size_t i = 0; i < launches.size(); ++i) {
    const auto& g = sizes[i];
    if (g.grid[0] == 0 || g.grid[1] == 0 || g.grid[2] == 0) continue;  // nothing to do (an empty graph)
    check_alignment(ck.kernel(), launches[i], args);
    CUfunction f = ck.module->function(stream.device(), launches[i].symbol);
    STRATA_CU(d.cuLaunchKernel(f, static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
                               static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
                               static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]), 0, stream.get(),
                               la.params.data(), nullptr));
  }
}

std::vector<CudaGeometry::Launch> resolve(const Kernel& k, const std::vector<CudaLaunch>& launches,
                                          const KernelArgs& args) {
  std::vector<CudaGeometry::Launch> out;
  for (const auto& L : launches) {
    CudaGeometry::Launch g;
    g.block = L.block;
    g.grid = {0, 1, 1};
    for (const auto& part : L.parts) {
      const int64_t x = part.x.defined() ? evaluate_scalar_expr(k, part.x, args) : 1;
      g.grid[0] += std::max<int64_t>(x, 0);
      if (part.y.defined()) g.grid[1] = std::max(g.grid[1], evaluate_scalar_expr(k, part.y, args));
      if (part.z.defined()) g.grid[2] = std::max(g.grid[2], evaluate_scalar_expr(k, part.z, args));
    }
    STRATA_CHECK(g.grid[0] <= kMaxGridX && g.grid[1] <= kMaxGridYZ && g.grid[2] <= kMaxGridYZ,
                 "kernel {}: launch {} needs a grid of {} x {} x {} blocks, beyond the GPU's limits ({} x {} x {}); "
                 "the graph is too large for this schedule",
                 k.name, L.symbol, g.grid[0], g.grid[1], g.grid[2], kMaxGridX, kMaxGridYZ, kMaxGridYZ);
    out.push_back(g);
  }
  return out;
}

}  // namespace

CudaModule::CudaModule(std::shared_ptr<const std::string> image, std::string target, std::string source_path)
    : image_(std::move(image)), target_(std::move(target)), source_path_(std::move(source_path)) {}

CudaModule::~CudaModule() {
  const CudaDriver* d = cuda_driver();
  if (!d) return;
  for (const auto& [device, m] : modules_) {
    cuda_set_device(device);
    d->cuModuleUnload(m);
  }
}

CUfunction CudaModule::function(int device, const std::string& symbol) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = functions_.find({device, symbol}); it != functions_.end()) return it->second;
  const CudaDriver& d = require_cuda_driver("loading a CUDA module");
  cuda_set_device(device);
  auto m = modules_.find(device);
  if (m == modules_.end()) {
    CUmodule mod = nullptr;
    // The driver's JIT log says why PTX did not load (a too-new PTX version, ...).
    std::string log(8192, '\0');
    int options[] = {kCuJitErrorLogBuffer, kCuJitErrorLogBufferSizeBytes};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size()))};
    const CUresult rc = d.cuModuleLoadDataEx(&mod, image_->data(), 2, options, values);
    if (rc != 0) {
      const char* msg = "unknown error";
      d.cuGetErrorString(rc, &msg);
      log.resize(std::strlen(log.c_str()));
      STRATA_FAIL("cannot load the CUDA module compiled for {} on cuda:{}: driver error {} ({}){}{}\n  source kept at {}",
                  target_, device, rc, msg, log.empty() ? "" : "\n  JIT log: ", log, source_path_);
    }
    m = modules_.emplace(device, mod).first;
  }
  CUfunction f = nullptr;
  STRATA_CU(d.cuModuleGetFunction(&f, m->second, symbol.c_str()));
  functions_[{device, symbol}] = f;
  return f;
}

CudaGeometry CompiledCudaKernel::geometry(const KernelArgs& args) const {
  CudaGeometry g;
  g.preprocess = resolve(plan.kernel, plan.preprocess, args);
  g.body = resolve(plan.kernel, plan.body, args);
  return g;
}

void CompiledCudaKernel::run(const KernelArgs& args, const CudaGeometry& g, const CudaStream& stream) const {
  launch_all(*this, plan.body, g.body, args, stream);
}

void CompiledCudaKernel::run_preprocess(const KernelArgs& args, const CudaGeometry& g, const CudaStream& stream) const {
  launch_all(*this, plan.preprocess, g.preprocess, args, stream);
}

std::string cuda_backend_unavailable_reason() {
#if STRATA_WITH_CUDA
  return cuda_unavailable_reason();
#else
  return "Strata was built without the CUDA backend (configure with -DSTRATA_CUDA=ON on a machine with the CUDA "
         "toolkit)";
#endif
}

void require_cuda_backend(const std::string& what, Device device) {
  const std::string why = cuda_backend_unavailable_reason();
  STRATA_CHECK(why.empty(), "{} on {} needs a CUDA GPU, but none is usable: {}", what, device.str(), why);
  const CudaDriver& d = require_cuda_driver(what);
  STRATA_CHECK(device.index < d.device_count, "{}: device {} does not exist ({} device(s) present)", what,
               device.str(), d.device_count);
}

#if STRATA_WITH_CUDA

CudaTarget cuda_target_for_device(int device) {
  const CudaDriver& d = require_cuda_driver("choosing the CUDA target");
  CUdevice dev;
  STRATA_CU(d.cuDeviceGet(&dev, device));
  int major = 0, minor = 0;
  STRATA_CU(d.cuDeviceGetAttribute(&major, kCuAttrComputeCapabilityMajor, dev));
  STRATA_CU(d.cuDeviceGetAttribute(&minor, kCuAttrComputeCapabilityMinor, dev));
  return nvrtc_target_for(major * 10 + minor);
}

std::vector<CompiledCudaKernel> compile_cuda(const std::vector<Kernel>& lowered, const CudaTarget& target) {
  Timer t;
  CudaSource src = emit_cuda_source(lowered);
  const CudaBinaryResult r = CudaBinaryCache::global().get_or_compile(src.source, target);
  auto module = std::make_shared<CudaModule>(r.binary, target.str(), r.source_path.string());
  std::vector<CompiledCudaKernel> out;
  for (auto& plan : src.kernels) {
    CompiledCudaKernel c;
    c.plan = std::move(plan);
    c.module = module;
    c.outcome = r.outcome;
    c.compile_ms = r.compile_ms;
    c.total_ms = t.ms();
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CompiledCudaKernel> compile_cuda(const std::vector<Kernel>& lowered, const CudaTarget& target, int units) {
  return compile_in_units<CompiledCudaKernel>(
      lowered, units, [&target](const std::vector<Kernel>& part) { return compile_cuda(part, target); });
}

#else

CudaTarget cuda_target_for_device(int) { STRATA_FAIL("{}", cuda_backend_unavailable_reason()); }

std::vector<CompiledCudaKernel> compile_cuda(const std::vector<Kernel>&, const CudaTarget&) {
  STRATA_FAIL("compiling CUDA kernels: {}", cuda_backend_unavailable_reason());
}

std::vector<CompiledCudaKernel> compile_cuda(const std::vector<Kernel>& lowered, const CudaTarget& target, int) {
  return compile_cuda(lowered, target);
}

#endif

}  // namespace strata::sc
