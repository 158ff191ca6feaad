#include "sparse_compiler/passes/row_program.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"

namespace strata::sc {

RowProgram row_program(const Kernel& k, const char* pass) {
  k.require_stage(Stage::Coordinate, pass);
  const auto* top = k.body.as<SparseIterationNode>();
  STRATA_ASSERT(top, "{}: kernel {} is not a row program (its body is not one sparse iteration)", pass, k.name);
  const IterVar& row = top->iters.front();
  STRATA_ASSERT(!row.reduction && !row.axis->parent,
                "{}: kernel {} is not a row program (its first iterator {} is not spatial over a root axis)", pass,
                k.name, row.var);
  RowProgram r{top->name, row, {}};
  if (top->iters.size() == 1) {
    STRATA_ASSERT(!top->init.defined(), "{}: kernel {}: an init on the row iteration alone has nothing to precede",
                  pass, k.name);
    if (const auto* s = top->body.as<SeqNode>())
      r.nests = s->stmts;
    else
      r.nests = {top->body};
    return r;
  }
  STRATA_ASSERT(top->fuse_group[0] != top->fuse_group[1],
                "{}: kernel {} iterates rows fused with {} (sparse_fuse): no row of its own to fuse", pass, k.name,
                top->iters[1].var);
  std::vector<IterVar> rest(top->iters.begin() + 1, top->iters.end());
  std::vector<int> groups(top->fuse_group.begin() + 1, top->fuse_group.end());
  r.nests = {sparse_iteration(top->name, std::move(rest), top->init, top->body, std::move(groups))};
  return r;
}

Kernel with_rows(Kernel k, const RowProgram& rows) {
  k.body = sparse_iteration(rows.name, {rows.row}, Stmt(), seq(rows.nests));
  return k;
}

const SparseIterationNode* pointwise_nest(const Stmt& s) {
  const auto* it = s.as<SparseIterationNode>();
  if (!it || it->init.defined()) return nullptr;
  for (const auto& v : it->iters)
    if (v.reduction) return nullptr;
  return it;
}

bool is_edge_axis(const Axis& a, const Axis& row) { return a->parent == row && (a->is_sparse() || a->is_variable()); }

Stmt nest_over(const std::string& name, const std::vector<Axis>& axes, NameGen& names,
               const std::function<Stmt(const std::vector<Expr>&)>& body) {
  std::vector<IterVar> iters;
  std::vector<Expr> vars;
  for (const auto& a : axes) {
    std::string base = a->name;
    for (char& c : base) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    iters.push_back({names.fresh(base), a, false});
    vars.push_back(var(iters.back().var));
  }
  Stmt b = body(vars);
  return iters.empty() ? b : sparse_iteration(name, std::move(iters), Stmt(), b);
}

namespace {

class AccessCollector : public IRVisitor {
 public:
  std::vector<SparseAccess> out;

 protected:
  void visit(const SparseLoadNode* op) override {
    IRVisitor::visit(op);
    out.push_back({op->buffer->name, false, op->indices});
  }
  void visit(const SparseStoreNode* op) override {
    IRVisitor::visit(op);
    out.push_back({op->buffer->name, true, op->indices});
  }
};

}  // namespace

std::vector<SparseAccess> sparse_accesses(const Stmt& s) {
  AccessCollector c;
  c.visit_stmt(s);
  return std::move(c.out);
}

std::vector<SparseAccess> sparse_accesses(const Expr& e) {
  AccessCollector c;
  c.visit_expr(e);
  return std::move(c.out);
}

std::set<std::string> buffers_read(const Stmt& s) {
  std::set<std::string> out;
  for (const auto& a : sparse_accesses(s))
    if (!a.store) out.insert(a.buffer);
  return out;
}

std::set<std::string> buffers_written(const Stmt& s) {
  std::set<std::string> out;
  for (const auto& a : sparse_accesses(s))
    if (a.store) out.insert(a.buffer);
  return out;
}

bool reads_sparse_buffer(const Expr& e, const std::string& buffer) {
  const auto acc = sparse_accesses(e);
  return std::any_of(acc.begin(), acc.end(), [&](const SparseAccess& a) { return a.buffer == buffer; });
}

bool is_var(const Expr& e, const std::string& name) {
  const auto* v = e.as<VarNode>();
  return v && v->name == name;
}

bool same_indices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t t = 0; t < a.size(); ++t)
    if (!structural_equal(a[t], b[t])) return false;
  return true;
}

void product_factors(const Expr& e, std::vector<Expr>& out) {
  if (const auto* m = e.as<MulNode>()) {
    product_factors(m->a, out);
    product_factors(m->b, out);
  } else {
    out.push_back(e);
  }
}

namespace {

class LoadReplacer : public IRMutator {
 public:
  LoadReplacer(const std::string& b, const std::function<Expr(const std::vector<Expr>&)>& fn) : b_(b), fn_(fn) {}

 protected:
  Expr visit(const SparseLoadNode* op, const Expr& self) override {
    if (op->buffer->name != b_) return IRMutator::visit(op, self);
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return fn_(idx);
  }

 private:
  const std::string& b_;
  const std::function<Expr(const std::vector<Expr>&)>& fn_;
};

class BoundVarRenamer : public IRMutator {
 public:
  explicit BoundVarRenamer(const std::map<std::string, std::string>& r) : r_(r) {}

 protected:
  std::string renamed(const std::string& v) const {
    auto it = r_.find(v);
    return it == r_.end() ? v : it->second;
  }
  Expr visit(const VarNode* op, const Expr& self) override {
    auto it = r_.find(op->name);
    return it == r_.end() ? self : var(it->second, op->type);
  }
  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    const std::string name = renamed(op->var);
    if (name == op->var && v.same_as(op->value) && b.same_as(op->body)) return self;
    return let_stmt(name, v, b);
  }
  Stmt visit(const SparseIterationNode* op, const Stmt& self) override {
    std::vector<IterVar> iters = op->iters;
    bool changed = false;
    for (auto& it : iters) {
      const std::string name = renamed(it.var);
      changed |= name != it.var;
      it.var = name;
    }
    Stmt init = mutate(op->init), body = mutate(op->body);
    if (!changed && init.same_as(op->init) && body.same_as(op->body)) return self;
    return sparse_iteration(op->name, std::move(iters), init, body, op->fuse_group);
  }

 private:
  const std::map<std::string, std::string>& r_;
};

class BoundVars : public IRVisitor {
 public:
  std::set<std::string> out;

 protected:
  void visit(const LetStmtNode* op) override {
    out.insert(op->var);
    IRVisitor::visit(op);
  }
  void visit(const SparseIterationNode* op) override {
    for (const auto& it : op->iters) out.insert(it.var);
    IRVisitor::visit(op);
  }
};

}  // namespace

Stmt replace_loads(const Stmt& s, const std::string& buffer, const std::function<Expr(const std::vector<Expr>&)>& fn) {
  LoadReplacer r(buffer, fn);
  return r.mutate(s);
}

Expr replace_loads(const Expr& e, const std::string& buffer, const std::function<Expr(const std::vector<Expr>&)>& fn) {
  LoadReplacer r(buffer, fn);
  return r.mutate(e);
}

Stmt rename_vars(const Stmt& s, const std::map<std::string, std::string>& renames) {
  if (renames.empty()) return s;
  BoundVarRenamer r(renames);
  return r.mutate(s);
}

std::set<std::string> bound_vars(const Stmt& s) {
  BoundVars b;
  b.visit_stmt(s);
  return std::move(b.out);
}

void add_reason(std::vector<std::string>* why, std::string reason) {
  if (why && std::find(why->begin(), why->end(), reason) == why->end()) why->push_back(std::move(reason));
}

void drop_buffer(Kernel& k, const std::string& buffer) {
  std::erase_if(k.params, [&](const Param& p) { return p.name == buffer; });
  std::erase_if(k.buffers, [&](const SparseBuffer& b) { return b->name == buffer; });
}

void add_buffer(Kernel& k, const SparseBuffer& b, Param p) {
  k.buffers.push_back(b);
  const auto first_scalar =
      std::find_if(k.params.begin(), k.params.end(), [](const Param& q) { return !q.is_buffer(); });
  k.params.insert(first_scalar, std::move(p));
}

void order_params(Kernel& k) {
  std::stable_partition(k.params.begin(), k.params.end(), [](const Param& p) { return p.is_buffer(); });
}

}  // namespace strata::sc
