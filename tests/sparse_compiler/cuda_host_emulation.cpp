#include "tests/sparse_compiler/cuda_host_emulation.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace strata::sc::cuda_testing {
namespace {

// The SIMT emulation the generated source is compiled against.
constexpr const char* kEmulation = R"(// Host emulation of the CUDA execution model (tests only).
#include <math.h>
#include <atomic>
#include <stdint.h>
#include <string.h>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

namespace strata_emu {
struct dim3u { unsigned x = 0, y = 0, z = 0; };

std::atomic<bool> g_failed{false};

// A reusable barrier for a fixed number of threads; gives up (and flags the launch
// as failed) when some thread never arrives.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(lock, std::chrono::seconds(20), [&] { return gen_ != gen || g_failed.load(); })) {
      std::fprintf(stderr, "host emulation: a barrier waited 20 s for threads that never came (divergence)\n");
      g_failed = true;
      cv_.notify_all();
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
};

struct Block {
  std::unique_ptr<Barrier> sync;
  std::mutex groups_mu;
  struct Group {
    explicit Group(int n) : bar(n) {}
    Barrier bar;
    unsigned char slots[32][8];
  };
  std::map<std::pair<unsigned, unsigned>, std::unique_ptr<Group>> groups;  // (warp, mask)
};
Block* g_block = nullptr;
std::mutex g_atomic_mu;
}  // namespace strata_emu

thread_local strata_emu::dim3u threadIdx, blockIdx;
strata_emu::dim3u blockDim, gridDim;

inline void __syncthreads() { strata_emu::g_block->sync->wait(); }

template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width) {
  static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned lane = linear & 31u, warp = linear >> 5;
  strata_emu::Block::Group* g;
  {
    std::lock_guard<std::mutex> lock(strata_emu::g_block->groups_mu);
    auto& slot = strata_emu::g_block->groups[{warp, mask}];
    if (!slot) slot = std::make_unique<strata_emu::Block::Group>(__builtin_popcount(mask));
    g = slot.get();
  }
  if (!(mask >> lane & 1u)) {
    std::fprintf(stderr, "host emulation: lane %u shuffles with mask %08x that excludes it\n", lane, mask);
    strata_emu::g_failed = true;
  }
  memcpy(g->slots[lane], &v, sizeof(T));
  g->bar.wait();
  unsigned src = lane ^ (unsigned)lane_mask;
  if ((src ^ lane) >= (unsigned)width || !(mask >> src & 1u)) src = lane;
  T out;
  memcpy(&out, g->slots[src], sizeof(T));
  g->bar.wait();
  return out;
}

inline float atomicAdd(float* p, float v) { std::lock_guard<std::mutex> l(strata_emu::g_atomic_mu); float o = *p; *p = o + v; return o; }
inline double atomicAdd(double* p, double v) { std::lock_guard<std::mutex> l(strata_emu::g_atomic_mu); double o = *p; *p = o + v; return o; }
inline int atomicAdd(int* p, int v) { std::lock_guard<std::mutex> l(strata_emu::g_atomic_mu); int o = *p; *p = o + v; return o; }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  std::lock_guard<std::mutex> l(strata_emu::g_atomic_mu); unsigned long long o = *p; *p = o + v; return o;
}
inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }

namespace strata_emu {
// Runs `kernel` on every thread of a grid, one block at a time, the threads of a
// block concurrently: blockDim OS threads are started once per launch and walk the
// blocks together, a barrier between blocks. Returns 0, or 1 when a barrier gave up.
inline int launch(const int64_t* dims, const std::function<void()>& kernel) {
  g_failed = false;
  gridDim = {(unsigned)dims[0], (unsigned)dims[1], (unsigned)dims[2]};
  blockDim = {(unsigned)dims[3], (unsigned)dims[4], (unsigned)dims[5]};
  const int n = (int)(blockDim.x * blockDim.y * blockDim.z);
  const int64_t blocks = (int64_t)gridDim.x * gridDim.y * gridDim.z;
  Block block;
  block.sync = std::make_unique<Barrier>(n);
  g_block = &block;
  Barrier between(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      threadIdx = {(unsigned)(t % blockDim.x), (unsigned)(t / blockDim.x % blockDim.y),
                   (unsigned)(t / (blockDim.x * blockDim.y))};
      for (int64_t b = 0; b < blocks && !g_failed; ++b) {
        blockIdx = {(unsigned)(b % gridDim.x), (unsigned)(b / gridDim.x % gridDim.y),
                    (unsigned)(b / ((int64_t)gridDim.x * gridDim.y))};
        kernel();
        between.wait();  // the block is done before the next one starts
      }
    });
  for (auto& th : threads) th.join();
  g_block = nullptr;
  return g_failed ? 1 : 0;
}
}  // namespace strata_emu
)";

std::string c_param(const Param& p, int i) {
  if (p.kind == ParamKind::Scalar) return fmt::format("*(const int64_t*)params[{}]", i);
  return fmt::format("*({}**)params[{}]", dtype_ctype(p.dtype), i);
}

}  // namespace

HostEmulatedCuda::HostEmulatedCuda(const CudaSource& source) : source_(source) {
  std::string code = std::string(kEmulation) + "\n" + source.source + "\n// host entry points\n";
  for (const auto& plan : source.kernels) {
    std::string args;
    for (size_t i = 0; i < plan.kernel.params.size(); ++i)
      args += (i ? ", " : "") + c_param(plan.kernel.params[i], static_cast<int>(i));
    auto entry = [&](const CudaLaunch& L) {
      code += fmt::format(
          "extern \"C\" int emu_{0}(void* const* params, const int64_t* dims) {{\n"
          "  return strata_emu::launch(dims, [&] {{ {0}({1}); }});\n}}\n",
          L.symbol, args);
    };
    for (const auto& L : plan.preprocess) entry(L);
    for (const auto& L : plan.body) entry(L);
  }
  library_ = KernelCache::global().get_or_compile(code).library;
}

void HostEmulatedCuda::run_launches(const CudaKernelPlan& plan, const std::vector<CudaLaunch>& launches,
                                    const KernelArgs& args) const {
  std::vector<void*> buffers;
  std::vector<int64_t> scalars;
  args.pack(plan.kernel, buffers, scalars);
  std::vector<void*> params;
  size_t b = 0, s = 0;
  for (const auto& p : plan.kernel.params)
    params.push_back(p.kind == ParamKind::Scalar ? static_cast<void*>(&scalars[s++]) : static_cast<void*>(&buffers[b++]));
  for (const auto& L : launches) {
    int64_t dims[6] = {0, 1, 1, L.block[0], L.block[1], L.block[2]};
    for (const auto& part : L.parts) {
      dims[0] += part.x.defined() ? std::max<int64_t>(evaluate_scalar_expr(plan.kernel, part.x, args), 0) : 1;
      if (part.y.defined()) dims[1] = std::max(dims[1], evaluate_scalar_expr(plan.kernel, part.y, args));
      if (part.z.defined()) dims[2] = std::max(dims[2], evaluate_scalar_expr(plan.kernel, part.z, args));
    }
    if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0) continue;
    auto fn = library_->function<int(void* const*, const int64_t*)>("emu_" + L.symbol);
    STRATA_ASSERT(fn(params.data(), dims) == 0, "host emulation of {} deadlocked (see stderr)", L.symbol);
  }
}

void HostEmulatedCuda::run(size_t k, const KernelArgs& args) const {
  const CudaKernelPlan& plan = source_.kernels.at(k);
  // Workspaces (hoisted searches) live as long as the call, as the runtime's do per graph.
  std::vector<std::vector<int64_t>> storage;
  KernelArgs a = args;
  for (const auto& [p, size] : workspace_sizes(plan.kernel, args)) {
    storage.emplace_back(static_cast<size_t>(std::max<int64_t>(size, 1)) * dtype_size(p.dtype) / 8 + 1, 0);
    a.buffer(p.name, storage.back().data(), p.dtype, size);
  }
  run_launches(plan, plan.preprocess, a);
  run_launches(plan, plan.body, a);
}

}  // namespace strata::sc::cuda_testing
