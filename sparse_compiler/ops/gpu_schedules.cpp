#include "sparse_compiler/ops/gpu_schedules.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::sc {

std::string GpuSpmmKnobs::str() const {
  return fmt::format("r{}_l{}_c{}_p{}{}{}", rows_per_block, lanes, coarsen, row_parts, deterministic ? "_det" : "",
                     group_slots > 0 ? fmt::format("_g{}", group_slots) : "");
}

std::string GpuSddmmKnobs::str() const { return fmt::format("e{}_l{}_v{}", edges_per_block, lanes, vec); }

namespace {

constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kPreprocessThreads = 256;

bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
int64_t floor_pow2(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool exists(const Schedule& s, const std::string& loop) { return find_loop(s.kernel().body, loop) != nullptr; }

int64_t extent_of(const Schedule& s, const std::string& loop) {
  const ForNode* f = find_loop(s.kernel().body, loop);
  const int64_t* e = f ? as_const_int(f->extent) : nullptr;
  return e ? *e : -1;
}

// Serial loops annotated with iteration axis `axis`, in program order.
std::vector<std::string> serial_loops_on_axis(const Schedule& s, const std::string& axis) {
  std::vector<std::string> out;
  for (const auto& n : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, n);
    if (f && f->for_kind == ForKind::Serial && f->annotations.count("axis") && f->annotations.at("axis") == axis)
      out.push_back(n);
  }
  return out;
}

// Turns a constant loop of a thread's few consecutive elements into vectors of at
// most 4 lanes (one 8- or 16-byte access for 32-bit data), unrolling the rest.
void vectorize_thread_elements(Schedule& s, const std::string& loop) {
  const int64_t e = extent_of(s, loop);
  if (e <= 1) return;
  if (e == 2 || e == 4) {
    s.vectorize(loop);
    return;
  }
  if (e < 4) {
    s.unroll(loop);
    return;
  }
  const Schedule::SplitLoops parts = s.split(loop, 4);
  s.vectorize(parts.inner);
  s.unroll(parts.outer);
  if (!parts.tail.empty()) vectorize_thread_elements(s, parts.tail);
}

bool has_atomic_store(const Stmt& s) {
  bool found = false;
  class V : public IRVisitor {
   public:
    explicit V(bool& f) : f_(f) {}

   protected:
    void visit(const StoreNode* op) override {
      f_ |= op->store_kind == StoreKind::AtomicAdd;
      IRVisitor::visit(op);
    }

   private:
    bool& f_;
  } v(found);
  v.visit_stmt(s);
  return found;
}

// Binds a loop over [0, extent): one thread per iteration, `threads` per block.
void bind_flat(Schedule& s, const std::string& loop, int64_t threads) {
  const int64_t e = extent_of(s, loop);
  if (e >= 1 && e <= threads) {
    s.bind(loop, ForKind::GpuThreadX);
    return;
  }
  const Schedule::SplitLoops parts = s.split(loop, threads, TailStrategy::Guard);
  s.bind(parts.outer, ForKind::GpuBlockX);
  s.bind(parts.inner, ForKind::GpuThreadX);
}

// Restricts SpMM's non-zero loop j of every row to part `p` of `parts` equal,
// contiguous pieces of the row.
Kernel restrict_to_row_part(const Kernel& loops, int64_t p, int64_t parts) {
  Kernel k = loops;
  k.body = replace_loop(k.body, "j", [&](const ForNode* j) {
    const Expr deg = j->extent;
    const Expr chunk = div(add(deg, make_int(parts - 1)), make_int(parts));
    const Expr begin = min(deg, mul(chunk, make_int(p)));
    const Expr end = min(deg, mul(chunk, make_int(p + 1)));
    return for_loop(j->var, add(j->min, begin), sub(end, begin), j->for_kind, j->body, j->annotations);
  });
  return k;
}

// The write-back `Y[k] = local[w]` of a row part becomes an accumulation.
Stmt accumulate_writeback(const Stmt& s, const std::string& buffer, const std::string& local, bool atomic) {
  class R : public IRMutator {
   public:
    R(const std::string& b, const std::string& l, bool a) : b_(b), l_(l), a_(a) {}

   protected:
    Stmt visit(const StoreNode* op, const Stmt& self) override {
      const auto* v = op->value.as<LoadNode>();
      if (op->buffer != b_ || !v || v->buffer != l_) return self;
      if (a_) return store(op->buffer, op->index, op->value, StoreKind::AtomicAdd);
      return store(op->buffer, op->index, add(load(op->value.type(), op->buffer, op->index), op->value));
    }

   private:
    const std::string &b_, &l_;
    bool a_;
  } r(buffer, local, atomic);
  return r.mutate(s);
}

void check_knob(bool ok, const std::string& what, int64_t value, const std::string& why) {
  STRATA_CHECK(ok, "GPU schedule knob {} = {}: {}", what, value, why);
}

void validate(const SpmmSpec& spec, const GpuSpmmKnobs& k) {
  check_knob(k.coarsen >= 1 && spec.feat % k.coarsen == 0, "coarsen", k.coarsen,
             fmt::format("must divide the feature size {}", spec.feat));
  check_knob(k.lanes >= 1, "lanes", k.lanes, "must be positive");
  check_knob(k.rows_per_block >= 1, "rows_per_block", k.rows_per_block, "must be positive");
  check_knob(k.lanes * k.rows_per_block <= kMaxThreads, "rows_per_block", k.rows_per_block,
             fmt::format("with {} lanes gives more than {} threads per block", k.lanes, kMaxThreads));
  check_knob(k.row_parts >= 1, "row_parts", k.row_parts, "must be positive");
  check_knob(k.group_slots == 0, "group_slots", k.group_slots,
             "applies to the decomposed formats (ell, hyb, bsr, dcsr, coo), not csr");
}

void validate(const SddmmSpec& spec, const GpuSddmmKnobs& k) {
  check_knob(k.vec >= 1 && k.vec <= 4 && spec.feat % k.vec == 0, "vec", k.vec,
             fmt::format("must be 1, 2 or 4 and divide the feature size {}", spec.feat));
  check_knob(is_pow2(k.lanes) && k.lanes <= 32, "lanes", k.lanes,
             "must be a power of two no larger than a warp (32): lanes are reduced by shuffles");
  check_knob(k.edges_per_block >= 1, "edges_per_block", k.edges_per_block, "must be positive");
  check_knob(k.lanes * k.edges_per_block <= kMaxThreads, "edges_per_block", k.edges_per_block,
             fmt::format("with {} lanes gives more than {} threads per block", k.lanes, kMaxThreads));
}

// Rows over blockIdx.x × threadIdx.y.
void bind_rows(Schedule& s, const std::string& loop, int64_t per_block) {
  if (per_block == 1) {
    s.bind(loop, ForKind::GpuBlockX);
    return;
  }
  const Schedule::SplitLoops parts = s.split(loop, per_block, TailStrategy::Guard);
  s.bind(parts.outer, ForKind::GpuBlockX);
  s.bind(parts.inner, ForKind::GpuThreadY);
}

// Schedules one SpMM nest (the whole kernel, or one row part): returns the
// scheduled body and the name of the register accumulator.
struct SpmmNest {
  Stmt body;
  std::string local;
};
SpmmNest schedule_spmm_nest(const Kernel& loops, const SpmmSpec& spec, const GpuSpmmKnobs& knobs, bool atomic,
                            bool accumulate) {
  const int64_t F = spec.feat, cf = knobs.coarsen;
  Schedule s(loops);
  // The per-thread feature loop: f (cf = 1), f_o (1 < cf < F), none (cf = F).
  const std::string fl = cf == 1 ? "f" : "f_o";
  const bool lane_loop = cf < F && exists(s, fl);
  const std::string local = s.cache_write("Y", lane_loop ? fl : "i");
  if (lane_loop) {
    const int64_t ext = F / cf, L = std::min(knobs.lanes, ext);
    if (L < ext) {
      const Schedule::SplitLoops parts = s.split(fl, L, TailStrategy::Guard);
      s.bind(parts.outer, ForKind::GpuBlockY);
      s.bind(parts.inner, ForKind::GpuThreadX);
    } else {
      s.bind(fl, ForKind::GpuThreadX);
    }
  }
  bind_rows(s, "i", knobs.rows_per_block);
  Kernel k = s.kernel();
  if (accumulate) k.body = accumulate_writeback(k.body, "Y", local, atomic);
  Schedule v(k);
  const std::string axis = cf == F ? "F" : "F_i";
  for (const auto& l : serial_loops_on_axis(v, axis)) {
    const ForNode* f = find_loop(v.kernel().body, l);
    if (has_atomic_store(f->body)) v.unroll(l);  // atomics are scalar
    else vectorize_thread_elements(v, l);
  }
  return {v.kernel().body, local};
}

}  // namespace

GpuSpmmKnobs default_gpu_spmm_knobs(const SpmmSpec& spec) {
  const int64_t F = spec.feat;
  STRATA_CHECK(F >= 1, "spmm (cuda): feature size must be at least 1, got {}", F);
  GpuSpmmKnobs k;
  k.coarsen = (F % 4 == 0 && F >= 128) ? 4 : (F % 2 == 0 && F >= 64) ? 2 : 1;
  const int64_t ext = F / k.coarsen;
  // As few feature tiles as 32 lanes allow, spread evenly over the lanes.
  const int64_t tiles = ceil_div(ext, 32);
  k.lanes = ceil_div(ext, tiles);
  k.rows_per_block = std::max<int64_t>(1, 256 / k.lanes);
  return k;
}

GpuSddmmKnobs default_gpu_sddmm_knobs(const SddmmSpec& spec) {
  const int64_t F = spec.feat;
  STRATA_CHECK(F >= 1, "sddmm (cuda): feature size must be at least 1, got {}", F);
  GpuSddmmKnobs k;
  if (spec.kind == SddmmKind::Add) {
    k.vec = 1;
    k.lanes = std::min<int64_t>(32, floor_pow2(F));
  } else {
    k.vec = F % 4 == 0 ? 4 : F % 2 == 0 ? 2 : 1;
    k.lanes = std::min<int64_t>(32, floor_pow2(F / k.vec));
  }
  k.edges_per_block = std::max<int64_t>(1, 256 / k.lanes);
  return k;
}

std::vector<GpuSpmmKnobs> gpu_spmm_search_space(const SpmmSpec& spec) {
  std::vector<GpuSpmmKnobs> out;
  std::set<std::string> seen;
  const int64_t F = spec.feat;
  for (int64_t cf : {1, 2, 4}) {
    if (cf > F || F % cf) continue;
    const int64_t ext = F / cf;
    for (int64_t lanes : {4, 8, 16, 32}) {
      const int64_t L = std::min(lanes, ext);
      for (int64_t rows : {1, 2, 4, 8, 16, 32}) {
        if (L * rows < 32 || L * rows > 512) continue;
        for (int64_t parts : {1, 2, 4}) {
          GpuSpmmKnobs k{rows, L, cf, parts, false};
          if (seen.insert(k.str()).second) out.push_back(k);
        }
      }
    }
  }
  return out;
}

std::vector<GpuSddmmKnobs> gpu_sddmm_search_space(const SddmmSpec& spec) {
  std::vector<GpuSddmmKnobs> out;
  std::set<std::string> seen;
  const int64_t F = spec.feat;
  for (int64_t vec : {1, 2, 4}) {
    if (spec.kind == SddmmKind::Add && vec > 1) continue;
    if (vec > F || F % vec) continue;
    for (int64_t lanes : {1, 2, 4, 8, 16, 32}) {
      if (lanes > std::max<int64_t>(1, F / vec)) continue;
      for (int64_t edges : {1, 2, 4, 8, 16, 32, 64}) {
        if (lanes * edges < 32 || lanes * edges > 512) continue;
        GpuSddmmKnobs k{edges, lanes, vec};
        if (seen.insert(k.str()).second) out.push_back(k);
      }
    }
  }
  return out;
}

Kernel schedule_spmm_gpu(const SpmmSpec& spec, const GpuSpmmKnobs& knobs) {
  validate(spec, knobs);
  const int64_t F = spec.feat, cf = knobs.coarsen;
  Kernel k = spmm_program(spec);
  if (cf < F) {
    if (cf > 1) {
      k = sparse_split(k, "spmm", "f", cf);
      k = sparse_reorder(k, "spmm", {"i", "f_o", "j", "f_i"});
    } else {
      k = sparse_reorder(k, "spmm", {"i", "f", "j"});
    }
  }
  k.name += "_gpu_" + knobs.str();
  const Kernel loops = lower_to_loops(k);
  Kernel out = loops;
  if (knobs.row_parts == 1) {
    out.body = schedule_spmm_nest(loops, spec, knobs, false, false).body;
  } else {
    std::vector<Stmt> parts;
    const bool atomic = !knobs.deterministic;
    if (atomic) {
      // The parts add into Y concurrently: it starts at zero (its own launch).
      Kernel zero = loops;
      zero.body = for_loop("y_zero", make_int(0), mul(var("m"), make_int(F)), ForKind::Serial,
                           store("Y", var("y_zero"), make_float(0)));
      Schedule z(zero);
      bind_flat(z, "y_zero", 256);
      parts.push_back(z.kernel().body);
    }
    for (int64_t p = 0; p < knobs.row_parts; ++p) {
      // Deterministic: the first part writes, the others add, in launch order.
      const bool accumulate = atomic || p > 0;
      SpmmNest nest = schedule_spmm_nest(restrict_to_row_part(loops, p, knobs.row_parts), spec, knobs, atomic, accumulate);
      parts.push_back(rename_locals(nest.body, fmt::format("_p{}", p)));
    }
    out.body = seq(parts);
  }
  out.attrs["schedule"] = "gpu " + knobs.str();
  return out;
}

Kernel schedule_sddmm_gpu(const SddmmSpec& spec, const GpuSddmmKnobs& knobs) {
  validate(spec, knobs);
  const bool dot = spec.kind == SddmmKind::Dot;
  Kernel k = sddmm_program(spec);
  k = sparse_fuse(k, dot ? "sddmm" : "sddmm_add", {"i", "j"});
  k.name += "_gpu_" + knobs.str();
  Schedule s(lower_to_loops(k));
  const std::string edge = "i_j";
  if (dot) gpu_parts::schedule_sddmm_dot_features(s, spec, knobs, "f", s.cache_write("O", edge));
  else gpu_parts::schedule_sddmm_add_heads(s, spec, knobs, "h");
  bind_rows(s, edge, knobs.edges_per_block);
  Kernel out = bind_preprocess_gpu(s.kernel());
  out.attrs["schedule"] = "gpu " + knobs.str();
  return out;
}

namespace gpu_parts {

void schedule_sddmm_dot_features(Schedule& s, const SddmmSpec& spec, const GpuSddmmKnobs& knobs,
                                 const std::string& f, const std::string& acc) {
  const int64_t F = spec.feat;
  const int64_t vec = std::min(knobs.vec, F);
  std::string fl = f, vector_loop = f;
  if (vec > 1 && vec < F) {
    const Schedule::SplitLoops parts = s.split(f, vec);
    fl = parts.outer;
    vector_loop = parts.inner;
  }
  const int64_t ext = vec < F ? F / vec : 1;
  const int64_t L = std::min(knobs.lanes, floor_pow2(ext));
  if (L > 1) {
    std::string lane = fl;
    if (L < ext) {
      const Schedule::SplitLoops parts = s.split(fl, L, TailStrategy::Guard);
      s.reorder(parts.outer, parts.inner);
      lane = parts.inner;
      if (ceil_div(ext, L) <= 8) s.unroll(parts.outer);
    }
    const Schedule::RFactor rf = s.rfactor(lane, acc);
    s.bind(rf.init_loop, ForKind::GpuThreadX);
    s.bind(lane, ForKind::GpuThreadX);
    s.bind(rf.sum_loop, ForKind::GpuThreadX);
  } else if (ext > 1 && ext <= 8) {
    s.unroll(fl);
  }
  if (vec > 1) s.vectorize(vector_loop);
}

void schedule_sddmm_add_heads(Schedule& s, const SddmmSpec& spec, const GpuSddmmKnobs& knobs, const std::string& h) {
  const int64_t F = spec.feat;
  const int64_t L = std::min(knobs.lanes, F);
  if (L > 1 && L < F) {
    const Schedule::SplitLoops parts = s.split(h, L, TailStrategy::Guard);
    s.reorder(parts.outer, parts.inner);
    s.bind(parts.inner, ForKind::GpuThreadX);
  } else if (L > 1) {
    s.bind(h, ForKind::GpuThreadX);
  }
}

std::string bind_groups(Schedule& s, const std::string& loop, int64_t per_block, int64_t per_group) {
  std::string outer = loop;
  if (per_block > 1) {
    const Schedule::SplitLoops parts = s.split(loop, per_block, TailStrategy::Guard);
    s.bind(parts.inner, ForKind::GpuThreadY);
    outer = parts.outer;
  }
  if (per_group > 1) {
    const Schedule::SplitLoops parts = s.split(outer, per_group, TailStrategy::Guard);
    s.bind(parts.outer, ForKind::GpuBlockX);
    return parts.outer;
  }
  s.bind(outer, ForKind::GpuBlockX);
  return outer;
}

void vectorize_thread_elements(Schedule& s, const std::string& loop) { ::strata::sc::vectorize_thread_elements(s, loop); }

void bind_flat(Schedule& s, const std::string& loop, int64_t threads) { ::strata::sc::bind_flat(s, loop, threads); }

bool has_atomic_store(const Stmt& s) { return ::strata::sc::has_atomic_store(s); }

void validate_knobs(const SpmmSpec& spec, const GpuSpmmKnobs& knobs, bool csr) {
  if (csr) {
    validate(spec, knobs);
    return;
  }
  GpuSpmmKnobs k = knobs;
  k.group_slots = 0;
  validate(spec, k);
  check_knob(knobs.group_slots >= 0, "group_slots", knobs.group_slots, "must not be negative (0: the format's default)");
}

void validate_knobs(const SddmmSpec& spec, const GpuSddmmKnobs& knobs) { validate(spec, knobs); }

}  // namespace gpu_parts

Kernel lower_spmm_gpu(const SpmmSpec& spec, const GpuSpmmKnobs& knobs) {
  return lower_schedule(schedule_spmm_gpu(spec, knobs));
}

Kernel lower_sddmm_gpu(const SddmmSpec& spec, const GpuSddmmKnobs& knobs) {
  return lower_schedule(schedule_sddmm_gpu(spec, knobs));
}

Kernel bind_preprocess_gpu(const Kernel& k) {
  if (!k.preprocess.defined()) return k;
  std::set<std::string> scalars;
  for (const auto& p : k.params)
    if (p.kind == ParamKind::Scalar) scalars.insert(p.name);
  auto param_only = [&](const Expr& e) {
    bool ok = true;
    for_each_expr(e, [&](const Expr& x) {
      if (const auto* v = x.as<VarNode>(); v && !scalars.count(v->name)) ok = false;
      if (x.as<LoadNode>() || x.as<CallNode>()) ok = false;
    });
    return ok;
  };
  std::vector<Stmt> parts;
  const auto* sq = k.preprocess.as<SeqNode>();
  for (const Stmt& st : sq ? sq->stmts : std::vector<Stmt>{k.preprocess}) {
    const auto* f = st.as<ForNode>();
    if (!f || f->for_kind != ForKind::Serial || !is_zero(f->min) || !param_only(f->extent)) {
      parts.push_back(st);  // runs on one thread: correct, and rare
      continue;
    }
    Kernel one = k;
    one.body = st;
    one.preprocess = Stmt();
    Schedule s(one);
    bind_flat(s, f->var, kPreprocessThreads);
    parts.push_back(s.kernel().body);
  }
  Kernel out = k;
  out.preprocess = seq(parts);
  return out;
}

}  // namespace strata::sc
