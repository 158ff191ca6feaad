#include "sparse_compiler/formats/gpu_format_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/error.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::sc {
namespace {

bool ell_like(const FormatSpec& f) { return f.kind == FormatKind::Ell || f.kind == FormatKind::Hyb; }
// Formats whose SpMM parts can share output rows (atomics, or owner tasks).
bool has_shared_rows(const FormatSpec& f) { return ell_like(f) || f.kind == FormatKind::Coo; }

int64_t widest_bucket(const FormatSpec& f) {
  const auto w = f.bucket_widths();
  return w.empty() ? 1 : w.back();
}

bool exists(const Schedule& s, const std::string& loop) { return find_loop(s.kernel().body, loop) != nullptr; }

int64_t const_extent(const Schedule& s, const std::string& loop) {
  const ForNode* f = find_loop(s.kernel().body, loop);
  const int64_t* e = f ? as_const_int(f->extent) : nullptr;
  return e ? *e : -1;
}

std::vector<Stmt> top_level(const Stmt& body) {
  if (const auto* sq = body.as<SeqNode>()) return sq->stmts;
  return {body};
}

std::vector<std::string> top_level_loops(const Kernel& k) {
  std::vector<std::string> out;
  for (const Stmt& s : top_level(k.body)) {
    const auto* f = s.as<ForNode>();
    STRATA_ASSERT(f, "GPU format schedule, kernel {}: a top-level statement is not a loop", k.name);
    out.push_back(f->var);
  }
  return out;
}

// The first loop under `outer` (or `outer` itself) annotated with axis `axis`.
std::string loop_on_axis_under(const Schedule& s, const std::string& outer, const std::string& axis) {
  const ForNode* o = find_loop(s.kernel().body, outer);
  if (!o) return "";
  if (o->annotations.count("axis") && o->annotations.at("axis") == axis) return outer;
  for (const auto& n : loop_names(o->body)) {
    const ForNode* f = find_loop(o->body, n);
    if (f && f->annotations.count("axis") && f->annotations.at("axis") == axis) return n;
  }
  return "";
}

std::vector<std::string> iteration_names(const Kernel& k) {
  std::vector<std::string> out;
  for (const Stmt& s : top_level(k.body)) {
    const auto* it = s.as<SparseIterationNode>();
    STRATA_ASSERT(it, "GPU format schedule, kernel {}: a top-level statement is not a sparse iteration", k.name);
    out.push_back(it->name);
  }
  return out;
}

const SparseIterationNode* iteration(const Kernel& k, const std::string& name) {
  for (const Stmt& s : top_level(k.body))
    if (const auto* it = s.as<SparseIterationNode>(); it && it->name == name) return it;
  STRATA_UNREACHABLE("kernel {} has no sparse iteration {}", k.name, name);
}

// The row loop of a row-subset part (ell, hyb bucket, dcsr) runs over its rows
// [rptr[0], rptr[1]), which the inspector builds as [0, p<k>_n): the loop is given
// that range, an expression over scalars, so the grid can be sized at launch.
Kernel rows_from_scalars(const Kernel& k, const FormatSpec& format) {
  if (format.kind == FormatKind::Bsr || format.kind == FormatKind::Coo) return k;
  Kernel out = k;
  for (const auto& v : top_level_loops(k)) {
    if (v.size() < 4 || v[0] != 'p' || v.substr(v.size() - 2) != "_i") continue;
    const std::string p = v.substr(0, v.size() - 2);
    STRATA_ASSERT(k.find_param(p + "_n"), "kernel {}: part {} has no row count {}_n", k.name, p, p);
    out.body = replace_loop(out.body, v, [&](const ForNode* f) {
      return for_loop(f->var, make_int(0), var(p + "_n"), f->for_kind, f->body, f->annotations);
    });
  }
  return out;
}

// Stores of `local` that load `buffer` (a cache_write's load-in) store zero instead,
// and stores of `buffer` that load `local` (its write-back) become atomic adds when
// `atomic`: the part's sums start from zero and are added into (or stored to) the
// output, which an earlier launch zeroed.
Stmt sums_from_zero(const Stmt& s, const std::string& buffer, const std::string& local, bool atomic) {
  class M : public IRMutator {
   public:
    M(const std::string& b, const std::string& l, bool a) : b_(b), l_(l), a_(a) {}

   protected:
    Stmt visit(const StoreNode* op, const Stmt& self) override {
      const auto* v = op->value.as<LoadNode>();
      if (op->buffer == l_ && v && v->buffer == b_) return store(op->buffer, op->index, make_zero(op->value.type()));
      if (op->buffer == b_ && v && v->buffer == l_ && a_)
        return store(op->buffer, op->index, op->value, StoreKind::AtomicAdd);
      return IRMutator::visit(op, self);
    }

   private:
    const std::string &b_, &l_;
    bool a_;
  } m(buffer, local, atomic);
  return m.mutate(s);
}

// `Y[k] = Y[k] + v` -> an atomic add of v (coo: every non-zero adds into its row).
Stmt atomic_accumulation(const Stmt& s, const std::string& buffer) {
  class M : public IRMutator {
   public:
    explicit M(const std::string& b) : b_(b) {}

   protected:
    Stmt visit(const StoreNode* op, const Stmt& self) override {
      if (op->buffer != b_) return IRMutator::visit(op, self);
      const auto* sum = op->value.as<AddNode>();
      const auto* old = sum ? sum->a.as<LoadNode>() : nullptr;
      STRATA_ASSERT(old && old->buffer == b_, "coo GPU schedule: a store to {} is not an accumulation", b_);
      return store(op->buffer, op->index, sum->b, StoreKind::AtomicAdd);
    }

   private:
    const std::string& b_;
  } m(buffer);
  return m.mutate(s);
}

void set_kernel_body_loop(Schedule& s, const std::string& loop, const std::function<Stmt(const ForNode*)>& f) {
  Kernel k = s.kernel();
  k.body = replace_loop(k.body, loop, f);
  s = Schedule(k);
}

// The part a top-level loop of a decomposed kernel runs: -1 for the init (a loop not
// named p<k>_...), else k.
int part_of(const std::string& loop) {
  const size_t us = loop.find('_');
  if (loop.size() < 3 || loop[0] != 'p' || us == std::string::npos || us < 2) return -1;
  if (loop.find_first_not_of("0123456789", 1) != us) return -1;
  return std::stoi(loop.substr(1, us - 1));
}

// Drops the buffer parameters the scheduled code never touches (the task arrays of
// an atomic schedule, the row ranges the loops now take from scalars): fewer launch
// arguments, and hyb with many parts stays within the launch's parameter space.
Kernel without_unused_buffers(const Kernel& k) {
  std::set<std::string> used;
  class Uses : public IRVisitor {
   public:
    explicit Uses(std::set<std::string>& u) : u_(u) {}

   protected:
    void visit(const StoreNode* op) override {
      u_.insert(op->buffer);
      IRVisitor::visit(op);
    }
    void visit(const LoadNode* op) override {
      u_.insert(op->buffer);
      IRVisitor::visit(op);
    }
    void visit(const CallNode* op) override {
      u_.insert(op->buffers.begin(), op->buffers.end());
      IRVisitor::visit(op);
    }

   private:
    std::set<std::string>& u_;
  } uses(used);
  if (k.body.defined()) uses.visit_stmt(k.body);
  if (k.preprocess.defined()) uses.visit_stmt(k.preprocess);
  Kernel out = k;
  out.params.clear();
  for (const auto& p : k.params)
    if (p.kind == ParamKind::Scalar || used.count(p.name)) out.params.push_back(p);
  return out;
}

void check_knob(bool ok, const std::string& what, int64_t value, const std::string& why) {
  STRATA_CHECK(ok, "GPU schedule knob {} = {}: {}", what, value, why);
}

void validate_format(const FormatSpec& format, const GpuSpmmKnobs& knobs) {
  check_knob(knobs.row_parts == 1, "row_parts", knobs.row_parts,
             fmt::format("splits csr rows into parts; format {} has its own parts (use row_parts = 1)", format.str()));
}

// ---- SpMM -----------------------------------------------------------------------

struct FeatureAxes {
  std::set<std::string> lanes;  // axes of the lane loops (none when coarsen == F)
  std::set<std::string> elements;  // axes of the per-thread element loops
};

// Stage I: each compute iteration's features split into lanes x coarsen, and the
// lane iterator moved before the slots (so the row's sums live in registers across
// its slots), as CSR's schedule does. coo: the features are split before the rows
// and columns are fused (sparse_split and sparse_reorder would undo the fusion),
// and its non-zero loop is already outside them.
Kernel map_features(const SpmmSpec& spec, const FormatSpec& format, int64_t cf, FeatureAxes& axes) {
  const int64_t F = spec.feat;
  const bool coo = format.kind == FormatKind::Coo;
  Kernel k = spmm_program(spec);
  if (!coo) k = decompose_format(k, format);
  for (const auto& name : iteration_names(k)) {
    const SparseIterationNode* it = iteration(k, name);
    int t = -1;
    for (size_t q = 0; q < it->iters.size(); ++q)
      if (it->iters[q].var == "f") t = static_cast<int>(q);
    STRATA_ASSERT(t >= 0, "spmm iteration {} has no feature iterator f", name);
    if (cf == F) {
      axes.elements.insert(it->iters[t].axis->name);
      continue;
    }
    if (cf > 1) {
      k = sparse_split(k, name, "f", cf);
      it = iteration(k, name);
      axes.elements.insert(it->iters[t + 1].axis->name);
    }
    axes.lanes.insert(it->iters[t].axis->name);
    if (coo) continue;
    const int n_feat = cf > 1 ? 2 : 1;
    std::vector<std::string> groups, slots, order;
    for (size_t q = 0; q < it->iters.size(); ++q) {
      if (static_cast<int>(q) >= t && static_cast<int>(q) < t + n_feat) continue;
      (it->iters[q].reduction ? slots : groups).push_back(it->iters[q].var);
    }
    order = groups;
    order.push_back(it->iters[t].var);
    order.insert(order.end(), slots.begin(), slots.end());
    if (cf > 1) order.push_back(it->iters[t + 1].var);
    k = sparse_reorder(k, name, order);
  }
  return coo ? coo_program(k) : k;
}

std::string lane_loop_under(const Schedule& s, const std::string& top, const FeatureAxes& axes) {
  for (const auto& a : axes.lanes)
    if (std::string l = loop_on_axis_under(s, top, a); !l.empty()) return l;
  STRATA_UNREACHABLE("no lane loop under {}", top);
}

// The lane loop's threads: `lanes` along threadIdx.x, the tiles of the rest along
// blockIdx.y (or serial, where the part shares its block index with others).
void bind_lanes(Schedule& s, const std::string& fl, int64_t lanes, bool tiles_on_grid) {
  const int64_t ext = const_extent(s, fl);
  STRATA_ASSERT(ext >= 1, "lane loop {} has no constant extent", fl);
  const int64_t L = std::min(lanes, ext);
  if (L < ext) {
    const Schedule::SplitLoops parts = s.split(fl, L, TailStrategy::Guard);
    if (tiles_on_grid) s.bind(parts.outer, ForKind::GpuBlockY);
    s.bind(parts.inner, ForKind::GpuThreadX);
  } else {
    s.bind(fl, ForKind::GpuThreadX);
  }
}

// The loop inside which one output row's accumulators live when there is no lane loop.
std::string innermost_row_loop(const FormatSpec& format, const std::string& top) {
  if (format.kind == FormatKind::Bsr) return top.substr(0, top.find('_')) + "_ii";
  return top;
}

void unroll_slots(Schedule& s, const FormatSpec& format, const std::string& top) {
  const std::string p = top.substr(0, top.find('_'));
  const std::string slot = format.kind == FormatKind::Bsr ? p + "_ji" : p + "_j";
  const int64_t w = exists(s, slot) ? const_extent(s, slot) : -1;
  if (w > 1 && w <= (format.kind == FormatKind::Bsr ? 8 : 16)) s.unroll(slot);
}

void vectorize_elements(Schedule& s, const FeatureAxes& axes) {
  std::vector<std::string> loops;
  for (const auto& n : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, n);
    if (f && f->for_kind == ForKind::Serial && f->annotations.count("axis") && axes.elements.count(f->annotations.at("axis")))
      loops.push_back(n);
  }
  for (const auto& l : loops) {
    if (!exists(s, l)) continue;
    const ForNode* f = find_loop(s.kernel().body, l);
    if (gpu_parts::has_atomic_store(f->body)) {
      if (const int64_t e = const_extent(s, l); e > 1) s.unroll(l);  // atomics are scalar
    } else {
      gpu_parts::vectorize_thread_elements(s, l);
    }
  }
}

Kernel schedule_format_spmm(const SpmmSpec& spec, const FormatSpec& format, const GpuSpmmKnobs& knobs) {
  gpu_parts::validate_knobs(spec, knobs, false);
  validate_format(format, knobs);
  const bool coo = format.kind == FormatKind::Coo;
  const int64_t F = spec.feat, cf = knobs.coarsen;
  FeatureAxes axes;
  Kernel program = map_features(spec, format, cf, axes);
  program.name += "_gpu_" + knobs.str();
  Kernel loops = rows_from_scalars(lower_to_loops(program), format);
  const bool tasks = gpu_uses_tasks(format, knobs);
  const int64_t G = gpu_group_slots(format, knobs);
  const auto widths = format.bucket_widths();
  const int64_t nb = static_cast<int64_t>(widths.size());
  const bool lane_loops = cf < F;

  if (!tasks && format.kind == FormatKind::Bsr) {
    // Every output row is one group's (rows without blocks store zeros): no zeroing launch.
    std::vector<Stmt> parts;
    for (const Stmt& st : top_level(loops.body))
      if (part_of(st.as<ForNode>()->var) >= 0) parts.push_back(st);
    loops.body = seq(parts);
  }
  Schedule s(loops);
  const std::vector<std::string> tops = top_level_loops(loops);

  if (tasks) {
    // Owner tasks: task t runs the zeroing of its rows and each part's iterations for
    // them, in order, on one thread group.
    std::vector<std::string> ranges;
    for (const auto& t : tops) {
      const int p = part_of(t);
      ranges.push_back(coo ? (t == "i" ? "task_rows" : "coo_tasks") : p < 0 ? "task_rows" : fmt::format("p{}_tasks", p));
    }
    const std::string task = s.partition_tasks(tops, ranges, "num_tasks");
    set_kernel_body_loop(s, task, [](const ForNode* f) {
      return for_loop(f->var, f->min, f->extent, ForKind::Serial, f->body, f->annotations);
    });
    for (const auto& t : tops) {
      const bool init = coo ? t == "i" : part_of(t) < 0;
      if (lane_loops) {
        const std::string fl = lane_loop_under(s, t, axes);
        if (!init && !coo) s.cache_write("Y", fl);
        bind_lanes(s, fl, knobs.lanes, false);
      } else if (!init && !coo) {
        s.cache_write("Y", innermost_row_loop(format, t));
      }
      if (!init && !coo) unroll_slots(s, format, t);
    }
    gpu_parts::bind_groups(s, task, knobs.rows_per_block, 1);
  } else {
    for (const auto& t : tops) {
      const int p = part_of(t);
      const bool init = coo ? t == "i" : p < 0;
      std::string local;
      if (lane_loops) {
        const std::string fl = lane_loop_under(s, t, axes);
        if (!init && !coo) local = s.cache_write("Y", fl);
        bind_lanes(s, fl, knobs.lanes, true);
      } else if (!init && !coo) {
        local = s.cache_write("Y", innermost_row_loop(format, t));
      }
      // Whether other groups may add into this part's rows too.
      bool shared = false;
      if (ell_like(format) && p >= 0) shared = (format.kind == FormatKind::Hyb && format.col_parts > 1) || p % nb == nb - 1;
      if (coo && !init) {
        Kernel k = s.kernel();
        k.body = replace_loop(k.body, t, [&](const ForNode* f) {
          return for_loop(f->var, f->min, f->extent, f->for_kind, atomic_accumulation(f->body, "Y"), f->annotations);
        });
        s = Schedule(k);
      } else if (!local.empty()) {
        Kernel k = s.kernel();
        k.body = sums_from_zero(k.body, "Y", local, shared);
        s = Schedule(k);
      }
      std::string group = t;
      int64_t per_group = 1;
      if (!init) {
        unroll_slots(s, format, t);
        if (format.kind == FormatKind::Bsr) group = s.fuse(t, t.substr(0, t.find('_')) + "_ii");
        if (ell_like(format)) per_group = std::max<int64_t>(1, G / widths[p % nb]);
        if (coo) per_group = G;
      }
      const std::string top = gpu_parts::bind_groups(s, group, knobs.rows_per_block, per_group);
      if (!init && !coo && !shared) s.annotate(top, kGpuExclusiveWrites, "Y");
    }
  }
  vectorize_elements(s, axes);
  Kernel out = without_unused_buffers(coo ? bind_preprocess_gpu(s.kernel()) : s.kernel());
  out.attrs["schedule"] = fmt::format("gpu {} {}", format.str(), knobs.str());
  return out;
}

// ---- SDDMM ----------------------------------------------------------------------

Kernel schedule_format_sddmm(const SddmmSpec& spec, const FormatSpec& format, const GpuSddmmKnobs& knobs) {
  gpu_parts::validate_knobs(spec, knobs);
  const bool dot = spec.kind == SddmmKind::Dot;
  const bool coo = format.kind == FormatKind::Coo;
  Kernel program = coo ? coo_program(sddmm_program(spec)) : decompose_format(sddmm_program(spec), format);
  program.name += "_gpu_" + knobs.str();
  Schedule s(rows_from_scalars(lower_to_loops(program), format));
  const std::vector<std::string> tops = top_level_loops(s.kernel());
  const auto widths = format.bucket_widths();
  for (const auto& t : tops) {
    const std::string p = t.substr(0, t.find('_'));
    std::string group = t, slot = t;
    if (ell_like(format)) {
      if (exists(s, p + "_j")) group = slot = s.fuse(t, p + "_j");
    } else if (format.kind == FormatKind::Dcsr) {
      slot = p + "_j";
    } else if (format.kind == FormatKind::Bsr) {
      group = s.fuse(t, p + "_ii");
      slot = p + "_ji";
    }
    if (dot) {
      const std::string f = loop_on_axis_under(s, slot, "F");
      gpu_parts::schedule_sddmm_dot_features(s, spec, knobs, f, s.cache_write("O", slot));
    } else {
      gpu_parts::schedule_sddmm_add_heads(s, spec, knobs, loop_on_axis_under(s, slot, "H"));
    }
    const std::string top = gpu_parts::bind_groups(s, group, knobs.edges_per_block, 1);
    if (!coo) s.annotate(top, kGpuExclusiveWrites, "O");
  }
  Kernel out = without_unused_buffers(coo ? bind_preprocess_gpu(s.kernel()) : s.kernel());
  out.attrs["schedule"] = fmt::format("gpu {} {}", format.str(), knobs.str());
  return out;
}

}  // namespace

GpuSpmmKnobs default_gpu_spmm_knobs(const SpmmSpec& spec, const FormatSpec& format) {
  return default_gpu_spmm_knobs(spec);
}

GpuSddmmKnobs default_gpu_sddmm_knobs(const SddmmSpec& spec, const FormatSpec& format) {
  return default_gpu_sddmm_knobs(spec);
}

int64_t gpu_group_slots(const FormatSpec& format, const GpuSpmmKnobs& knobs) {
  if (knobs.group_slots > 0) return knobs.group_slots;
  if (gpu_uses_tasks(format, knobs)) return std::max<int64_t>(32, widest_bucket(format));
  return ell_like(format) ? widest_bucket(format) : 1;
}

bool gpu_uses_tasks(const FormatSpec& format, const GpuSpmmKnobs& knobs) {
  return knobs.deterministic && has_shared_rows(format);
}

int64_t gpu_inspector_grain(const FormatSpec& format, const GpuSpmmKnobs& knobs, int64_t cpu_grain) {
  return gpu_uses_tasks(format, knobs) ? gpu_group_slots(format, knobs) : cpu_grain;
}

std::vector<GpuSpmmKnobs> gpu_spmm_search_space(const SpmmSpec& spec, const FormatSpec& format) {
  if (format.kind == FormatKind::Csr) return gpu_spmm_search_space(spec);
  // Feature mappings: the default, and each coarsening with lanes spread evenly
  // over as few 32-lane tiles as it allows, 256 or 128 threads per block.
  std::vector<GpuSpmmKnobs> mappings = {default_gpu_spmm_knobs(spec, format)};
  for (int64_t cf : {1, 2, 4}) {
    if (cf > spec.feat || spec.feat % cf) continue;
    const int64_t ext = spec.feat / cf, tiles = (ext + 31) / 32, L = (ext + tiles - 1) / tiles;
    mappings.push_back({std::max<int64_t>(1, 256 / L), L, cf, 1, false, 0});
    mappings.push_back({std::max<int64_t>(1, 128 / L), L, cf, 1, false, 0});
  }
  std::vector<int64_t> slots = {0};
  if (ell_like(format)) {
    const int64_t W = widest_bucket(format);
    for (int64_t g : {std::max<int64_t>(1, W / 4), 4 * W, int64_t{32}})
      if (g != W) slots.push_back(g);
  } else if (format.kind == FormatKind::Coo) {
    slots = {0, 4, 16};
  }
  std::vector<GpuSpmmKnobs> out;
  std::set<std::string> seen;
  for (const auto& m : mappings)
    for (int64_t g : slots)
      for (bool det : {false, true}) {
        if (det && !has_shared_rows(format)) continue;
        GpuSpmmKnobs k = m;
        k.group_slots = g;
        k.deterministic = det;
        if (seen.insert(k.str()).second) out.push_back(k);
      }
  return out;
}

std::vector<GpuSddmmKnobs> gpu_sddmm_search_space(const SddmmSpec& spec, const FormatSpec& format) {
  return gpu_sddmm_search_space(spec);
}

namespace {
// Column tiles keep X's rows in a CPU core's L1/L2; a GPU block has no such cache
// to fill across rows, and its schedules bind one part's rows to blocks.
void refuse_column_tiles(const FormatSpec& format) {
  STRATA_CHECK(!(format.kind == FormatKind::Dcsr && format.col_tile > 0),
               "format {}: column tiles are a CPU format; GPU kernels take dcsr without cols", format.str());
}
}  // namespace

Kernel schedule_spmm_gpu(const SpmmSpec& spec, const FormatSpec& format, const GpuSpmmKnobs& knobs) {
  refuse_column_tiles(format);
  if (format.kind == FormatKind::Csr) return schedule_spmm_gpu(spec, knobs);
  return schedule_format_spmm(spec, format, knobs);
}

Kernel schedule_sddmm_gpu(const SddmmSpec& spec, const FormatSpec& format, const GpuSddmmKnobs& knobs) {
  refuse_column_tiles(format);
  if (format.kind == FormatKind::Csr) return schedule_sddmm_gpu(spec, knobs);
  return schedule_format_sddmm(spec, format, knobs);
}

Kernel lower_spmm_gpu(const SpmmSpec& spec, const FormatSpec& format, const GpuSpmmKnobs& knobs) {
  return lower_schedule(schedule_spmm_gpu(spec, format, knobs));
}

Kernel lower_sddmm_gpu(const SddmmSpec& spec, const FormatSpec& format, const GpuSddmmKnobs& knobs) {
  return lower_schedule(schedule_sddmm_gpu(spec, format, knobs));
}

}  // namespace strata::sc
