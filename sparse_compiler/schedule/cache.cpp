// Primitives that stage data in locals: cache_write, cache_read, rfactor.
#include <algorithm>
#include <map>
#include <set>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/linear_form.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {
namespace {

struct InnerLoop {
  int64_t min = 0, extent = -1;  // extent -1: not constant
};

// Variables bound inside a statement: loop variables (with constant bounds when
// they have them) and let-bound names.
struct Bindings : IRVisitor {
  std::map<std::string, InnerLoop> loops;
  std::set<std::string> lets;

 protected:
  void visit(const ForNode* op) override {
    InnerLoop L;
    const int64_t *mn = as_const_int(op->min), *ext = as_const_int(op->extent);
    if (mn && ext) L = {*mn, *ext};
    loops[op->var] = L;
    IRVisitor::visit(op);
  }
  void visit(const LetStmtNode* op) override {
    lets.insert(op->var);
    IRVisitor::visit(op);
  }
};

// How the accesses to one buffer inside a loop body map onto a local region.
struct Region {
  LinearForm base;  // the invariant part, equal for every access
  int64_t size = 0;
  bool have_base = false;
  std::string unit_var;  // an inner loop that walks the region with stride 1
};

// Splits an access index into (invariant base, offset inside the region); throws
// a ScheduleError explaining why the access cannot be staged.
Expr local_offset(const char* prim, const std::string& buffer, const std::string& loop, const Expr& index,
                  const Bindings& inner, Region& region) {
  LinearForm f = to_linear(simplify(index));
  LinearForm base, offset;
  base.constant = f.constant;
  int64_t max_off = 0;
  for (const auto& [term, coef] : f.terms) {
    const auto* v = term.as<VarNode>();
    auto it = v ? inner.loops.find(v->name) : inner.loops.end();
    if (it == inner.loops.end()) {
      bool varies = false;
      for (const auto& [name, L] : inner.loops) varies |= uses_var(term, name);
      for (const auto& name : inner.lets) varies |= uses_var(term, name);
      STRATA_SCHED_CHECK(!varies, "{}({}, {}): the index {} of {} varies inside loop {} in a way that is not affine",
                         prim, buffer, loop, to_string(index), buffer, loop);
      base.add_term(term, coef);
      continue;
    }
    STRATA_SCHED_CHECK(it->second.extent >= 0, "{}({}, {}): the index {} depends on loop {}, whose extent is not constant",
                       prim, buffer, loop, to_string(index), v->name);
    STRATA_SCHED_CHECK(coef > 0, "{}({}, {}): the index {} runs backwards along loop {}", prim, buffer, loop,
                       to_string(index), v->name);
    if (coef == 1 && region.unit_var.empty()) region.unit_var = v->name;
    offset.add_term(sub(term, make_int(it->second.min)), coef);
    base.constant += coef * it->second.min;
    max_off += coef * (it->second.extent - 1);
  }
  if (!region.have_base) {
    region.base = base;
    region.have_base = true;
  } else {
    STRATA_SCHED_CHECK(same_linear_form(region.base, base),
                       "{}({}, {}): accesses to {} inside loop {} do not share one base ({} vs {})", prim, buffer, loop,
                       buffer, loop, to_string(from_linear(region.base, Type::i64())),
                       to_string(from_linear(base, Type::i64())));
  }
  region.size = std::max(region.size, max_off + 1);
  return simplify(from_linear(offset, Type::i64()));
}

// Rewrites accesses of `buffer` to `local` using local_offset.
class Redirect : public IRMutator {
 public:
  Redirect(const char* prim, std::string buffer, std::string loop, std::string local, const Bindings& inner,
           Region& region, bool allow_stores)
      : prim_(prim), buffer_(std::move(buffer)), loop_(std::move(loop)), local_(std::move(local)), inner_(inner),
        region_(region), allow_stores_(allow_stores) {}
  int accesses = 0, stores = 0;
  // The conditions of the ifs enclosing each access (inside the loop); when every
  // access has the same ones, load-in and write-back run under them too.
  std::vector<Expr> guard;
  bool guards_agree = true;

 protected:
  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    conds_.push_back(op->condition);
    Stmt t = mutate(op->then_case);
    conds_.pop_back();
    Stmt e = mutate(op->else_case);
    if (t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return if_then_else(op->condition, t, e);
  }
  Expr visit(const LoadNode* op, const Expr& self) override {
    if (op->buffer != buffer_) return IRMutator::visit(op, self);
    ++accesses;
    note_guard();
    return load(op->type.element_of(), local_, local_offset(prim_, buffer_, loop_, op->index, inner_, region_));
  }
  Stmt visit(const StoreNode* op, const Stmt& self) override {
    if (op->buffer != buffer_) return IRMutator::visit(op, self);
    STRATA_SCHED_CHECK(allow_stores_, "{}({}, {}): {} is written inside loop {}; use cache_write", prim_, buffer_,
                       loop_, buffer_, loop_);
    STRATA_SCHED_CHECK(op->store_kind == StoreKind::Plain, "{}({}, {}): {} has atomic or streaming stores", prim_,
                       buffer_, loop_, buffer_);
    ++accesses;
    ++stores;
    note_guard();
    Expr off = local_offset(prim_, buffer_, loop_, op->index, inner_, region_);
    return store(local_, off, mutate(op->value));
  }

 private:
  void note_guard() {
    if (accesses == 1) {
      guard = conds_;
      return;
    }
    bool same = guard.size() == conds_.size();
    for (size_t k = 0; same && k < guard.size(); ++k) same = structural_equal(guard[k], conds_[k]);
    guards_agree &= same;
  }

  const char* prim_;
  std::string buffer_, loop_, local_;
  const Bindings& inner_;
  Region& region_;
  bool allow_stores_;
  std::vector<Expr> conds_;
};

// `s` without its stores to `buffer`, and without the loops, guards and lets
// that held nothing else.
Stmt without_stores(const Stmt& s, const std::string& buffer) {
  class Dropper : public IRMutator {
   public:
    explicit Dropper(const std::string& b) : buffer_(b) {}

   protected:
    Stmt visit(const StoreNode* op, const Stmt& self) override { return op->buffer == buffer_ ? Stmt() : self; }
    Stmt visit(const ForNode* op, const Stmt& self) override {
      Stmt body = mutate(op->body);
      if (!body.defined()) return Stmt();
      return body.same_as(op->body) ? self
                                    : for_loop(op->var, op->min, op->extent, op->for_kind, body, op->annotations);
    }
    Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
      Stmt t = mutate(op->then_case), e = op->else_case.defined() ? mutate(op->else_case) : Stmt();
      if (!t.defined() && !e.defined()) return Stmt();
      if (t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
      return if_then_else(t.defined() ? op->condition : logical_not(op->condition), t.defined() ? t : e,
                          t.defined() ? e : Stmt());
    }
    Stmt visit(const LetStmtNode* op, const Stmt& self) override {
      Stmt body = mutate(op->body);
      if (!body.defined()) return Stmt();
      return body.same_as(op->body) ? self : let_stmt(op->var, op->value, body);
    }
    Stmt visit(const AllocateNode* op, const Stmt& self) override {
      Stmt body = mutate(op->body);
      if (!body.defined()) return Stmt();
      return body.same_as(op->body) ? self : allocate(op->buffer, op->type, op->size, op->scope, body);
    }

   private:
    const std::string& buffer_;
  } d(buffer);
  return d.mutate(s);
}

// The write-back and load-in of a staged region run under the accesses' common
// guard. A condition that varies inside the cached loop guards which values are
// added, not where they go, provided it shares no variable with the region's base
// (BSR's column-in-range test inside a row's accumulation); it is left out. Any
// other condition that varies inside the loop is refused.
//
// cache_read (reads_only) leaves out every condition that varies inside the loop:
// the load-in reads the region the guarded accesses would read. That is safe for
// the regions schedules stage (node rows addressed by a coordinate, which sparse
// axes keep in range), and it is what lets a row of X be staged once for all of
// the row's slots, padding included.
Stmt guarded(const char* prim, const std::string& buffer, const std::string& loop, const Redirect& r,
             const Bindings& inner, const Expr& base, Stmt s, bool reads_only = false) {
  if (!s.defined() || r.guard.empty()) return s;
  STRATA_SCHED_CHECK(r.guards_agree || reads_only, "{}({}, {}): accesses to {} sit under different conditions", prim,
                     buffer, loop, buffer);
  std::set<std::string> base_vars;
  for_each_expr(base, [&](const Expr& e) {
    if (const auto* v = e.as<VarNode>()) base_vars.insert(v->name);
  });
  for (auto it = r.guard.rbegin(); it != r.guard.rend(); ++it) {
    std::string varying;
    for (const auto& [v, L] : inner.loops)
      if (uses_var(*it, v)) varying = v;
    if (!varying.empty() && reads_only) continue;
    if (!varying.empty()) {
      bool touches_base = false;
      for (const auto& b : base_vars) touches_base |= uses_var(*it, b);
      STRATA_SCHED_CHECK(!touches_base,
                         "{}({}, {}): the condition {} guarding {} depends on inner loop {} and on the region's base",
                         prim, buffer, loop, to_string(*it), buffer, varying);
      continue;
    }
    s = if_then_else(*it, s);
  }
  return s;
}

// True when `s` is a nest of constant loops whose innermost statement stores to
// every element of local[0, size) exactly once without reading it.
bool covers_local(const Stmt& s, const std::string& local, int64_t size) {
  std::vector<const ForNode*> nest;
  Stmt cur = s;
  // Look through guards: a guarded full overwrite still covers the guarded region.
  while (const auto* g = cur.as<IfThenElseNode>()) {
    if (g->else_case.defined()) return false;
    cur = g->then_case;
  }
  while (const auto* f = cur.as<ForNode>()) {
    nest.push_back(f);
    cur = f->body;
  }
  // A nest that initialises several locals at once: the one statement of its body
  // that touches this local must be the store (no other reads it before it is set).
  if (const auto* sq = cur.as<SeqNode>()) {
    const Stmt* only = nullptr;
    for (const Stmt& x : sq->stmts) {
      if (!touches_buffer(x, local)) continue;
      if (only) return false;
      only = &x;
    }
    if (!only) return false;
    cur = *only;
  }
  const auto* st = cur.as<StoreNode>();
  if (!st || st->buffer != local || st->index.type().is_vector()) return false;
  bool reads = false;
  for_each_expr(st->value, [&](const Expr& e) {
    if (const auto* l = e.as<LoadNode>(); l && l->buffer == local) reads = true;
  });
  if (reads) return false;
  LinearForm f = to_linear(simplify(st->index));
  if (f.constant != 0 || f.terms.size() != nest.size()) return false;
  // Row-major enumeration: the innermost loop has coefficient 1 and each outer
  // loop's coefficient is the product of the extents inside it.
  int64_t stride = 1;
  for (auto it = nest.rbegin(); it != nest.rend(); ++it) {
    const int64_t *mn = as_const_int((*it)->min), *ext = as_const_int((*it)->extent);
    if (!mn || !ext || *mn != 0 || f.coefficient_of_var((*it)->var) != stride) return false;
    stride *= *ext;
  }
  return stride == size;
}

// The axis annotation of the loop that walks the region with stride 1: the
// write-back and load-in loops run along the same axis, and later schedule steps
// find them by it.
std::string unit_axis(const Stmt& body, const Region& region) {
  if (region.unit_var.empty()) return "";
  const ForNode* f = find_loop(body, region.unit_var);
  return (f && f->annotations.count("axis")) ? f->annotations.at("axis") : "";
}

}  // namespace

std::string Schedule::cache_write(const std::string& buffer, const std::string& loop) {
  const ForNode* L = loop_or_throw("cache_write", loop);
  const Param* p = k_.find_param(buffer);
  STRATA_SCHED_CHECK(p && p->is_buffer(), "cache_write({}, {}): {} is not a buffer parameter of kernel {}", buffer,
                     loop, buffer, k_.name);
  Bindings inner;
  inner.visit_stmt(L->body);
  NameGen names(k_);
  const std::string local = names.fresh(buffer + "_local");
  Region region;
  Redirect r("cache_write", buffer, loop, local, inner, region, true);
  Stmt body = r.mutate(L->body);
  STRATA_SCHED_CHECK(r.accesses > 0, "cache_write({}, {}): loop {} does not access {}", buffer, loop, loop, buffer);
  STRATA_SCHED_CHECK(r.stores > 0, "cache_write({}, {}): {} is only read inside loop {}; use cache_read", buffer, loop,
                     buffer, loop);
  STRATA_SCHED_CHECK(region.size <= kMaxStagedElements,
                     "cache_write({}, {}): the region has {} elements, more than the {} a local may stage", buffer,
                     loop, region.size, kMaxStagedElements);
  const Type t = Type::from_dtype(p->dtype);
  const Expr base = from_linear(region.base, Type::i64());
  const std::string w = names.fresh(loop + "_wb");
  Annotations ann;
  if (std::string a = unit_axis(L->body, region); !a.empty()) ann["axis"] = a;
  Stmt writeback = for_loop(w, make_int(0), make_int(region.size), ForKind::Serial,
                            store(buffer, add(base, var(w)), load(t, local, var(w))), ann);
  // Load the old values first unless the first statement that touches the local
  // overwrites all of it (looking through the lets a fused loop opens with and
  // the locals other cache_writes staged, and past statements that do not touch
  // it, such as another local's load-in).
  // The search descends into the statement it picks while that is a sequence, a
  // let or another local's allocation, so locals staged earlier at the same loop
  // (whose allocations now enclose the body) do not hide the first touch.
  Stmt first = body;
  while (true) {
    if (const auto* let = first.as<LetStmtNode>()) {
      first = let->body;
    } else if (const auto* a = first.as<AllocateNode>()) {
      first = a->body;
    } else if (const auto* sq = first.as<SeqNode>()) {
      const auto hit = std::find_if(sq->stmts.begin(), sq->stmts.end(),
                                    [&](const Stmt& st) { return touches_buffer(st, local); });
      if (hit == sq->stmts.end()) break;
      first = *hit;
    } else {
      break;
    }
  }
  Stmt load_in;
  if (!covers_local(first, local, region.size)) {
    const std::string li = names.fresh(loop + "_ld");
    load_in = for_loop(li, make_int(0), make_int(region.size), ForKind::Serial,
                       store(local, var(li), load(t, buffer, add(base, var(li)))), ann);
  }
  writeback = guarded("cache_write", buffer, loop, r, inner, base, writeback);
  load_in = guarded("cache_write", buffer, loop, r, inner, base, load_in);
  Stmt staged = allocate(local, t, region.size, MemoryScope::Register, seq({load_in, body, writeback}));
  Stmt result = for_loop(L->var, L->min, L->extent, L->for_kind, staged, L->annotations);
  Stmt new_body = replace_loop(k_.body, loop, [&](const ForNode*) { return result; });
  // A workspace (scratch the caller allocates for one run) that nothing reads any
  // more, once its reads went to locals, holds nothing anyone needs: its stores
  // (the write-backs) are dead, and the parameter goes with them, so the caller
  // allocates nothing (the fused RGMS kernel's per-pair H: pairs x F floats).
  const bool dead_scratch = p->role == ParamRole::Workspace && !reads_buffer(new_body, buffer) &&
                            !(k_.preprocess.defined() && touches_buffer(k_.preprocess, buffer));
  if (dead_scratch) new_body = without_stores(new_body, buffer);
  commit(new_body, fmt::format("cache_write({}, {})", buffer, loop));
  if (dead_scratch) std::erase_if(k_.params, [&](const Param& q) { return q.name == buffer; });
  return local;
}

std::string Schedule::cache_read(const std::string& buffer, const std::string& loop) {
  const ForNode* L = loop_or_throw("cache_read", loop);
  const Param* p = k_.find_param(buffer);
  STRATA_SCHED_CHECK(p && p->is_buffer(), "cache_read({}, {}): {} is not a buffer parameter of kernel {}", buffer, loop,
                     buffer, k_.name);
  Bindings inner;
  inner.visit_stmt(L->body);
  NameGen names(k_);
  const std::string local = names.fresh(buffer + "_local");
  Region region;
  Redirect r("cache_read", buffer, loop, local, inner, region, false);
  Stmt body = r.mutate(L->body);
  STRATA_SCHED_CHECK(r.accesses > 0, "cache_read({}, {}): loop {} does not read {}", buffer, loop, loop, buffer);
  STRATA_SCHED_CHECK(region.size <= kMaxStagedElements,
                     "cache_read({}, {}): the region has {} elements, more than the {} a local may stage", buffer,
                     loop, region.size, kMaxStagedElements);
  const Type t = Type::from_dtype(p->dtype);
  const Expr base = from_linear(region.base, Type::i64());
  const std::string li = names.fresh(loop + "_ld");
  Annotations ann;
  if (std::string a = unit_axis(L->body, region); !a.empty()) ann["axis"] = a;
  Stmt load_in = for_loop(li, make_int(0), make_int(region.size), ForKind::Serial,
                          store(local, var(li), load(t, buffer, add(base, var(li)))), ann);
  load_in = guarded("cache_read", buffer, loop, r, inner, base, load_in, true);
  Stmt staged = allocate(local, t, region.size, MemoryScope::Register, seq({load_in, body}));
  Stmt result = for_loop(L->var, L->min, L->extent, L->for_kind, staged, L->annotations);
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return result; }),
         fmt::format("cache_read({}, {})", buffer, loop));
  return local;
}

namespace {
// Finds the Allocate of `local` that encloses loop `loop`.
class AllocFinder : public IRVisitor {
 public:
  AllocFinder(std::string local, std::string loop) : local_(std::move(local)), loop_(std::move(loop)) {}
  const AllocateNode* found = nullptr;

 protected:
  void visit(const AllocateNode* op) override {
    if (op->buffer == local_ && find_loop(op->body, loop_)) found = op;
    IRVisitor::visit(op);
  }

 private:
  std::string local_, loop_;
};

// Inside the reduction loop, acc[k] = acc[k] + e  ->  rf[slot] = rf[slot] + e, where
// slot is v (one partial per iteration of v, for a single location k) or, with
// copy_size > 0, v * copy_size + k (a whole copy of acc per iteration of v).
class ToPartial : public IRMutator {
 public:
  ToPartial(std::string acc, std::string rf, std::string v, int64_t copy_size)
      : acc_(std::move(acc)), rf_(std::move(rf)), v_(std::move(v)), copy_size_(copy_size) {}
  Expr index;  // the accumulator location k (single-location form)
  std::string problem;
  int updates = 0;

 protected:
  Stmt visit(const StoreNode* op, const Stmt& self) override {
    if (op->buffer != acc_) return IRMutator::visit(op, self);
    const auto* a = op->value.as<AddNode>();
    const auto* l = a ? a->a.as<LoadNode>() : nullptr;
    if (!l || l->buffer != acc_ || !structural_equal(l->index, op->index) || uses_var(op->index, v_)) {
      problem = "the update of " + acc_ + " is not acc[k] = acc[k] + e with k independent of " + v_;
      return self;
    }
    if (copy_size_ > 0 && op->index.type().is_vector()) {
      problem = "the update of " + acc_ + " is vectorized already; rfactor before vectorizing";
      return self;
    }
    if (copy_size_ == 0 && index.defined() && !structural_equal(index, op->index))
      problem = "it updates several locations of " + acc_;
    if (!index.defined()) index = op->index;
    ++updates;
    Expr e = mutate(a->b);
    const Expr slot = copy_size_ > 0 ? add(mul(var(v_), make_int(copy_size_)), op->index) : var(v_);
    return store(rf_, slot, add(load(l->type.element_of(), rf_, slot), e));
  }
  Expr visit(const LoadNode* op, const Expr& self) override {
    if (op->buffer == acc_) problem = acc_ + " is read outside its update";
    return IRMutator::visit(op, self);
  }

 private:
  std::string acc_, rf_, v_;
  int64_t copy_size_;
};

// Whether an update of `acc` inside `s` addresses it through a variable bound
// inside `s` (a loop or let nested in the reduction loop, e.g. a feature loop):
// then each iteration of the reduction loop needs a whole copy of acc.
class IndexedInside : public IRVisitor {
 public:
  IndexedInside(std::string acc, const Bindings& inside) : acc_(std::move(acc)), inside_(inside) {}
  bool found = false;
  std::string axis;  // the "axis" annotation of such a loop, for the new loops

 protected:
  void visit(const StoreNode* op) override {
    if (op->buffer == acc_) {
      for (const auto& [v, L] : inside_.loops)
        if (uses_var(op->index, v)) {
          found = true;
          if (axis.empty() && axes_.count(v)) axis = axes_.at(v);
        }
      for (const auto& v : inside_.lets) found = found || uses_var(op->index, v);
    }
    IRVisitor::visit(op);
  }
  void visit(const ForNode* op) override {
    if (op->annotations.count("axis")) axes_[op->var] = op->annotations.at("axis");
    IRVisitor::visit(op);
  }

 private:
  std::string acc_;
  const Bindings& inside_;
  std::map<std::string, std::string> axes_;
};

// Outside the reduction loop `skip`, `acc` may only be updated (acc[k] = acc[k] + e):
// the partials are added back after the whole statement, so a read there would
// miss them.
class ReadOutsideLoop : public IRVisitor {
 public:
  ReadOutsideLoop(std::string acc, std::string skip) : acc_(std::move(acc)), skip_(std::move(skip)) {}
  bool found = false;

 protected:
  void visit(const ForNode* op) override {
    if (op->var != skip_) IRVisitor::visit(op);
  }
  void visit(const StoreNode* op) override {
    const auto* a = op->value.as<AddNode>();
    const auto* l = a ? a->a.as<LoadNode>() : nullptr;
    if (op->buffer == acc_ && l && l->buffer == acc_ && structural_equal(l->index, op->index)) {
      visit_expr(op->index);
      visit_expr(a->b);
      return;
    }
    IRVisitor::visit(op);
  }
  void visit(const LoadNode* op) override {
    found = found || op->buffer == acc_;
    IRVisitor::visit(op);
  }

 private:
  std::string acc_, skip_;
};
}  // namespace

Schedule::RFactor Schedule::rfactor(const std::string& loop, const std::string& local) {
  const ForNode* Li = loop_or_throw("rfactor", loop);
  const int64_t* W = as_const_int(Li->extent);
  STRATA_SCHED_CHECK(W && is_zero(Li->min), "rfactor({}, {}): loop {} needs constant bounds starting at 0", loop, local,
                     loop);
  AllocFinder af(local, loop);
  af.visit_stmt(k_.body);
  STRATA_SCHED_CHECK(af.found, "rfactor({}, {}): {} is not a local allocated around loop {}", loop, local, local, loop);
  const AllocateNode* alloc = af.found;
  // The statement directly under the allocation that holds the reduction nest.
  std::vector<Stmt> parts;
  if (const auto* sq = alloc->body.as<SeqNode>()) parts = sq->stmts;
  else parts = {alloc->body};
  int which = -1;
  for (size_t k = 0; k < parts.size(); ++k)
    if (find_loop(parts[k], loop)) which = static_cast<int>(k);
  Bindings in_loop;
  in_loop.visit_stmt(Li->body);
  IndexedInside per_copy(local, in_loop);
  per_copy.visit_stmt(Li->body);
  // A whole copy of the local per iteration when the update's location varies
  // inside the loop; else one partial per iteration for the single location.
  const int64_t copy = per_copy.found ? alloc->size : 0;
  STRATA_SCHED_CHECK(copy * *W <= kMaxStagedElements,
                     "rfactor({}, {}): {} copies of the {} elements of {} are more than the {} a local may stage", loop,
                     local, *W, alloc->size, local, kMaxStagedElements);
  ReadOutsideLoop reads(local, loop);
  reads.visit_stmt(parts[which]);
  STRATA_SCHED_CHECK(!reads.found, "rfactor({}, {}): {} is read outside loop {} before its partials are added back",
                     loop, local, local, loop);
  NameGen names(k_);
  RFactor out;
  out.local = names.fresh(local + "_rf");
  out.init_loop = names.fresh(loop + "_rfz");
  out.sum_loop = names.fresh(loop + "_rfsum");
  ToPartial tp(local, out.local, loop, copy);
  Stmt nest = replace_loop(parts[which], loop, [&](const ForNode* f) {
    return for_loop(f->var, f->min, f->extent, f->for_kind, tp.mutate(f->body), f->annotations);
  });
  STRATA_SCHED_CHECK(tp.problem.empty() && tp.updates > 0, "rfactor({}, {}): {}", loop, local,
                     tp.problem.empty() ? "loop " + loop + " does not update " + local : tp.problem);
  const Type t = alloc->type;
  Stmt init, sum;
  if (copy == 0) {
    Bindings inside;
    inside.visit_stmt(parts[which]);
    for (const auto& [v, L] : inside.loops)
      STRATA_SCHED_CHECK(!uses_var(tp.index, v), "rfactor({}, {}): the accumulator index depends on loop {}", loop,
                         local, v);
    init = for_loop(out.init_loop, make_int(0), make_int(*W), ForKind::Serial,
                    store(out.local, var(out.init_loop), make_zero(t)), Li->annotations);
    sum = for_loop(out.sum_loop, make_int(0), make_int(*W), ForKind::Serial,
                   store(local, tp.index, add(load(t, local, tp.index), load(t, out.local, var(out.sum_loop)))),
                   Li->annotations);
  } else {
    // The copies are zeroed together and added into the local location by
    // location; both loops run along the local's axis, to be vectorized with it.
    Annotations ann;
    if (!per_copy.axis.empty()) ann["axis"] = per_copy.axis;
    init = for_loop(out.init_loop, make_int(0), make_int(*W * copy), ForKind::Serial,
                    store(out.local, var(out.init_loop), make_zero(t)), ann);
    const Expr z = var(out.sum_loop);
    Expr total = load(t, local, z);
    for (int64_t c = 0; c < *W; ++c) total = add(total, load(t, out.local, add(make_int(c * copy), z)));
    sum = for_loop(out.sum_loop, make_int(0), make_int(copy), ForKind::Serial, store(local, z, total), ann);
  }
  parts[which] = allocate(out.local, t, *W * (copy > 0 ? copy : 1), MemoryScope::Register, seq({init, nest, sum}));
  Stmt new_alloc = allocate(alloc->buffer, alloc->type, alloc->size, alloc->scope, seq(parts));
  // Replace the allocation: it sits directly in the body of the loop cached at.
  class SwapAlloc : public IRMutator {
   public:
    SwapAlloc(const AllocateNode* o, Stmt n) : old_(o), new_(std::move(n)) {}

   protected:
    Stmt visit(const AllocateNode* op, const Stmt& self) override {
      return op == old_ ? new_ : IRMutator::visit(op, self);
    }

   private:
    const AllocateNode* old_;
    Stmt new_;
  } swap(alloc, new_alloc);
  commit(swap.mutate(k_.body), fmt::format("rfactor({}, {})", loop, local));
  return out;
}

}  // namespace strata::sc
