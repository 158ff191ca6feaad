#include "sparse_compiler/ops/cpu_schedules.h"

#include <algorithm>

#include <fmt/format.h>

#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {

std::string CpuKnobs::str() const {
  return fmt::format("lanes={},grain={},prefetch={}{}{}{}{}", vector_lanes, grain, prefetch,
                     stream_stores ? ",stream" : "", static_tasks ? ",static" : "",
                     accumulator_sets > 1 ? fmt::format(",sets={}", accumulator_sets) : "",
                     edge_groups ? ",groups" : "");
}

int host_vector_lanes() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx2")) return 8;
  return 4;
}

namespace {
bool exists(const Schedule& s, const std::string& loop) { return find_loop(s.kernel().body, loop) != nullptr; }

std::vector<std::string> loops_with_axis(const Schedule& s, const std::string& axis) {
  std::vector<std::string> out;
  for (const auto& n : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, n);
    if (f && f->annotations.count("axis") && f->annotations.at("axis") == axis) out.push_back(n);
  }
  return out;
}

// A loop whose body holds another loop: the block loop an earlier split left
// around its vectorized part, already done.
bool holds_loops(const Schedule& s, const std::string& loop) {
  const ForNode* f = find_loop(s.kernel().body, loop);
  return f && !loop_names(f->body).empty();
}

int64_t extent_of(const Schedule& s, const std::string& loop) {
  const ForNode* f = find_loop(s.kernel().body, loop);
  const int64_t* e = f ? as_const_int(f->extent) : nullptr;
  return e ? *e : -1;
}

bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

// Whole vectors of a feature loop unrolled at most: beyond that (F > 512 floats
// untiled) the vector loop stays a loop, so code size does not grow with F.
constexpr int64_t kMaxUnrolledVectors = 32;

void unroll_vector_blocks(Schedule& s, const std::string& loop) {
  const int64_t e = extent_of(s, loop);
  if (e >= 0 && e <= kMaxUnrolledVectors) s.unroll(loop);
}
}  // namespace

bool fits_in_locals(const Schedule& s, const std::vector<std::string>& feature_axes) {
  int64_t widest = 0;
  for (const auto& axis : feature_axes)
    for (const auto& l : loops_with_axis(s, axis)) widest = std::max(widest, extent_of(s, l));
  return widest <= Schedule::kMaxStagedElements;
}

void vectorize_feature_loop(Schedule& s, const std::string& loop, int lanes) {
  const int64_t e = extent_of(s, loop);
  if (e < 0 || holds_loops(s, loop)) return;
  if (e < 4 || lanes < 2) {  // lanes 1: a scalar plan; longer loops are left to the C++ compiler
    if (e < 4) s.unroll(loop);
    return;
  }
  if (is_pow2(e) && e <= lanes) {
    s.vectorize(loop);
    return;
  }
  int64_t width = lanes;
  while (width > e) width /= 2;
  if (width == e) {
    s.vectorize(loop);
    return;
  }
  const Schedule::SplitLoops parts = s.split(loop, width);
  s.vectorize(parts.inner);
  unroll_vector_blocks(s, parts.outer);
  if (!parts.tail.empty()) vectorize_feature_loop(s, parts.tail, static_cast<int>(width / 2));
}

void vectorize_reduction_loop(Schedule& s, const std::string& loop, const std::string& acc, int lanes) {
  const int64_t e = extent_of(s, loop);
  if (e < 0 || holds_loops(s, loop)) return;
  if (e < 4 || lanes < 2) {  // lanes 1: a scalar plan
    if (e < 4) s.unroll(loop);
    return;
  }
  int64_t width = lanes;
  while (width > e) width /= 2;
  std::string red = loop, tail;
  if (width < e) {
    const Schedule::SplitLoops parts = s.split(loop, width);
    red = parts.inner;
    tail = parts.tail;
    unroll_vector_blocks(s, parts.outer);
  }
  Schedule::RFactor rf = s.rfactor(red, acc);
  s.vectorize(red);
  s.vectorize(rf.init_loop);
  s.vectorize(rf.sum_loop);
  if (!tail.empty()) vectorize_reduction_loop(s, tail, acc, static_cast<int>(width / 2));
}

void sum_dot_products_together(Schedule& s, const std::string& loop, const std::string& output,
                               const std::string& reduction, int lanes) {
  const std::string acc = s.cache_write(output, loop);
  vectorize_reduction_loop(s, reduction, acc, lanes);
  s.transpose_sums(loop);
  s.unroll(loop);
}

void interleave_accumulators(Schedule& s, const std::string& loop, const std::string& acc, int sets) {
  const Schedule::SplitLoops parts = s.split(loop, sets, TailStrategy::Peel);
  s.rfactor(parts.inner, acc);
  s.unroll(parts.inner);
}

std::string row_tasks(Schedule& s, const CpuKnobs& knobs) {
  const std::string chunk = s.balance("i", "A_indptr", knobs.grain);
  s.parallel(chunk);
  if (knobs.static_tasks) s.static_tasks(chunk);
  return chunk;
}

std::string owner_tasks(Schedule& s, const std::vector<std::string>& loops, const std::vector<std::string>& ranges,
                        const CpuKnobs& knobs) {
  const std::string tasks = s.partition_tasks(loops, ranges, "num_tasks");
  if (knobs.static_tasks) s.static_tasks(tasks);
  return tasks;
}

Kernel schedule_spmm_cpu(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  row_tasks(s, knobs);
  // A row (or tile) of more than kMaxStagedElements floats is summed in Y itself.
  const bool staged = fits_in_locals(s, {"F", "F_i"});
  const std::string acc = staged ? s.cache_write("Y", "i") : "";
  if (knobs.accumulator_sets > 1) {
    STRATA_SCHED_CHECK(staged && exists(s, "j") && loops_with_axis(s, "F_i").empty(),
                       "{} accumulator sets: they need an untiled row of at most {} floats staged in registers",
                       knobs.accumulator_sets, Schedule::kMaxStagedElements);
    // The prefetch goes in first, so that each set's non-zero prefetches its own row.
    if (knobs.prefetch > 0) s.prefetch("j", "X", knobs.prefetch, "nnz");
    interleave_accumulators(s, "j", acc, knobs.accumulator_sets);
  }
  // The feature loops: F, or F_i within a feature tile or panel.
  for (const char* axis : {"F", "F_i"})
    for (const auto& l : loops_with_axis(s, axis)) vectorize_feature_loop(s, l, knobs.vector_lanes);
  // Without sets, after vectorizing: the prefetches then follow the row's vector
  // parts (inserting them earlier adds one for a scalar tail, F = 33: a new kernel).
  if (knobs.prefetch > 0 && knobs.accumulator_sets <= 1) s.prefetch("j", "X", knobs.prefetch, "nnz");
  if (knobs.stream_stores) {
    STRATA_SCHED_CHECK(staged,
                       "stream_stores(Y): rows wider than {} floats are summed in Y itself, and a streaming store "
                       "would be read back at the next non-zero; tile the features or drop the streaming stores",
                       Schedule::kMaxStagedElements);
    s.stream_stores("Y");
  }
  return s.kernel();
}

void group_dot_products(Schedule& s, const std::string& edges, const std::string& f, const CpuKnobs& knobs) {
  const int64_t width = extent_of(s, f);
  STRATA_SCHED_CHECK(knobs.vector_lanes >= 4 && width > 0 && width % knobs.vector_lanes == 0 &&
                         width <= Schedule::kMaxStagedElements && exists(s, edges),
                     "edge groups: the dot product's {} features must be a whole number of {}-lane vectors (4 "
                     "lanes or more; at most {} features), over a loop of edges",
                     width, knobs.vector_lanes, Schedule::kMaxStagedElements);
  if (knobs.prefetch > 0) s.prefetch(edges, "Y", knobs.prefetch, "nnz");
  const Schedule::SplitLoops parts = s.split(edges, knobs.vector_lanes, TailStrategy::Peel);
  // The tail's copy of the feature loop (split renamed it): its reduction loop.
  std::string f_tail;
  for (const auto& l : loop_names(find_loop(s.kernel().body, parts.tail)->body))
    if (const auto& a = find_loop(s.kernel().body, l)->annotations;
        f_tail.empty() && a.count("iter") && a.at("iter") == "R")
      f_tail = l;
  STRATA_SCHED_CHECK(!f_tail.empty(), "edge groups: the rest of the edges has no feature loop");
  sum_dot_products_together(s, parts.inner, "O", f, knobs.vector_lanes);
  vectorize_reduction_loop(s, f_tail, s.cache_write("O", parts.tail), knobs.vector_lanes);
}

Kernel schedule_sddmm_cpu(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  // Panel by panel, O is zeroed by its own pass first (loop i_init), in the same
  // row tasks as the panel passes, so with static tasks each thread zeroes the
  // part of O that it then adds into.
  if (exists(s, "i_init")) {
    const std::string chunk = s.balance("i_init", "A_indptr", knobs.grain);
    s.parallel(chunk);
    if (knobs.static_tasks) s.static_tasks(chunk);
  }
  row_tasks(s, knobs);
  // The dot product's feature loop: f, or f_i within a panel.
  const std::string f = exists(s, "f") ? "f" : exists(s, "f_i") ? "f_i" : "";
  if (!f.empty()) {
    // Dot: X[i] (or its panel) in registers (unless it is wider than a local may
    // be), one vector accumulator per edge.
    if (fits_in_locals(s, {"F", "F_i"})) s.cache_read("X", "i");
    if (knobs.edge_groups) {
      group_dot_products(s, "j", f, knobs);
    } else {
      const std::string acc = s.cache_write("O", "j");
      vectorize_reduction_loop(s, f, acc, knobs.vector_lanes);
    }
    for (const char* axis : {"F", "F_i"})
      for (const auto& l : loops_with_axis(s, axis))
        if (find_loop(s.kernel().body, l)->for_kind == ForKind::Serial)
          vectorize_feature_loop(s, l, knobs.vector_lanes);
    if (knobs.prefetch > 0 && !knobs.edge_groups) s.prefetch("j", "Y", knobs.prefetch, "nnz");
  } else if (exists(s, "h")) {
    vectorize_feature_loop(s, "h", knobs.vector_lanes);
  }
  return s.kernel();
}

}  // namespace strata::sc
