#include "sparse_compiler/schedule/loop_tree.h"

#include "core/error.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"

namespace strata::sc {
namespace {

class LoopFinder : public IRVisitor {
 public:
  explicit LoopFinder(std::string v) : var_(std::move(v)) {}
  const ForNode* found = nullptr;
  std::vector<const ForNode*> path, found_path;
  std::vector<std::string> order;

 protected:
  void visit(const ForNode* op) override {
    order.push_back(op->var);
    if (op->var == var_ && !found) {
      found = op;
      found_path = path;
    }
    path.push_back(op);
    IRVisitor::visit(op);
    path.pop_back();
  }

 private:
  std::string var_;
};

class LoopReplacer : public IRMutator {
 public:
  LoopReplacer(std::string v, const std::function<Stmt(const ForNode*)>& f) : var_(std::move(v)), f_(f) {}
  bool done = false;

 protected:
  Stmt visit(const ForNode* op, const Stmt& self) override {
    if (op->var == var_) {
      done = true;
      return f_(op);
    }
    return IRMutator::visit(op, self);
  }

 private:
  std::string var_;
  const std::function<Stmt(const ForNode*)>& f_;
};

}  // namespace

const ForNode* find_loop(const Stmt& root, const std::string& var) {
  LoopFinder f(var);
  f.visit_stmt(root);
  return f.found;
}

std::vector<const ForNode*> enclosing_loops(const Stmt& root, const std::string& var) {
  LoopFinder f(var);
  f.visit_stmt(root);
  return f.found_path;
}

std::vector<std::string> loop_names(const Stmt& root) {
  LoopFinder f("");
  f.visit_stmt(root);
  return f.order;
}

Stmt replace_loop(const Stmt& root, const std::string& var, const std::function<Stmt(const ForNode*)>& replace) {
  LoopReplacer r(var, replace);
  Stmt out = r.mutate(root);
  STRATA_ASSERT(r.done, "replace_loop: no loop named {}", var);
  return out;
}

bool uses_var(const Expr& e, const std::string& name) {
  bool used = false;
  for_each_expr(e, [&](const Expr& x) {
    if (const auto* v = x.as<VarNode>(); v && v->name == name) used = true;
  });
  return used;
}

bool uses_var(const Stmt& s, const std::string& name) {
  bool used = false;
  for_each_expr(s, [&](const Expr& x) {
    if (const auto* v = x.as<VarNode>(); v && v->name == name) used = true;
  });
  return used;
}

bool touches_buffer(const Stmt& s, const std::string& name) {
  class Touch : public IRVisitor {
   public:
    explicit Touch(const std::string& n) : n_(n) {}
    bool hit = false;

   protected:
    void visit(const LoadNode* op) override {
      hit |= op->buffer == n_;
      IRVisitor::visit(op);
    }
    void visit(const StoreNode* op) override {
      hit |= op->buffer == n_;
      IRVisitor::visit(op);
    }

   private:
    const std::string& n_;
  } t(name);
  t.visit_stmt(s);
  return t.hit;
}

}  // namespace strata::sc
