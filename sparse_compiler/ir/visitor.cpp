#include "sparse_compiler/ir/visitor.h"

#include "core/error.h"

namespace strata::sc {

void IRVisitor::visit_expr(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define STRATA_X(T)                                               \
  case NodeKind::T:                                               \
    visit(static_cast<const T##Node*>(e.get()));                  \
    return;
    STRATA_IR_EXPRS(STRATA_X)
#undef STRATA_X
    default: STRATA_UNREACHABLE("statement {} in expression position", node_kind_name(e.kind()));
  }
}

void IRVisitor::visit_stmt(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define STRATA_X(T)                                               \
  case NodeKind::T:                                               \
    visit(static_cast<const T##Node*>(s.get()));                  \
    return;
    STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X
    default: STRATA_UNREACHABLE("expression {} in statement position", node_kind_name(s.kind()));
  }
}

void IRVisitor::visit(const IntImmNode*) {}
void IRVisitor::visit(const FloatImmNode*) {}
void IRVisitor::visit(const VarNode*) {}
void IRVisitor::visit(const CastNode* op) { visit_expr(op->value); }
#define STRATA_BINARY(T)                         \
  void IRVisitor::visit(const T##Node* op) {     \
    visit_expr(op->a);                           \
    visit_expr(op->b);                           \
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
void IRVisitor::visit(const NotNode* op) { visit_expr(op->a); }
void IRVisitor::visit(const SelectNode* op) {
  visit_expr(op->condition);
  visit_expr(op->true_value);
  visit_expr(op->false_value);
}
void IRVisitor::visit(const LoadNode* op) { visit_expr(op->index); }
void IRVisitor::visit(const SparseLoadNode* op) {
  for (const auto& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const RampNode* op) {
  visit_expr(op->base);
  visit_expr(op->stride);
}
void IRVisitor::visit(const BroadcastNode* op) { visit_expr(op->value); }
void IRVisitor::visit(const CallNode* op) {
  for (const auto& a : op->args) visit_expr(a);
}
void IRVisitor::visit(const VectorReduceNode* op) { visit_expr(op->value); }

void IRVisitor::visit(const ForNode* op) {
  visit_expr(op->min);
  visit_expr(op->extent);
  visit_stmt(op->body);
}
void IRVisitor::visit(const StoreNode* op) {
  visit_expr(op->index);
  visit_expr(op->value);
}
void IRVisitor::visit(const SparseStoreNode* op) {
  for (const auto& i : op->indices) visit_expr(i);
  visit_expr(op->value);
}
void IRVisitor::visit(const SeqNode* op) {
  for (const auto& s : op->stmts) visit_stmt(s);
}
void IRVisitor::visit(const IfThenElseNode* op) {
  visit_expr(op->condition);
  visit_stmt(op->then_case);
  visit_stmt(op->else_case);
}
void IRVisitor::visit(const LetStmtNode* op) {
  visit_expr(op->value);
  visit_stmt(op->body);
}
void IRVisitor::visit(const AllocateNode* op) { visit_stmt(op->body); }
void IRVisitor::visit(const PrefetchNode* op) { visit_expr(op->index); }
void IRVisitor::visit(const EvaluateNode* op) { visit_expr(op->value); }
void IRVisitor::visit(const SparseIterationNode* op) {
  visit_stmt(op->init);
  visit_stmt(op->body);
}

}  // namespace strata::sc
