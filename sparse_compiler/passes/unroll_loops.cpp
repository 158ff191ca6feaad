#include "sparse_compiler/passes/unroll_loops.h"

#include "core/error.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/passes/simplify.h"

namespace strata::sc {
namespace {
class Unroller : public IRMutator {
 protected:
  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    if (op->for_kind != ForKind::Unrolled) {
      if (body.same_as(op->body)) return self;
      return for_loop(op->var, op->min, op->extent, op->for_kind, body, op->annotations);
    }
    const int64_t* n = as_const_int(op->extent);
    STRATA_ASSERT(n, "unrolled loop {} has a non-constant extent", op->var);
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < *n; ++k) copies.push_back(substitute(body, {{op->var, add(op->min, make_int(k))}}));
    return simplify(seq(std::move(copies)));
  }
};
}  // namespace

Kernel unroll_loops(const Kernel& k) {
  k.require_stage(Stage::Loops, "unroll_loops");
  Unroller u;
  Kernel out = k;
  out.body = u.mutate(k.body);
  out.preprocess = u.mutate(k.preprocess);
  return out;
}

}  // namespace strata::sc
