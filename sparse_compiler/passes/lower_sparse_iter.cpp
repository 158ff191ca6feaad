#include "sparse_compiler/passes/lower_sparse_iter.h"

#include <map>

#include "core/error.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/passes/materialize_aux_buffers.h"

namespace strata::sc {
namespace {

struct IterState {
  Axis axis;
  Expr pos;    // position within the parent's positions (relative)
  Expr coord;  // coordinate in the axis's index space
};
using Env = std::map<std::string, IterState>;

struct Loop {
  std::string var;
  Expr min, extent;
  std::vector<std::pair<std::string, Expr>> lets;  // bound at the top of the loop body
  Annotations ann;
};

class IterationLowerer {
 public:
  IterationLowerer(const Kernel& k, NameGen& names) : k_(k), names_(names), aux_(find_aux_buffers(k)) {}

  // Lowers `op`; `outer` holds the iterators of enclosing sparse iterations when
  // op is nested in another one's body (their axes may parent op's axes).
  Stmt lower(const SparseIterationNode* op, const Env& outer = {}) {
    for (const auto& it : op->iters)
      for (const auto& [v, s] : outer)
        STRATA_ASSERT(s.axis != it.axis, "{}: iterator {} iterates axis {}, already iterated by an enclosing {}",
                      op->name, it.var, it.axis->name, v);
    for (size_t a = 0; a < op->iters.size(); ++a)
      for (size_t b = a + 1; b < op->iters.size(); ++b)
        STRATA_ASSERT(op->iters[a].axis != op->iters[b].axis, "{}: two iterators over axis {}", op->name,
                      op->iters[a].axis->name);
    // Groups of iterator indices lowered as one loop each.
    std::vector<std::vector<int>> groups;
    for (size_t t = 0; t < op->iters.size(); ++t) {
      if (t == 0 || op->fuse_group[t] != op->fuse_group[t - 1]) groups.emplace_back();
      groups.back().push_back(static_cast<int>(t));
    }
    size_t first_red = groups.size();
    for (size_t g = 0; g < groups.size() && first_red == groups.size(); ++g)
      for (int t : groups[g])
        if (op->iters[t].reduction) first_red = g;

    Env env = outer;
    std::vector<Loop> outer_loops;
    for (size_t g = 0; g < first_red; ++g) outer_loops.push_back(make_loop(op, groups[g], env, ""));
    if (first_red == groups.size() || !op->init.defined()) {
      std::vector<Loop> inner;
      for (size_t g = first_red; g < groups.size(); ++g) inner.push_back(make_loop(op, groups[g], env, ""));
      Stmt body = rewrite(op->body, env);
      return wrap(outer_loops, wrap(inner, body));
    }
    // Init: the spatial iterators below the first reduction, with their own loops.
    Env init_env = env;
    std::vector<Loop> init_loops;
    for (size_t g = first_red + 1; g < groups.size(); ++g) {
      bool spatial = true;
      for (int t : groups[g]) spatial &= !op->iters[t].reduction;
      if (!spatial) continue;
      for (int t : groups[g]) {
        const Axis& a = op->iters[t].axis;
        for (int r : groups[first_red])
          STRATA_ASSERT(!(a->parent && a->parent == op->iters[r].axis), "{}: spatial iterator {} depends on reduction iterator {}",
                        op->name, op->iters[t].var, op->iters[r].var);
      }
      init_loops.push_back(make_loop(op, groups[g], init_env, "_init"));
    }
    Stmt init = wrap(init_loops, rewrite(op->init, init_env));
    std::vector<Loop> inner;
    for (size_t g = first_red; g < groups.size(); ++g) inner.push_back(make_loop(op, groups[g], env, ""));
    Stmt body = wrap(inner, rewrite(op->body, env));
    return wrap(outer_loops, seq({init, body}));
  }

 private:
  const IterState& iter_over(const Axis& a, const Env& env) const {
    for (const auto& [v, s] : env)
      if (s.axis == a) return s;
    STRATA_UNREACHABLE("no iterator over axis {} is in scope", a->name);
  }

  // Positions of a's ancestors (root first), from the iterators in scope.
  std::vector<Expr> ancestor_positions(const Axis& a, const Env& env) const {
    std::vector<Expr> pos;
    for (Axis p = a->parent; p; p = p->parent) pos.insert(pos.begin(), iter_over(p, env).pos);
    return pos;
  }

  Expr indptr_at(const Axis& a, std::vector<Expr> parent_positions, int64_t delta) const {
    STRATA_ASSERT(!parent_positions.empty(), "variable axis {} without parent positions", a->name);
    parent_positions.back() = add(parent_positions.back(), make_int(delta));
    return sparse_load(aux_.indptr.at(a.get()), std::move(parent_positions));
  }

  Expr coordinate(const Axis& a, const std::vector<Expr>& parents, const Expr& pos) const {
    if (a->is_dense()) return pos;
    std::vector<Expr> chain = parents;
    chain.push_back(pos);
    return cast(Type::i64(), sparse_load(aux_.indices.at(a.get()), std::move(chain)));
  }

  Loop make_loop(const SparseIterationNode* op, const std::vector<int>& group, Env& env, const std::string& suffix) {
    Loop L;
    if (group.size() == 1) {
      const IterVar& it = op->iters[group[0]];
      const Axis& a = it.axis;
      L.var = names_.fresh(it.var + suffix);
      L.ann["axis"] = a->name;
      L.ann["iter"] = it.reduction ? "R" : "S";
      L.min = make_int(0);
      std::vector<Expr> parents = ancestor_positions(a, env);
      if (a->is_fixed()) {
        L.extent = a->fixed_extent();
      } else {
        L.extent = sub(indptr_at(a, parents, 1), indptr_at(a, parents, 0));
      }
      Expr pos = var(L.var);
      env[it.var] = {a, pos, coordinate(a, parents, pos)};
      return L;
    }
    STRATA_ASSERT(group.size() == 2, "{}: fusing {} iterators is not supported (at most 2)", op->name, group.size());
    const IterVar& outer = op->iters[group[0]];
    const IterVar& inner = op->iters[group[1]];
    const Axis &a0 = outer.axis, &a1 = inner.axis;
    STRATA_ASSERT(!a0->parent && a0->kind == AxisKind::DenseFixed && a1->parent == a0,
                  "{}: fused iterators need a dense-fixed root axis and its child, got {} and {}", op->name, a0->name,
                  a1->name);
    L.var = names_.fresh(outer.var + "_" + inner.var + suffix);
    L.ann["axis"] = a0->name + "*" + a1->name;
    L.ann["iter"] = (outer.reduction || inner.reduction) ? "R" : "S";
    L.min = make_int(0);
    const Expr flat = var(L.var);
    const std::string row = names_.fresh(outer.var + suffix);
    Expr pos1;
    if (a1->is_variable()) {
      L.extent = a1->nnz;
      L.lets.emplace_back(row, sub(upper_bound(a1->indptr, make_int(0), add(a0->length, make_int(1)), flat), make_int(1)));
      pos1 = sub(flat, indptr_at(a1, {var(row)}, 0));
    } else {
      const Expr w = a1->fixed_extent();
      L.extent = mul(a0->length, w);
      L.lets.emplace_back(row, div(flat, w));
      pos1 = mod(flat, w);
    }
    env[outer.var] = {a0, var(row), var(row)};
    env[inner.var] = {a1, pos1, coordinate(a1, {var(row)}, pos1)};
    return L;
  }

  Stmt wrap(const std::vector<Loop>& loops, Stmt body) const {
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      for (auto l = it->lets.rbegin(); l != it->lets.rend(); ++l) body = let_stmt(l->first, l->second, body);
      body = for_loop(it->var, it->min, it->extent, ForKind::Serial, body, it->ann);
    }
    return body;
  }

  // Coordinate-space body -> position space.
  class Rewriter : public IRMutator {
   public:
    Rewriter(IterationLowerer& L, const Env& env) : L_(L), env_(env) {}

   protected:
    Expr visit(const VarNode* op, const Expr& self) override {
      auto it = env_.find(op->name);
      return it == env_.end() ? self : it->second.coord;
    }
    Expr visit(const SparseLoadNode* op, const Expr& self) override {
      Expr guard;
      std::vector<Expr> pos = positions(op->buffer, op->indices, guard);
      Expr v = sparse_load(op->buffer, std::move(pos));
      return guard.defined() ? select(guard, v, make_zero(v.type())) : v;
    }
    Stmt visit(const SparseStoreNode* op, const Stmt& self) override {
      Expr guard;
      std::vector<Expr> pos = positions(op->buffer, op->indices, guard);
      Stmt s = sparse_store(op->buffer, std::move(pos), mutate(op->value));
      return guard.defined() ? if_then_else(guard, s) : s;
    }
    // A nested sparse iteration runs at every point of the enclosing one: it is
    // lowered inside, seeing the enclosing iterators (and their positions).
    Stmt visit(const SparseIterationNode* op, const Stmt&) override { return L_.lower(op, env_); }

   private:
    std::vector<Expr> positions(const SparseBuffer& b, const std::vector<Expr>& idx, Expr& guard) {
      std::vector<Expr> pos;
      std::vector<bool> direct;
      for (size_t d = 0; d < idx.size(); ++d) {
        const Axis& a = b->axes[d];
        // Fast path: the index is the iterator over this very axis, and the parent
        // dimension (if any) was matched the same way.
        if (const auto* v = idx[d].as<VarNode>()) {
          auto it = env_.find(v->name);
          if (it != env_.end() && it->second.axis == a && (!a->parent || (d > 0 && direct[d - 1]))) {
            pos.push_back(it->second.pos);
            direct.push_back(true);
            continue;
          }
        }
        Expr c = mutate(idx[d]);
        direct.push_back(false);
        if (a->is_dense()) {
          pos.push_back(c);
          continue;
        }
        STRATA_ASSERT(a->kind == AxisKind::SparseVariable,
                      "buffer {}: locating a coordinate in sparse-fixed axis {} is not supported", b->name, a->name);
        std::vector<Expr> parents(pos.begin(), pos.end());
        Expr lo = L_.indptr_at(a, parents, 0), hi = L_.indptr_at(a, parents, 1);
        Expr found = call(Type::i64(), "find", {lo, hi, c}, {a->indices});
        Expr ok = ge(found, make_int(0));
        guard = guard.defined() ? logical_and(guard, ok) : ok;
        pos.push_back(sub(found, lo));
      }
      return pos;
    }

    IterationLowerer& L_;
    const Env& env_;
  };

  Stmt rewrite(const Stmt& s, const Env& env) {
    Rewriter r(*this, env);
    return r.mutate(s);
  }

  const Kernel& k_;
  NameGen& names_;
  AuxBuffers aux_;
};

class IterationFinder : public IRMutator {
 public:
  explicit IterationFinder(IterationLowerer& L) : L_(L) {}

 protected:
  Stmt visit(const SparseIterationNode* op, const Stmt&) override { return L_.lower(op); }

 private:
  IterationLowerer& L_;
};

}  // namespace

Kernel lower_sparse_iter(const Kernel& k) {
  k.require_stage(Stage::Coordinate, "lower_sparse_iter");
  NameGen names;
  for (const auto& p : k.params) names.reserve(p.name);
  for (const auto& a : k.axes) names.reserve(a->name);
  for (const auto& b : k.buffers) names.reserve(b->name);
  IterationLowerer lowerer(k, names);
  IterationFinder finder(lowerer);
  Kernel out = k;
  out.body = finder.mutate(k.body);
  out.preprocess = finder.mutate(k.preprocess);
  out.stage = Stage::Position;
  return out;
}

}  // namespace strata::sc
