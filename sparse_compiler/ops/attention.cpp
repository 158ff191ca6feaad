#include "sparse_compiler/ops/attention.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>

#include "core/timer.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/passes/lowering_memo.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {

namespace {

// (edge loop, buffer) for every buffer an edge loop reads through an index it
// loads (X[A_indices[j]], P[eid[j]]): rows scattered over the whole buffer, which
// the hardware prefetcher cannot follow. Rows read at j itself stream.
std::vector<std::pair<std::string, std::string>> gathered_buffers(const Kernel& k) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& name : loop_names(k.body)) {
    const ForNode* f = find_loop(k.body, name);
    if (!f || !f->annotations.count("axis") || f->annotations.at("axis") != "J") continue;
    std::set<std::string> seen;
    for_each_expr(f->body, [&](const Expr& e) {
      const auto* l = e.as<LoadNode>();
      if (!l || seen.count(l->buffer)) return;
      bool indirect = false;
      for_each_expr(l->index, [&](const Expr& x) {
        if (const auto* inner = x.as<LoadNode>(); inner && uses_var(inner->index, name)) indirect = true;
      });
      if (!indirect) return;
      seen.insert(l->buffer);
      out.emplace_back(name, l->buffer);
    });
  }
  return out;
}

// One dot product per head and edge into an edge output (GAT's attention
// gradient dP[j, h] = dY[i, h, :] . X[j, h, :]): where a head's features fill as
// many vector lanes as there are heads (8 heads of 8), the head loop's products are
// kept side by side and summed by one transposing reduction, stored as one vector
// per edge, instead of one horizontal sum and one scalar store per head
// (Schedule::transpose_sums). Other shapes keep the per-head sums.
void sum_heads_together(Schedule& s, const CpuKnobs& knobs) {
  for (const auto& h : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, h);
    if (!f || f->for_kind != ForKind::Serial || !f->annotations.count("axis") || f->annotations.at("axis") != "H")
      continue;
    const std::vector<std::string> inner = loop_names(f->body);
    const ForNode* r = inner.size() == 1 ? find_loop(f->body, inner[0]) : nullptr;
    if (!r || !r->annotations.count("iter") || r->annotations.at("iter") != "R") continue;
    std::string out;
    for (const auto& p : s.kernel().params)
      if (p.is_buffer() && p.role == ParamRole::Output && touches_buffer(f->body, p.name)) out = p.name;
    if (out.empty()) continue;
    (void)s.attempt([&] { sum_dot_products_together(s, h, out, inner[0], knobs.vector_lanes); });
  }
}

}  // namespace

Kernel schedule_row_program_cpu(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  row_tasks(s, knobs);
  // Per-row outputs in registers (edge outputs are refused: their region is ragged).
  // Per-row scratch (the fused forward's per-edge factors) too: in registers it
  // never reaches memory, and the scratch parameter goes away.
  for (const auto& p : loops.params)
    if (p.is_buffer() && p.role != ParamRole::Input) (void)s.attempt([&] { s.cache_write(p.name, "i"); });
  sum_heads_together(s, knobs);
  // Innermost head/feature loops become vectors; small loops around them unroll.
  auto axis_loops = [&](bool innermost) {
    std::vector<std::string> out;
    for (const auto& n : s.loops()) {
      const ForNode* f = find_loop(s.kernel().body, n);
      if (!f || f->for_kind != ForKind::Serial || !f->annotations.count("axis")) continue;
      const std::string& ax = f->annotations.at("axis");
      if (ax != "F" && ax != "H") continue;
      const bool inner = loop_names(f->body).empty();
      if (inner == innermost) out.push_back(n);
    }
    return out;
  };
  for (const auto& l : axis_loops(true)) (void)s.attempt([&] { vectorize_feature_loop(s, l, knobs.vector_lanes); });
  for (const auto& l : axis_loops(false)) {
    const int64_t* e = as_const_int(find_loop(s.kernel().body, l)->extent);
    if (e && *e <= 16) (void)s.attempt([&] { s.unroll(l); });
  }
  if (knobs.prefetch > 0)
    for (const auto& [loop, buffer] : gathered_buffers(s.kernel()))
      s.prefetch(loop, buffer, knobs.prefetch, "nnz");
  return s.kernel();
}

namespace {
enum Which {
  kScore,
  kSoftmax,
  kAggregate,
  kFusedTwoPass,
  kFusedOnline,
  kFusedSaving,
  kRecompute,
  kSddmm,
  kSoftmaxBwd,
  kColSum,
  kAggregateT,
  kCount
};
}  // namespace

namespace {
// What a refused call names, by Which.
constexpr const char* kKernelNames[kCount] = {
    "score",     "softmax",        "aggregate",        "fused (two-pass)", "fused (online)",      "fused-saving",
    "recompute", "attention grad", "softmax backward", "source grad",      "aggregate-transposed"};

// The fused forwards run only where the tuner picked them (or a config forces
// them), so they compile on first use, in one batch; with tuning off a training
// layer compiles 8 kernels, not 11, and an inference layer 3.
bool compiled_on_first_use(int which) { return which == kFusedTwoPass || which == kFusedOnline || which == kFusedSaving; }

// The forwards: all an inference set holds. The fused forward that keeps scores and
// attention exists only for a backward to read them.
bool in_set(GatKernelSet set, int which) {
  if (set == GatKernelSet::Products) return which == kSddmm || which == kAggregate || which == kAggregateT;
  return set == GatKernelSet::Training || which == kScore || which == kSoftmax || which == kAggregate ||
         which == kFusedTwoPass || which == kFusedOnline;
}
}  // namespace

namespace {

// Programs and their lowering depend on the spec and the knobs alone, not on the
// graph: graphs that share them, such as every mini-batch's blocks, reuse what an
// earlier graph lowered instead of running the passes again (milliseconds a layer,
// per batch). The programs are kept here (a run has a few specs), the scheduled
// kernels in sc::lower_memoized.
std::mutex memo_mutex;

// The loop programs of every kernel, by Which: A's spec, and Aᵀ's for the kernels
// over the transpose. Both fused forms: the tuner measures each (gat_tuner.h).
std::string gat_programs_key(const GatSpec& spec, const GatSpec& st) {
  return fmt::format("{}|{}|{}", spec.suffix(), static_cast<int>(spec.fused_softmax), st.suffix());
}

const std::vector<Kernel>& gat_loop_programs(const GatSpec& spec, const GatSpec& st) {
  static std::map<std::string, std::vector<Kernel>> memo;
  const std::string key = gat_programs_key(spec, st);
  {
    std::lock_guard<std::mutex> lock(memo_mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  GatSpec two_pass = spec, online = spec;
  two_pass.fused_softmax = FusedSoftmax::TwoPass;
  online.fused_softmax = FusedSoftmax::Online;
  const std::vector<Kernel> programs = {
      gat_score_program(spec),     edge_softmax_program(spec),     gat_aggregate_program(spec, false),
      gat_fused_program(two_pass), gat_fused_program(online),      gat_fused_saving_program(spec),
      gat_recompute_program(spec), gat_sddmm_program(spec),        edge_softmax_backward_program(spec),
      edge_col_sum_program(st),    gat_aggregate_program(st, true)};
  STRATA_ASSERT(programs.size() == kCount, "gat: {} programs for {} kernels", programs.size(), int(kCount));
  std::vector<Kernel> loops;
  for (const Kernel& p : programs) loops.push_back(lower_to_loops(p));
  std::lock_guard<std::mutex> lock(memo_mutex);
  return memo.emplace(key, std::move(loops)).first->second;  // std::map: references stay valid
}

// The key of kernel `which` scheduled with `knobs`: it fixes the lowered kernel and so
// its code (scheduled_memoized, compile_cpu_memoized).
std::string scheduled_key(const GatSpec& spec, const GatSpec& st, int which, const CpuKnobs& knobs) {
  return fmt::format("gat|{}|{}|{}", gat_programs_key(spec, st), which, knobs.str());
}

// Kernel `which` of gat_loop_programs(spec, st) scheduled for the CPU with `knobs` and lowered.
Kernel scheduled_memoized(const GatSpec& spec, const GatSpec& st, int which, const CpuKnobs& knobs) {
  return lower_memoized(scheduled_key(spec, st, which, knobs), [&] {
    return lower_schedule(schedule_row_program_cpu(gat_loop_programs(spec, st)[static_cast<size_t>(which)], knobs));
  });
}

}  // namespace

const char* gat_kernel_set_name(GatKernelSet s) {
  switch (s) {
    case GatKernelSet::Inference:
      return "inference";
    case GatKernelSet::Training:
      return "training";
    case GatKernelSet::Products:
      return "products";
  }
  return "?";
}

struct GatKernels::Impl {
  std::vector<CompiledKernel> compiled;  // Generated, by Which; empty entries until compiled
  std::vector<Kernel> reference;         // Reference / Interpreter: unscheduled loops
  std::vector<Kernel> lowered;           // Generated, by Which, every kernel (code_key hashes them all)
  std::vector<std::string> keys;         // Generated, by Which: scheduled_key (compile_cpu_memoized)
  std::vector<std::pair<int, Kernel>> deferred;  // Generated: lowered, compiled on first use
  std::once_flag deferred_once;
};

GatKernels::GatKernels(const Graph& A, GatSpec spec, Backend backend, std::optional<CpuKnobs> knobs, GatKernelSet set)
    : A_(A), spec_(spec), backend_(backend), set_(set), impl_(std::make_unique<Impl>()) {
  STRATA_CHECK(!A.empty(), "gat: the graph is empty");
  STRATA_CHECK(spec.heads >= 1 && spec.feat >= 1, "gat: heads and features must be at least 1, got {} and {}",
               spec.heads, spec.feat);
  spec_.index_dtype = A.index_dtype();
  // Aᵀ with edge ids that are A's CSR positions.
  const Graph positional = Graph::from_csr(A.num_rows(), A.num_cols(), A.indptr(), A.indices(), Tensor(),
                                           Tensor::arange(A.nnz()));
  At_ = positional.transpose();
  At_eid_ = At_.edge_ids();
  GatSpec st = spec_;
  st.index_dtype = At_.index_dtype();
  const std::vector<Kernel>& loops = gat_loop_programs(spec_, st);
  Timer t;
  if (backend_ == Backend::Generated) {
    CpuKnobs k = knobs ? *knobs : CpuKnobs{};
    if (!knobs) k.vector_lanes = host_vector_lanes();
    std::vector<Kernel> lowered;
    std::vector<std::string> keys;
    for (size_t w = 0; w < loops.size(); ++w) {
      CpuKnobs kw = k;
      if (!knobs) {
        // Untuned: prefetch where what the program gathers outgrows the cache.
        int64_t gathered = 0;
        for (const auto& [loop, buffer] : gathered_buffers(loops[w]))
          gathered = std::max(gathered, buffer_bytes(buffer, w == kColSum || w == kAggregateT));
        kw = untuned_gather_knobs(k, gathered);
      }
      lowered.push_back(scheduled_memoized(spec_, st, static_cast<int>(w), kw));
      keys.push_back(scheduled_key(spec_, st, static_cast<int>(w), kw));
    }
    std::vector<Kernel> now;
    std::vector<std::string> now_keys;
    std::vector<int> now_which;
    for (int w = 0; w < kCount; ++w) {
      if (!in_set(set_, w)) continue;
      if (compiled_on_first_use(w)) {
        impl_->deferred.emplace_back(w, lowered[w]);
      } else {
        now.push_back(lowered[w]);
        now_keys.push_back(keys[w]);
        now_which.push_back(w);
      }
    }
    impl_->compiled.resize(kCount);
    std::vector<CompiledKernel> c = compile_cpu_memoized(now_keys, now);
    for (size_t t = 0; t < c.size(); ++t) impl_->compiled[now_which[t]] = std::move(c[t]);
    impl_->lowered = std::move(lowered);
    impl_->keys = std::move(keys);
  } else {
    impl_->reference = loops;
  }
  compile_ms_ = t.ms();
}

GatKernels::~GatKernels() = default;

bool GatKernels::fused_compiled() const {
  return backend_ == Backend::Generated && impl_->compiled[kFusedTwoPass].entry != nullptr;
}

int64_t GatKernels::buffer_bytes(const std::string& name, bool transposed) const {
  const Graph& g = transposed ? At_ : A_;
  const int64_t H = spec_.heads, F = spec_.feat, f32 = static_cast<int64_t>(sizeof(float));
  if (name == "E" || name == "P" || name == "dP" || name == "dPre") return g.nnz() * H * f32;
  if (name == "XR" || name == "dXR") return g.num_cols() * H * f32;
  if (name == "XL" || name == "M" || name == "S" || name == "dXL" || name == "D") return g.num_rows() * H * f32;
  if (name == "X") return g.num_cols() * H * F * f32;
  if (name == "Y" || name == "dY") return g.num_rows() * H * F * f32;
  STRATA_ASSERT(false, "gat: no shape known for buffer {}", name);
  return 0;
}

std::string GatKernels::code_key() const {
  if (backend_ != Backend::Generated || impl_->lowered.empty()) return "reference";
  // Every kernel, compiled or deferred or outside this set, hashed here on demand
  // (graph load does not emit the source of what it does not compile): a training
  // set and an inference set over the same code share their tuning records.
  return cpu_source_digest(impl_->lowered);
}

std::string GatKernels::describe() const {
  return fmt::format("gat {} ({}{})", spec_.suffix(), backend_name(backend_),
                     set_ == GatKernelSet::Inference  ? ", forwards only"
                     : set_ == GatKernelSet::Products ? ", per-head products"
                                                      : "");
}

void GatKernels::run(int which, KernelArgs& args, bool transposed) const {
  const Graph& g = transposed ? At_ : A_;
  args.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices());
  args.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
  if (transposed) args.buffer("eid", At_eid_);
  STRATA_CHECK(in_set(set_, which), "gat: the {} kernel is not in this {} kernel set{}", kKernelNames[which],
               gat_kernel_set_name(set_),
               set_ == GatKernelSet::Inference
                   ? " (forwards only); build the layer's kernels for training to run its backward"
                   : " (the per-head SDDMM and aggregations only)");
  if (backend_ == Backend::Generated) {
    if (compiled_on_first_use(which))
      std::call_once(impl_->deferred_once, [&] {
        std::vector<Kernel> kernels;
        std::vector<std::string> keys;
        for (const auto& [w, kernel] : impl_->deferred) {
          kernels.push_back(kernel);
          keys.push_back(impl_->keys[static_cast<size_t>(w)]);
        }
        std::vector<CompiledKernel> c = compile_cpu_memoized(keys, kernels);
        for (size_t t = 0; t < c.size(); ++t) impl_->compiled[impl_->deferred[t].first] = std::move(c[t]);
      });
    impl_->compiled[which].run(args);
    return;
  }
  // Reference and Interpreter both interpret the unscheduled program here: GAT's
  // reference path is the compiler's own semantics, checked by tests against
  // dense loops (there is no separate hand-written GAT reference).
  Interpreter interp;
  args.bind(interp, impl_->reference[which]);
  interp.run(impl_->reference[which]);
}

void GatKernels::score(const Tensor& XL, const Tensor& XR, Tensor& E) const {
  const int64_t H = spec_.heads;
  check_host_f32(XL, "gat score XL", {A_.num_rows(), H});
  check_host_f32(XR, "gat score XR", {A_.num_cols(), H});
  check_host_f32(E, "gat score E", {A_.nnz(), H});
  KernelArgs a;
  a.buffer("XL", XL).buffer("XR", XR).buffer("E", E);
  run(kScore, a, false);
}

void GatKernels::softmax(const Tensor& E, Tensor& P, Tensor& M, Tensor& S) const {
  const int64_t H = spec_.heads;
  check_host_f32(E, "edge softmax E", {A_.nnz(), H});
  check_host_f32(P, "edge softmax P", {A_.nnz(), H});
  check_host_f32(M, "edge softmax M", {A_.num_rows(), H});
  check_host_f32(S, "edge softmax S", {A_.num_rows(), H});
  KernelArgs a;
  a.buffer("E", E).buffer("P", P).buffer("M", M).buffer("S", S);
  run(kSoftmax, a, false);
}

void GatKernels::aggregate(const Tensor& P, const Tensor& X, Tensor& Y) const {
  const int64_t H = spec_.heads, F = spec_.feat;
  check_host_f32(P, "gat aggregate P", {A_.nnz(), H});
  check_host_f32(X, "gat aggregate X", {A_.num_cols(), H, F});
  check_host_f32(Y, "gat aggregate Y", {A_.num_rows(), H, F});
  KernelArgs a;
  a.buffer("P", P).buffer("X", X).buffer("Y", Y);
  run(kAggregate, a, false);
}

KernelArgs GatKernels::fused_args(const char* what, const Tensor& XL, const Tensor& XR, const Tensor& X, Tensor& Y,
                                  Tensor& M, Tensor& S) const {
  const int64_t H = spec_.heads, F = spec_.feat;
  check_host_f32(XL, fmt::format("{} XL", what), {A_.num_rows(), H});
  check_host_f32(XR, fmt::format("{} XR", what), {A_.num_cols(), H});
  check_host_f32(X, fmt::format("{} X", what), {A_.num_cols(), H, F});
  check_host_f32(Y, fmt::format("{} Y", what), {A_.num_rows(), H, F});
  check_host_f32(M, fmt::format("{} M", what), {A_.num_rows(), H});
  check_host_f32(S, fmt::format("{} S", what), {A_.num_rows(), H});
  KernelArgs a;
  a.buffer("XL", XL).buffer("XR", XR).buffer("X", X).buffer("Y", Y).buffer("M", M).buffer("S", S);
  return a;
}

void GatKernels::fused(const Tensor& XL, const Tensor& XR, const Tensor& X, Tensor& Y, Tensor& M, Tensor& S,
                       std::optional<FusedSoftmax> form) const {
  KernelArgs a = fused_args("gat fused", XL, XR, X, Y, M, S);
  run(form.value_or(spec_.fused_softmax) == FusedSoftmax::Online ? kFusedOnline : kFusedTwoPass, a, false);
}

void GatKernels::fused_saving(const Tensor& XL, const Tensor& XR, const Tensor& X, Tensor& Y, Tensor& M, Tensor& S,
                              Tensor& E, Tensor& P) const {
  KernelArgs a = fused_args("gat fused-saving", XL, XR, X, Y, M, S);
  check_host_f32(E, "gat fused-saving E", {A_.nnz(), spec_.heads});
  check_host_f32(P, "gat fused-saving P", {A_.nnz(), spec_.heads});
  a.buffer("E", E).buffer("P", P);
  run(kFusedSaving, a, false);
}

void GatKernels::recompute(const Tensor& XL, const Tensor& XR, const Tensor& M, const Tensor& S, Tensor& E,
                           Tensor& P) const {
  const int64_t H = spec_.heads;
  check_host_f32(XL, "gat recompute XL", {A_.num_rows(), H});
  check_host_f32(XR, "gat recompute XR", {A_.num_cols(), H});
  check_host_f32(M, "gat recompute M", {A_.num_rows(), H});
  check_host_f32(S, "gat recompute S", {A_.num_rows(), H});
  check_host_f32(E, "gat recompute E", {A_.nnz(), H});
  check_host_f32(P, "gat recompute P", {A_.nnz(), H});
  KernelArgs a;
  a.buffer("XL", XL).buffer("XR", XR).buffer("M", M).buffer("S", S).buffer("E", E).buffer("P", P);
  run(kRecompute, a, false);
}

void GatKernels::attention_grad(const Tensor& dY, const Tensor& X, Tensor& dP) const {
  const int64_t H = spec_.heads, F = spec_.feat;
  check_host_f32(dY, "gat attention grad dY", {A_.num_rows(), H, F});
  check_host_f32(X, "gat attention grad X", {A_.num_cols(), H, F});
  check_host_f32(dP, "gat attention grad dP", {A_.nnz(), H});
  KernelArgs a;
  a.buffer("dY", dY).buffer("X", X).buffer("dP", dP);
  run(kSddmm, a, false);
}

void GatKernels::softmax_backward(const Tensor& P, const Tensor& dP, const Tensor& E, Tensor& dPre, Tensor& dXL) const {
  const int64_t H = spec_.heads;
  check_host_f32(P, "edge softmax backward P", {A_.nnz(), H});
  check_host_f32(dP, "edge softmax backward dP", {A_.nnz(), H});
  check_host_f32(E, "edge softmax backward E", {A_.nnz(), H});
  check_host_f32(dPre, "edge softmax backward dPre", {A_.nnz(), H});
  check_host_f32(dXL, "edge softmax backward dXL", {A_.num_rows(), H});
  Tensor D = Tensor::empty({A_.num_rows(), H}, DType::F32);
  KernelArgs a;
  a.buffer("P", P).buffer("dP", dP).buffer("E", E).buffer("dPre", dPre).buffer("dXL", dXL).buffer("D", D);
  run(kSoftmaxBwd, a, false);
}

void GatKernels::source_grad(const Tensor& dPre, Tensor& dXR) const {
  const int64_t H = spec_.heads;
  check_host_f32(dPre, "gat source grad dPre", {A_.nnz(), H});
  check_host_f32(dXR, "gat source grad dXR", {A_.num_cols(), H});
  KernelArgs a;
  a.buffer("dPre", dPre).buffer("dXR", dXR);
  run(kColSum, a, true);
}

void GatKernels::aggregate_transposed(const Tensor& P, const Tensor& dY, Tensor& dX) const {
  const int64_t H = spec_.heads, F = spec_.feat;
  check_host_f32(P, "gat aggregate-transposed P", {A_.nnz(), H});
  check_host_f32(dY, "gat aggregate-transposed dY", {A_.num_rows(), H, F});
  check_host_f32(dX, "gat aggregate-transposed dX", {A_.num_cols(), H, F});
  KernelArgs a;
  a.buffer("P", P).buffer("X", dY).buffer("Y", dX);
  run(kAggregateT, a, true);
}

}  // namespace strata::sc
