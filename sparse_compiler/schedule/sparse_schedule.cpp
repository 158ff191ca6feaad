#include "sparse_compiler/schedule/sparse_schedule.h"

#include <algorithm>
#include <functional>
#include <map>

#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/schedule/schedule_error.h"

namespace strata::sc {
namespace {

// Replaces sparse iteration `name` by f(node); throws when absent.
Kernel rewrite_iteration(const Kernel& k, const char* prim, const std::string& name,
                         const std::function<Stmt(const SparseIterationNode*)>& f) {
  k.require_stage(Stage::Coordinate, prim);
  class R : public IRMutator {
   public:
    R(const std::string& n, const std::function<Stmt(const SparseIterationNode*)>& f) : n_(n), f_(f) {}
    bool found = false;

   protected:
    Stmt visit(const SparseIterationNode* op, const Stmt& self) override {
      if (op->name != n_) return self;
      found = true;
      return f_(op);
    }

   private:
    const std::string& n_;
    const std::function<Stmt(const SparseIterationNode*)>& f_;
  } r(name, f);
  Kernel out = k;
  out.body = r.mutate(k.body);
  STRATA_SCHED_CHECK(r.found, "{}: kernel {} has no sparse iteration named {}", prim, k.name, name);
  return out;
}

int index_of(const SparseIterationNode* op, const std::string& v) {
  for (size_t t = 0; t < op->iters.size(); ++t)
    if (op->iters[t].var == v) return static_cast<int>(t);
  return -1;
}

}  // namespace

Kernel sparse_reorder(const Kernel& k, const std::string& iteration, const std::vector<std::string>& order) {
  return rewrite_iteration(k, "sparse_reorder", iteration, [&](const SparseIterationNode* op) {
    STRATA_SCHED_CHECK(order.size() == op->iters.size(), "sparse_reorder({}): {} iterators given, the iteration has {}",
                       iteration, order.size(), op->iters.size());
    std::vector<IterVar> iters;
    std::vector<int> groups;
    for (const auto& v : order) {
      const int t = index_of(op, v);
      STRATA_SCHED_CHECK(t >= 0, "sparse_reorder({}): no iterator named {}", iteration, v);
      for (const auto& seen : iters) STRATA_SCHED_CHECK(seen.var != v, "sparse_reorder({}): {} listed twice", iteration, v);
      iters.push_back(op->iters[t]);
      groups.push_back(static_cast<int>(groups.size()));
    }
    for (size_t t = 0; t < iters.size(); ++t) {
      const Axis& a = iters[t].axis;
      if (!a->parent || a->is_dense()) continue;
      bool parent_first = false;
      for (size_t q = 0; q < t; ++q) parent_first |= iters[q].axis == a->parent;
      STRATA_SCHED_CHECK(parent_first, "sparse_reorder({}): {} (axis {}) would come before its parent axis {}", iteration,
                         iters[t].var, a->name, a->parent->name);
    }
    return sparse_iteration(op->name, iters, op->init, op->body, groups);
  });
}

Kernel sparse_fuse(const Kernel& k, const std::string& iteration, const std::vector<std::string>& vars) {
  return rewrite_iteration(k, "sparse_fuse", iteration, [&](const SparseIterationNode* op) {
    STRATA_SCHED_CHECK(vars.size() == 2, "sparse_fuse({}): fusing {} iterators is not supported (give 2)", iteration,
                       vars.size());
    const int a = index_of(op, vars[0]), b = index_of(op, vars[1]);
    STRATA_SCHED_CHECK(a >= 0 && b >= 0, "sparse_fuse({}): no iterator named {}", iteration, a < 0 ? vars[0] : vars[1]);
    STRATA_SCHED_CHECK(b == a + 1, "sparse_fuse({}): {} and {} are not consecutive", iteration, vars[0], vars[1]);
    const Axis &outer = op->iters[a].axis, &inner = op->iters[b].axis;
    STRATA_SCHED_CHECK(!outer->parent && outer->kind == AxisKind::DenseFixed,
                       "sparse_fuse({}): {} must iterate a dense-fixed root axis, but {} is {}", iteration, vars[0],
                       outer->name, axis_kind_name(outer->kind));
    STRATA_SCHED_CHECK(inner->parent == outer, "sparse_fuse({}): axis {} of {} is not a child of axis {} of {}", iteration,
                       inner->name, vars[1], outer->name, vars[0]);
    // A spatial iterator fused with a reduction one makes a reduction group; the
    // init would then run per non-zero, so it must have been split out first.
    STRATA_SCHED_CHECK(op->iters[a].reduction == op->iters[b].reduction || !op->init.defined(),
                       "sparse_fuse({}): {} is spatial and {} a reduction; split the init out first (split_init)",
                       iteration, op->iters[a].reduction ? vars[1] : vars[0], op->iters[a].reduction ? vars[0] : vars[1]);
    std::vector<int> groups = op->fuse_group;
    groups[b] = groups[a];
    return sparse_iteration(op->name, op->iters, op->init, op->body, groups);
  });
}

Kernel sparse_split(const Kernel& k, const std::string& iteration, const std::string& iter, int64_t factor) {
  NameGen names(k);
  Kernel out = k;
  Axis outer_axis, inner_axis;
  Kernel r = rewrite_iteration(k, "sparse_split", iteration, [&](const SparseIterationNode* op) {
    const int t = index_of(op, iter);
    STRATA_SCHED_CHECK(t >= 0, "sparse_split({}): no iterator named {}", iteration, iter);
    const Axis& a = op->iters[t].axis;
    const int64_t* len = as_const_int(a->length);
    STRATA_SCHED_CHECK(a->kind == AxisKind::DenseFixed && !a->parent && len,
                       "sparse_split({}, {}): axis {} must be dense-fixed with a constant length", iteration, iter,
                       a->name);
    STRATA_SCHED_CHECK(factor >= 1 && factor < *len && *len % factor == 0,
                       "sparse_split({}, {}, {}): the factor must divide the length {} and be smaller", iteration, iter,
                       factor, *len);
    outer_axis = dense_fixed(names.fresh(a->name + "_o"), make_int(*len / factor));
    inner_axis = dense_fixed(names.fresh(a->name + "_i"), make_int(factor));
    const std::string vo = names.fresh(iter + "_o"), vi = names.fresh(iter + "_i");
    std::vector<IterVar> iters;
    std::vector<int> groups;
    for (size_t q = 0; q < op->iters.size(); ++q) {
      if (static_cast<int>(q) == t) {
        iters.push_back({vo, outer_axis, op->iters[q].reduction});
        iters.push_back({vi, inner_axis, op->iters[q].reduction});
        groups.push_back(static_cast<int>(groups.size()));
        groups.push_back(static_cast<int>(groups.size()));
      } else {
        iters.push_back(op->iters[q]);
        groups.push_back(static_cast<int>(groups.size()));
      }
    }
    const std::map<std::string, Expr> sub_f{{iter, add(mul(var(vo), make_int(factor)), var(vi))}};
    return sparse_iteration(op->name, iters, substitute(op->init, sub_f), substitute(op->body, sub_f), groups);
  });
  r.axes.push_back(outer_axis);
  r.axes.push_back(inner_axis);
  return r;
}

}  // namespace strata::sc
