// Read-only traversal of the IR. Override visit() for the nodes you care about and
// call the base version to keep recursing into children.
#pragma once

#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  // Dispatch on the node kind; override to see every handle before dispatch.
  virtual void visit_expr(const Expr& e);
  virtual void visit_stmt(const Stmt& s);

 protected:
#define STRATA_X(T) virtual void visit(const T##Node* op);
  STRATA_IR_EXPRS(STRATA_X)
  STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X
};

// Calls fn(const Expr&) on every expression in s (pre-order, including sub-expressions).
template <class F>
void for_each_expr(const Stmt& s, F&& fn);
template <class F>
void for_each_expr(const Expr& e, F&& fn);

namespace detail {
template <class F>
class ExprCallback : public IRVisitor {
 public:
  explicit ExprCallback(F& f) : f_(f) {}
  void visit_expr(const Expr& e) override {
    f_(e);
    IRVisitor::visit_expr(e);
  }

 private:
  F& f_;
};
}  // namespace detail

template <class F>
void for_each_expr(const Stmt& s, F&& fn) {
  detail::ExprCallback<F> v(fn);
  v.visit_stmt(s);
}
template <class F>
void for_each_expr(const Expr& e, F&& fn) {
  detail::ExprCallback<F> v(fn);
  v.visit_expr(e);
}

}  // namespace strata::sc
