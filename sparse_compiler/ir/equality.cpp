#include "sparse_compiler/ir/equality.h"

#include <cstring>

#include "core/error.h"

namespace strata::sc {
namespace {

// Both equality and hashing walk the same fields in the same order; one generic
// walker feeds either a comparer or a hasher, so the two can never disagree.
struct Sink {
  virtual ~Sink() = default;
  virtual bool u64(uint64_t a, uint64_t b) = 0;  // compare (a, b) or hash a
  virtual bool str(const std::string& a, const std::string& b) = 0;
  bool dbl(double a, double b) {
    uint64_t x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return u64(x, y);
  }
  bool type(Type a, Type b) {
    return u64((uint64_t(a.code) << 32) | (uint64_t(a.bits) << 16) | a.lanes,
               (uint64_t(b.code) << 32) | (uint64_t(b.bits) << 16) | b.lanes);
  }
};

struct Comparer final : Sink {
  bool u64(uint64_t a, uint64_t b) override { return a == b; }
  bool str(const std::string& a, const std::string& b) override { return a == b; }
};

struct Hashing final : Sink {
  uint64_t h = 0xcbf29ce484222325ULL;
  void mix(uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  bool u64(uint64_t a, uint64_t) override {
    mix(a);
    return true;
  }
  bool str(const std::string& a, const std::string&) override {
    mix(std::hash<std::string>{}(a));
    return true;
  }
};

bool walk(Sink& s, const Expr& a, const Expr& b);
bool walk(Sink& s, const Stmt& a, const Stmt& b);

bool walk_exprs(Sink& s, const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (!s.u64(a.size(), b.size())) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!walk(s, a[i], b[i])) return false;
  return true;
}

bool walk(Sink& s, const Expr& a, const Expr& b) {
  if (!s.u64(a.defined(), b.defined())) return false;
  if (!a.defined()) return true;
  if (a.same_as(b) && dynamic_cast<Comparer*>(&s)) return true;
  if (!s.u64(uint64_t(a.kind()), uint64_t(b.kind())) || !s.type(a.type(), b.type())) return false;
  switch (a.kind()) {
    case NodeKind::IntImm: return s.u64(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
    case NodeKind::FloatImm: return s.dbl(a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value);
    case NodeKind::Var: return s.str(a.as<VarNode>()->name, b.as<VarNode>()->name);
    case NodeKind::Cast: return walk(s, a.as<CastNode>()->value, b.as<CastNode>()->value);
#define STRATA_BINARY(T)                                                              \
  case NodeKind::T: {                                                                 \
    auto *x = a.as<T##Node>(), *y = b.as<T##Node>();                                  \
    return walk(s, x->a, y->a) && walk(s, x->b, y->b);                                \
  }
      STRATA_BINARY(Add)
      STRATA_BINARY(Sub)
      STRATA_BINARY(Mul)
      STRATA_BINARY(Div)
      STRATA_BINARY(Mod)
      STRATA_BINARY(Min)
      STRATA_BINARY(Max)
      STRATA_BINARY(EQ)
      STRATA_BINARY(NE)
      STRATA_BINARY(LT)
      STRATA_BINARY(LE)
      STRATA_BINARY(And)
      STRATA_BINARY(Or)
#undef STRATA_BINARY
    case NodeKind::Not: return walk(s, a.as<NotNode>()->a, b.as<NotNode>()->a);
    case NodeKind::Select: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return walk(s, x->condition, y->condition) && walk(s, x->true_value, y->true_value) &&
             walk(s, x->false_value, y->false_value);
    }
    case NodeKind::Load: {
      auto *x = a.as<LoadNode>(), *y = b.as<LoadNode>();
      return s.str(x->buffer, y->buffer) && walk(s, x->index, y->index);
    }
    case NodeKind::SparseLoad: {
      auto *x = a.as<SparseLoadNode>(), *y = b.as<SparseLoadNode>();
      return s.str(x->buffer->name, y->buffer->name) && walk_exprs(s, x->indices, y->indices);
    }
    case NodeKind::Ramp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return s.u64(x->lanes, y->lanes) && walk(s, x->base, y->base) && walk(s, x->stride, y->stride);
    }
    case NodeKind::Broadcast: {
      auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      return s.u64(x->lanes, y->lanes) && walk(s, x->value, y->value);
    }
    case NodeKind::Call: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      if (!s.str(x->name, y->name) || !s.u64(x->buffers.size(), y->buffers.size())) return false;
      for (size_t i = 0; i < x->buffers.size(); ++i)
        if (!s.str(x->buffers[i], y->buffers[i])) return false;
      return walk_exprs(s, x->args, y->args);
    }
    case NodeKind::VectorReduce: {
      auto *x = a.as<VectorReduceNode>(), *y = b.as<VectorReduceNode>();
      return s.u64(uint64_t(x->op), uint64_t(y->op)) && walk(s, x->value, y->value);
    }
    default: STRATA_UNREACHABLE("walk: {}", node_kind_name(a.kind()));
  }
}

bool walk(Sink& s, const Stmt& a, const Stmt& b) {
  if (!s.u64(a.defined(), b.defined())) return false;
  if (!a.defined()) return true;
  if (a.same_as(b) && dynamic_cast<Comparer*>(&s)) return true;
  if (!s.u64(uint64_t(a.kind()), uint64_t(b.kind()))) return false;
  switch (a.kind()) {
    case NodeKind::For: {
      auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
      if (!s.str(x->var, y->var) || !s.u64(uint64_t(x->for_kind), uint64_t(y->for_kind)) ||
          !s.u64(x->annotations.size(), y->annotations.size()))
        return false;
      for (auto i = x->annotations.begin(), j = y->annotations.begin(); i != x->annotations.end(); ++i, ++j)
        if (!s.str(i->first, j->first) || !s.str(i->second, j->second)) return false;
      return walk(s, x->min, y->min) && walk(s, x->extent, y->extent) && walk(s, x->body, y->body);
    }
    case NodeKind::Store: {
      auto *x = a.as<StoreNode>(), *y = b.as<StoreNode>();
      return s.str(x->buffer, y->buffer) && s.u64(uint64_t(x->store_kind), uint64_t(y->store_kind)) &&
             walk(s, x->index, y->index) && walk(s, x->value, y->value);
    }
    case NodeKind::SparseStore: {
      auto *x = a.as<SparseStoreNode>(), *y = b.as<SparseStoreNode>();
      return s.str(x->buffer->name, y->buffer->name) && walk_exprs(s, x->indices, y->indices) &&
             walk(s, x->value, y->value);
    }
    case NodeKind::Seq: {
      auto *x = a.as<SeqNode>(), *y = b.as<SeqNode>();
      if (!s.u64(x->stmts.size(), y->stmts.size())) return false;
      for (size_t i = 0; i < x->stmts.size(); ++i)
        if (!walk(s, x->stmts[i], y->stmts[i])) return false;
      return true;
    }
    case NodeKind::IfThenElse: {
      auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
      return walk(s, x->condition, y->condition) && walk(s, x->then_case, y->then_case) &&
             walk(s, x->else_case, y->else_case);
    }
    case NodeKind::LetStmt: {
      auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
      return s.str(x->var, y->var) && walk(s, x->value, y->value) && walk(s, x->body, y->body);
    }
    case NodeKind::Allocate: {
      auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
      return s.str(x->buffer, y->buffer) && s.type(x->type, y->type) && s.u64(x->size, y->size) &&
             s.u64(uint64_t(x->scope), uint64_t(y->scope)) && walk(s, x->body, y->body);
    }
    case NodeKind::Prefetch: {
      auto *x = a.as<PrefetchNode>(), *y = b.as<PrefetchNode>();
      return s.str(x->buffer, y->buffer) && walk(s, x->index, y->index);
    }
    case NodeKind::Evaluate: return walk(s, a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
    case NodeKind::SparseIteration: {
      auto *x = a.as<SparseIterationNode>(), *y = b.as<SparseIterationNode>();
      if (!s.str(x->name, y->name) || !s.u64(x->iters.size(), y->iters.size())) return false;
      for (size_t i = 0; i < x->iters.size(); ++i) {
        if (!s.str(x->iters[i].var, y->iters[i].var) || !s.str(x->iters[i].axis->name, y->iters[i].axis->name) ||
            !s.u64(x->iters[i].reduction, y->iters[i].reduction) || !s.u64(x->fuse_group[i], y->fuse_group[i]))
          return false;
      }
      return walk(s, x->init, y->init) && walk(s, x->body, y->body);
    }
    default: STRATA_UNREACHABLE("walk: {}", node_kind_name(a.kind()));
  }
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  Comparer c;
  return walk(c, a, b);
}
bool structural_equal(const Stmt& a, const Stmt& b) {
  Comparer c;
  return walk(c, a, b);
}
uint64_t structural_hash(const Expr& e) {
  Hashing h;
  walk(h, e, e);
  return h.h;
}
uint64_t structural_hash(const Stmt& s) {
  Hashing h;
  walk(h, s, s);
  return h.h;
}

}  // namespace strata::sc
