// The IR's node list and handles.
//
// Every node kind is listed once in the X-macros below; the kind enum, the visitor,
// the mutator, structural equality, hashing and the printer are all generated from
// or checked against these lists, so adding a node forces every one of them to
// handle it (Halide's HALIDE_FOR_EACH_IR_NODE).
//
// Nodes are immutable and shared: handles (Expr, Stmt) hold shared_ptr<const Node>.
// A pass that changes nothing returns the same handle, so "did this pass change the
// IR?" is a pointer comparison.
#pragma once

#include <memory>
#include <string>

#include "sparse_compiler/ir/type.h"

namespace strata::sc {

#define STRATA_IR_EXPRS(X) \
  X(IntImm)                \
  X(FloatImm)              \
  X(Var)                   \
  X(Cast)                  \
  X(Add)                   \
  X(Sub)                   \
  X(Mul)                   \
  X(Div)                   \
  X(Mod)                   \
  X(Min)                   \
  X(Max)                   \
  X(EQ)                    \
  X(NE)                    \
  X(LT)                    \
  X(LE)                    \
  X(And)                   \
  X(Or)                    \
  X(Not)                   \
  X(Select)                \
  X(Load)                  \
  X(SparseLoad)            \
  X(Ramp)                  \
  X(Broadcast)             \
  X(Call)                  \
  X(VectorReduce)

#define STRATA_IR_STMTS(X) \
  X(For)                   \
  X(Store)                 \
  X(SparseStore)           \
  X(Seq)                   \
  X(IfThenElse)            \
  X(LetStmt)               \
  X(Allocate)              \
  X(Prefetch)              \
  X(Evaluate)              \
  X(SparseIteration)

enum class NodeKind : uint8_t {
#define STRATA_X(T) T,
  STRATA_IR_EXPRS(STRATA_X) STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X
};

const char* node_kind_name(NodeKind k);

struct IRNode {
  explicit IRNode(NodeKind k) : kind(k) {}
  virtual ~IRNode() = default;
  const NodeKind kind;
};

struct ExprNode : IRNode {
  ExprNode(NodeKind k, Type t) : IRNode(k), type(t) {}
  const Type type;
};

struct StmtNode : IRNode {
  using IRNode::IRNode;
};

// Forward declarations of every node struct: IntImmNode, ForNode, ...
#define STRATA_X(T) struct T##Node;
STRATA_IR_EXPRS(STRATA_X)
STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X

template <class NodeT, class Base>
class Handle {
 public:
  Handle() = default;
  explicit Handle(std::shared_ptr<const Base> p) : ptr_(std::move(p)) {}
  bool defined() const { return ptr_ != nullptr; }
  explicit operator bool() const { return defined(); }
  const Base* get() const { return ptr_.get(); }
  const Base* operator->() const { return ptr_.get(); }
  const Base& operator*() const { return *ptr_; }
  const std::shared_ptr<const Base>& ptr() const { return ptr_; }
  bool same_as(const Handle& o) const { return ptr_ == o.ptr_; }
  NodeKind kind() const { return ptr_->kind; }
  // The node as T (T::kind_value must match), or nullptr.
  template <class T>
  const T* as() const {
    return (ptr_ && ptr_->kind == T::kind_value) ? static_cast<const T*>(ptr_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const Base> ptr_;
};

class Expr : public Handle<Expr, ExprNode> {
 public:
  using Handle::Handle;
  Expr(int64_t v);  // NOLINT: int64 literal
  Expr(int v);      // NOLINT: int64 literal
  Expr(double v);   // NOLINT: float32 literal
  Type type() const { return get()->type; }
};

class Stmt : public Handle<Stmt, StmtNode> {
 public:
  using Handle::Handle;
};

}  // namespace strata::sc
