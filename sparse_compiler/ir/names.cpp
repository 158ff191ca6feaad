#include "sparse_compiler/ir/names.h"

#include <fmt/format.h>

#include "sparse_compiler/ir/visitor.h"

namespace strata::sc {
namespace {
class NameCollector : public IRVisitor {
 public:
  explicit NameCollector(NameGen& g) : g_(g) {}

 protected:
  void visit(const VarNode* op) override { g_.reserve(op->name); }
  void visit(const ForNode* op) override {
    g_.reserve(op->var);
    IRVisitor::visit(op);
  }
  void visit(const LetStmtNode* op) override {
    g_.reserve(op->var);
    IRVisitor::visit(op);
  }
  void visit(const AllocateNode* op) override {
    g_.reserve(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const SparseIterationNode* op) override {
    for (const auto& it : op->iters) g_.reserve(it.var);
    IRVisitor::visit(op);
  }

 private:
  NameGen& g_;
};
}  // namespace

NameGen::NameGen(const Kernel& k) {
  for (const auto& p : k.params) reserve(p.name);
  for (const auto& a : k.axes) reserve(a->name);
  for (const auto& b : k.buffers) reserve(b->name);
  NameCollector c(*this);
  c.visit_stmt(k.body);
  c.visit_stmt(k.preprocess);
}

std::string NameGen::fresh(const std::string& base) {
  std::string n = base;
  for (int i = 1; used(n); ++i) n = fmt::format("{}_{}", base, i);
  used_.insert(n);
  return n;
}

}  // namespace strata::sc
