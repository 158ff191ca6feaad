#include "sparse_compiler/formats/decompose.h"

#include <fmt/format.h>

#include <limits>
#include <set>

#include "sparse_compiler/ir/equality.h"

#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/schedule/schedule_error.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::sc {
namespace {

// One part's replacement of the (I, J) iterators.
struct PartRule {
  std::vector<IterVar> iters;           // the part's iterators, in loop order
  SparseBuffer eid;                     // slot -> CSR position (-1 padding)
  std::vector<Expr> eid_index;          // iterator vars in eid's axis order
  std::map<std::string, Expr> coords;   // old iterator var -> coordinate expression
  Expr predicate;                       // when the mapped coordinates are valid (BSR edges)
  bool padded = true;                   // slots may be padding (eid < 0)
  std::vector<Axis> axes;
  std::vector<Param> params;
};

// Row-subset ELL, or DCSR when `dcsr`. The outer axis O has one iteration, or, for
// DCSR over column tiles, one per tile (a run-time count, p<k>_tiles): the rows
// pointer then delimits each tile's non-empty rows.
PartRule ell_like_rule(int k, const Axis& I, const Axis& J, const IterVar& ii, const IterVar& jj, bool dcsr,
                       int64_t width, DType idt, bool tiled = false) {
  const std::string p = fmt::format("p{}", k);
  PartRule r;
  Axis O = dense_fixed(p + "_O", tiled ? var(p + "_tiles") : make_int(1));
  Axis R = sparse_variable(p + "_R", O, I->length, var(p + "_n"), p + "_rptr", p + "_rows", idt, true);
  Axis C = dcsr ? sparse_variable(p + "_C", R, J->length, J->nnz, p + "_cptr", p + "_cols", idt, J->sorted)
                : sparse_fixed(p + "_C", R, J->length, width, p + "_cols", idt, false);
  r.axes = {O, R, C};
  r.eid = sparse_buffer(p + "_eid", {O, R, C}, idt);
  const std::string vo = p + "_o", vi = p + "_" + ii.var, vj = p + "_" + jj.var;
  r.iters = {{vo, O, ii.reduction}, {vi, R, ii.reduction}, {vj, C, jj.reduction}};
  r.eid_index = {var(vo), var(vi), var(vj)};
  r.coords = {{ii.var, var(vi)}, {jj.var, var(vj)}};
  r.params = {Param::buffer(p + "_rptr", DType::I64), Param::buffer(p + "_rows", idt),
              Param::buffer(p + "_cols", idt), Param::buffer(p + "_eid", idt),
              Param::buffer(p + "_tasks", DType::I64), Param::scalar(p + "_n")};
  if (dcsr) r.params.insert(r.params.begin() + 2, Param::buffer(p + "_cptr", DType::I64));
  if (tiled) r.params.push_back(Param::scalar(p + "_tiles"));
  r.padded = !dcsr && width > 1;  // a width-1 slot always holds a real entry
  return r;
}

PartRule bsr_rule(int k, const Axis& I, const Axis& J, const IterVar& ii, const IterVar& jj, int64_t b, DType idt) {
  const std::string p = fmt::format("p{}", k);
  PartRule r;
  Axis IO = dense_fixed(p + "_IO", var(p + "_mb"));
  Axis JO = sparse_variable(p + "_JO", IO, var(p + "_nb"), var(p + "_blocks"), p + "_bptr", p + "_bcols", idt, true);
  Axis II = dense_fixed(p + "_II", make_int(b));
  Axis JI = dense_fixed(p + "_JI", make_int(b));
  r.axes = {IO, JO, II, JI};
  r.eid = sparse_buffer(p + "_eid", {IO, JO, II, JI}, idt);
  const std::string vio = p + "_" + ii.var + "o", vii = p + "_" + ii.var + "i", vjo = p + "_" + jj.var + "o",
                    vji = p + "_" + jj.var + "i";
  // Block rows outermost, then the row inside the block, so a row's accumulator
  // lives across all of its blocks.
  r.iters = {{vio, IO, ii.reduction}, {vii, II, ii.reduction}, {vjo, JO, jj.reduction}, {vji, JI, jj.reduction}};
  r.eid_index = {var(vio), var(vjo), var(vii), var(vji)};
  Expr i = add(mul(var(vio), make_int(b)), var(vii)), j = add(mul(var(vjo), make_int(b)), var(vji));
  r.coords = {{ii.var, i}, {jj.var, j}};
  r.predicate = logical_and(lt(i, I->length), lt(j, J->length));
  r.params = {Param::buffer(p + "_bptr", DType::I64), Param::buffer(p + "_bcols", idt), Param::buffer(p + "_eid", idt),
              Param::buffer(p + "_tasks", DType::I64), Param::scalar(p + "_mb"), Param::scalar(p + "_nb"),
              Param::scalar(p + "_blocks")};
  return r;
}

bool over_structure(const SparseBuffer& b, const Axis& J) {
  for (const auto& a : b->axes)
    if (a == J) return true;
  return false;
}

// Rewrites accesses to buffers over the decomposed structure through the part's
// edge ids, then maps old coordinates to the part's.
class PartRewriter : public IRMutator {
 public:
  PartRewriter(const PartRule& rule, const Axis& J, std::map<std::string, SparseBuffer>& flat, const Axis& E)
      : rule_(rule), J_(J), flat_(flat), E_(E) {}

 protected:
  Expr visit(const SparseLoadNode* op, const Expr& self) override {
    if (!over_structure(op->buffer, J_)) return IRMutator::visit(op, self);
    Expr e = eid();
    Expr v = sparse_load(flat(op->buffer), flat_indices(op->buffer, op->indices, e));
    return select(ge(e, make_int(0)), v, make_zero(v.type()));
  }
  Stmt visit(const SparseStoreNode* op, const Stmt& self) override {
    if (!over_structure(op->buffer, J_)) {
      // A node-indexed accumulation B[..] = B[..] + e: a padding slot adds nothing.
      // The mask selects the contribution (a value, not a branch), so the update
      // stays vectorizable and the accumulator's location stays unguarded. It does
      // not multiply it by 0: a padding slot repeats a real column (ELL) or lies
      // inside a block (BSR), and 0 * X[j] is NaN where X[j] is infinite.
      // A running max (min), B = max(B, e): a padding slot offers -inf (+inf).
      Stmt s = IRMutator::visit(op, self);
      const auto* st = s.as<SparseStoreNode>();
      if (!rule_.padded || !st) return s;
      const auto* sum = st->value.as<AddNode>();
      const auto* mx = st->value.as<MaxNode>();
      const auto* mn = st->value.as<MinNode>();
      const Expr acc = sum ? sum->a : mx ? mx->a : mn ? mn->a : Expr();
      const Expr term = sum ? sum->b : mx ? mx->b : mn ? mn->b : Expr();
      const auto* old = acc.defined() ? acc.as<SparseLoadNode>() : nullptr;
      if (!old || old->buffer != st->buffer) return s;
      bool same = old->indices.size() == st->indices.size();
      for (size_t k = 0; same && k < st->indices.size(); ++k) same = structural_equal(old->indices[k], st->indices[k]);
      if (!same) return s;
      const Expr real = ge(eid(), make_int(0));
      if (sum) return sparse_store(st->buffer, st->indices, add(acc, select(real, term, make_zero(term.type()))));
      const double inf = std::numeric_limits<double>::infinity();
      if (mx) return sparse_store(st->buffer, st->indices, max(acc, select(real, term, make_float(-inf, term.type()))));
      return sparse_store(st->buffer, st->indices, min(acc, select(real, term, make_float(inf, term.type()))));
    }
    Expr e = eid();
    return if_then_else(ge(e, make_int(0)),
                        sparse_store(flat(op->buffer), flat_indices(op->buffer, op->indices, e), mutate(op->value)));
  }

 private:
  Expr eid() const { return cast(Type::i64(), sparse_load(rule_.eid, rule_.eid_index)); }
  SparseBuffer flat(const SparseBuffer& b) {
    auto it = flat_.find(b->name);
    if (it != flat_.end()) return it->second;
    std::vector<Axis> axes{E_};
    bool after = false;
    for (const auto& a : b->axes) {
      if (after) axes.push_back(a);
      after |= a == J_;
    }
    return flat_[b->name] = sparse_buffer(b->name, axes, b->dtype);
  }
  std::vector<Expr> flat_indices(const SparseBuffer& b, const std::vector<Expr>& idx, const Expr& e) {
    std::vector<Expr> out{e};
    bool after = false;
    for (size_t d = 0; d < b->axes.size(); ++d) {
      if (after) out.push_back(mutate(idx[d]));
      after |= b->axes[d] == J_;
    }
    return out;
  }

  const PartRule& rule_;
  Axis J_;
  std::map<std::string, SparseBuffer>& flat_;
  Axis E_;
};

// Names used anywhere in a kernel body (variables and buffers).
std::set<std::string> referenced_names(const Kernel& k) {
  std::set<std::string> names;
  for_each_expr(k.body, [&](const Expr& e) {
    if (const auto* v = e.as<VarNode>()) names.insert(v->name);
    if (const auto* l = e.as<LoadNode>()) names.insert(l->buffer);
    if (const auto* s = e.as<SparseLoadNode>()) names.insert(s->buffer->name);
  });
  class Stores : public IRVisitor {
   public:
    std::set<std::string>& n;
    explicit Stores(std::set<std::string>& s) : n(s) {}

   protected:
    void visit(const SparseStoreNode* op) override {
      n.insert(op->buffer->name);
      IRVisitor::visit(op);
    }
    void visit(const SparseIterationNode* op) override {
      for (const auto& it : op->iters) {
        for (Axis a = it.axis; a; a = a->parent) {
          n.insert(a->indptr);
          n.insert(a->indices);
          for_each_expr(a->length, [&](const Expr& e) {
            if (const auto* v = e.as<VarNode>()) n.insert(v->name);
          });
          if (a->nnz.defined())
            for_each_expr(a->nnz, [&](const Expr& e) {
              if (const auto* v = e.as<VarNode>()) n.insert(v->name);
            });
        }
      }
      IRVisitor::visit(op);
    }
  } st(names);
  st.visit_stmt(k.body);
  return names;
}

bool init_is_edge_indexed(const SparseIterationNode* it, const Axis& J) {
  if (!it->init.defined()) return false;
  class StoresTo : public IRVisitor {
   public:
    Axis J;
    bool hit = false;

   protected:
    void visit(const SparseStoreNode* op) override { hit |= over_structure(op->buffer, J); }
  } s;
  s.J = J;
  s.visit_stmt(it->init);
  return s.hit;
}

const Axis* csr_column_axis(const SparseIterationNode* it) {
  for (size_t t = 0; t + 1 < it->iters.size(); ++t)
    if (it->iters[t + 1].axis->is_sparse() && it->iters[t + 1].axis->parent == it->iters[t].axis)
      return &it->iters[t + 1].axis;
  return nullptr;
}

}  // namespace

Kernel split_init(const Kernel& program) {
  program.require_stage(Stage::Coordinate, "split_init");
  const auto* it = program.body.as<SparseIterationNode>();
  STRATA_SCHED_CHECK(it, "split_init: kernel {} must consist of one sparse iteration", program.name);
  const Axis* J = csr_column_axis(it);
  if (!it->init.defined() || !J || init_is_edge_indexed(it, *J)) return program;
  std::vector<IterVar> init_iters;
  for (const auto& v : it->iters)
    if (!v.reduction) init_iters.push_back(v);
  Kernel out = program;
  out.body = seq({sparse_iteration(it->name + "_init", init_iters, Stmt(), it->init),
                  sparse_iteration(it->name, it->iters, Stmt(), it->body, it->fuse_group)});
  return out;
}

Kernel coo_program(const Kernel& program) {
  const auto* it = program.body.as<SparseIterationNode>();
  STRATA_SCHED_CHECK(it, "coo: kernel {} must consist of one sparse iteration", program.name);
  const Axis* J = csr_column_axis(it);
  STRATA_SCHED_CHECK(J, "coo: sp_iter {} has no row iterator followed by a column iterator", it->name);
  std::string vi, vj;
  for (size_t t = 0; t + 1 < it->iters.size(); ++t)
    if (it->iters[t + 1].axis == *J) {
      vi = it->iters[t].var;
      vj = it->iters[t + 1].var;
    }
  const std::string name = it->name;
  Kernel k = split_init(program);
  // sparse_fuse works on the iteration named `name` (the compute one).
  class Fuse : public IRMutator {
   public:
    Fuse(const Kernel& k, std::string n, std::string a, std::string b) : k_(k), n_(std::move(n)), a_(std::move(a)), b_(std::move(b)) {}

   protected:
    Stmt visit(const SparseIterationNode* op, const Stmt& self) override {
      if (op->name != n_) return self;
      Kernel one = k_;
      one.body = self;
      return sparse_fuse(one, n_, {a_, b_}).body;
    }

   private:
    const Kernel& k_;
    std::string n_, a_, b_;
  } fuse(k, name, vi, vj);
  k.body = fuse.mutate(k.body);
  k.name = program.name + "_coo";
  k.params.push_back(Param::buffer("task_rows", DType::I64));
  k.params.push_back(Param::buffer("coo_tasks", DType::I64));
  k.params.push_back(Param::scalar("num_tasks"));
  return k;
}

Kernel decompose_format(const Kernel& program, const FormatSpec& spec) {
  program.require_stage(Stage::Coordinate, "decompose_format");
  STRATA_SCHED_CHECK(spec.decomposed(), "decompose_format: {} is not a decomposed format", spec.str());
  const auto* it = program.body.as<SparseIterationNode>();
  STRATA_SCHED_CHECK(it, "decompose_format({}): kernel {} must consist of one sparse iteration", spec.str(),
                     program.name);
  // The (I, J) iterator pair of the CSR structure.
  int pos_i = -1;
  for (size_t t = 0; t + 1 < it->iters.size(); ++t)
    if (it->iters[t + 1].axis->is_sparse() && it->iters[t + 1].axis->parent == it->iters[t].axis) pos_i = static_cast<int>(t);
  STRATA_SCHED_CHECK(pos_i >= 0, "decompose_format({}): sp_iter {} has no row iterator followed by a column iterator",
                     spec.str(), it->name);
  const IterVar ii = it->iters[pos_i], jj = it->iters[pos_i + 1];
  const Axis I = ii.axis, J = jj.axis;
  const DType idt = J->idtype;
  const Axis E = dense_fixed("E", J->nnz);

  // Part rules: one per bucket of every column part (hyb, ell), or a single part.
  std::vector<PartRule> rules;
  if (spec.kind == FormatKind::Bsr) {
    rules.push_back(bsr_rule(0, I, J, ii, jj, spec.block, idt));
  } else if (spec.kind == FormatKind::Dcsr) {
    rules.push_back(ell_like_rule(0, I, J, ii, jj, true, 0, idt, spec.col_tile > 0));
  } else {
    const int64_t c = spec.kind == FormatKind::Hyb ? spec.col_parts : 1;
    const auto widths = spec.bucket_widths();
    for (int64_t k = 0; k < c; ++k)
      for (size_t b = 0; b < widths.size(); ++b)
        rules.push_back(ell_like_rule(static_cast<int>(k * widths.size() + b), I, J, ii, jj, false, widths[b], idt));
  }

  // Is the output indexed by edges? Then each part keeps the init.
  const bool edge_output = init_is_edge_indexed(it, J);

  Kernel out = program;
  out.name = program.name + "_" + [&] {
    std::string s = spec.str();
    for (char& ch : s)
      if (ch == ':' || ch == ',' || ch == '=') ch = '_';
    return s;
  }();
  std::map<std::string, SparseBuffer> flat;
  std::vector<Stmt> iterations;
  if (it->init.defined() && !edge_output) {
    // init over the spatial iterators, all rows included (also those in no part).
    std::vector<IterVar> init_iters;
    for (const auto& v : it->iters)
      if (!v.reduction) init_iters.push_back(v);
    iterations.push_back(sparse_iteration(it->name + "_init", init_iters, Stmt(), it->init));
  }
  for (size_t k = 0; k < rules.size(); ++k) {
    const PartRule& r = rules[k];
    std::vector<IterVar> iters;
    for (size_t t = 0; t < it->iters.size(); ++t) {
      if (static_cast<int>(t) == pos_i) iters.insert(iters.end(), r.iters.begin(), r.iters.end());
      else if (static_cast<int>(t) != pos_i + 1) iters.push_back(it->iters[t]);
    }
    PartRewriter rw(r, J, flat, E);
    Stmt body = substitute(rw.mutate(it->body), r.coords);
    Stmt init = edge_output ? substitute(rw.mutate(it->init), r.coords) : Stmt();
    if (r.predicate.defined()) {
      body = if_then_else(r.predicate, body);
      if (init.defined()) init = if_then_else(r.predicate, init);
    }
    iterations.push_back(sparse_iteration(fmt::format("{}_p{}", it->name, k), iters, init, body));
    out.params.insert(out.params.end(), r.params.begin(), r.params.end());
  }
  out.params.push_back(Param::buffer("task_rows", DType::I64));
  out.params.push_back(Param::scalar("num_tasks"));
  out.body = seq(iterations);

  // Declarations: the parts' axes and eid buffers, flat views replacing buffers
  // over the old structure, and nothing that is no longer referenced.
  std::vector<SparseBuffer> buffers;
  for (const auto& b : program.buffers) {
    if (over_structure(b, J)) {
      if (flat.count(b->name)) buffers.push_back(flat.at(b->name));
    } else {
      buffers.push_back(b);
    }
  }
  std::vector<Axis> axes;
  for (const auto& a : program.axes)
    if (a != J) axes.push_back(a);
  if (!flat.empty()) axes.push_back(E);
  for (const auto& r : rules) {
    axes.insert(axes.end(), r.axes.begin(), r.axes.end());
    buffers.push_back(r.eid);
  }
  out.axes = axes;
  out.buffers = buffers;
  const std::set<std::string> used = referenced_names(out);
  std::vector<Param> params;
  // Keep what the body uses, the graph sizes, the outputs and the task arrays (the
  // CPU schedule partitions the parts by them).
  for (const auto& p : out.params)
    if (used.count(p.name) || p.kind == ParamKind::Scalar || p.role == ParamRole::Output ||
        p.name.find("tasks") != std::string::npos || p.name == "task_rows")
      params.push_back(p);
  out.params = params;
  std::vector<Axis> kept;
  for (const auto& a : out.axes) {
    bool needed = false;
    for (const auto& b : out.buffers)
      for (const auto& ba : b->axes) needed |= ba == a || is_ancestor_or_self(a, ba);
    for (const auto& s : iterations)
      for (const auto& v : s.as<SparseIterationNode>()->iters) needed |= is_ancestor_or_self(a, v.axis);
    if (needed) kept.push_back(a);
  }
  out.axes = kept;
  return out;
}

}  // namespace strata::sc
