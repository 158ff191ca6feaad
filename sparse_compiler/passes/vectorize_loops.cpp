#include "sparse_compiler/passes/vectorize_loops.h"

#include <map>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/schedule/schedule_error.h"

namespace strata::sc {
namespace {

class Widen : public IRMutator {
 public:
  Widen(const ForNode* loop) : loop_(loop), lanes_(static_cast<int>(*as_const_int(loop->extent))) {
    ramp_ = ramp(simplify(loop->min), make_int(1), lanes_);
  }

 protected:
  Expr visit(const VarNode* op, const Expr& self) override {
    if (op->name == loop_->var) return ramp_;
    auto it = widened_.find(op->name);
    return it == widened_.end() ? self : it->second;
  }

  // Keep affine index arithmetic as ramps and broadcasts.
  Expr visit(const AddNode* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    if (Expr r = affine(a, b, '+'); r.defined()) return r;
    return add(a, b);
  }
  Expr visit(const SubNode* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    if (Expr r = affine(a, b, '-'); r.defined()) return r;
    return sub(a, b);
  }
  Expr visit(const MulNode* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    if (Expr r = affine(a, b, '*'); r.defined()) return r;
    return mul(a, b);
  }
  Expr visit(const CastNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return self;
    return cast(op->type.with_lanes(v.type().lanes), v);
  }
  Expr visit(const CallNode* op, const Expr& self) override {
    std::vector<Expr> args;
    bool vec = false, changed = false;
    for (const auto& a : op->args) {
      args.push_back(mutate(a));
      vec |= args.back().type().is_vector();
      changed |= !args.back().same_as(a);
    }
    if (!changed) return self;
    STRATA_SCHED_CHECK(op->buffers.empty(), "vectorize({}): cannot vectorize the search {} that depends on {}",
                       loop_->var, op->name, loop_->var);
    for (auto& a : args)
      if (vec && a.type().is_scalar()) a = broadcast(a, lanes_);
    return call(vec ? op->type.with_lanes(lanes_) : op->type, op->name, std::move(args));
  }

  Stmt visit(const StoreNode* op, const Stmt& self) override {
    Expr idx = mutate(op->index), val = mutate(op->value);
    if (idx.same_as(op->index) && val.same_as(op->value)) return self;
    if (idx.type().is_vector()) {
      if (val.type().is_scalar()) val = broadcast(val, idx.type().lanes);
      return store(op->buffer, idx, val, op->store_kind);
    }
    if (val.type().is_scalar()) return store(op->buffer, idx, val, op->store_kind);
    // A scalar location updated with a vector: must be a reduction acc[k] = acc[k] + e.
    const auto* a = val.as<AddNode>();
    auto is_self = [&](const Expr& e) {
      const auto* l = e.as<LoadNode>();
      return l && l->buffer == op->buffer && structural_equal(l->index, idx) && l->type.is_scalar();
    };
    Expr acc, rest;
    if (a && a->a.type().is_vector() && a->a.as<BroadcastNode>() && is_self(a->a.as<BroadcastNode>()->value)) {
      acc = a->a.as<BroadcastNode>()->value;
      rest = a->b;
    } else if (a && a->b.as<BroadcastNode>() && is_self(a->b.as<BroadcastNode>()->value)) {
      acc = a->b.as<BroadcastNode>()->value;
      rest = a->a;
    }
    STRATA_SCHED_CHECK(acc.defined(),
                       "vectorize({}): the store to {}[{}] does not depend on {}, and its value is not a sum into "
                       "that location; use rfactor first",
                       loop_->var, op->buffer, to_string(op->index), loop_->var);
    return store(op->buffer, idx, add(acc, vector_reduce(ReduceOp::Add, rest)), op->store_kind);
  }

  Stmt visit(const ForNode* op, const Stmt& self) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    STRATA_SCHED_CHECK(mn.type().is_scalar() && ext.type().is_scalar(),
                       "vectorize({}): inner loop {} has bounds that depend on {}", loop_->var, op->var, loop_->var);
    STRATA_SCHED_CHECK(op->for_kind != ForKind::Parallel && op->for_kind != ForKind::Vectorized,
                       "vectorize({}): inner loop {} is {}", loop_->var, op->var, for_kind_name(op->for_kind));
    Stmt body = mutate(op->body);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return for_loop(op->var, mn, ext, op->for_kind, body, op->annotations);
  }
  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate(op->condition);
    STRATA_SCHED_CHECK(c.type().is_scalar(), "vectorize({}): the condition {} depends on {}", loop_->var,
                       to_string(op->condition), loop_->var);
    return IRMutator::visit(op, self);
  }
  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    if (v.type().is_vector()) widened_[op->var] = var(op->var, v.type());
    Stmt body = mutate(op->body);
    widened_.erase(op->var);
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return let_stmt(op->var, v, body);
  }
  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    if (body.same_as(op->body)) return self;
    return allocate(op->buffer, op->type, op->size, op->scope, body);
  }
  Stmt visit(const PrefetchNode* op, const Stmt& self) override {
    Expr i = mutate(op->index);
    if (i.same_as(op->index)) return self;
    // One prefetch per vector: the first lane's address.
    if (const auto* r = i.as<RampNode>()) return prefetch(op->buffer, r->base);
    if (const auto* b = i.as<BroadcastNode>()) return prefetch(op->buffer, b->value);
    STRATA_SCHED_CHECK(false, "vectorize({}): prefetch address {} is not affine in {}", loop_->var,
                       to_string(op->index), loop_->var);
  }

 private:
  // Ramp/broadcast arithmetic that keeps affine indices as ramps.
  Expr affine(const Expr& a, const Expr& b, char op) {
    if (!a.type().is_int() || (a.type().is_scalar() && b.type().is_scalar())) return Expr();
    auto scalar_of = [](const Expr& e) -> Expr {
      if (e.type().is_scalar()) return e;
      if (const auto* bc = e.as<BroadcastNode>()) return bc->value;
      return Expr();
    };
    const auto *ra = a.as<RampNode>(), *rb = b.as<RampNode>();
    Expr sa = scalar_of(a), sb = scalar_of(b);
    switch (op) {
      case '+':
        if (ra && sb.defined()) return ramp(add(ra->base, sb), ra->stride, ra->lanes);
        if (rb && sa.defined()) return ramp(add(sa, rb->base), rb->stride, rb->lanes);
        if (ra && rb) return ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), ra->lanes);
        if (sa.defined() && sb.defined()) return broadcast(add(sa, sb), lanes_);
        break;
      case '-':
        if (ra && sb.defined()) return ramp(sub(ra->base, sb), ra->stride, ra->lanes);
        if (rb && sa.defined()) return ramp(sub(sa, rb->base), sub(make_int(0, rb->stride.type()), rb->stride), rb->lanes);
        if (ra && rb) return ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), ra->lanes);
        if (sa.defined() && sb.defined()) return broadcast(sub(sa, sb), lanes_);
        break;
      case '*':
        if (ra && sb.defined()) return ramp(mul(ra->base, sb), mul(ra->stride, sb), ra->lanes);
        if (rb && sa.defined()) return ramp(mul(sa, rb->base), mul(sa, rb->stride), rb->lanes);
        if (sa.defined() && sb.defined()) return broadcast(mul(sa, sb), lanes_);
        break;
    }
    return Expr();
  }

  const ForNode* loop_;
  int lanes_;
  Expr ramp_;
  std::map<std::string, Expr> widened_;
};

class VectorizeAll : public IRMutator {
 protected:
  Stmt visit(const ForNode* op, const Stmt& self) override {
    if (op->for_kind != ForKind::Vectorized) return IRMutator::visit(op, self);
    Stmt body = mutate(op->body);  // inner vectorized loops first (rare)
    Stmt inner = body.same_as(op->body) ? self : for_loop(op->var, op->min, op->extent, op->for_kind, body, op->annotations);
    return vectorize_loop(inner.as<ForNode>());
  }
};

}  // namespace

Stmt vectorize_loop(const ForNode* loop) {
  const int64_t* lanes = as_const_int(loop->extent);
  STRATA_SCHED_CHECK(lanes, "vectorize({}): extent {} is not a constant", loop->var, to_string(loop->extent));
  STRATA_SCHED_CHECK(*lanes >= 2 && *lanes <= 64, "vectorize({}): {} lanes (expected 2 to 64)", loop->var, *lanes);
  Widen w(loop);
  return simplify(w.mutate(loop->body));
}

Kernel vectorize_loops(const Kernel& k) {
  k.require_stage(Stage::Loops, "vectorize_loops");
  VectorizeAll v;
  Kernel out = k;
  out.body = v.mutate(k.body);
  out.preprocess = v.mutate(k.preprocess);
  return out;
}

}  // namespace strata::sc
