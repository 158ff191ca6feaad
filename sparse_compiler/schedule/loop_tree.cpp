#include "sparse_compiler/schedule/loop_tree.h"

#include <map>

#include "core/error.h"
#include "sparse_compiler/ir/names.h"
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

namespace {
// Whether a statement loads from and stores to one buffer.
struct BufferAccess {
  bool reads = false, writes = false;
};
BufferAccess access_of(const Stmt& s, const std::string& name) {
  class Access : public IRVisitor {
   public:
    explicit Access(const std::string& n) : n_(n) {}
    BufferAccess seen;

   protected:
    void visit(const LoadNode* op) override {
      seen.reads |= op->buffer == n_;
      IRVisitor::visit(op);
    }
    void visit(const StoreNode* op) override {
      seen.writes |= op->buffer == n_;
      IRVisitor::visit(op);
    }

   private:
    const std::string& n_;
  } a(name);
  a.visit_stmt(s);
  return a.seen;
}
}  // namespace

bool touches_buffer(const Stmt& s, const std::string& name) {
  const BufferAccess a = access_of(s, name);
  return a.reads || a.writes;
}
bool reads_buffer(const Stmt& s, const std::string& name) { return access_of(s, name).reads; }
bool writes_buffer(const Stmt& s, const std::string& name) { return access_of(s, name).writes; }

Stmt rename_locals(const Stmt& s, const std::string& suffix, NameGen* fresh) {
  std::map<std::string, std::string> names;
  class Collect : public IRVisitor {
   public:
    Collect(std::map<std::string, std::string>& n, const std::string& sfx, NameGen* fresh)
        : n_(n), sfx_(sfx), fresh_(fresh) {}

   protected:
    void visit(const ForNode* op) override {
      add(op->var);
      IRVisitor::visit(op);
    }
    void visit(const LetStmtNode* op) override {
      add(op->var);
      IRVisitor::visit(op);
    }
    void visit(const AllocateNode* op) override {
      add(op->buffer);
      IRVisitor::visit(op);
    }

   private:
    void add(const std::string& name) {
      if (!n_.count(name)) n_[name] = fresh_ ? fresh_->fresh(name + sfx_) : name + sfx_;
    }
    std::map<std::string, std::string>& n_;
    const std::string& sfx_;
    NameGen* fresh_;
  } collect(names, suffix, fresh);
  collect.visit_stmt(s);

  class Rename : public IRMutator {
   public:
    explicit Rename(const std::map<std::string, std::string>& n) : n_(n) {}

   protected:
    std::string renamed(const std::string& x) const {
      auto it = n_.find(x);
      return it == n_.end() ? x : it->second;
    }
    Expr visit(const VarNode* op, const Expr& self) override {
      auto it = n_.find(op->name);
      return it == n_.end() ? self : var(it->second, op->type);
    }
    Expr visit(const LoadNode* op, const Expr& self) override {
      return load(op->type.element_of(), renamed(op->buffer), mutate(op->index));
    }
    Expr visit(const CallNode* op, const Expr& self) override {
      std::vector<Expr> args;
      for (const auto& a : op->args) args.push_back(mutate(a));
      std::vector<std::string> bufs;
      for (const auto& b : op->buffers) bufs.push_back(renamed(b));
      return call(op->type, op->name, std::move(args), std::move(bufs));
    }
    Stmt visit(const StoreNode* op, const Stmt& self) override {
      return store(renamed(op->buffer), mutate(op->index), mutate(op->value), op->store_kind);
    }
    Stmt visit(const ForNode* op, const Stmt& self) override {
      return for_loop(renamed(op->var), mutate(op->min), mutate(op->extent), op->for_kind, mutate(op->body),
                      op->annotations);
    }
    Stmt visit(const LetStmtNode* op, const Stmt& self) override {
      return let_stmt(renamed(op->var), mutate(op->value), mutate(op->body));
    }
    Stmt visit(const AllocateNode* op, const Stmt& self) override {
      return allocate(renamed(op->buffer), op->type, op->size, op->scope, mutate(op->body));
    }

   private:
    const std::map<std::string, std::string>& n_;
  } rename(names);
  return rename.mutate(s);
}

}  // namespace strata::sc
