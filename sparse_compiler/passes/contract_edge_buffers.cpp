// contract_edge_buffers: an edge buffer used within one edge as per-row scratch.
// Legality and refusals: passes/fuse_row_programs.h.
#include <fmt/format.h>

#include <functional>
#include <map>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/fuse_row_programs.h"
#include "sparse_compiler/passes/row_program.h"

namespace strata::sc {

namespace {

// Replaces every access to `from` by one to `to`, with indices mapped by `index`.
class RetargetAccesses : public IRMutator {
 public:
  RetargetAccesses(std::string from, SparseBuffer to, std::function<std::vector<Expr>(const std::vector<Expr>&)> index)
      : from_(std::move(from)), to_(std::move(to)), index_(std::move(index)) {}

 protected:
  Expr visit(const SparseLoadNode* op, const Expr& self) override {
    if (op->buffer->name != from_) return IRMutator::visit(op, self);
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return sparse_load(to_, index_(idx));
  }
  Stmt visit(const SparseStoreNode* op, const Stmt& self) override {
    if (op->buffer->name != from_) return IRMutator::visit(op, self);
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return sparse_store(to_, index_(idx), mutate(op->value));
  }

 private:
  std::string from_;
  SparseBuffer to_;
  std::function<std::vector<Expr>(const std::vector<Expr>&)> index_;
};

}  // namespace

namespace {

// True when, in `edge_body` (one edge's work), the first access to B stores all of
// B's coordinates below the edge: an unconditional store inside spatial
// iterations over each of B's remaining axes, reading nothing of B.
bool written_before_read(const Stmt& edge_body, const SparseBuffer& B) {
  class First : public IRVisitor {
   public:
    explicit First(const SparseBuffer& b) : b_(b) {}
    enum { None, Covers, Fails } state = None;

   protected:
    void visit(const SparseIterationNode* op) override {
      if (state != None) return;
      for (const auto& it : op->iters)
        if (!it.reduction) spatial_[it.var] = it.axis;
      IRVisitor::visit(op);
      for (const auto& it : op->iters) spatial_.erase(it.var);
    }
    void visit(const IfThenElseNode* op) override {
      ++conditional_;
      IRVisitor::visit(op);
      --conditional_;
    }
    void visit(const SparseLoadNode* op) override {
      IRVisitor::visit(op);
      if (state == None && op->buffer->name == b_->name) state = Fails;
    }
    void visit(const SparseStoreNode* op) override {
      IRVisitor::visit(op);
      if (state != None || op->buffer->name != b_->name) return;
      bool covers = conditional_ == 0;
      std::set<std::string> seen;
      for (size_t t = 2; covers && t < op->indices.size(); ++t) {
        const auto* v = op->indices[t].as<VarNode>();
        covers = v && spatial_.count(v->name) && spatial_.at(v->name) == b_->axes[t] && seen.insert(v->name).second;
      }
      state = covers ? Covers : Fails;
    }

   private:
    const SparseBuffer& b_;
    std::map<std::string, Axis> spatial_;
    int conditional_ = 0;
  };
  First f(B);
  f.visit_stmt(edge_body);
  return f.state == First::Covers;
}

}  // namespace

Kernel contract_edge_buffers(const Kernel& k, const std::set<std::string>& keep, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "contract_edge_buffers");
  NameGen names(k);
  const Expr row = var(r.row.var);
  for (const SparseBuffer& buf : k.buffers) {
    const std::string& B = buf->name;
    const Param* p = k.find_param(B);
    if (!p || p->role == ParamRole::Input || keep.count(B)) continue;
    if (buf->axes.size() < 2 || buf->axes[0] != r.row.axis || !is_edge_axis(buf->axes[1], r.row.axis)) continue;
    auto refuse = [&](const std::string& reason) {
      add_reason(why, fmt::format("contract_edge_buffers: {} stays in memory: {}", B, reason));
    };
    std::vector<size_t> touching;
    for (size_t q = 0; q < r.nests.size(); ++q)
      for (const auto& a : sparse_accesses(r.nests[q]))
        if (a.buffer == B) {
          touching.push_back(q);
          break;
        }
    if (touching.empty()) continue;
    const auto* N = r.nests[touching.front()].as<SparseIterationNode>();
    if (touching.size() > 1 || !N || N->iters.front().axis != buf->axes[1] || N->iters.size() > 1) {
      refuse("it is not written and read inside one loop over the row's edges");
      continue;
    }
    const std::string j = N->iters.front().var;
    bool own_edge = !buffers_read(N->init).count(B) && !buffers_written(N->init).count(B);
    for (const auto& a : sparse_accesses(N->body))
      if (a.buffer == B) own_edge &= structural_equal(a.indices[0], row) && is_var(a.indices[1], j);
    if (!own_edge) {
      refuse("it is read at another edge than the one that wrote it");
      continue;
    }
    if (!written_before_read(N->body, buf)) {
      refuse("an edge's values are read before all of them are written");
      continue;
    }
    std::vector<Axis> rest = {r.row.axis};
    Expr size = r.row.axis->length;
    bool fixed = true;
    for (size_t t = 2; t < buf->axes.size(); ++t) {
      rest.push_back(buf->axes[t]);
      fixed &= buf->axes[t]->kind == AxisKind::DenseFixed && as_const_int(buf->axes[t]->length);
      if (fixed) size = mul(size, buf->axes[t]->length);
    }
    if (!fixed) {
      refuse("its axes below the edge are not dense with a fixed length");
      continue;
    }
    const SparseBuffer scratch = sparse_buffer(names.fresh(B + "_edge"), rest, buf->dtype);
    RetargetAccesses retarget(B, scratch, [](const std::vector<Expr>& idx) {
      std::vector<Expr> out = {idx[0]};
      out.insert(out.end(), idx.begin() + 2, idx.end());
      return out;
    });
    r.nests[touching.front()] = retarget.mutate(r.nests[touching.front()]);
    // Set at the row's start, so a schedule that keeps it in registers need not
    // read it from memory first (and can drop the parameter).
    r.nests.insert(r.nests.begin(), nest_over(scratch->name + "_init", std::vector<Axis>(rest.begin() + 1, rest.end()),
                                              names, [&](const std::vector<Expr>& vs) {
                                                std::vector<Expr> idx = {row};
                                                idx.insert(idx.end(), vs.begin(), vs.end());
                                                return sparse_store(scratch, idx,
                                                                    make_zero(Type::from_dtype(buf->dtype)));
                                              }));
    drop_buffer(out, B);
    add_buffer(out, scratch, Param::workspace(scratch->name, buf->dtype, size));
  }
  return with_rows(out, r);
}

}  // namespace strata::sc
