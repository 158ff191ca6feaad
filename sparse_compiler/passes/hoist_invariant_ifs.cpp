#include "sparse_compiler/passes/hoist_invariant_ifs.h"

#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {
namespace {

class Unswitch : public IRMutator {
 protected:
  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    const auto* n = s.as<IfThenElseNode>();
    // if (a && b) S  ->  if (a) if (b) S, so a and b can rise separately.
    if (n && !n->else_case.defined())
      if (const auto* conj = n->condition.as<AndNode>())
        return mutate(if_then_else(conj->a, if_then_else(conj->b, n->then_case)));
    return s;
  }
  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    const auto* n = body.as<IfThenElseNode>();
    if (n && !n->else_case.defined() && !uses_var(n->condition, op->var) && op->for_kind == ForKind::Serial)
      return if_then_else(n->condition, mutate(for_loop(op->var, op->min, op->extent, op->for_kind, n->then_case,
                                                        op->annotations)));
    if (body.same_as(op->body)) return self;
    return for_loop(op->var, op->min, op->extent, op->for_kind, body, op->annotations);
  }
};

}  // namespace

Kernel hoist_invariant_ifs(const Kernel& k) {
  k.require_stage(Stage::Loops, "hoist_invariant_ifs");
  Unswitch u;
  Kernel out = k;
  // Simplify afterwards: a hoisted guard makes the selects it duplicated inside
  // (padding reads as 0) redundant.
  out.body = simplify(u.mutate(k.body));
  out.preprocess = simplify(u.mutate(k.preprocess));
  return out;
}

}  // namespace strata::sc
