// Rewriting traversal of the IR. Each visit() receives the node and its handle and
// returns the replacement; the defaults rebuild a node only when one of its
// children changed, and otherwise return the same handle (cheap no-op passes,
// pointer-equality change detection).
#pragma once

#include <map>

#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
#define STRATA_X(T) virtual Expr visit(const T##Node* op, const Expr& self);
  STRATA_IR_EXPRS(STRATA_X)
#undef STRATA_X
#define STRATA_X(T) virtual Stmt visit(const T##Node* op, const Stmt& self);
  STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X
};

// Replaces variables by name (a simultaneous substitution).
Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements);
Stmt substitute(const Stmt& s, const std::map<std::string, Expr>& replacements);

}  // namespace strata::sc
