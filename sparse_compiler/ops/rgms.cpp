#include "sparse_compiler/ops/rgms.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>

#include "core/parallel.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/ell3d.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {

const char* rgms_order_name(RgmsOrder o) {
  switch (o) {
    case RgmsOrder::Fused: return "fused";
    case RgmsOrder::AggregateFirst: return "aggregate-first";
    case RgmsOrder::TransformFirst: return "transform-first";
    case RgmsOrder::AggregateFirstEll3d: return "aggregate-first-ell3d";
    case RgmsOrder::Mixed: return "mixed";
  }
  return "?";
}

RgmsOrder parse_rgms_order(const std::string& s, const std::string& what) {
  if (s == "fused") return RgmsOrder::Fused;
  if (s == "aggregate-first") return RgmsOrder::AggregateFirst;
  if (s == "transform-first") return RgmsOrder::TransformFirst;
  if (s == "aggregate-first-ell3d") return RgmsOrder::AggregateFirstEll3d;
  if (s == "mixed") return RgmsOrder::Mixed;
  STRATA_FAIL(
      "{}: unknown RGMS order '{}' (expected fused, aggregate-first, transform-first, aggregate-first-ell3d or mixed)",
      what, s);
}

std::vector<bool> rgms_mixed_split(const RelationalGraph& g, const RgmsSpec& spec) {
  std::vector<bool> transform_first(static_cast<size_t>(g.relations), false);
  const int64_t* rp = g.rel_ptr.data<int64_t>();
  const int64_t* qp = g.row_ptr.data<int64_t>();
  const int64_t* sp = g.src_ptr.data<int64_t>();
  const double fin = static_cast<double>(spec.fin), fout = static_cast<double>(spec.fout);
  for (int64_t r = 0; r < g.relations; ++r) {
    const double pairs = static_cast<double>(rp[r + 1] - rp[r]), sources = static_cast<double>(sp[r + 1] - sp[r]);
    const double nnz = static_cast<double>(qp[rp[r + 1]] - qp[rp[r]]);
    const double fused = pairs * fin * fout + nnz * fin;
    const double transform = sources * fin * fout + sources * fout + nnz * fout;
    transform_first[static_cast<size_t>(r)] = transform < fused;
  }
  return transform_first;
}

RgmsOrder rgms_default_order(const RelationalGraph& g, const RgmsSpec& spec) {
  const std::vector<bool> split = rgms_mixed_split(g, spec);
  const auto transform_first = std::count(split.begin(), split.end(), true);
  if (transform_first == 0) return RgmsOrder::Fused;
  return transform_first == g.relations ? RgmsOrder::TransformFirst : RgmsOrder::Mixed;
}

// ---- schedules ------------------------------------------------------------------------

namespace {

void vectorize_axis(Schedule& s, const std::string& axis, int lanes) {
  for (const auto& n : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, n);
    if (f && f->for_kind == ForKind::Serial && f->annotations.count("axis") && f->annotations.at("axis") == axis &&
        loop_names(f->body).empty())
      (void)s.attempt([&] { vectorize_feature_loop(s, n, lanes); });
  }
}

Kernel with_task_params(Kernel k) {
  k.params.push_back(Param::buffer("task_rows", DType::I64));
  k.params.push_back(Param::buffer("rel_tasks", DType::I64));
  k.params.push_back(Param::scalar("num_tasks"));
  return k;
}

// Software prefetch of the X rows `distance` non-zeros ahead in every loop over a
// row's sources (axis `axis`; the blocked copies each have one).
void prefetch_gathers(Schedule& s, const std::string& axis, int64_t distance) {
  if (distance <= 0) return;
  for (const auto& n : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, n);
    if (f && f->annotations.count("axis") && f->annotations.at("axis") == axis)
      (void)s.attempt([&] { s.prefetch(n, "X", distance, "nnz"); });
  }
}

// How many rows (sources or (relation, row) pairs) of one relation a transform
// blocks together: each W_r row load then serves `block` rows, and block x
// fout/lanes accumulators are independent FMA chains (one row alone is one chain
// per output vector, bound by the FMA latency). Kept within about half the vector
// registers (32 on AVX-512, 16 on AVX2), so the accumulators never spill.
int transform_block(int64_t fout, int lanes) {
  const int64_t vectors = (fout + lanes - 1) / std::max(lanes, 1);
  const int64_t budget = lanes >= 16 ? 16 : 8;
  return static_cast<int>(std::clamp<int64_t>(budget / std::max<int64_t>(vectors, 1), 1, 8));
}

// Register blocking of the per-pair transform Y[rows[i]] += H[i] W_r: `block`
// pairs of one relation are split off (the remainder peeled), their accumulators
// staged, and the copies jammed into one reduction over fi, so each W_r row load
// serves the whole block and block x fout/lanes FMA chains run side by side
// (one pair alone is one chain per output vector, bound by the FMA latency).
// Legal because a relation's destination rows are distinct (rel_rows is strictly
// increasing within a relation: the inspector builds it so). `stage` stages the
// block's locals (cache_write at the given loop). When blocking is refused (or
// block is 1) the loop is staged unblocked. Returns the rows per block used.
int block_pairs(Schedule& s, const std::string& pairs, const std::string& reduction, int block,
                const std::function<void(const std::string&)>& stage) {
  const std::string refused = block <= 1 ? "block of 1" : s.attempt([&] {
    // pairs_o (blocks) > pairs_i, then the tail pairs_t
    const Schedule::SplitLoops parts = s.split(pairs, block, TailStrategy::Peel);
    // The tail first: once the block stages too, no scratch is read from memory
    // any more and its write-backs are dropped, leaving the block's body as the
    // locals around one sequence, which is what the jam takes.
    stage(parts.tail);
    stage(parts.inner);
    s.unroll_and_jam(parts.inner, reduction, {"rel_rows"});
  });
  if (refused.empty()) return block;
  stage(pairs);
  return 1;
}

Kernel schedule_fused(const Kernel& loops, const CpuKnobs& knobs, int block, int& blocked) {
  Schedule s(loops);
  s.fuse_nests("r", "r2", 2);
  s.partition_tasks({"iy", "r/i"}, {"task_rows", "rel_tasks"}, "num_tasks");
  auto stage = [&](const std::string& at) {
    s.cache_write("Y", at);
    s.cache_write("H", at);
  };
  blocked = block_pairs(s, "i", "fi2", block, stage);
  prefetch_gathers(s, "J", knobs.prefetch);
  for (const char* ax : {"FI", "FO"}) vectorize_axis(s, ax, knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_transform(const Kernel& loops, const CpuKnobs& knobs, int block, int& blocked) {
  Schedule s(loops);
  s.partition_tasks({"iy", "r2/i2"}, {"task_rows", "rel_tasks"}, "num_tasks");
  auto stage = [&](const std::string& at) { s.cache_write("Y", at); };
  blocked = block_pairs(s, "i2", "fi2", block, stage);
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

// A sum over each (relation, row) pair's non-zeros into `out` (features on `axis`):
// pairs in owner tasks, each pair's row staged in registers.
Kernel schedule_pair_sums(const Kernel& loops, const CpuKnobs& knobs, const std::string& out, const std::string& axis) {
  Schedule s(loops);
  s.partition_tasks({"r/i"}, {"rel_tasks"}, "num_tasks");
  s.cache_write(out, "i");
  prefetch_gathers(s, "J", knobs.prefetch);
  vectorize_axis(s, axis, knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_aggregate(const Kernel& loops, const CpuKnobs& knobs) {
  return schedule_pair_sums(loops, knobs, "H", "FI");
}

Kernel schedule_gather(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  s.partition_tasks({"iy", "r/i"}, {"task_rows", "rel_tasks"}, "num_tasks");
  s.cache_write("Y", "i");
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

// The gather without Y's init: a row's staged accumulator starts from Y's value.
Kernel schedule_gather_add(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  s.partition_tasks({"r/i"}, {"rel_tasks"}, "num_tasks");
  s.cache_write("Y", "i");
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

// Relations in chunks balanced by `indptr` (sources or rows per relation); each
// relation's output block has one owner.
Kernel schedule_per_relation(const Kernel& loops, const std::string& indptr, const std::string& out,
                             const std::string& cache_at, const CpuKnobs& knobs) {
  Schedule s(loops);
  const std::string chunk = s.balance("r", indptr, std::max<int64_t>(1, knobs.grain / 64));
  s.parallel(chunk);
  (void)s.attempt([&] { s.cache_write(out, cache_at); });
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

// T[r, s, :] = X[src_r(s), :] W_r: relations in chunks balanced by their source
// counts; within a relation, sources in register blocks (split, peel the
// remainder, distribute the block over its init and accumulation, and move the
// block loop inside the reduction over fi, unrolled), the tail one at a time.
Kernel schedule_source_transform(const Kernel& loops, const CpuKnobs& knobs, int block, int& blocked) {
  Schedule s(loops);
  const std::string chunk = s.balance("r", "src_ptr", std::max<int64_t>(1, knobs.grain / 64));
  s.parallel(chunk);
  // Refused (and the kernel left unblocked) when there is no reduction loop to
  // move the block into (fin = 1 simplifies it away).
  const std::string unblocked = block <= 1 ? "block of 1" : s.attempt([&] {
    s.split("s", block, TailStrategy::Peel);  // s_o (blocks) > s_i, then the tail s_t
    const std::vector<std::string> parts = s.fission("s_i");  // the block's init; its accumulation
    s.cache_write("T", "s_o");
    s.reorder(parts[1], "fi");
    for (const auto& p : parts) s.unroll(p);
    s.cache_write("T", "s_t");
  });
  blocked = unblocked.empty() ? block : 1;
  if (!unblocked.empty()) s.cache_write("T", "s");
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

// dC[r, b]: relations in balanced chunks (one owner each); per (relation, basis)
// one accumulator whose per-lane partial sums run over all the relation's pairs
// and features, reduced across lanes once.
Kernel schedule_basis_coeff_grad(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  const std::string chunk = s.balance("r", "rel_ptr", std::max<int64_t>(1, knobs.grain / 64));
  s.parallel(chunk);
  const std::string acc = s.cache_write("dC", "fi");
  vectorize_reduction_loop(s, "fo", acc, knobs.vector_lanes);
  return s.kernel();
}

// dV's rows have one owner task each (task_rows), which zeroes them and adds every
// relation's pair of that row, as the transform does Y's.
Kernel schedule_basis_grad(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  s.partition_tasks({"iy", "r2/i2"}, {"task_rows", "rel_tasks"}, "num_tasks");
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_embed_grad(const Kernel& loops, const CpuKnobs& knobs) {
  // Each (relation, source) row of dW has one writer: relations in balanced chunks.
  Schedule s(loops);
  const std::string zc = s.balance("rz", "rel_ptr", 1);
  s.parallel(zc);
  const std::string chunk = s.balance("r", "rel_ptr", std::max<int64_t>(1, knobs.grain / 64));
  s.parallel(chunk);
  (void)s.attempt([&] { s.cache_write("dW", "i"); });
  vectorize_axis(s, "FO", knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_ell3d(const Kernel& loops, int B, const CpuKnobs& knobs) {
  Schedule s(loops);
  std::vector<std::string> tops = {"ip"}, ranges = {"task_pairs"};
  for (int b = 0; b <= B; ++b) {
    tops.push_back(fmt::format("e{}_r/e{}_i", b, b));
    ranges.push_back(fmt::format("e{}_tasks", b));
  }
  s.partition_tasks(tops, ranges, "num_tasks");
  for (int b = 0; b <= B; ++b) {
    s.cache_write("H", fmt::format("e{}_i", b));
    const std::string slots = fmt::format("e{}_j", b);
    if (const ForNode* f = find_loop(s.kernel().body, slots); f && as_const_int(f->extent) && *as_const_int(f->extent) <= 4)
      s.unroll(slots);
  }
  vectorize_axis(s, "FI", knobs.vector_lanes);
  return s.kernel();
}

enum Which {
  kFused,
  kAggregate,
  kTransform,
  kSourceTransform,
  kGather,
  kWeightGrad,
  kEll3d,
  kEmbed,
  kEmbedGrad,
  kGatherAdd,  // the full set (RgmsKernelSet::All) is every kernel up to here
  kPairSum,    // from here on, the basis embedding's
  kBasisGrad,
  kBasisCoeffGrad,
  kBasisRows,
  kCount
};

}  // namespace

const char* rgms_kernel_set_name(RgmsKernelSet set) {
  switch (set) {
    case RgmsKernelSet::All:
      return "full set";
    case RgmsKernelSet::OneHot:
      return "one-hot set (embed, embed_grad)";
    case RgmsKernelSet::BasisGather:
      return "basis gather set (gather)";
    case RgmsKernelSet::BasisPairs:
      return "basis pairs set (pair_sum, basis_grad, basis_coeff_grad, basis_rows)";
    case RgmsKernelSet::Forward:
      return "forward set (the order's forward kernels only)";
    case RgmsKernelSet::Training:
      return "training set (the order's forward kernels, aggregate, weight_grad)";
    case RgmsKernelSet::Embed:
      return "embedding set (embed)";
    case RgmsKernelSet::BasisRows:
      return "basis rows set (basis_rows)";
  }
  return "?";
}

namespace {

// The kernels RgmsKernels::forward runs in each order.
bool forward_uses(RgmsOrder order, int which) {
  switch (order) {
    case RgmsOrder::Fused:
      return which == kFused;
    case RgmsOrder::AggregateFirst:
      return which == kAggregate || which == kTransform;
    case RgmsOrder::TransformFirst:
      return which == kSourceTransform || which == kGather;
    case RgmsOrder::AggregateFirstEll3d:
      return which == kEll3d || which == kTransform;
    case RgmsOrder::Mixed:
      return which == kFused || which == kSourceTransform || which == kGatherAdd;
  }
  return false;
}

// Which kernels each set compiles (RgmsKernelSet).
bool in_set(RgmsKernelSet set, RgmsOrder order, int which) {
  switch (set) {
    case RgmsKernelSet::Forward:
      return forward_uses(order, which);
    case RgmsKernelSet::Training:
      return forward_uses(order, which) || which == kAggregate || which == kWeightGrad;
    case RgmsKernelSet::Embed:
      return which == kEmbed;
    case RgmsKernelSet::BasisRows:
      return which == kBasisRows;
    case RgmsKernelSet::All:
      return which <= kGatherAdd;
    case RgmsKernelSet::OneHot:
      return which == kEmbed || which == kEmbedGrad;
    case RgmsKernelSet::BasisGather:
      return which == kGather;
    case RgmsKernelSet::BasisPairs:
      return which == kPairSum || which == kBasisGrad || which == kBasisCoeffGrad || which == kBasisRows;
  }
  return false;
}

}  // namespace

namespace {
// An intermediate (H: pairs x fin, T: sources x fout) kept across calls, so its
// pages are touched once per kernels object and not on every call: on the
// synthetic 1M-edge graph at F = 64 that is 232 MB whose page faults cost more
// than the kernels once huge pages run out. A call that finds it in use (another
// thread) gets a fresh tensor.
class ReusedTensor {
 public:
  class Lease {
   public:
    Lease(ReusedTensor* owner, Tensor t) : owner_(owner), t_(std::move(t)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (owner_) owner_->release();
    }
    Tensor& get() { return t_; }

   private:
    ReusedTensor* owner_;
    Tensor t_;
  };
  Lease acquire(const Shape& shape) {
    std::lock_guard<std::mutex> lock(m_);
    if (busy_) return Lease(nullptr, Tensor::empty(shape, DType::F32));
    if (!t_.defined() || t_.shape() != shape) t_ = Tensor::empty(shape, DType::F32);
    busy_ = true;
    return Lease(this, t_);
  }

 private:
  void release() {
    std::lock_guard<std::mutex> lock(m_);
    busy_ = false;
  }
  std::mutex m_;
  Tensor t_;
  bool busy_ = false;
};
}  // namespace

struct RgmsKernels::Impl {
  std::vector<CompiledKernel> compiled;  // the set's kernels, in the order of `Which`
  std::vector<Kernel> lowered;           // Generated: what `compiled` was compiled from (code_key hashes it)
  std::vector<Kernel> reference;
  std::vector<int> slot = std::vector<int>(kCount, -1);  // a kernel's index in compiled/reference, -1: not built
  RgmsKernelSet set = RgmsKernelSet::All;
  InspectedEll3d ell3d;
  ReusedTensor intermediate;  // H (aggregate-first) or T (transform-first, the mixed order's second part)
  // The mixed order's parts (either absent when no relation falls in it) and the
  // relations of g each holds: its kernels index W by the part's relation numbers.
  std::optional<RelationalGraph> fused_part, transform_part;
  std::vector<int64_t> fused_relations, transform_relations;
  int blocks[3] = {1, 1, 1};  // rows per register block: fused, transform, source transform
};

const std::vector<std::string>& rgms_kernel_names() {
  // In the order of `Which`.
  static const std::vector<std::string> names = {
      "fused", "aggregate",  "transform",  "source_transform", "gather",     "weight_grad",      "ell3d",
      "embed", "embed_grad", "gather_add", "pair_sum",         "basis_grad", "basis_coeff_grad", "basis_rows"};
  STRATA_ASSERT(names.size() == kCount, "rgms: {} kernel names for {} kernels", names.size(), static_cast<int>(kCount));
  return names;
}

RgmsCpuKernel rgms_cpu_kernel(const std::string& name, const RgmsSpec& spec, const CpuKnobs& knobs) {
  const auto& names = rgms_kernel_names();
  const auto it = std::find(names.begin(), names.end(), name);
  STRATA_CHECK(it != names.end(), "rgms: unknown kernel '{}' (expected one of: {})", name, fmt::join(names, ", "));
  const int which = static_cast<int>(it - names.begin());
  const int block = transform_block(spec.fout, knobs.vector_lanes);
  RgmsCpuKernel out;
  switch (which) {
    case kFused: out.program = with_task_params(rgms_fused_program(spec)); break;
    case kAggregate: out.program = with_task_params(rgms_aggregate_program(spec)); break;
    case kTransform: out.program = with_task_params(rgms_transform_program(spec)); break;
    case kSourceTransform: out.program = rgms_source_transform_program(spec); break;
    case kGather: out.program = with_task_params(rgms_gather_program(spec)); break;
    case kWeightGrad: out.program = rgms_weight_grad_program(spec); break;
    case kEll3d: out.program = decompose_ell3d(rgms_aggregate_program(spec), RgmsKernels::kEll3dMaxBucket); break;
    case kEmbed: out.program = with_task_params(rgms_embed_program(spec)); break;
    case kGatherAdd: out.program = with_task_params(rgms_gather_add_program(spec)); break;
    case kBasisRows:
      out.program = with_task_params(rgms_basis_rows_program(spec));
      break;
    case kPairSum:
      out.program = with_task_params(rgms_pair_sum_program(spec));
      break;
    case kBasisGrad:
      out.program = with_task_params(rgms_basis_grad_program(spec));
      break;
    case kBasisCoeffGrad:
      out.program = rgms_basis_coeff_grad_program(spec);
      break;
    default: out.program = rgms_embed_grad_program(spec); break;
  }
  const Kernel loops = lower_to_loops(out.program);
  switch (which) {
    case kFused: out.scheduled = schedule_fused(loops, knobs, block, out.block); break;
    case kAggregate: out.scheduled = schedule_aggregate(loops, knobs); break;
    case kTransform: out.scheduled = schedule_transform(loops, knobs, block, out.block); break;
    case kSourceTransform: out.scheduled = schedule_source_transform(loops, knobs, block, out.block); break;
    case kGather:
    case kEmbed: out.scheduled = schedule_gather(loops, knobs); break;
    case kWeightGrad: out.scheduled = schedule_per_relation(loops, "rel_ptr", "dW", "r", knobs); break;
    case kEll3d: out.scheduled = schedule_ell3d(loops, RgmsKernels::kEll3dMaxBucket, knobs); break;
    case kGatherAdd: out.scheduled = schedule_gather_add(loops, knobs); break;
    case kBasisRows:
      out.scheduled = schedule_pair_sums(loops, knobs, "T", "FO");
      break;
    case kPairSum:
      out.scheduled = schedule_pair_sums(loops, knobs, "G", "FO");  // dT: as the aggregation, on dY
      break;
    case kBasisGrad:
      out.scheduled = schedule_basis_grad(loops, knobs);
      break;
    case kBasisCoeffGrad:
      out.scheduled = schedule_basis_coeff_grad(loops, knobs);
      break;
    default: out.scheduled = schedule_embed_grad(loops, knobs); break;
  }
  return out;
}

RgmsKernels::RgmsKernels(const RelationalGraph& g, RgmsSpec spec, RgmsOrder order, Backend backend,
                         std::optional<CpuKnobs> knobs, RgmsKernelSet set)
    : g_(g), spec_(spec), order_(order), backend_(backend), impl_(std::make_unique<Impl>()) {
  STRATA_CHECK(spec.fin >= 1 && spec.fout >= 1, "rgms: feature sizes must be at least 1, got {} and {}", spec.fin,
               spec.fout);
  spec_.index_dtype = g.index_dtype;
  Timer t;
  CpuKnobs k = knobs ? *knobs : CpuKnobs{};
  impl_->set = set;
  const bool orders = set == RgmsKernelSet::All || set == RgmsKernelSet::Forward ||
                      set == RgmsKernelSet::Training;  // the matmul's kernels
  if (orders && order_ == RgmsOrder::AggregateFirstEll3d) impl_->ell3d = inspect_ell3d(g_, kEll3dMaxBucket, k.grain);
  if (orders && order_ == RgmsOrder::Mixed) {
    const std::vector<bool> split = rgms_mixed_split(g_, spec_);
    std::vector<int64_t> fused, transform;
    for (int64_t r = 0; r < g_.relations; ++r) (split[static_cast<size_t>(r)] ? transform : fused).push_back(r);
    if (!fused.empty()) impl_->fused_part = g_.subset(fused, k.grain);
    if (!transform.empty()) impl_->transform_part = g_.subset(transform, k.grain);
    impl_->fused_relations = std::move(fused);
    impl_->transform_relations = std::move(transform);
  }
  if (!knobs) {
    k.vector_lanes = host_vector_lanes();
    // Default prefetch: the X rows ~16 KiB ahead in the non-zero stream once X
    // outgrows the L2 cache (DESIGN.md's main CPU lever; on the synthetic 1M-edge
    // graph it takes the fused kernel from 55 to 41 ms at F = 32).
    if (g_.cols * spec_.fin * 4 > (int64_t{2} << 20)) k.prefetch = std::max<int64_t>(16, 4096 / spec_.fin);
  }
  std::vector<Kernel> lowered;
  const auto& names = rgms_kernel_names();
  int built = 0;
  for (int which = 0; which < kCount; ++which) {
    if (!in_set(set, order_, which)) continue;
    const std::string& name = names[static_cast<size_t>(which)];
    impl_->slot[static_cast<size_t>(which)] = built++;
    RgmsCpuKernel c = rgms_cpu_kernel(name, spec_, k);
    if (backend_ != Backend::Generated) {
      impl_->reference.push_back(lower_to_loops(c.program));
      continue;
    }
    if (name == "fused") impl_->blocks[0] = c.block;
    if (name == "transform") impl_->blocks[1] = c.block;
    if (name == "source_transform") impl_->blocks[2] = c.block;
    lowered.push_back(lower_schedule(c.scheduled));
  }
  // In up to one translation unit per thread, compiled at once: a set's load waits
  // for its largest unit, not the whole set.
  if (backend_ == Backend::Generated) {
    impl_->compiled = compile_cpu(lowered, num_threads());
    impl_->lowered = std::move(lowered);
  }
  compile_ms_ = t.ms();
}

RgmsKernels::~RgmsKernels() = default;

std::string RgmsKernels::code_key() const {
  // Every kernel's source, however the set's units split it.
  return backend_ == Backend::Generated && !impl_->lowered.empty() ? cpu_source_digest(impl_->lowered) : "reference";
}

std::string RgmsKernels::describe() const {
  if (impl_->set == RgmsKernelSet::OneHot)
    return fmt::format("rgms {} one-hot input: embed and its gradient only ({})", spec_.suffix(), backend_name(backend_));
  if (impl_->set == RgmsKernelSet::Embed)
    return fmt::format("rgms {} one-hot input: embed only ({})", spec_.suffix(), backend_name(backend_));
  if (impl_->set == RgmsKernelSet::BasisRows)
    return fmt::format("rgms {} one-hot input, {} bases: composes the {} weight rows the relations read ({})",
                       spec_.suffix(), spec_.fin, g_.pairs, backend_name(backend_));
  if (impl_->set == RgmsKernelSet::BasisGather)
    return fmt::format("rgms {} one-hot input, {} bases: gathers the composed weight rows ({})", spec_.suffix(),
                       spec_.fin, backend_name(backend_));
  if (impl_->set == RgmsKernelSet::BasisPairs)
    return fmt::format(
        "rgms {} one-hot input, {} bases: composes the {} weight rows the relations read, and their gradients ({})",
        spec_.suffix(), spec_.fin, g_.pairs, backend_name(backend_));
  std::string order = rgms_order_name(order_);
  if (order_ == RgmsOrder::Mixed) {
    order += fmt::format(" (fused on {} of {} relations, transform-first on {})", impl_->fused_relations.size(),
                         g_.relations, impl_->transform_relations.size());
  }
  if (backend_ != Backend::Generated)
    return fmt::format("rgms {} {} ({})", spec_.suffix(), order, backend_name(backend_));
  // Rows per register block of the transforms this object built.
  std::string blocks;
  const int kinds[3] = {kFused, kTransform, kSourceTransform};
  const char* names[3] = {"fused", "transform", "source transform"};
  for (int k = 0; k < 3; ++k)
    if (impl_->slot[static_cast<size_t>(kinds[k])] >= 0)
      blocks += fmt::format("{}{} {}", blocks.empty() ? "" : ", ", names[k], impl_->blocks[k]);
  return fmt::format("rgms {} {} ({}{}; rows per register block: {})", spec_.suffix(), order, backend_name(backend_),
                     impl_->set == RgmsKernelSet::Forward    ? ", forward kernels only"
                     : impl_->set == RgmsKernelSet::Training ? ", forward kernels and the weight gradient's"
                                                             : "",
                     blocks.empty() ? "none" : blocks);
}

void RgmsKernels::run_on(const RelationalGraph& part, int which, KernelArgs& a) const {
  const int slot = impl_->slot[static_cast<size_t>(which)];
  STRATA_CHECK(slot >= 0, "rgms: kernel {} was not built: these kernels ({}) are the {}",
               rgms_kernel_names()[static_cast<size_t>(which)], spec_.suffix(), rgms_kernel_set_name(impl_->set));
  part.bind(a);
  if (which == kEll3d) impl_->ell3d.bind(a);
  const Kernel& k = backend_ == Backend::Generated ? impl_->compiled[slot].kernel : impl_->reference[slot];
  std::vector<Tensor> workspaces;
  for (const auto& p : k.params)
    if (p.role == ParamRole::Workspace) {
      workspaces.push_back(Tensor::empty({p.name == "H" ? part.pairs * spec_.fin : 1}, p.dtype));
      a.buffer(p.name, workspaces.back());
    }
  if (backend_ == Backend::Generated) {
    impl_->compiled[slot].run(a);
    return;
  }
  Interpreter interp;
  a.bind(interp, k);
  interp.run(k);
}

namespace {
// W's [fin, fout] blocks of the given relations, in that order: the weights of a
// mixed-order part, whose kernels number its relations from 0.
Tensor relation_rows(const Tensor& W, const std::vector<int64_t>& relations) {
  const int64_t block = W.dim(1) * W.dim(2);
  Tensor out = Tensor::empty({static_cast<int64_t>(relations.size()), W.dim(1), W.dim(2)}, DType::F32);
  for (size_t k = 0; k < relations.size(); ++k)
    std::copy_n(W.data<float>() + relations[k] * block, block, out.data<float>() + static_cast<int64_t>(k) * block);
  return out;
}
}  // namespace

void RgmsKernels::forward(const Tensor& X, const Tensor& W, Tensor& Y) const {
  check_host_f32(X, "rgms input X", {g_.cols, spec_.fin});
  check_host_f32(W, "rgms weights W", {g_.relations, spec_.fin, spec_.fout});
  check_host_f32(Y, "rgms output Y", {g_.rows, spec_.fout});
  KernelArgs a;
  a.buffer("X", X).buffer("W", W).buffer("Y", Y);
  switch (order_) {
    case RgmsOrder::Fused: run(kFused, a); return;
    case RgmsOrder::AggregateFirst:
    case RgmsOrder::AggregateFirstEll3d: {
      auto lease = impl_->intermediate.acquire({std::max<int64_t>(g_.pairs, 1), spec_.fin});
      Tensor& H = lease.get();
      KernelArgs agg;
      agg.buffer("X", X).buffer("H", H);
      run(order_ == RgmsOrder::AggregateFirst ? kAggregate : kEll3d, agg);
      a.buffer("H", H);
      run(kTransform, a);
      return;
    }
    case RgmsOrder::TransformFirst: transform_first_on(g_, X, W, Y, kGather); return;
    case RgmsOrder::Mixed: {
      if (impl_->fused_part) {
        const Tensor Wf = relation_rows(W, impl_->fused_relations);
        KernelArgs f;
        f.buffer("X", X).buffer("W", Wf).buffer("Y", Y);
        run_on(*impl_->fused_part, kFused, f);
      } else {
        Y.zero();
      }
      if (impl_->transform_part)
        transform_first_on(*impl_->transform_part, X, relation_rows(W, impl_->transform_relations), Y, kGatherAdd);
      return;
    }
  }
}

void RgmsKernels::transform_first_on(const RelationalGraph& part, const Tensor& X, const Tensor& W, Tensor& Y,
                                     int gather) const {
  auto lease = impl_->intermediate.acquire({std::max<int64_t>(part.sources, 1), spec_.fout});
  Tensor& T = lease.get();
  KernelArgs tr;
  tr.buffer("X", X).buffer("W", W).buffer("T", T);
  run_on(part, kSourceTransform, tr);
  KernelArgs ga;
  ga.buffer("T", T).buffer("Y", Y);
  run_on(part, gather, ga);
}

void RgmsKernels::aggregate(const Tensor& X, Tensor& H) const {
  check_host_f32(X, "rgms aggregate X", {g_.cols, spec_.fin});
  check_host_f32(H, "rgms aggregate H", {g_.pairs, spec_.fin});
  KernelArgs a;
  a.buffer("X", X).buffer("H", H);
  run(kAggregate, a);
}

void RgmsKernels::weight_grad(const Tensor& H, const Tensor& dY, Tensor& dW) const {
  check_host_f32(H, "rgms weight grad H", {g_.pairs, spec_.fin});
  check_host_f32(dY, "rgms weight grad dY", {g_.rows, spec_.fout});
  check_host_f32(dW, "rgms weight grad dW", {g_.relations, spec_.fin, spec_.fout});
  KernelArgs a;
  a.buffer("H", H).buffer("dY", dY).buffer("dW", dW);
  run(kWeightGrad, a);
}

void RgmsKernels::forward_embed(const Tensor& W, Tensor& Y) const {
  check_host_f32(W, "rgms embedding weights W", {g_.relations, g_.cols, spec_.fout});
  check_host_f32(Y, "rgms output Y", {g_.rows, spec_.fout});
  KernelArgs a;
  a.buffer("W", W).buffer("Y", Y);
  run(kEmbed, a);
}

void RgmsKernels::embed_grad(const Tensor& dY, Tensor& dW) const {
  check_host_f32(dY, "rgms embedding grad dY", {g_.cols, spec_.fout});
  check_host_f32(dW, "rgms embedding grad dW", {g_.relations, g_.rows, spec_.fout});
  KernelArgs a;
  a.buffer("dY", dY).buffer("dW", dW);
  run(kEmbedGrad, a);
}

void RgmsKernels::basis_rows(const Tensor& C, const Tensor& V, Tensor& T) const {
  check_host_f32(C, "rgms basis coefficients C", {g_.relations, spec_.fin});
  check_host_f32(V, "rgms bases V", {spec_.fin, g_.rows, spec_.fout});
  check_host_f32(T, "rgms basis rows T", {g_.pairs, spec_.fout});
  KernelArgs a;
  a.buffer("C", C).buffer("V", V).buffer("T", T);
  run(kBasisRows, a);
}

void RgmsKernels::gather(const Tensor& T, Tensor& Y) const {
  check_host_f32(T, "rgms gather T", {g_.sources, spec_.fout});
  check_host_f32(Y, "rgms output Y", {g_.rows, spec_.fout});
  KernelArgs a;
  a.buffer("T", T).buffer("Y", Y);
  run(kGather, a);
}

void RgmsKernels::basis_embed_grad(const Tensor& C, const Tensor& V, const Tensor& dY, Tensor& dC, Tensor& dV) const {
  check_host_f32(C, "rgms basis coefficients C", {g_.relations, spec_.fin});
  check_host_f32(V, "rgms bases V", {spec_.fin, g_.rows, spec_.fout});
  check_host_f32(dY, "rgms basis embedding grad dY", {g_.cols, spec_.fout});
  check_host_f32(dC, "rgms basis coefficients grad dC", {g_.relations, spec_.fin});
  check_host_f32(dV, "rgms bases grad dV", {spec_.fin, g_.rows, spec_.fout});
  auto lease = impl_->intermediate.acquire({std::max<int64_t>(g_.pairs, 1), spec_.fout});
  Tensor& G = lease.get();
  KernelArgs ps;
  ps.buffer("dY", dY).buffer("G", G);
  run(kPairSum, ps);
  KernelArgs bg;
  bg.buffer("C", C).buffer("G", G).buffer("dV", dV);
  run(kBasisGrad, bg);
  KernelArgs cg;
  cg.buffer("G", G).buffer("V", V).buffer("dC", dC);
  run(kBasisCoeffGrad, cg);
}

void reference_rgms(const RelationalGraph& g, const Tensor& X, const Tensor& W, Tensor& Y) {
  const int64_t fin = X.dim(1), fout = W.dim(2);
  Y.zero();
  std::vector<float> h(static_cast<size_t>(fin));
  for (int64_t r = 0; r < g.relations; ++r)
    for (int64_t q = g.rel_ptr.data<int64_t>()[r]; q < g.rel_ptr.data<int64_t>()[r + 1]; ++q) {
      std::fill(h.begin(), h.end(), 0.0f);
      for (int64_t p = g.row_ptr.data<int64_t>()[q]; p < g.row_ptr.data<int64_t>()[q + 1]; ++p) {
        const int64_t j = static_cast<int64_t>(g.col_ids.item_as_double(p));
        for (int64_t f = 0; f < fin; ++f) h[f] += g.values.data<float>()[p] * X.data<float>()[j * fin + f];
      }
      const int64_t i = static_cast<int64_t>(g.rel_rows.item_as_double(q));
      for (int64_t f = 0; f < fin; ++f)
        for (int64_t o = 0; o < fout; ++o) Y.data<float>()[i * fout + o] += h[f] * W.data<float>()[(r * fin + f) * fout + o];
    }
}

}  // namespace strata::sc
