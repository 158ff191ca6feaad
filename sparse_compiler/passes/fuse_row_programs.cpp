#include "sparse_compiler/passes/fuse_row_programs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/online_softmax.h"
#include "sparse_compiler/passes/pass_log.h"
#include "sparse_compiler/passes/row_program.h"
#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {
namespace {

std::string axes_text(const SparseBuffer& b) {
  std::vector<std::string> names;
  for (const auto& a : b->axes) names.push_back(a->name);
  return fmt::format("[{}]", fmt::join(names, ", "));
}

bool same_axis_definition(const Axis& a, const Axis& b) {
  auto same = [](const Expr& x, const Expr& y) {
    return x.defined() == y.defined() && (!x.defined() || structural_equal(x, y));
  };
  const bool parents = a->parent ? (b->parent && a->parent->name == b->parent->name) : !b->parent;
  return a->kind == b->kind && parents && same(a->length, b->length) && same(a->nnz, b->nnz) && a->width == b->width &&
         a->indptr == b->indptr && a->indices == b->indices && a->idtype == b->idtype && a->sorted == b->sorted;
}

// Points every axis and buffer reference at the fused kernel's declarations.
class CanonicalRefs : public IRMutator {
 public:
  CanonicalRefs(const std::map<std::string, Axis>& axes, const std::map<std::string, SparseBuffer>& buffers)
      : axes_(axes), buffers_(buffers) {}

 protected:
  Expr visit(const SparseLoadNode* op, const Expr& self) override {
    (void)self;
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return sparse_load(buffers_.at(op->buffer->name), std::move(idx));
  }
  Stmt visit(const SparseStoreNode* op, const Stmt& self) override {
    (void)self;
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return sparse_store(buffers_.at(op->buffer->name), std::move(idx), mutate(op->value));
  }
  Stmt visit(const SparseIterationNode* op, const Stmt& self) override {
    (void)self;
    std::vector<IterVar> iters = op->iters;
    for (auto& it : iters) it.axis = axes_.at(it.axis->name);
    return sparse_iteration(op->name, std::move(iters), mutate(op->init), mutate(op->body), op->fuse_group);
  }

 private:
  const std::map<std::string, Axis>& axes_;
  const std::map<std::string, SparseBuffer>& buffers_;
};

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

// s as a nest that computes one value per point: no init, no reduction iterator.
const SparseIterationNode* pointwise_nest(const Stmt& s) {
  const auto* it = s.as<SparseIterationNode>();
  if (!it || it->init.defined()) return nullptr;
  for (const auto& v : it->iters)
    if (v.reduction) return nullptr;
  return it;
}

}  // namespace

// ---- fuse_row_loops -----------------------------------------------------------

Kernel fuse_row_loops(const std::vector<Kernel>& chain, const std::string& name) {
  STRATA_ASSERT(!chain.empty(), "fuse_row_loops: no programs to fuse");
  Kernel out;
  out.name = name;
  out.stage = Stage::Coordinate;
  NameGen names;
  for (const auto& k : chain) {
    for (const auto& p : k.params) names.reserve(p.name);
    for (const auto& a : k.axes) names.reserve(a->name);
    for (const auto& b : k.buffers) names.reserve(b->name);
  }
  std::map<std::string, Axis> axes;
  std::map<std::string, SparseBuffer> buffers;
  std::map<std::string, std::string> declared_by;
  RowProgram fused;
  std::vector<RowProgram> programs;  // as written, for the checks' messages
  for (size_t c = 0; c < chain.size(); ++c) {
    const Kernel& k = chain[c];
    RowProgram r = row_program(k, "fuse_row_loops");
    if (c == 0) {
      fused.name = name;
      fused.row = r.row;
      names.reserve(r.row.var);
    }
    STRATA_CHECK(r.row.axis->name == fused.row.axis->name, "fuse_row_loops: {} iterates rows of axis {}, {} of axis {}",
                 k.name, r.row.axis->name, chain[0].name, fused.row.axis->name);
    for (const Axis& a : k.axes) {
      if (auto it = axes.find(a->name); it != axes.end()) {
        STRATA_CHECK(same_axis_definition(it->second, a), "fuse_row_loops: axis {} of {} is not the axis {} of {}",
                     a->name, k.name, a->name, declared_by.at("axis " + a->name));
        continue;
      }
      auto copy = std::make_shared<AxisNode>(*a);
      if (a->parent) {
        STRATA_ASSERT(axes.count(a->parent->name), "fuse_row_loops: {} declares axis {} before its parent {}", k.name,
                      a->name, a->parent->name);
        copy->parent = axes.at(a->parent->name);
      }
      axes[a->name] = copy;
      declared_by["axis " + a->name] = k.name;
      out.axes.push_back(copy);
    }
    for (const SparseBuffer& b : k.buffers) {
      std::vector<Axis> ax;
      for (const auto& a : b->axes) ax.push_back(axes.at(a->name));
      SparseBuffer nb = sparse_buffer(b->name, ax, b->dtype);
      if (auto it = buffers.find(b->name); it != buffers.end()) {
        STRATA_CHECK(axes_text(it->second) == axes_text(nb) && it->second->dtype == b->dtype,
                     "fuse_row_loops: {} is {} in {} and {} in {}", b->name, axes_text(it->second),
                     declared_by.at(b->name), axes_text(nb), k.name);
        continue;
      }
      buffers[b->name] = nb;
      declared_by[b->name] = k.name;
      out.buffers.push_back(nb);
    }
    for (const Param& p : k.params) {
      auto it = std::find_if(out.params.begin(), out.params.end(), [&](const Param& q) { return q.name == p.name; });
      if (it == out.params.end()) {
        out.params.push_back(p);
        continue;
      }
      STRATA_CHECK(it->kind == p.kind && it->dtype == p.dtype &&
                       (it->role == ParamRole::Workspace) == (p.role == ParamRole::Workspace),
                   "fuse_row_loops: parameter {} of {} is not the parameter {} of an earlier program", p.name, k.name,
                   p.name);
      if (p.role == ParamRole::Output) it->role = ParamRole::Output;
    }
    // The row variable becomes the fused one; variables bound in this program's
    // nests that an earlier program already bound get fresh names.
    std::map<std::string, std::string> renames;
    if (r.row.var != fused.row.var) renames[r.row.var] = fused.row.var;
    for (const auto& nest : r.nests)
      for (const auto& v : bound_vars(nest)) {
        if (renames.count(v)) continue;
        if (names.used(v))
          renames[v] = names.fresh(v);
        else
          names.reserve(v);
      }
    fused.row.axis = axes.at(fused.row.axis->name);
    CanonicalRefs canon(axes, buffers);
    std::vector<Stmt> nests;
    for (const auto& nest : r.nests) nests.push_back(canon.mutate(rename_vars(nest, renames)));
    programs.push_back(r);
    fused.nests.insert(fused.nests.end(), nests.begin(), nests.end());
  }
  // A buffer that one program writes and another touches may only be touched at
  // the row being worked on: the fused kernel runs each row's programs back to
  // back, and another row's part may not have run yet (or run in another thread).
  for (const auto& [bname, b] : buffers) {
    std::vector<size_t> touching, writing;
    for (size_t c = 0; c < chain.size(); ++c) {
      bool touches = false, writes = false;
      for (const auto& nest : programs[c].nests)
        for (const auto& a : sparse_accesses(nest))
          if (a.buffer == bname) {
            touches = true;
            writes |= a.store;
          }
      if (touches) touching.push_back(c);
      if (writes) writing.push_back(c);
    }
    if (writing.empty() || touching.size() < 2) continue;
    for (size_t c : touching) {
      // The other side of the conflict: a program that writes it, else one that reads it.
      auto not_c = [&](size_t o) { return o != c; };
      const auto writer = std::find_if(writing.begin(), writing.end(), not_c);
      const bool other_writes = writer != writing.end();
      const size_t other = other_writes ? *writer : *std::find_if(touching.begin(), touching.end(), not_c);
      for (const auto& nest : programs[c].nests)
        for (const auto& a : sparse_accesses(nest)) {
          if (a.buffer != bname) continue;
          const bool own_row =
              b->axes.front() == fused.row.axis && structural_equal(a.indices.front(), var(programs[c].row.var));
          STRATA_CHECK(own_row,
                       "fuse_row_loops: {} {} {} at row {}, and {} {} it: fused by row, a row may only touch its own "
                       "row of what another program writes",
                       chain[c].name, a.store ? "writes" : "reads", bname, to_string(a.indices.front()),
                       chain[other].name, other_writes ? "writes" : "reads", bname);
        }
    }
  }
  out.body = Stmt();
  order_params(out);
  return with_rows(out, fused);
}

// ---- inline_elementwise -------------------------------------------------------

Kernel inline_elementwise(const Kernel& k, const std::set<std::string>& keep, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "inline_elementwise");
  const Expr row = var(r.row.var);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < r.nests.size() && !changed; ++n) {
      const auto* it = pointwise_nest(r.nests[n]);
      if (!it) continue;
      std::map<std::string, Expr> lets;
      Stmt body = it->body;
      while (const auto* l = body.as<LetStmtNode>()) {
        lets[l->var] = substitute(l->value, lets);
        body = l->body;
      }
      const auto* st = body.as<SparseStoreNode>();
      if (!st) continue;
      const std::string B = st->buffer->name;
      const Param* p = out.find_param(B);
      if (!p || p->role != ParamRole::Output || keep.count(B)) continue;
      auto refuse = [&](const std::string& reason) {
        add_reason(why, fmt::format("inline_elementwise: {} stays in memory: {}", B, reason));
      };
      // Every point of B, once: the row, then the nest's iterators over B's axes.
      bool pointwise = st->indices.size() == it->iters.size() + 1 && st->buffer->axes.front() == r.row.axis &&
                       structural_equal(st->indices.front(), row);
      for (size_t t = 0; pointwise && t < it->iters.size(); ++t)
        pointwise = is_var(st->indices[t + 1], it->iters[t].var) && st->buffer->axes[t + 1] == it->iters[t].axis;
      if (!pointwise) {
        refuse(fmt::format("{} does not compute each of its points once", it->name));
        continue;
      }
      const Expr value = substitute(st->value, lets);
      if (reads_sparse_buffer(value, B)) {
        refuse(fmt::format("{} reads it to compute it", it->name));
        continue;
      }
      std::string blocked;
      for (size_t q = 0; q < r.nests.size() && blocked.empty(); ++q) {
        if (q == n) continue;
        const auto written = buffers_written(r.nests[q]);
        if (written.count(B)) blocked = "another nest writes it too";
        if (q < n && buffers_read(r.nests[q]).count(B)) blocked = "a nest reads it before it is computed";
        if (q > n)
          for (const auto& a : sparse_accesses(value))
            if (written.count(a.buffer))
              blocked = fmt::format("a later nest changes {}, which its value reads", a.buffer);
      }
      if (!blocked.empty()) {
        refuse(blocked);
        continue;
      }
      bool own_row = true;
      std::vector<Stmt> nests;
      for (size_t q = 0; q < r.nests.size(); ++q) {
        if (q == n) continue;
        nests.push_back(replace_loads(r.nests[q], B, [&](const std::vector<Expr>& idx) {
          own_row &= structural_equal(idx.front(), row);
          std::map<std::string, Expr> at;
          for (size_t t = 0; t < it->iters.size(); ++t) at[it->iters[t].var] = idx[t + 1];
          return substitute(value, at);
        }));
      }
      if (!own_row) {
        refuse("a nest reads it at another row");
        continue;
      }
      r.nests = std::move(nests);
      drop_buffer(out, B);
      changed = true;
    }
  }
  return with_rows(out, r);
}

// ---- defer_row_normalisation ---------------------------------------------------

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

// ---- fuse_edge_loops -----------------------------------------------------------

Kernel fuse_edge_loops(const Kernel& k, std::vector<std::string>* why) {
  Kernel out = k;
  RowProgram r = row_program(k, "fuse_edge_loops");
  NameGen names(k);
  auto edge_loop = [&](const SparseIterationNode* s) {
    return s && is_edge_axis(s->iters.front().axis, r.row.axis) &&
           (s->iters.size() == 1 || s->fuse_group[0] != s->fuse_group[1]) &&
           (s->iters.size() > 1 || !s->init.defined() || s->iters.front().reduction);
  };
  // Nests that are not edge loops and share nothing with edge loop n (neither
  // writes what the other touches) may move ahead of it, so that it meets the
  // next edge loop (a softmax's init between the scores and the max pass). Returns
  // where edge loop n went; kept only when the two then fuse.
  auto hoist_independent = [&](size_t n) {
    const auto wa = buffers_written(r.nests[n]), ra = buffers_read(r.nests[n]);
    size_t q = n + 1;
    for (; q < r.nests.size() && !edge_loop(r.nests[q].as<SparseIterationNode>()); ++q) {
      const auto wc = buffers_written(r.nests[q]), rc = buffers_read(r.nests[q]);
      bool independent = true;
      for (const auto& B : wc) independent &= !wa.count(B) && !ra.count(B);
      for (const auto& B : wa) independent &= !rc.count(B);
      if (!independent) return n;
    }
    if (q == n + 1 || q == r.nests.size()) return n;
    const auto at = [&](size_t x) { return r.nests.begin() + static_cast<std::ptrdiff_t>(x); };
    std::rotate(at(n), at(n + 1), at(q));
    return q - 1;
  };
  for (size_t n = 0; n + 1 < r.nests.size();) {
    const std::vector<Stmt> unmoved = r.nests;
    const size_t start = n;
    if (edge_loop(r.nests[n].as<SparseIterationNode>())) n = hoist_independent(n);
    auto next = [&] {
      if (n != start) r.nests = unmoved;
      n = start + 1;
    };
    const auto* a = r.nests[n].as<SparseIterationNode>();
    const auto* b = n + 1 < r.nests.size() ? r.nests[n + 1].as<SparseIterationNode>() : nullptr;
    if (!edge_loop(a) || !edge_loop(b) || a->iters.front().axis != b->iters.front().axis) {
      next();
      continue;
    }
    const std::string ja = a->iters.front().var, jb = b->iters.front().var;
    const auto wa = buffers_written(r.nests[n]), ra = buffers_read(r.nests[n]);
    const auto wb = buffers_written(r.nests[n + 1]), rb = buffers_read(r.nests[n + 1]);
    // What one writes and the other touches must be an edge buffer touched only at
    // the edge being worked on; a row value the first builds over all edges (a
    // sum, a max) is not final until its loop ends.
    auto edge_buffer = [&](const std::string& B) {
      const SparseBuffer* buf = out.find_buffer(B);
      return buf && (*buf)->axes.size() >= 2 && (*buf)->axes[1] == a->iters.front().axis;
    };
    auto at_own_edge = [&](const std::string& B) {
      if (!edge_buffer(B)) return false;
      for (const auto& [nest, j] : {std::pair{r.nests[n], ja}, std::pair{r.nests[n + 1], jb}})
        for (const auto& acc : sparse_accesses(nest))
          if (acc.buffer == B && !is_var(acc.indices[1], j)) return false;
      return true;
    };
    std::string reason;
    for (const auto& B : wa)
      if (reason.empty() && rb.count(B) && !at_own_edge(B))
        reason = edge_buffer(B)
                     ? fmt::format("{} reads {} at another edge than {} wrote it", b->name, B, a->name)
                     : fmt::format("{} reads {}, which {} builds up over all of the row's edges", b->name, B, a->name);
    for (const auto& B : wb)
      if (reason.empty() && (wa.count(B) || ra.count(B)) && !at_own_edge(B))
        reason =
            fmt::format("{} writes {}, which {} touches at other edges or over the whole row", b->name, B, a->name);
    if (!reason.empty()) {
      add_reason(why, fmt::format("fuse_edge_loops: {} and {} stay apart: {}", a->name, b->name, reason));
      next();
      continue;
    }
    // An init that runs before a sum over the edges becomes a nest of its own
    // ahead of the fused loop; the rest of each nest runs per edge.
    std::vector<Stmt> before;
    auto per_edge = [&](const SparseIterationNode* s, const std::string& j) {
      Stmt init = s->init;
      if (init.defined() && s->iters.front().reduction) {
        std::vector<IterVar> init_iters;
        std::map<std::string, std::string> fresh;
        for (size_t t = 1; t < s->iters.size(); ++t)
          if (!s->iters[t].reduction) {
            fresh[s->iters[t].var] = names.fresh(s->iters[t].var);
            init_iters.push_back({fresh[s->iters[t].var], s->iters[t].axis, false});
          }
        Stmt hoisted = rename_vars(init, fresh);
        before.push_back(init_iters.empty() ? hoisted
                                            : sparse_iteration(s->name + "_init", init_iters, Stmt(), hoisted));
        init = Stmt();
      }
      Stmt rest = s->body;
      if (s->iters.size() > 1)
        rest = sparse_iteration(s->name, std::vector<IterVar>(s->iters.begin() + 1, s->iters.end()), init, s->body,
                                std::vector<int>(s->fuse_group.begin() + 1, s->fuse_group.end()));
      return s->iters.front().var == j ? rest : rename_vars(rest, {{s->iters.front().var, j}});
    };
    Stmt edge_body = seq({per_edge(a, ja), per_edge(b, ja)});
    IterVar j{ja, a->iters.front().axis, a->iters.front().reduction || b->iters.front().reduction};
    before.push_back(sparse_iteration(a->name + "_" + b->name, {j}, Stmt(), edge_body));
    r.nests.erase(r.nests.begin() + static_cast<std::ptrdiff_t>(n),
                  r.nests.begin() + static_cast<std::ptrdiff_t>(n) + 2);
    r.nests.insert(r.nests.begin() + static_cast<std::ptrdiff_t>(n), before.begin(), before.end());
    n += before.size() - 1;  // the fused loop may fuse with the next one
  }
  return with_rows(out, r);
}

// ---- contract_edge_buffers ------------------------------------------------------

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

// ---- fuse_row_programs ----------------------------------------------------------

Kernel fuse_row_programs(const std::vector<Kernel>& chain, const RowFusion& fusion) {
  PassLog log;
  std::vector<std::string> why;
  const std::set<std::string>& keep = fusion.outputs;
  Kernel k =
      log.run("fuse_row_loops", chain.front(), [&](const Kernel&) { return fuse_row_loops(chain, fusion.name); });
  k = log.run("inline_elementwise", k, [&](const Kernel& x) { return inline_elementwise(x, keep, &why); });
  k = log.run("defer_row_normalisation", k, [&](const Kernel& x) { return defer_row_normalisation(x, keep, &why); });
  k = log.run("fuse_edge_loops", k, [&](const Kernel& x) { return fuse_edge_loops(x, &why); });
  k = log.run("contract_edge_buffers", k, [&](const Kernel& x) { return contract_edge_buffers(x, keep, &why); });
  if (fusion.online_softmax) {
    const Kernel before = k;
    k = log.run("online_softmax", k, [&](const Kernel& x) { return online_softmax(x, &why); });
    STRATA_CHECK(!k.body.same_as(before.body), "fuse_row_programs({}): no online softmax applies{}{}", fusion.name,
                 why.empty() ? "" : ":\n  ", fmt::join(why, "\n  "));
  }
  for (const auto& name : keep) {
    const Param* p = k.find_param(name);
    STRATA_CHECK(p && p->role == ParamRole::Output, "fuse_row_programs({}): no program of the chain writes {}",
                 fusion.name, name);
  }
  std::vector<std::string> left;
  for (const auto& program : chain)
    for (const auto& p : program.params)
      if (p.role == ParamRole::Output && !keep.count(p.name) && k.find_param(p.name) &&
          std::find(left.begin(), left.end(), p.name) == left.end())
        left.push_back(p.name);
  STRATA_CHECK(left.empty(), "fuse_row_programs({}): {} still in memory after fusion{}{}", fusion.name,
               fmt::join(left, ", "), why.empty() ? "" : ":\n  ", fmt::join(why, "\n  "));
  return k;
}

}  // namespace strata::sc
