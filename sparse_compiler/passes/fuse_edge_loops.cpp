// fuse_edge_loops: adjacent loops over a row's edges as one.
// Legality and refusals: passes/fuse_row_programs.h.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/passes/fuse_row_programs.h"
#include "sparse_compiler/passes/row_program.h"

namespace strata::sc {

Kernel fuse_edge_loops(const Kernel& k, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "fuse_edge_loops");
  NameGen names(k);
  auto edge_loop = [&](const SparseIterationNode* s) {
    return s && is_edge_axis(s->iters.front().axis, r.row.axis) &&
           (s->iters.size() == 1 || s->fuse_group[0] != s->fuse_group[1]) &&
           (s->iters.size() > 1 || !s->init.defined() || s->iters.front().reduction);
  };
  // Nests that are not edge loops and share nothing with edge loop n (neither
  // writes what the other touches) may move ahead of it, so that it meets the
  // next edge loop (a softmax's init between the scores and the max pass). Returns
  // where edge loop n went (the order before, in `unmoved`); kept only when the
  // two then fuse.
  auto hoist_independent = [&](size_t n, std::vector<Stmt>& unmoved) {
    const auto wa = buffers_written(r.nests[n]), ra = buffers_read(r.nests[n]);
    size_t q = n + 1;
    for (; q < r.nests.size() && !edge_loop(r.nests[q].as<SparseIterationNode>()); ++q) {
      const auto wc = buffers_written(r.nests[q]), rc = buffers_read(r.nests[q]);
      bool independent = true;
      for (const auto& B : wc) independent &= !wa.count(B) && !ra.count(B);
      for (const auto& B : wa) independent &= !rc.count(B);
      if (!independent) return n;
    }
    if (q == n + 1 || q == r.nests.size()) return n;
    const auto at = [&](size_t x) { return r.nests.begin() + static_cast<std::ptrdiff_t>(x); };
    unmoved = r.nests;
    std::rotate(at(n), at(n + 1), at(q));
    return q - 1;
  };
  for (size_t n = 0; n + 1 < r.nests.size();) {
    const size_t start = n;
    std::vector<Stmt> unmoved;  // the order before a hoist, to undo it
    if (edge_loop(r.nests[n].as<SparseIterationNode>())) n = hoist_independent(n, unmoved);
    auto next = [&] {
      if (n != start) r.nests = unmoved;
      n = start + 1;
    };
    const auto* a = r.nests[n].as<SparseIterationNode>();
    const auto* b = n + 1 < r.nests.size() ? r.nests[n + 1].as<SparseIterationNode>() : nullptr;
    if (!edge_loop(a) || !edge_loop(b) || a->iters.front().axis != b->iters.front().axis) {
      next();
      continue;
    }
    const std::string ja = a->iters.front().var, jb = b->iters.front().var;
    const auto wa = buffers_written(r.nests[n]), ra = buffers_read(r.nests[n]);
    const auto wb = buffers_written(r.nests[n + 1]), rb = buffers_read(r.nests[n + 1]);
    // What one writes and the other touches must be an edge buffer touched only at
    // the edge being worked on; a row value the first builds over all edges (a
    // sum, a max) is not final until its loop ends.
    auto edge_buffer = [&](const std::string& B) {
      const SparseBuffer* buf = out.find_buffer(B);
      return buf && (*buf)->axes.size() >= 2 && (*buf)->axes[1] == a->iters.front().axis;
    };
    auto at_own_edge = [&](const std::string& B) {
      if (!edge_buffer(B)) return false;
      for (const auto& [nest, j] : {std::pair{r.nests[n], ja}, std::pair{r.nests[n + 1], jb}})
        for (const auto& acc : sparse_accesses(nest))
          if (acc.buffer == B && !is_var(acc.indices[1], j)) return false;
      return true;
    };
    std::string reason;
    for (const auto& B : wa)
      if (reason.empty() && rb.count(B) && !at_own_edge(B))
        reason = edge_buffer(B)
                     ? fmt::format("{} reads {} at another edge than {} wrote it", b->name, B, a->name)
                     : fmt::format("{} reads {}, which {} builds up over all of the row's edges", b->name, B, a->name);
    for (const auto& B : wb)
      if (reason.empty() && (wa.count(B) || ra.count(B)) && !at_own_edge(B))
        reason =
            fmt::format("{} writes {}, which {} touches at other edges or over the whole row", b->name, B, a->name);
    if (!reason.empty()) {
      add_reason(why, fmt::format("fuse_edge_loops: {} and {} stay apart: {}", a->name, b->name, reason));
      next();
      continue;
    }
    // An init that runs before a sum over the edges becomes a nest of its own
    // ahead of the fused loop; the rest of each nest runs per edge.
    std::vector<Stmt> before;
    auto per_edge = [&](const SparseIterationNode* s, const std::string& j) {
      Stmt init = s->init;
      if (init.defined() && s->iters.front().reduction) {
        std::vector<IterVar> init_iters;
        std::map<std::string, std::string> fresh;
        for (size_t t = 1; t < s->iters.size(); ++t)
          if (!s->iters[t].reduction) {
            fresh[s->iters[t].var] = names.fresh(s->iters[t].var);
            init_iters.push_back({fresh[s->iters[t].var], s->iters[t].axis, false});
          }
        Stmt hoisted = rename_vars(init, fresh);
        before.push_back(init_iters.empty() ? hoisted
                                            : sparse_iteration(s->name + "_init", init_iters, Stmt(), hoisted));
        init = Stmt();
      }
      Stmt rest = s->body;
      if (s->iters.size() > 1)
        rest = sparse_iteration(s->name, std::vector<IterVar>(s->iters.begin() + 1, s->iters.end()), init, s->body,
                                std::vector<int>(s->fuse_group.begin() + 1, s->fuse_group.end()));
      return s->iters.front().var == j ? rest : rename_vars(rest, {{s->iters.front().var, j}});
    };
    Stmt edge_body = seq({per_edge(a, ja), per_edge(b, ja)});
    IterVar j{ja, a->iters.front().axis, a->iters.front().reduction || b->iters.front().reduction};
    before.push_back(sparse_iteration(a->name + "_" + b->name, {j}, Stmt(), edge_body));
    r.nests.erase(r.nests.begin() + static_cast<std::ptrdiff_t>(n),
                  r.nests.begin() + static_cast<std::ptrdiff_t>(n) + 2);
    r.nests.insert(r.nests.begin() + static_cast<std::ptrdiff_t>(n), before.begin(), before.end());
    n += before.size() - 1;  // the fused loop may fuse with the next one
  }
  return with_rows(out, r);
}

}  // namespace strata::sc
