#include "sparse_compiler/formats/format_schedule.h"

#include <fmt/format.h>

#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {
namespace {

// The top-level loops of the body (init first, then one per part), how each is
// partitioned into tasks (its name, or "outer/inner" for DCSR over column tiles:
// every task walks all tiles, and its share of each tile's rows), and the task
// range array of each.
void top_level(const Kernel& k, std::vector<std::string>& loops, std::vector<std::string>& partitioned,
               std::vector<std::string>& ranges) {
  std::vector<Stmt> top;
  if (const auto* sq = k.body.as<SeqNode>()) top = sq->stmts;
  else top = {k.body};
  for (const auto& s : top) {
    const auto* f = s.as<ForNode>();
    STRATA_ASSERT(f, "decomposed kernel {}: a top-level statement is not a loop", k.name);
    loops.push_back(f->var);
    const size_t us = f->var.find('_');
    const bool part = f->var.size() > 1 && f->var[0] == 'p' && us != std::string::npos &&
                      f->var.find_first_not_of("0123456789", 1) == us;
    ranges.push_back(part ? f->var.substr(0, us) + "_tasks" : "task_rows");
    const auto* rows = f->body.as<ForNode>();
    const bool tiles = part && f->annotations.count("axis") && f->annotations.at("axis") == f->var.substr(0, us) + "_O" &&
                       rows != nullptr;
    partitioned.push_back(tiles ? f->var + "/" + rows->var : f->var);
  }
}

std::vector<std::string> loops_with_axis_under(const Schedule& s, const std::string& outer, const std::string& axis) {
  std::vector<std::string> out;
  const ForNode* o = find_loop(s.kernel().body, outer);
  if (!o) return out;
  for (const auto& n : loop_names(o->body)) {
    const ForNode* f = find_loop(o->body, n);
    if (f && f->annotations.count("axis") && f->annotations.at("axis") == axis) out.push_back(n);
  }
  return out;
}

std::vector<std::string> all_loops_with_axis(const Schedule& s, const std::string& axis) {
  std::vector<std::string> out;
  for (const auto& n : s.loops()) {
    const ForNode* f = find_loop(s.kernel().body, n);
    if (f && f->annotations.count("axis") && f->annotations.at("axis") == axis && f->for_kind == ForKind::Serial)
      out.push_back(n);
  }
  return out;
}

// The loop that walks one output row of part `p` (the row accumulator lives in it),
// and the loop over one row's slots.
std::string row_loop(const FormatSpec& spec, const std::string& p) {
  return spec.kind == FormatKind::Bsr ? p + "_ii" : p + "_i";
}
std::string slot_loop(const FormatSpec& spec, const std::string& p) {
  return spec.kind == FormatKind::Bsr ? p + "_ji" : p + "_j";
}

}  // namespace

Kernel schedule_decomposed_spmm_cpu(const Kernel& loops, const FormatSpec& spec, const CpuKnobs& knobs) {
  Schedule s(loops);
  std::vector<std::string> tops, partitioned, ranges;
  top_level(loops, tops, partitioned, ranges);
  owner_tasks(s, partitioned, ranges, knobs);
  // Rows wider than a local may stage are summed in Y itself.
  const bool staged = fits_in_locals(s, {"F"});
  for (const auto& t : tops) {
    if (t.rfind("p", 0) != 0 || ranges[&t - &tops[0]] == "task_rows") continue;
    const std::string p = t.substr(0, t.find('_'));
    if (staged) s.cache_write("Y", row_loop(spec, p));
    const ForNode* slots = find_loop(s.kernel().body, slot_loop(spec, p));
    const int64_t* w = slots ? as_const_int(slots->extent) : nullptr;
    if (w && *w <= 4) s.unroll(slot_loop(spec, p));
  }
  for (const auto& l : all_loops_with_axis(s, "F")) vectorize_feature_loop(s, l, knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_decomposed_sddmm_cpu(const Kernel& loops, const FormatSpec& spec, const CpuKnobs& knobs) {
  Schedule s(loops);
  std::vector<std::string> tops, partitioned, ranges;
  top_level(loops, tops, partitioned, ranges);
  owner_tasks(s, partitioned, ranges, knobs);
  const bool staged = fits_in_locals(s, {"F"});
  for (const auto& t : tops) {
    const std::string p = t.substr(0, t.find('_'));
    if (!loops_with_axis_under(s, t, "F").empty()) {
      // Dot: X[row] staged once per row (unless wider than a local may be), one
      // vector accumulator per slot.
      if (staged) s.cache_read("X", row_loop(spec, p));
      // Width-1 parts have no slot loop left: the row is the slot.
      const std::string slot =
          find_loop(s.kernel().body, slot_loop(spec, p)) ? slot_loop(spec, p) : row_loop(spec, p);
      const std::string acc = s.cache_write("O", slot);
      for (const auto& f : loops_with_axis_under(s, slot, "F"))
        if (find_loop(s.kernel().body, f)->for_kind == ForKind::Serial &&
            find_loop(s.kernel().body, f)->annotations.count("iter") &&
            find_loop(s.kernel().body, f)->annotations.at("iter") == "R")
          vectorize_reduction_loop(s, f, acc, knobs.vector_lanes);
    }
  }
  for (const auto& axis : {"F", "H"})
    for (const auto& l : all_loops_with_axis(s, axis)) vectorize_feature_loop(s, l, knobs.vector_lanes);
  return s.kernel();
}

namespace {
// Top-level loops of a COO kernel and their task ranges.
void coo_top_level(const Kernel& k, std::vector<std::string>& loops, std::vector<std::string>& ranges) {
  std::vector<Stmt> top;
  if (const auto* sq = k.body.as<SeqNode>()) top = sq->stmts;
  else top = {k.body};
  for (const auto& s : top) {
    const auto* f = s.as<ForNode>();
    STRATA_ASSERT(f, "coo kernel {}: a top-level statement is not a loop", k.name);
    loops.push_back(f->var);
    const bool fused = f->annotations.count("axis") && f->annotations.at("axis").find('*') != std::string::npos;
    ranges.push_back(fused ? "coo_tasks" : "task_rows");
  }
}
}  // namespace

Kernel schedule_coo_spmm_cpu(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  std::vector<std::string> tops, ranges;
  coo_top_level(loops, tops, ranges);
  owner_tasks(s, tops, ranges, knobs);
  for (const auto& l : all_loops_with_axis(s, "F")) vectorize_feature_loop(s, l, knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_coo_sddmm_cpu(const Kernel& loops, const CpuKnobs& knobs) {
  Schedule s(loops);
  std::vector<std::string> tops, ranges;
  coo_top_level(loops, tops, ranges);
  owner_tasks(s, tops, ranges, knobs);
  for (size_t k = 0; k < tops.size(); ++k) {
    if (ranges[k] != "coo_tasks" || loops_with_axis_under(s, tops[k], "F").empty()) continue;
    if (knobs.edge_groups) {
      // Slots `lanes` at a time, whatever rows they belong to: each slot reads its
      // row of X (from L1 while a row lasts), and no row's end breaks a group. The
      // slot's row id is a let, inlined so that the dot product is the loop's body.
      const std::vector<std::string> f = loops_with_axis_under(s, tops[k], "F");
      STRATA_SCHED_CHECK(f.size() == 1, "edge groups over coo: slot loop {} must hold one feature loop, not {}",
                         tops[k], f.size());
      s.inline_lets(tops[k]);
      group_dot_products(s, tops[k], f.front(), knobs);
      continue;
    }
    const std::string acc = s.cache_write("O", tops[k]);
    for (const auto& f : loops_with_axis_under(s, tops[k], "F"))
      if (find_loop(s.kernel().body, f)->for_kind == ForKind::Serial) vectorize_reduction_loop(s, f, acc, knobs.vector_lanes);
  }
  for (const auto& axis : {"F", "H"})
    for (const auto& l : all_loops_with_axis(s, axis)) vectorize_feature_loop(s, l, knobs.vector_lanes);
  return s.kernel();
}

Kernel schedule_gat_over_format_cpu(const Kernel& loops, const FormatSpec& spec, const CpuKnobs& knobs) {
  Schedule s(loops);
  std::vector<std::string> tops, partitioned, ranges;
  if (spec.kind == FormatKind::Coo) {
    coo_top_level(loops, tops, ranges);
    partitioned = tops;
  } else {
    top_level(loops, tops, partitioned, ranges);
  }
  owner_tasks(s, partitioned, ranges, knobs);
  // Innermost first, so a head loop around a feature loop stays serial.
  for (const auto& axis : {"F", "H"})
    for (const auto& l : all_loops_with_axis(s, axis))
      if (loop_names(find_loop(s.kernel().body, l)->body).empty())
        (void)s.attempt([&] { vectorize_feature_loop(s, l, knobs.vector_lanes); });
  return s.kernel();
}

}  // namespace strata::sc
