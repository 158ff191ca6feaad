// defer_row_normalisation: B /= d moved past the sums B feeds.
// Legality and refusals: passes/fuse_row_programs.h.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/fuse_row_programs.h"
#include "sparse_compiler/passes/row_program.h"
#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {

namespace {

// True when every store to `d` in s is a zero (the first) or d[..] = d[..] + x with
// x an exp (directly or through a let): d > 0 exactly when something was added.
bool is_sum_of_exponentials(const Stmt& s, const std::string& d) {
  class Check : public IRVisitor {
   public:
    explicit Check(const std::string& d) : d_(d) {}
    bool ok = true;
    int stores = 0;

   protected:
    void visit(const LetStmtNode* op) override {
      visit_expr(op->value);
      auto saved = lets_;
      lets_[op->var] = op->value;
      visit_stmt(op->body);
      lets_ = std::move(saved);
    }
    void visit(const SparseStoreNode* op) override {
      IRVisitor::visit(op);
      if (op->buffer->name != d_) return;
      if (stores++ == 0) {
        ok &= is_zero(op->value);
        return;
      }
      if (is_zero(op->value)) return;
      const auto* add = op->value.as<AddNode>();
      const auto* self = add ? add->a.as<SparseLoadNode>() : nullptr;
      ok &= self && self->buffer->name == d_ && same_indices(self->indices, op->indices) && is_exp(add->b);
    }

   private:
    bool is_exp(const Expr& e) const {
      Expr x = e;
      if (const auto* v = x.as<VarNode>(); v && lets_.count(v->name)) x = lets_.at(v->name);
      const auto* c = x.as<CallNode>();
      return c && c->name == "exp";
    }
    const std::string& d_;
    std::map<std::string, Expr> lets_;
  };
  Check c(d);
  c.visit_stmt(s);
  return c.ok && c.stores > 0;
}

// A sum over the row's edges that B feeds linearly: Y[i, ..] += B[i, j, ..] * t
// (init Y = 0), with j a reduction iterator and Y not indexed by it.
struct LinearSum {
  const SparseStoreNode* store = nullptr;  // Y's accumulation
  std::vector<Expr> b_indices;             // where it reads B
};

std::optional<LinearSum> linear_sum_of(const Stmt& nest, const std::string& B, std::string& reason) {
  const auto* R = nest.as<SparseIterationNode>();
  const auto* st = R ? R->body.as<SparseStoreNode>() : nullptr;
  if (!st) {
    reason = "a nest that is not one accumulation reads it";
    return std::nullopt;
  }
  const auto* init = R->init.as<SparseStoreNode>();
  const auto* add = st->value.as<AddNode>();
  const auto* self = add ? add->a.as<SparseLoadNode>() : nullptr;
  if (!init || !is_zero(init->value) || init->buffer != st->buffer || !same_indices(init->indices, st->indices) ||
      !self || self->buffer != st->buffer || !same_indices(self->indices, st->indices)) {
    reason = fmt::format("{} is not a sum Y = 0; Y += ... over the row's edges", R->name);
    return std::nullopt;
  }
  std::vector<Expr> fs;
  product_factors(add->b, fs);
  LinearSum out{st, {}};
  int reads = 0;
  for (const auto& f : fs) {
    const auto* l = f.as<SparseLoadNode>();
    if (l && l->buffer->name == B) {
      ++reads;
      out.b_indices = l->indices;
    } else if (reads_sparse_buffer(f, B)) {
      reads = 2;
    }
  }
  if (reads != 1) {
    reason = fmt::format("{} does not read it as one factor of what it sums", R->name);
    return std::nullopt;
  }
  bool sums = false;
  for (const auto& iv : R->iters) {
    if (!iv.reduction) continue;
    sums = true;
    if (std::none_of(out.b_indices.begin(), out.b_indices.end(), [&](const Expr& e) { return is_var(e, iv.var); })) {
      reason = fmt::format("{} sums over {}, which does not index it", R->name, iv.var);
      return std::nullopt;
    }
  }
  if (!sums) {
    reason = fmt::format("{} sums over nothing", R->name);
    return std::nullopt;
  }
  for (const auto& e : st->indices)
    for (const auto& iv : R->iters)
      if (iv.reduction && uses_var(e, iv.var)) {
        reason = fmt::format("{} indexes its output by the summed {}", R->name, iv.var);
        return std::nullopt;
      }
  return out;
}

}  // namespace

Kernel defer_row_normalisation(const Kernel& k, const std::set<std::string>& keep, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "defer_row_normalisation");
  NameGen names(k);
  const Expr row = var(r.row.var);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < r.nests.size() && !changed; ++n) {
      const auto* N = pointwise_nest(r.nests[n]);
      if (!N) continue;
      const auto* st = N->body.as<SparseStoreNode>();
      const auto* dv = st ? st->value.as<DivNode>() : nullptr;
      const auto* self = dv ? dv->a.as<SparseLoadNode>() : nullptr;
      if (!self || self->buffer != st->buffer || !same_indices(self->indices, st->indices)) continue;
      const std::string B = st->buffer->name;
      if (keep.count(B)) continue;
      auto refuse = [&](const std::string& reason) {
        add_reason(why,
                   fmt::format("defer_row_normalisation: {}'s division by {} stays: {}", B, to_string(dv->b), reason));
      };
      const auto* d = dv->b.as<SparseLoadNode>();
      if (!d) {
        refuse("the divisor is not a row value read from a buffer");
        continue;
      }
      const std::string D = d->buffer->name;
      bool per_edge = false;
      for (const auto& iv : N->iters) per_edge |= is_edge_axis(iv.axis, r.row.axis) && uses_var(dv->b, iv.var);
      if (per_edge) {
        refuse("the divisor changes from edge to edge");
        continue;
      }
      if (!is_sum_of_exponentials(seq(r.nests), D)) {
        refuse(fmt::format("{} is not a sum of exponentials, so dividing after the sum could differ where it is 0", D));
        continue;
      }
      std::string reason;
      std::vector<std::pair<size_t, LinearSum>> sums;
      for (size_t q = n + 1; q < r.nests.size() && reason.empty(); ++q) {
        if (buffers_written(r.nests[q]).count(D)) reason = fmt::format("a later nest changes {}", D);
        if (!buffers_read(r.nests[q]).count(B) && !buffers_written(r.nests[q]).count(B)) continue;
        auto s = linear_sum_of(r.nests[q], B, reason);
        if (!s) break;
        for (size_t o = 0; o < r.nests.size(); ++o)
          if (o != q && buffers_written(r.nests[o]).count(s->store->buffer->name))
            reason = fmt::format("{} has another writer", s->store->buffer->name);
        sums.emplace_back(q, *s);
      }
      if (reason.empty() && sums.empty()) reason = "nothing reads it afterwards";
      if (!reason.empty()) {
        refuse(reason);
        continue;
      }
      // The divisor in each sum's output coordinates.
      std::vector<Stmt> after(r.nests.size());
      for (const auto& [q, s] : sums) {
        std::map<std::string, Expr> at;
        for (size_t t = 1; t < st->indices.size(); ++t)
          if (const auto* v = st->indices[t].as<VarNode>()) at[v->name] = s.b_indices[t];
        const Expr d_sum = substitute(dv->b, at);
        std::map<std::string, size_t> y_pos;
        bool plain = structural_equal(s.store->indices.front(), row);
        for (size_t t = 1; t < s.store->indices.size(); ++t) {
          const auto* v = s.store->indices[t].as<VarNode>();
          plain &= v != nullptr;
          if (v) y_pos[v->name] = t;
        }
        for_each_expr(d_sum, [&](const Expr& e) {
          if (const auto* v = e.as<VarNode>();
              v && v->name != r.row.var && !out.find_param(v->name) && !y_pos.count(v->name))
            plain = false;
        });
        if (!plain) {
          reason = fmt::format("the divisor is not a value per output of {}", s.store->buffer->name);
          break;
        }
        const SparseBuffer& Y = s.store->buffer;
        std::vector<Axis> y_axes(Y->axes.begin() + 1, Y->axes.end());
        after[q] = nest_over(B + "_deferred_norm", y_axes, names, [&](const std::vector<Expr>& vs) {
          std::map<std::string, Expr> to_v;
          for (const auto& [name, t] : y_pos) to_v[name] = vs[t - 1];
          const Expr dy = substitute(d_sum, to_v);
          std::vector<Expr> yi = {row};
          yi.insert(yi.end(), vs.begin(), vs.end());
          // Rows without edges summed nothing: Y stays 0 (and so does d).
          return sparse_store(Y, yi,
                              select(gt(dy, make_zero(dy.type())), div(sparse_load(Y, yi), dy), make_zero(dy.type())));
        });
      }
      if (!reason.empty()) {
        refuse(reason);
        continue;
      }
      std::vector<Stmt> nests;
      for (size_t q = 0; q < r.nests.size(); ++q) {
        if (q == n) continue;
        nests.push_back(r.nests[q]);
        if (after[q].defined()) nests.push_back(after[q]);
      }
      r.nests = std::move(nests);
      changed = true;
    }
  }
  return with_rows(out, r);
}

}  // namespace strata::sc
