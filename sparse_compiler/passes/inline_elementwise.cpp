// inline_elementwise: a point-wise producer substituted where it is read.
// Legality and refusals: passes/fuse_row_programs.h.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/passes/fuse_row_programs.h"
#include "sparse_compiler/passes/row_program.h"

namespace strata::sc {

Kernel inline_elementwise(const Kernel& k, const std::set<std::string>& keep, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "inline_elementwise");
  const Expr row = var(r.row.var);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < r.nests.size() && !changed; ++n) {
      const auto* it = pointwise_nest(r.nests[n]);
      if (!it) continue;
      std::map<std::string, Expr> lets;
      Stmt body = it->body;
      while (const auto* l = body.as<LetStmtNode>()) {
        lets[l->var] = substitute(l->value, lets);
        body = l->body;
      }
      const auto* st = body.as<SparseStoreNode>();
      if (!st) continue;
      const std::string B = st->buffer->name;
      const Param* p = out.find_param(B);
      if (!p || p->role != ParamRole::Output || keep.count(B)) continue;
      auto refuse = [&](const std::string& reason) {
        add_reason(why, fmt::format("inline_elementwise: {} stays in memory: {}", B, reason));
      };
      // Every point of B, once: the row, then the nest's iterators over B's axes.
      bool pointwise = st->indices.size() == it->iters.size() + 1 && st->buffer->axes.front() == r.row.axis &&
                       structural_equal(st->indices.front(), row);
      for (size_t t = 0; pointwise && t < it->iters.size(); ++t)
        pointwise = is_var(st->indices[t + 1], it->iters[t].var) && st->buffer->axes[t + 1] == it->iters[t].axis;
      if (!pointwise) {
        refuse(fmt::format("{} does not compute each of its points once", it->name));
        continue;
      }
      const Expr value = substitute(st->value, lets);
      if (reads_sparse_buffer(value, B)) {
        refuse(fmt::format("{} reads it to compute it", it->name));
        continue;
      }
      std::string blocked;
      for (size_t q = 0; q < r.nests.size() && blocked.empty(); ++q) {
        if (q == n) continue;
        const auto written = buffers_written(r.nests[q]);
        if (written.count(B)) blocked = "another nest writes it too";
        if (q < n && buffers_read(r.nests[q]).count(B)) blocked = "a nest reads it before it is computed";
        if (q > n)
          for (const auto& a : sparse_accesses(value))
            if (written.count(a.buffer))
              blocked = fmt::format("a later nest changes {}, which its value reads", a.buffer);
      }
      if (!blocked.empty()) {
        refuse(blocked);
        continue;
      }
      bool own_row = true;
      std::vector<Stmt> nests;
      for (size_t q = 0; q < r.nests.size(); ++q) {
        if (q == n) continue;
        nests.push_back(replace_loads(r.nests[q], B, [&](const std::vector<Expr>& idx) {
          own_row &= structural_equal(idx.front(), row);
          std::map<std::string, Expr> at;
          for (size_t t = 0; t < it->iters.size(); ++t) at[it->iters[t].var] = idx[t + 1];
          return substitute(value, at);
        }));
      }
      if (!own_row) {
        refuse("a nest reads it at another row");
        continue;
      }
      r.nests = std::move(nests);
      drop_buffer(out, B);
      changed = true;
    }
  }
  return with_rows(out, r);
}

}  // namespace strata::sc
