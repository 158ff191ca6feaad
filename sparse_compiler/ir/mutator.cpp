#include "sparse_compiler/ir/mutator.h"

#include "core/error.h"

namespace strata::sc {

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define STRATA_X(T) \
  case NodeKind::T: return visit(static_cast<const T##Node*>(e.get()), e);
    STRATA_IR_EXPRS(STRATA_X)
#undef STRATA_X
    default: STRATA_UNREACHABLE("statement {} in expression position", node_kind_name(e.kind()));
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define STRATA_X(T) \
  case NodeKind::T: return visit(static_cast<const T##Node*>(s.get()), s);
    STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X
    default: STRATA_UNREACHABLE("expression {} in statement position", node_kind_name(s.kind()));
  }
}

Expr IRMutator::visit(const IntImmNode*, const Expr& self) { return self; }
Expr IRMutator::visit(const FloatImmNode*, const Expr& self) { return self; }
Expr IRMutator::visit(const VarNode*, const Expr& self) { return self; }
Expr IRMutator::visit(const CastNode* op, const Expr& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : cast(op->type, v);
}

#define STRATA_BINARY(T, factory)                                   \
  Expr IRMutator::visit(const T##Node* op, const Expr& self) {      \
    Expr a = mutate(op->a), b = mutate(op->b);                      \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;          \
    return factory(a, b);                                           \
  }
STRATA_BINARY(Add, add)
STRATA_BINARY(Sub, sub)
STRATA_BINARY(Mul, mul)
STRATA_BINARY(Div, div)
STRATA_BINARY(Mod, mod)
STRATA_BINARY(Min, min)
STRATA_BINARY(Max, max)
STRATA_BINARY(EQ, eq)
STRATA_BINARY(NE, ne)
STRATA_BINARY(LT, lt)
STRATA_BINARY(LE, le)
STRATA_BINARY(And, logical_and)
STRATA_BINARY(Or, logical_or)
#undef STRATA_BINARY

Expr IRMutator::visit(const NotNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? self : logical_not(a);
}
Expr IRMutator::visit(const SelectNode* op, const Expr& self) {
  Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return select(c, t, f);
}
Expr IRMutator::visit(const LoadNode* op, const Expr& self) {
  Expr i = mutate(op->index);
  return i.same_as(op->index) ? self : load(op->type.element_of(), op->buffer, i);
}
Expr IRMutator::visit(const SparseLoadNode* op, const Expr& self) {
  std::vector<Expr> idx;
  bool changed = false;
  for (const auto& i : op->indices) {
    idx.push_back(mutate(i));
    changed |= !idx.back().same_as(i);
  }
  return changed ? sparse_load(op->buffer, std::move(idx)) : self;
}
Expr IRMutator::visit(const RampNode* op, const Expr& self) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return self;
  return ramp(b, s, op->lanes);
}
Expr IRMutator::visit(const BroadcastNode* op, const Expr& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : broadcast(v, op->lanes);
}
Expr IRMutator::visit(const CallNode* op, const Expr& self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const auto& a : op->args) {
    args.push_back(mutate(a));
    changed |= !args.back().same_as(a);
  }
  return changed ? call(op->type, op->name, std::move(args), op->buffers) : self;
}
Expr IRMutator::visit(const VectorReduceNode* op, const Expr& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : vector_reduce(op->op, v);
}

Stmt IRMutator::visit(const ForNode* op, const Stmt& self) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
  if (!body.defined()) return Stmt();
  return for_loop(op->var, mn, ext, op->for_kind, body, op->annotations);
}
Stmt IRMutator::visit(const StoreNode* op, const Stmt& self) {
  Expr i = mutate(op->index), v = mutate(op->value);
  if (i.same_as(op->index) && v.same_as(op->value)) return self;
  return store(op->buffer, i, v, op->store_kind);
}
Stmt IRMutator::visit(const SparseStoreNode* op, const Stmt& self) {
  std::vector<Expr> idx;
  bool changed = false;
  for (const auto& i : op->indices) {
    idx.push_back(mutate(i));
    changed |= !idx.back().same_as(i);
  }
  Expr v = mutate(op->value);
  changed |= !v.same_as(op->value);
  return changed ? sparse_store(op->buffer, std::move(idx), v) : self;
}
Stmt IRMutator::visit(const SeqNode* op, const Stmt& self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const auto& s : op->stmts) {
    out.push_back(mutate(s));
    changed |= !out.back().same_as(s);
  }
  return changed ? seq(std::move(out)) : self;
}
Stmt IRMutator::visit(const IfThenElseNode* op, const Stmt& self) {
  Expr c = mutate(op->condition);
  Stmt t = mutate(op->then_case), e = mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  if (!t.defined() && !e.defined()) return Stmt();
  if (!t.defined()) return if_then_else(logical_not(c), e);
  return if_then_else(c, t, e);
}
Stmt IRMutator::visit(const LetStmtNode* op, const Stmt& self) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  if (!b.defined()) return Stmt();
  return let_stmt(op->var, v, b);
}
Stmt IRMutator::visit(const AllocateNode* op, const Stmt& self) {
  Stmt b = mutate(op->body);
  if (b.same_as(op->body)) return self;
  if (!b.defined()) return Stmt();
  return allocate(op->buffer, op->type, op->size, op->scope, b);
}
Stmt IRMutator::visit(const PrefetchNode* op, const Stmt& self) {
  Expr i = mutate(op->index);
  return i.same_as(op->index) ? self : prefetch(op->buffer, i);
}
Stmt IRMutator::visit(const EvaluateNode* op, const Stmt& self) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? self : evaluate(v);
}
Stmt IRMutator::visit(const SparseIterationNode* op, const Stmt& self) {
  Stmt init = mutate(op->init), body = mutate(op->body);
  if (init.same_as(op->init) && body.same_as(op->body)) return self;
  return sparse_iteration(op->name, op->iters, init, body, op->fuse_group);
}

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::map<std::string, Expr>& r) : r_(r) {}

 protected:
  Expr visit(const VarNode* op, const Expr& self) override {
    auto it = r_.find(op->name);
    return it == r_.end() ? self : it->second;
  }

 private:
  const std::map<std::string, Expr>& r_;
};
}  // namespace

Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements) {
  Substituter s(replacements);
  return s.mutate(e);
}
Stmt substitute(const Stmt& s, const std::map<std::string, Expr>& replacements) {
  Substituter sub(replacements);
  return sub.mutate(s);
}

}  // namespace strata::sc
