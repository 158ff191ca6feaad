#include "sparse_compiler/passes/rebase_loops.h"

#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/passes/simplify.h"

namespace strata::sc {
namespace {
class Rebaser : public IRMutator {
 protected:
  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    const auto* diff = op->extent.as<SubNode>();
    if (diff && is_zero(op->min) && op->for_kind == ForKind::Serial) {
      const Expr lo = diff->b;
      Stmt rebased = simplify(substitute(body, {{op->var, sub(var(op->var), lo)}}));
      return for_loop(op->var, lo, op->extent, op->for_kind, rebased, op->annotations);
    }
    if (body.same_as(op->body)) return self;
    return for_loop(op->var, op->min, op->extent, op->for_kind, body, op->annotations);
  }
};
}  // namespace

Kernel rebase_loops(const Kernel& k) {
  k.require_stage(Stage::Loops, "rebase_loops");
  Rebaser r;
  Kernel out = k;
  out.body = r.mutate(k.body);
  out.preprocess = r.mutate(k.preprocess);
  return out;
}

}  // namespace strata::sc
