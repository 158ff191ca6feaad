#include "sparse_compiler/codegen/compiled_kernel.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/compile_in_units.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ir/printer.h"

namespace strata::sc {

KernelArgs& KernelArgs::buffer(const std::string& name, const Tensor& t) {
  STRATA_ASSERT(t.defined() && t.device().is_cpu(), "kernel argument {}: expected a host tensor, got {}", name,
                t.describe());
  return buffer(name, t.raw_data(), t.dtype(), t.numel());
}

KernelArgs& KernelArgs::buffer(const std::string& name, void* data, DType dtype, int64_t size) {
  buffers_[name] = {data, dtype, size};
  return *this;
}

void KernelArgs::bind(Interpreter& interp, const Kernel& k) const {
  for (const auto& p : k.params) {
    if (p.kind == ParamKind::Scalar) {
      interp.bind_scalar(p.name, scalar_value(p.name));
    } else if (p.role != ParamRole::Workspace) {
      auto it = buffers_.find(p.name);
      STRATA_ASSERT(it != buffers_.end() && it->second.size >= 0, "kernel {}: buffer {} is not bound with a size",
                    k.name, p.name);
      interp.bind_buffer(p.name, it->second.data, it->second.dtype, it->second.size);
    }
  }
}

KernelArgs& KernelArgs::scalar(const std::string& name, int64_t v) {
  scalars_[name] = v;
  return *this;
}

int64_t KernelArgs::scalar_value(const std::string& name) const {
  auto it = scalars_.find(name);
  STRATA_ASSERT(it != scalars_.end(), "scalar {} is not bound", name);
  return it->second;
}

void KernelArgs::pack(const Kernel& k, std::vector<void*>& buffers, std::vector<int64_t>& scalars) const {
  buffers.clear();
  scalars.clear();
  for (const auto& p : k.params) {
    if (p.kind == ParamKind::Scalar) {
      scalars.push_back(scalar_value(p.name));
      continue;
    }
    auto it = buffers_.find(p.name);
    STRATA_ASSERT(it != buffers_.end(), "kernel {}: buffer {} is not bound", k.name, p.name);
    STRATA_ASSERT(it->second.dtype == p.dtype, "kernel {}: buffer {} is bound as {}, expected {}", k.name, p.name,
                  dtype_name(it->second.dtype), dtype_name(p.dtype));
    buffers.push_back(it->second.data);
  }
}

void CompiledKernel::run(const KernelArgs& args) const {
  std::vector<void*> b;
  std::vector<int64_t> s;
  args.pack(kernel, b, s);
  entry(b.data(), s.data());
}

PackedArgs::PackedArgs(const Kernel& k, KernelEntry entry, const KernelArgs& fixed, std::vector<std::string> per_call)
    : kernel_name_(k.name), entry_(entry) {
  KernelArgs all = fixed;
  for (const auto& name : per_call) {
    Slot s;
    s.name = name;
    int index = 0;
    for (const auto& p : k.params) {
      if (p.kind == ParamKind::Scalar) continue;
      if (p.name == name) {
        s.index = index;
        s.dtype = p.dtype;
        all.buffer(name, nullptr, p.dtype);  // packed as null; run() writes each call's pointer here
      }
      ++index;
    }
    slots_.push_back(std::move(s));
  }
  all.pack(k, buffers_, scalars_);
}

void PackedArgs::run(std::initializer_list<const Tensor*> per_call) const {
  STRATA_ASSERT(entry_ != nullptr, "kernel {}: packed arguments run without an entry point", kernel_name_);
  STRATA_ASSERT(per_call.size() == slots_.size(), "kernel {}: {} per-call buffers passed, {} expected", kernel_name_,
                per_call.size(), slots_.size());
  // A local copy: a bound op may be called from several threads at once.
  constexpr size_t kOnStack = 32;
  void* stack[kOnStack];
  std::vector<void*> heap;
  void** b = stack;
  if (buffers_.size() > kOnStack) {
    heap = buffers_;
    b = heap.data();
  } else {
    std::copy(buffers_.begin(), buffers_.end(), stack);
  }
  size_t i = 0;
  for (const Tensor* t : per_call) {
    const Slot& s = slots_[i++];
    if (s.index < 0) continue;
    STRATA_ASSERT(t && t->defined() && t->device().is_cpu() && t->dtype() == s.dtype,
                  "kernel {}: buffer {} expects a host {} tensor, got {}", kernel_name_, s.name, dtype_name(s.dtype),
                  t ? t->describe() : std::string("nothing"));
    b[s.index] = t->raw_data();
  }
  entry_(b, scalars_.data());
}

PackedArgs CompiledKernel::pack(const KernelArgs& fixed, std::vector<std::string> per_call) const {
  return PackedArgs(kernel, entry, fixed, std::move(per_call));
}

void CompiledKernel::run_preprocess(const KernelArgs& args) const {
  if (!preprocess) return;
  std::vector<void*> b;
  std::vector<int64_t> s;
  args.pack(kernel, b, s);
  preprocess(b.data(), s.data());
}

std::vector<std::pair<Param, int64_t>> CompiledKernel::workspaces(const KernelArgs& args) const {
  return workspace_sizes(kernel, args);
}

int64_t evaluate_scalar_expr(const Kernel& k, const Expr& e, const KernelArgs& args) {
  // The interpreter evaluates the expression over the bound scalars.
  int64_t value = 0;
  Interpreter interp;
  for (const auto& q : k.params)
    if (q.kind == ParamKind::Scalar) interp.bind_scalar(q.name, args.scalar_value(q.name));
  interp.bind_buffer("strata_value", &value, DType::I64, 1);
  interp.run(store("strata_value", make_int(0), cast(Type::i64(), e)));
  return value;
}

std::vector<std::pair<Param, int64_t>> workspace_sizes(const Kernel& k, const KernelArgs& args) {
  std::vector<std::pair<Param, int64_t>> out;
  for (const auto& p : k.params)
    if (p.role == ParamRole::Workspace) out.emplace_back(p, evaluate_scalar_expr(k, p.size, args));
  return out;
}

namespace {

// A kernel of a batch with its member key (KernelCache: the key of its own source as a
// unit of one), by which a later batch finds it in whichever unit compiled it.
struct Member {
  Kernel kernel;
  std::string key;
};

CompiledKernel resolve(const Kernel& k, const CacheResult& r) {
  CompiledKernel c;
  c.kernel = k;
  c.library = r.library;
  c.entry = r.library->function<int(void* const*, const int64_t*)>(cpu_entry_symbol(k));
  if (k.preprocess.defined())
    c.preprocess = r.library->function<int(void* const*, const int64_t*)>(cpu_preprocess_symbol(k));
  c.outcome = r.outcome;
  c.compile_ms = r.compile_ms;
  c.source_key = r.key;
  return c;
}

// One translation unit: emitted, compiled through the cache, its kernels indexed.
std::vector<CompiledKernel> compile_unit(const std::vector<Member>& part) {
  Timer t;
  std::vector<Kernel> kernels;
  std::vector<std::string> keys;
  for (const Member& m : part) {
    kernels.push_back(m.kernel);
    keys.push_back(m.key);
  }
  KernelCache& cache = KernelCache::global();
  const CacheResult r = cache.get_or_compile(emit_cpu_source(kernels));
  cache.record_members(keys, r.key);
  std::vector<CompiledKernel> out;
  for (const Kernel& k : kernels) {
    out.push_back(resolve(k, r));
    out.back().total_ms = t.ms();
  }
  return out;
}

}  // namespace

std::vector<CompiledKernel> compile_cpu(const std::vector<Kernel>& lowered) { return compile_cpu(lowered, 1); }

std::vector<CompiledKernel> compile_cpu(const std::vector<Kernel>& lowered, int units) {
  Timer t;
  KernelCache& cache = KernelCache::global();
  // Kernels an earlier batch compiled load from that batch's unit; the rest compile
  // together, in up to `units` units.
  std::vector<CompiledKernel> out(lowered.size());
  std::vector<Member> missing;
  std::vector<size_t> where;
  // A kernel the batch holds twice (two plans that lower alike, such as a CSR plan and its
  // shared-pairs twin) compiles once: one unit cannot define an entry point twice.
  std::map<std::string, size_t> first_of;
  std::vector<std::pair<size_t, size_t>> repeats;  // (index, index of the same kernel earlier)
  for (size_t i = 0; i < lowered.size(); ++i) {
    Member m{lowered[i], cache.key_for(emit_cpu_source({lowered[i]}))};
    if (const auto [it, fresh] = first_of.emplace(m.key, i); !fresh) {
      repeats.emplace_back(i, it->second);
      continue;
    }
    const CacheResult hit = cache.find_member(m.key);
    if (hit.library) {
      // An index naming a unit without this kernel (damaged, or edited by hand) is a miss.
      try {
        out[i] = resolve(lowered[i], hit);
        out[i].total_ms = t.ms();
        continue;
      } catch (const UserError& e) {
        log_warn("kernel cache: the member index sends {} to a unit without it ({}); compiling it again",
                 lowered[i].name, e.what());
      }
    }
    missing.push_back(std::move(m));
    where.push_back(i);
  }
  if (!missing.empty()) {
    std::vector<CompiledKernel> compiled = compile_in_units<CompiledKernel>(missing, units, compile_unit);
    for (size_t q = 0; q < where.size(); ++q) out[where[q]] = std::move(compiled[q]);
  }
  for (const auto& [i, same] : repeats) out[i] = out[same];
  return out;
}

std::vector<CompiledKernel> compile_cpu_memoized(const std::vector<std::string>& keys,
                                                 const std::vector<Kernel>& lowered, int units) {
  STRATA_ASSERT(keys.size() == lowered.size(), "compile_cpu_memoized: {} keys for {} kernels", keys.size(),
                lowered.size());
  static std::mutex mutex;
  static std::unordered_map<std::string, CompiledKernel> memo;
  Timer t;
  std::vector<CompiledKernel> out(lowered.size());
  std::vector<Kernel> missing;
  std::vector<size_t> where;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = memo.find(keys[i]);
      if (it == memo.end()) {
        missing.push_back(lowered[i]);
        where.push_back(i);
        continue;
      }
      STRATA_ASSERT(it->second.kernel.name == lowered[i].name, "compile_cpu_memoized: key '{}' names {} and {}",
                    keys[i], it->second.kernel.name, lowered[i].name);
      out[i] = it->second;
      out[i].outcome = CacheOutcome::MemoryHit;
      out[i].compile_ms = 0;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].total_ms = t.ms();
  if (missing.empty()) return out;
  std::vector<CompiledKernel> compiled = compile_cpu(missing, units);
  std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() + compiled.size() > kCompileMemoSize) memo.clear();
  for (size_t q = 0; q < where.size(); ++q) {
    memo.insert_or_assign(keys[where[q]], compiled[q]);
    out[where[q]] = std::move(compiled[q]);
  }
  return out;
}

}  // namespace strata::sc
