#include "sparse_compiler/passes/simplify.h"

#include "sparse_compiler/passes/linear_form.h"

#include <set>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"

namespace strata::sc {
namespace {

bool linear_type(Type t) { return t.is_int() && t.is_scalar(); }

const int64_t* const_bool(const Expr& e) {
  const auto* n = e.as<IntImmNode>();
  return (n && n->type.is_bool()) ? &n->value : nullptr;
}

class Simplifier : public IRMutator {
 protected:
  Expr linearize(const Expr& e) {
    if (!linear_type(e.type())) return e;
    Expr r = from_linear(to_linear(e), e.type());
    return structural_equal(r, e) ? e : r;
  }

  Expr visit(const AddNode* op, const Expr& self) override { return linearize(IRMutator::visit(op, self)); }
  // Integer arithmetic only: a float `x - x` is NaN for an infinite or NaN x, and
  // a float `x * 0` likewise, so floats keep their IEEE meaning (no fast-math folds).
  Expr visit(const SubNode* op, const Expr& self) override { return linearize(IRMutator::visit(op, self)); }
  Expr visit(const MulNode* op, const Expr& self) override { return linearize(IRMutator::visit(op, self)); }

  Expr visit(const MinNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    if (const auto* m = e.as<MinNode>(); m && structural_equal(m->a, m->b)) return m->a;
    return e;
  }
  Expr visit(const MaxNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    if (const auto* m = e.as<MaxNode>(); m && structural_equal(m->a, m->b)) return m->a;
    return e;
  }

  template <class Node, class F>
  Expr fold_compare(const Node* op, const Expr& self, F cmp) {
    Expr e = IRMutator::visit(op, self);
    const auto* n = e.as<Node>();
    if (!n) return e;
    if (auto *a = as_const_int(n->a), *b = as_const_int(n->b); a && b && n->a.type().is_int())
      return make_bool(cmp(*a, *b));
    if (n->a.type().is_int() && n->a.type().is_scalar()) {
      // Compare the linear difference against zero when it is constant.
      LinearForm d = to_linear(n->a);
      d.add(to_linear(n->b), -1);
      bool all_zero = true;
      for (const auto& t : d.terms) all_zero &= t.second == 0;
      if (all_zero) return make_bool(cmp(d.constant, 0));
    }
    return e;
  }
  Expr visit(const EQNode* op, const Expr& self) override {
    return fold_compare(op, self, [](int64_t a, int64_t b) { return a == b; });
  }
  Expr visit(const NENode* op, const Expr& self) override {
    return fold_compare(op, self, [](int64_t a, int64_t b) { return a != b; });
  }
  Expr visit(const LTNode* op, const Expr& self) override {
    return fold_compare(op, self, [](int64_t a, int64_t b) { return a < b; });
  }
  Expr visit(const LENode* op, const Expr& self) override {
    return fold_compare(op, self, [](int64_t a, int64_t b) { return a <= b; });
  }
  Expr visit(const AndNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    const auto* n = e.as<AndNode>();
    if (!n) return e;
    if (const int64_t* a = const_bool(n->a)) return *a ? n->b : n->a;
    if (const int64_t* b = const_bool(n->b)) return *b ? n->a : n->b;
    return e;
  }
  Expr visit(const OrNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    const auto* n = e.as<OrNode>();
    if (!n) return e;
    if (const int64_t* a = const_bool(n->a)) return *a ? n->a : n->b;
    if (const int64_t* b = const_bool(n->b)) return *b ? n->b : n->a;
    return e;
  }
  Expr visit(const NotNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    const auto* n = e.as<NotNode>();
    if (n)
      if (const int64_t* a = const_bool(n->a)) return make_bool(!*a);
    return e;
  }
  Expr visit(const SelectNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    const auto* n = e.as<SelectNode>();
    if (!n) return e;
    if (const int64_t* c = const_bool(n->condition)) return *c ? n->true_value : n->false_value;
    for (const auto& f : facts_)
      if (structural_equal(f, n->condition)) return n->true_value;
    if (structural_equal(n->true_value, n->false_value)) return n->true_value;
    return e;
  }

  Stmt visit(const ForNode* op, const Stmt& self) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    if (const int64_t* n = as_const_int(ext)) {
      if (*n <= 0) return Stmt();
      if (*n == 1 && op->for_kind != ForKind::Vectorized && !is_gpu_binding(op->for_kind))
        return mutate(substitute(op->body, {{op->var, mn}}));
    }
    Stmt body = mutate(op->body);
    if (!body.defined()) return Stmt();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return for_loop(op->var, mn, ext, op->for_kind, body, op->annotations);
  }
  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate(op->condition);
    if (const int64_t* b = const_bool(c)) return mutate(*b ? op->then_case : op->else_case);
    // Inside the then branch the condition is known to hold.
    facts_.push_back(c);
    Stmt t = mutate(op->then_case);
    facts_.pop_back();
    Stmt e = mutate(op->else_case);
    if (!t.defined() && !e.defined()) return Stmt();
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    if (!t.defined()) return if_then_else(logical_not(c), e);
    return if_then_else(c, t, e);
  }
  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    if (as_const_int(v) || as_const_float(v) || v.as<VarNode>()) return mutate(substitute(op->body, {{op->var, v}}));
    Stmt body = mutate(op->body);
    if (!body.defined()) return Stmt();
    bool used = false;
    for_each_expr(body, [&](const Expr& x) {
      if (const auto* n = x.as<VarNode>(); n && n->name == op->var) used = true;
    });
    if (!used) return body;
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return let_stmt(op->var, v, body);
  }
  Stmt visit(const EvaluateNode* op, const Stmt& self) override {
    // Expressions are pure except barrier intrinsics; evaluating anything else for
    // nothing is dead code.
    if (const auto* c = op->value.as<CallNode>(); c && call_has_side_effects(c->name)) return self;
    return Stmt();
  }

 private:
  std::vector<Expr> facts_;  // conditions of the enclosing then-branches
};

}  // namespace

Expr simplify(const Expr& e) {
  Simplifier s;
  return s.mutate(e);
}
Stmt simplify(const Stmt& st) {
  Simplifier s;
  return s.mutate(st);
}
Kernel simplify(const Kernel& k) {
  Kernel out = k;
  out.body = simplify(k.body);
  out.preprocess = simplify(k.preprocess);
  return out;
}

}  // namespace strata::sc
