// The CUDA emitter: stage-III IR scheduled for a GPU (loops bound to blockIdx /
// threadIdx, after lower_schedule) -> CUDA C source for NVRTC, plus the launch
// plan the runtime needs to start it.
//
// What a bound loop means. `for (v, min, ext) bound threadIdx.x` is executed by
// every thread with threadIdx.x < ext, each with v = min + threadIdx.x; code
// outside a loop bound to a thread axis is executed by all threads of the block,
// so its writes to global or shared memory are predicated on that thread index
// being 0 (serial semantics: once per enclosing iteration). A block-bound loop
// is the same with blockIdx. Thread extents must be constants (they give the
// block size, a compile-time constant); block extents must be expressions over
// the kernel's scalar parameters (graph sizes), evaluated at launch to give the
// grid. Locals allocated outside a thread loop but used inside it are either
// lane-distributed (only ever accessed as buf[t] with t the bound variable, and
// read whole by warp_reduce_add: one register per thread) or in Shared memory.
//
// Horizontal fusion (SparseTIR's HorizontalFusion). A kernel whose body is a
// sequence of independently bound loop nests (one per part of a decomposed format,
// or per row-part of a schedule) becomes one launch: the parts' blockIdx.x ranges
// are concatenated and each block runs the part its index falls in; other grid
// dimensions take the largest extent and each part guards its own. Consecutive
// parts are fused while they are independent: no part reads or plainly writes a
// buffer another part of the launch writes (atomic adds to a common output are
// independent). A dependent part starts a new launch, in order, so the result is
// the serial one; this is also how deterministic schedules (no atomics) run.
// A part may declare, with the annotation kGpuExclusiveWrites = "Y" (a comma-separated
// list of buffers) on its top-level loop, that its plain stores to Y go to elements
// no other part of the body writes with an atomic or another exclusive store (the
// schedule knows it: the rows of one bucket of one column part, or edge-indexed
// outputs where every edge has one slot). Such stores do not separate it from parts
// that atomically or exclusively write Y; a part that reads Y or writes it plainly
// without the annotation still does.
//
// The preprocess body (hoisted binary searches) is planned the same way and runs
// once per bound graph.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// Loop annotation (on a part's top-level loop): buffers the part writes exclusively.
inline constexpr const char* kGpuExclusiveWrites = "gpu.exclusive_writes";

// The grid extents of one fused part; undefined Exprs mean 1.
struct CudaPartGrid {
  Expr x, y, z;
};

struct CudaLaunch {
  std::string symbol;                     // the __global__ function
  std::array<int64_t, 3> block{1, 1, 1};  // blockDim, compile-time
  std::vector<CudaPartGrid> parts;        // in blockIdx.x order
  // Buffers the code reads or writes with aligned vector accesses, and the alignment
  // (bytes) their base pointers need (checked at launch).
  std::map<std::string, int64_t> aligned_buffers;
};

struct CudaKernelPlan {
  Kernel kernel;                          // as emitted; its params are every launch's signature
  std::vector<CudaLaunch> preprocess;     // run once per bound graph, in order
  std::vector<CudaLaunch> body;           // run on every call, in order
};

struct CudaSource {
  std::string source;                     // one translation unit for all kernels
  std::vector<CudaKernelPlan> kernels;    // one per input kernel, same order
};

// Emits every kernel into one translation unit. Throws InternalError (naming the
// loop or buffer) when the IR breaks a rule above.
CudaSource emit_cuda_source(const std::vector<Kernel>& kernels);

}  // namespace strata::sc
