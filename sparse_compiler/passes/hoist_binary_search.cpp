#include "sparse_compiler/passes/hoist_binary_search.h"

#include <map>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/visitor.h"

namespace strata::sc {
namespace {

struct LoopInfo {
  std::string var;
  Expr min, extent;
};

// Names read by an expression: variables, and buffers of (sparse) loads.
struct Reads {
  std::set<std::string> vars, buffers;
};
Reads reads_of(const Expr& e) {
  Reads r;
  for_each_expr(e, [&](const Expr& x) {
    if (const auto* v = x.as<VarNode>()) r.vars.insert(v->name);
    if (const auto* l = x.as<LoadNode>()) r.buffers.insert(l->buffer);
    if (const auto* s = x.as<SparseLoadNode>()) r.buffers.insert(s->buffer->name);
    if (const auto* c = x.as<CallNode>()) r.buffers.insert(c->buffers.begin(), c->buffers.end());
  });
  return r;
}

class Hoister : public IRMutator {
 public:
  explicit Hoister(Kernel& k) : k_(k), names_(k) {
    for (const auto& p : k.params)
      if (p.kind == ParamKind::Scalar) scalars_.insert(p.name);
    for (const auto& a : k.axes) {
      if (!a->indptr.empty()) structure_.insert(a->indptr);
      if (!a->indices.empty()) structure_.insert(a->indices);
    }
  }

  Stmt preprocess() const { return seq(pre_); }

 protected:
  Stmt visit(const ForNode* op, const Stmt& self) override {
    loops_.push_back({op->var, op->min, op->extent});
    Stmt s = IRMutator::visit(op, self);
    loops_.pop_back();
    return s;
  }

  // A let whose value reads only structure can be seen through: a search that
  // depends on it depends on what the let reads (the row of a fused position).
  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    bool structural = true;
    const Reads r = reads_of(v);
    for (const auto& b : r.buffers) structural &= structure_.count(b) > 0 || workspaces_.count(b) > 0;
    if (structural) lets_[op->var] = substitute(v, lets_);
    Stmt body = mutate(op->body);
    lets_.erase(op->var);
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return let_stmt(op->var, v, body);
  }

  Expr visit(const CallNode* op, const Expr& self) override {
    Expr mutated = IRMutator::visit(op, self);
    const auto* c = mutated.as<CallNode>();
    if (!c || (c->name != "upper_bound" && c->name != "find")) return mutated;
    const Expr e = substitute(mutated, lets_);
    const Reads r = reads_of(e);
    for (const auto& b : r.buffers)
      if (!structure_.count(b) && !workspaces_.count(b)) return mutated;  // reads values, not structure
    // The loops the search depends on, outermost first.
    std::vector<const LoopInfo*> deps;
    for (const auto& L : loops_) {
      if (!r.vars.count(L.var)) continue;
      if (!is_zero(L.min) || !param_only(L.extent)) return mutated;
      deps.push_back(&L);
    }
    for (const auto& v : r.vars) {
      bool known = scalars_.count(v) > 0;
      for (const auto* L : deps) known |= L->var == v;
      if (!known) return mutated;  // depends on a variable that is not a loop or a parameter
    }
    auto it = memo_.find(e);
    std::string buf;
    if (it != memo_.end()) {
      buf = it->second;
    } else {
      buf = names_.fresh(fmt::format("mid_{}", memo_.size()));
      memo_.emplace(e, buf);
      workspaces_.insert(buf);
      Expr size = make_int(1);
      for (const auto* L : deps) size = mul(size, L->extent);
      k_.params.push_back(Param::workspace(buf, DType::I64, size));
      // preprocess: for each dependency loop (fresh names): mid[flat] = search
      std::map<std::string, Expr> rename;
      for (const auto* L : deps) rename[L->var] = var(names_.fresh(L->var + "_pre"));
      Stmt body = store(buf, flat_index(deps, rename), substitute(e, rename));
      for (auto d = deps.rbegin(); d != deps.rend(); ++d)
        body = for_loop(rename[(*d)->var].as<VarNode>()->name, make_int(0), (*d)->extent, ForKind::Serial, body);
      pre_.push_back(body);
    }
    return load(Type::i64(), buf, flat_index(deps, {}));
  }

 private:
  bool param_only(const Expr& e) const {
    const Reads r = reads_of(e);
    if (!r.buffers.empty()) return false;
    for (const auto& v : r.vars)
      if (!scalars_.count(v)) return false;
    return true;
  }

  static Expr flat_index(const std::vector<const LoopInfo*>& deps, const std::map<std::string, Expr>& rename) {
    Expr idx = make_int(0);
    for (const auto* L : deps) {
      auto it = rename.find(L->var);
      Expr v = it == rename.end() ? var(L->var) : it->second;
      idx = add(mul(idx, L->extent), v);
    }
    return idx;
  }

  Kernel& k_;
  NameGen names_;
  std::set<std::string> scalars_, structure_;
  std::vector<LoopInfo> loops_;
  std::unordered_map<Expr, std::string, ExprHash, ExprEqual> memo_;
  std::set<std::string> workspaces_;
  std::map<std::string, Expr> lets_;
  std::vector<Stmt> pre_;
};

}  // namespace

Kernel hoist_binary_search(const Kernel& k) {
  k.require_stage(Stage::Position, "hoist_binary_search");
  Kernel out = k;
  Hoister h(out);
  out.body = h.mutate(k.body);
  out.preprocess = seq({k.preprocess, h.preprocess()});
  return out;
}

}  // namespace strata::sc
