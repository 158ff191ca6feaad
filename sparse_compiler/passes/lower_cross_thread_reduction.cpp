#include "sparse_compiler/passes/lower_cross_thread_reduction.h"

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule_error.h"

namespace strata::sc {
namespace {

// acc[k] = acc[k] + e  (or e + acc[k]): returns e, or an undefined Expr.
Expr reduction_term(const StoreNode* st) {
  const auto* a = st->value.as<AddNode>();
  if (!a || st->store_kind != StoreKind::Plain || !st->value.type().is_scalar()) return Expr();
  auto is_self = [&](const Expr& x) {
    const auto* l = x.as<LoadNode>();
    return l && l->buffer == st->buffer && structural_equal(l->index, st->index);
  };
  if (is_self(a->a)) return a->b;
  if (is_self(a->b)) return a->a;
  return Expr();
}

class Lowerer : public IRMutator {
 public:
  explicit Lowerer(NameGen& names) : names_(names) {}

 protected:
  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    const auto* st = body.as<StoreNode>();
    const Expr e = (op->for_kind == ForKind::GpuThreadX && st) ? reduction_term(st) : Expr();
    if (!e.defined() || uses_var(st->index, op->var) || !uses_var(e, op->var)) {
      if (body.same_as(op->body)) return self;
      return for_loop(op->var, op->min, op->extent, op->for_kind, body, op->annotations);
    }
    const int64_t* w = as_const_int(op->extent);
    STRATA_SCHED_CHECK(w && *w >= 1 && *w <= 32 && (*w & (*w - 1)) == 0,
                       "bind({}, threadIdx.x): loop {} reduces into {}[{}] across threads, which needs a power-of-two "
                       "extent no larger than a warp (32), not {}",
                       op->var, op->var, st->buffer, to_string(st->index), to_string(op->extent));
    const Type t = e.type();
    const std::string red = names_.fresh(st->buffer + "_lanes");
    Stmt per_lane = for_loop(op->var, op->min, op->extent, op->for_kind,
                             store(red, sub(var(op->var), op->min), e), op->annotations);
    Stmt combine = store(st->buffer, st->index,
                         add(load(t, st->buffer, st->index), warp_reduce_add(t, red, *w)));
    return allocate(red, t, *w, MemoryScope::Stack, seq({per_lane, combine}));
  }

 private:
  NameGen& names_;
};

}  // namespace

Kernel lower_cross_thread_reduction(const Kernel& k) {
  k.require_stage(Stage::Loops, "lower_cross_thread_reduction");
  NameGen names(k);
  Lowerer l(names);
  Kernel out = k;
  out.body = l.mutate(k.body);
  out.preprocess = l.mutate(k.preprocess);
  return out;
}

}  // namespace strata::sc
