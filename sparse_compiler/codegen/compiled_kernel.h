// Compiled kernels and their arguments: the link between the compiler's output and
// the data of a bound graph.
//
// compile_cpu() emits several lowered kernels into one translation unit, compiles it
// through the kernel cache (one compiler invocation, or none on a cache hit; kernels
// already compiled in another unit are loaded from it) and resolves each kernel's
// entry points; compile_cpu_memoized() skips even the emission for kernels the caller
// names by the program and plan they came from. KernelArgs binds parameters by name
// and packs them into the uniform argument list in parameter order, checking that
// every parameter is bound with the right dtype.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "sparse_compiler/codegen/kernel_cache.h"
#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

using KernelEntry = int (*)(void* const* buffers, const int64_t* scalars);

class Interpreter;

class KernelArgs {
 public:
  KernelArgs& buffer(const std::string& name, const Tensor& t);
  // `size` (elements) lets the interpreter bounds-check; -1 when unknown.
  KernelArgs& buffer(const std::string& name, void* data, DType dtype, int64_t size = -1);
  KernelArgs& scalar(const std::string& name, int64_t v);
  bool has_buffer(const std::string& name) const { return buffers_.count(name) > 0; }
  // Buffers and scalars in `k`'s parameter order; throws InternalError naming a
  // parameter that is unbound or bound with another dtype.
  void pack(const Kernel& k, std::vector<void*>& buffers, std::vector<int64_t>& scalars) const;
  int64_t scalar_value(const std::string& name) const;
  // Binds every parameter of `k` in an interpreter (buffers need known sizes).
  void bind(Interpreter& interp, const Kernel& k) const;

 private:
  struct Buf {
    void* data;
    DType dtype;
    int64_t size;
  };
  std::map<std::string, Buf> buffers_;
  std::map<std::string, int64_t> scalars_;
};

// A kernel's argument list packed once: the arguments that stay the same from call
// to call (a bound graph's arrays and sizes, workspaces) are looked up by name when
// the op is bound; the per-call buffers (X, Y, edge values) are slots a call fills
// by position. On a 34-node graph the by-name path (KernelArgs, then pack) cost
// about as much as the kernel itself.
class PackedArgs {
 public:
  PackedArgs() = default;
  // `fixed` binds every parameter of `k` except those named in `per_call`; a
  // per-call name that is not a parameter of `k` (an unweighted kernel's "A") is
  // accepted and its tensor ignored at run time.
  PackedArgs(const Kernel& k, KernelEntry entry, const KernelArgs& fixed, std::vector<std::string> per_call);
  // Runs the entry point with the per-call tensors in the constructor's order; each
  // used one must be a defined host tensor of its parameter's dtype (InternalError
  // naming the parameter otherwise).
  void run(std::initializer_list<const Tensor*> per_call) const;

 private:
  std::string kernel_name_;
  std::vector<void*> buffers_;
  std::vector<int64_t> scalars_;
  struct Slot {
    std::string name;
    int index = -1;  // position in buffers_, -1 when not a parameter
    DType dtype = DType::F32;
  };
  std::vector<Slot> slots_;
  KernelEntry entry_ = nullptr;
};

struct CompiledKernel {
  Kernel kernel;  // as lowered (its parameters are the entry point's signature)
  std::shared_ptr<SharedLibrary> library;
  KernelEntry entry = nullptr;
  KernelEntry preprocess = nullptr;  // null when the kernel has no preprocess body
  CacheOutcome outcome = CacheOutcome::Compiled;
  double compile_ms = 0;  // the compiler's time for the whole batch (0 on a cache hit)
  double total_ms = 0;    // emit + cache lookup (+ compile) for the whole batch
  // The kernel cache key of the batch's source: it changes whenever the generated
  // code does, so choices measured on other code (tuning records) can key on it.
  std::string source_key;

  void run(const KernelArgs& args) const;
  void run_preprocess(const KernelArgs& args) const;
  // The entry point's argument list packed for repeated calls (see PackedArgs).
  PackedArgs pack(const KernelArgs& fixed, std::vector<std::string> per_call) const;
  // Workspace buffers the kernel's preprocess fills: name, dtype and element count
  // for the given scalars.
  std::vector<std::pair<Param, int64_t>> workspaces(const KernelArgs& args) const;
};

// Emits, compiles (through KernelCache::global()) and loads lowered kernels. A kernel
// that an earlier batch compiled (same source, in any unit) is loaded from that
// batch's unit (KernelCache::find_member); the others compile in one unit.
std::vector<CompiledKernel> compile_cpu(const std::vector<Kernel>& lowered);
// The same, the kernels to compile split into up to `units` translation units
// compiled at once (results in order of `lowered`): for a batch the caller needs
// soon, when there are cores to spare (the tuner's candidates). Each unit is its own
// kernel cache entry.
std::vector<CompiledKernel> compile_cpu(const std::vector<Kernel>& lowered, int units);

// compile_cpu for kernels whose code is fixed by a key the caller names them with (the
// program and plan, or knobs, they were lowered from: the key of the op's lowering
// memo). A key compiled earlier in this process returns its kernel at once, with
// outcome MemoryHit, without emitting and hashing the source again: a mini-batch's
// blocks bind the same few kernels every batch, and emitting them cost more than
// running them on a small graph. The rest compile as compile_cpu(…, units) does.
// Memoized kernels stay loaded; the memo holds at most kCompileMemoSize keys and
// starts over when full. A key must never name two different kernels.
inline constexpr size_t kCompileMemoSize = 512;
std::vector<CompiledKernel> compile_cpu_memoized(const std::vector<std::string>& keys,
                                                 const std::vector<Kernel>& lowered, int units = 1);

// The value of `e`, an expression over k's scalar parameters, for the scalars bound in
// `args` (workspace sizes, GPU grid sizes).
int64_t evaluate_scalar_expr(const Kernel& k, const Expr& e, const KernelArgs& args);
// The workspace buffers of `k` (filled by its preprocess) with their element counts.
std::vector<std::pair<Param, int64_t>> workspace_sizes(const Kernel& k, const KernelArgs& args);

}  // namespace strata::sc
