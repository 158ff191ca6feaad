#include "sparse_compiler/passes/online_softmax.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/row_program.h"

namespace strata::sc {
namespace {

// A row max pass: for j (edges, summed), rest: M[i, rest] = max(M[i, rest], v).
struct MaxPass {
  const SparseIterationNode* nest = nullptr;
  const SparseStoreNode* store = nullptr;
  Expr value;  // v
};

std::optional<MaxPass> max_pass(const Stmt& s, const Axis& row_axis, const Expr& row) {
  const auto* N = s.as<SparseIterationNode>();
  if (!N || N->init.defined() || !is_edge_axis(N->iters.front().axis, row_axis) || !N->iters.front().reduction)
    return std::nullopt;
  const auto* st = N->body.as<SparseStoreNode>();
  const auto* mx = st ? st->value.as<MaxNode>() : nullptr;
  const auto* self = mx ? mx->a.as<SparseLoadNode>() : nullptr;
  if (!self || self->buffer != st->buffer || !same_indices(self->indices, st->indices)) return std::nullopt;
  if (!structural_equal(st->indices.front(), row) || reads_sparse_buffer(mx->b, st->buffer->name)) return std::nullopt;
  // M's other indices are exactly the nest's other iterators, each spatial.
  if (st->indices.size() != N->iters.size()) return std::nullopt;
  for (size_t t = 1; t < N->iters.size(); ++t) {
    const IterVar& iv = N->iters[t];
    bool indexes = false;
    for (size_t p = 1; p < st->indices.size(); ++p)
      indexes |= is_var(st->indices[p], iv.var) && st->buffer->axes[p] == iv.axis;
    if (iv.reduction || !indexes) return std::nullopt;
  }
  return MaxPass{N, st, mx->b};
}

// Rewrites one edge loop's body for a running max M: every sum that adds a term
// with one factor exp(x - M[..]) is first rescaled by M_scale at that factor's
// indices. Records why it cannot when something else depends on M.
class RescaleSums : public IRMutator {
 public:
  RescaleSums(const Kernel& k, const std::string& M, SparseBuffer scale) : k_(k), M_(M), scale_(std::move(scale)) {}
  std::string failure;
  std::set<std::string> rescaled;  // the sums rescaled

 protected:
  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    for (const auto& a : sparse_accesses(op->value)) read_.insert(a.buffer);
    if (!depends(op->value)) return IRMutator::visit(op, self);
    auto mi = exp_factor(op->value);
    if (!mi) {
      fail(fmt::format("let {} depends on the row max other than as exp(x - {})", op->var, M_));
      return self;
    }
    lets_[op->var] = *mi;
    Stmt out = IRMutator::visit(op, self);
    lets_.erase(op->var);
    return out;
  }
  Stmt visit(const SparseStoreNode* op, const Stmt& self) override {
    const std::string& B = op->buffer->name;
    const bool read_before = read_.count(B) > 0;
    for (const auto& a : sparse_accesses(op->value)) read_.insert(a.buffer);
    if (B == M_) {
      fail(fmt::format("the edge loop writes {} itself", M_));
      return self;
    }
    if (!depends(op->value)) return self;
    // A sum: B[idx] = B[idx] + t, one factor of t an exp(x - M).
    const auto* sum = op->value.as<AddNode>();
    const auto* acc = sum ? sum->a.as<SparseLoadNode>() : nullptr;
    if (acc && acc->buffer == op->buffer && same_indices(acc->indices, op->indices) && !depends(sum->a)) {
      std::vector<Expr> fs;
      product_factors(sum->b, fs);
      std::optional<std::vector<Expr>> mi;
      int dependent = 0;
      for (const auto& f : fs)
        if (depends(f)) {
          ++dependent;
          mi = exp_factor(f);
        }
      if (dependent == 1 && mi) {
        rescaled.insert(B);
        return sparse_store(op->buffer, op->indices, add(mul(sum->a, sparse_load(scale_, *mi)), sum->b));
      }
      fail(fmt::format("the sum into {} does not add a term with one factor exp(x - {})", B, M_));
      return self;
    }
    // Per-edge scratch holding exp(x - M), read by the sums after it.
    const Param* p = k_.find_param(B);
    auto mi = exp_factor(op->value);
    bool plain = p && p->role == ParamRole::Workspace && mi;
    std::map<std::string, size_t> at;
    for (size_t t = 0; plain && t < op->indices.size(); ++t) {
      const auto* v = op->indices[t].as<VarNode>();
      plain = v != nullptr;
      if (v) at[v->name] = t;
    }
    if (!plain) {
      fail(fmt::format("{} stores a value that depends on the row max {}", B, M_));
      return self;
    }
    // Read before it is stored, it would hold a weight from an earlier edge,
    // relative to an older max.
    if (read_before) {
      fail(fmt::format("{} is read before the edge stores it", B));
      return self;
    }
    scratch_[B] = {*mi, at};
    return self;
  }

 private:
  void fail(std::string why) {
    if (failure.empty()) failure = std::move(why);
  }
  bool depends(const Expr& e) const {
    bool d = false;
    for_each_expr(e, [&](const Expr& x) {
      if (const auto* l = x.as<SparseLoadNode>()) d |= l->buffer->name == M_ || scratch_.count(l->buffer->name);
      if (const auto* v = x.as<VarNode>()) d |= lets_.count(v->name) > 0;
    });
    return d;
  }
  // The indices of M in e when e is exp(x - M[..]) with x free of M, a let bound
  // to one, or a load of scratch that holds one.
  std::optional<std::vector<Expr>> exp_factor(const Expr& e) const {
    if (const auto* c = e.as<CallNode>(); c && c->name == "exp" && c->args.size() == 1) {
      const auto* sub = c->args.front().as<SubNode>();
      const auto* m = sub ? sub->b.as<SparseLoadNode>() : nullptr;
      if (m && m->buffer->name == M_ && !depends(sub->a)) return m->indices;
      return std::nullopt;
    }
    if (const auto* v = e.as<VarNode>(); v && lets_.count(v->name)) return lets_.at(v->name);
    if (const auto* l = e.as<SparseLoadNode>(); l && scratch_.count(l->buffer->name)) {
      const auto& [mi, at] = scratch_.at(l->buffer->name);
      std::map<std::string, Expr> to_load;
      for (const auto& [name, t] : at) to_load[name] = l->indices[t];
      std::vector<Expr> out;
      for (const auto& x : mi) out.push_back(substitute(x, to_load));
      return out;
    }
    return std::nullopt;
  }

  const Kernel& k_;
  const std::string& M_;
  SparseBuffer scale_;
  std::map<std::string, std::vector<Expr>> lets_;
  std::set<std::string> read_;  // buffers read so far, in program order
  // scratch buffer -> (M's indices, the store's index variable -> position)
  std::map<std::string, std::pair<std::vector<Expr>, std::map<std::string, size_t>>> scratch_;
};

}  // namespace

Kernel online_softmax(const Kernel& k, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "online_softmax");
  NameGen names(k);
  const Expr row = var(r.row.var);
  bool any = false;
  for (size_t n = 0; n < r.nests.size(); ++n) {
    auto mp = max_pass(r.nests[n], r.row.axis, row);
    if (!mp) continue;
    any = true;
    const SparseBuffer& M = mp->store->buffer;
    auto refuse = [&](const std::string& reason) {
      add_reason(why, fmt::format("online_softmax: {}'s max pass {} stays: {}", M->name, mp->nest->name, reason));
    };
    // The next nest that touches M: the edge loop to merge the max into.
    size_t q = n + 1;
    while (q < r.nests.size() && !buffers_read(r.nests[q]).count(M->name) &&
           !buffers_written(r.nests[q]).count(M->name))
      ++q;
    const auto* E = q < r.nests.size() ? r.nests[q].as<SparseIterationNode>() : nullptr;
    if (!E || E->iters.size() != 1 || E->iters.front().axis != mp->nest->iters.front().axis || E->init.defined()) {
      refuse(fmt::format("the next nest that reads {} is not a loop over the row's edges alone", M->name));
      continue;
    }
    std::string reason;
    for (size_t b = n + 1; b < q; ++b)
      for (const auto& a : sparse_accesses(mp->value))
        if (buffers_written(r.nests[b]).count(a.buffer))
          reason = fmt::format("a nest between the two changes {}, which the max reads", a.buffer);
    std::vector<Axis> below(M->axes.begin() + 1, M->axes.end());
    Expr size = r.row.axis->length;
    for (const auto& a : below) {
      if (a->kind != AxisKind::DenseFixed || !as_const_int(a->length))
        reason = fmt::format("{}'s axis {} is not dense with a fixed length", M->name, a->name);
      size = mul(size, a->length);
    }
    if (!reason.empty()) {
      refuse(reason);
      continue;
    }
    const SparseBuffer scale = sparse_buffer(names.fresh(M->name + "_scale"), M->axes, M->dtype);
    RescaleSums rescale(out, M->name, scale);
    const Stmt sums = rescale.mutate(E->body);
    if (rescale.failure.empty() && rescale.rescaled.empty())
      rescale.failure = fmt::format("no sum in {} depends on {}", E->name, M->name);
    // A rescaled sum holds a partial value relative to the current max: nothing
    // but its own accumulation may read it inside the loop. Nor may the loop
    // change what the max pass read.
    for (const auto& sum : rescale.rescaled) {
      int loads = 0, stores = 0;
      for (const auto& a : sparse_accesses(E->body))
        if (a.buffer == sum) ++(a.store ? stores : loads);
      if (loads != stores && rescale.failure.empty())
        rescale.failure = fmt::format("{} reads the partial sum {}", E->name, sum);
    }
    for (const auto& a : sparse_accesses(mp->value))
      if (buffers_written(E->body).count(a.buffer) && rescale.failure.empty())
        rescale.failure = fmt::format("{} changes {}, which the max reads", E->name, a.buffer);
    if (!rescale.failure.empty()) {
      refuse(rescale.failure);
      continue;
    }
    // Per edge, first the running max and the factor that rescales the sums.
    const std::string j = E->iters.front().var;
    const Type t = Type::from_dtype(M->dtype);
    const Stmt running_max = nest_over(M->name + "_online_max", below, names, [&](const std::vector<Expr>& vs) {
      std::map<std::string, Expr> at = {{mp->nest->iters.front().var, var(j)}};
      for (size_t p = 1; p < mp->store->indices.size(); ++p) at[mp->store->indices[p].as<VarNode>()->name] = vs[p - 1];
      std::vector<Expr> mi = {row};
      mi.insert(mi.end(), vs.begin(), vs.end());
      const std::string mx = names.fresh(M->name + "_new");
      return let_stmt(
          mx, max(sparse_load(M, mi), substitute(mp->value, at)),
          seq({sparse_store(scale, mi, exp(sub(sparse_load(M, mi), var(mx, t)))), sparse_store(M, mi, var(mx, t))}));
    });
    r.nests[q] = sparse_iteration(E->name, E->iters, Stmt(), seq({running_max, sums}), E->fuse_group);
    r.nests.erase(r.nests.begin() + static_cast<std::ptrdiff_t>(n));
    // Set at the row's start, so a schedule that keeps it in registers need not
    // read it from memory first.
    r.nests.insert(r.nests.begin(), nest_over(scale->name + "_init", below, names, [&](const std::vector<Expr>& vs) {
                     std::vector<Expr> idx = {row};
                     idx.insert(idx.end(), vs.begin(), vs.end());
                     return sparse_store(scale, idx, make_one(t));
                   }));
    add_buffer(out, scale, Param::workspace(scale->name, M->dtype, size));
    return with_rows(out, r);
  }
  if (!any) add_reason(why, "online_softmax: no row max pass over the row's edges (M = max(M, v) per edge)");
  return k;
}

}  // namespace strata::sc
