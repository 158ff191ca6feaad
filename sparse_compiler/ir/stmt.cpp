#include "sparse_compiler/ir/stmt.h"

#include "core/error.h"

namespace strata::sc {

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::GpuBlockX: return "blockIdx.x";
    case ForKind::GpuBlockY: return "blockIdx.y";
    case ForKind::GpuBlockZ: return "blockIdx.z";
    case ForKind::GpuThreadX: return "threadIdx.x";
    case ForKind::GpuThreadY: return "threadIdx.y";
    case ForKind::GpuThreadZ: return "threadIdx.z";
  }
  return "?";
}

bool is_gpu_binding(ForKind k) { return k >= ForKind::GpuBlockX; }

const char* memory_scope_name(MemoryScope s) {
  switch (s) {
    case MemoryScope::Register: return "register";
    case MemoryScope::Stack: return "stack";
    case MemoryScope::Shared: return "shared";
  }
  return "?";
}

Stmt for_loop(const std::string& var, Expr min, Expr extent, ForKind kind, Stmt body, Annotations ann) {
  STRATA_ASSERT(!var.empty(), "loop with an empty variable name");
  STRATA_ASSERT(min.defined() && extent.defined(), "loop {} needs min and extent", var);
  STRATA_ASSERT(min.type().is_int() && min.type().is_scalar() && extent.type().is_int() && extent.type().is_scalar(),
                "loop {}: min and extent must be scalar ints", var);
  STRATA_ASSERT(body.defined(), "loop {} has no body", var);
  if (kind == ForKind::Vectorized || kind == ForKind::Unrolled)
    STRATA_ASSERT(as_const_int(extent), "{} loop {} needs a constant extent", for_kind_name(kind), var);
  auto n = std::make_shared<ForNode>();
  n->var = var;
  n->min = cast(Type::i64(), std::move(min));
  n->extent = cast(Type::i64(), std::move(extent));
  n->for_kind = kind;
  n->body = std::move(body);
  n->annotations = std::move(ann);
  return Stmt(n);
}

Stmt store(const std::string& buffer, Expr index, Expr value, StoreKind kind) {
  STRATA_ASSERT(!buffer.empty() && index.defined() && value.defined(), "store to '{}' needs index and value",
                buffer);
  STRATA_ASSERT(index.type().is_int(), "store to '{}' with a non-integer index", buffer);
  STRATA_ASSERT(index.type().lanes == value.type().lanes, "store to '{}': index has {} lanes, value {}", buffer,
                index.type().lanes, value.type().lanes);
  auto n = std::make_shared<StoreNode>();
  n->buffer = buffer;
  n->index = std::move(index);
  n->value = std::move(value);
  n->store_kind = kind;
  return Stmt(n);
}

Stmt sparse_store(const SparseBuffer& b, std::vector<Expr> indices, Expr value) {
  STRATA_ASSERT(b && static_cast<int>(indices.size()) == b->ndim(), "sparse store to {} with {} indices",
                b ? b->name : "?", indices.size());
  const Type t = Type::from_dtype(b->dtype);
  if (value.type() != t) {
    STRATA_ASSERT(value.as<IntImmNode>() || value.as<FloatImmNode>(), "sparse store of {} into {} buffer {}",
                  value.type().str(), t.str(), b->name);
    value = cast(t, value);
  }
  for (auto& i : indices) {
    STRATA_ASSERT(i.defined() && i.type().is_int(), "sparse store to {}: bad index", b->name);
    if (i.type() != Type::i64()) i = cast(Type::i64(), i);
  }
  auto n = std::make_shared<SparseStoreNode>();
  n->buffer = b;
  n->indices = std::move(indices);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (const auto* q = s.as<SeqNode>()) {
      flat.insert(flat.end(), q->stmts.begin(), q->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.empty()) return Stmt();
  if (flat.size() == 1) return flat[0];
  auto n = std::make_shared<SeqNode>();
  n->stmts = std::move(flat);
  return Stmt(n);
}

Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case) {
  STRATA_ASSERT(cond.defined() && cond.type() == Type::boolean(), "if condition must be a scalar bool");
  STRATA_ASSERT(then_case.defined(), "if without a then branch");
  auto n = std::make_shared<IfThenElseNode>();
  n->condition = std::move(cond);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(n);
}

Stmt let_stmt(const std::string& var, Expr value, Stmt body) {
  STRATA_ASSERT(!var.empty() && value.defined() && body.defined(), "let {} needs a value and a body", var);
  auto n = std::make_shared<LetStmtNode>();
  n->var = var;
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt allocate(const std::string& buffer, Type type, int64_t size, MemoryScope scope, Stmt body) {
  STRATA_ASSERT(!buffer.empty() && size > 0 && body.defined() && type.is_scalar(),
                "allocate {}: needs a scalar type, a positive size and a body", buffer);
  auto n = std::make_shared<AllocateNode>();
  n->buffer = buffer;
  n->type = type;
  n->size = size;
  n->scope = scope;
  n->body = std::move(body);
  return Stmt(n);
}

Stmt prefetch(const std::string& buffer, Expr index) {
  STRATA_ASSERT(index.defined() && index.type() == Type::i64(), "prefetch of {} needs an int64 index", buffer);
  auto n = std::make_shared<PrefetchNode>();
  n->buffer = buffer;
  n->index = std::move(index);
  return Stmt(n);
}

Stmt evaluate(Expr value) {
  STRATA_ASSERT(value.defined(), "evaluate of an undefined expression");
  auto n = std::make_shared<EvaluateNode>();
  n->value = std::move(value);
  return Stmt(n);
}

Stmt sync_threads() { return evaluate(call(Type::i32(), kSyncThreads, {})); }

Stmt sparse_iteration(const std::string& name, std::vector<IterVar> iters, Stmt init, Stmt body,
                      std::vector<int> fuse_group) {
  STRATA_ASSERT(!iters.empty() && body.defined(), "sparse iteration {} needs iterators and a body", name);
  if (fuse_group.empty())
    for (size_t k = 0; k < iters.size(); ++k) fuse_group.push_back(static_cast<int>(k));
  STRATA_ASSERT(fuse_group.size() == iters.size(), "sparse iteration {}: {} fuse groups for {} iterators", name,
                fuse_group.size(), iters.size());
  // A sparse or variable axis can only be iterated inside its parent's iterator:
  // an earlier iterator of this iteration, or one of an enclosing iteration (the
  // lowering checks that one is in scope).
  for (size_t k = 0; k < iters.size(); ++k) {
    const Axis& a = iters[k].axis;
    STRATA_ASSERT(a, "sparse iteration {}: iterator {} has no axis", name, iters[k].var);
    if (a->parent && (a->is_variable() || a->is_sparse())) {
      for (size_t q = k + 1; q < iters.size(); ++q)
        STRATA_ASSERT(iters[q].axis != a->parent, "sparse iteration {}: iterator {} over {} comes before its parent axis {}",
                      name, iters[k].var, a->name, a->parent->name);
    }
  }
  auto n = std::make_shared<SparseIterationNode>();
  n->name = name;
  n->iters = std::move(iters);
  n->fuse_group = std::move(fuse_group);
  n->init = std::move(init);
  n->body = std::move(body);
  return Stmt(n);
}

}  // namespace strata::sc
