// Primitives that restructure loop nests: split, reorder, fuse, balance, fuse_nests,
// fission, partition_tasks.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/linear_form.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

Schedule::SplitLoops Schedule::split(const std::string& loop, int64_t factor, TailStrategy tail_strategy) {
  const ForNode* f = loop_or_throw("split", loop);
  STRATA_SCHED_CHECK(factor >= 1, "split({}, {}): the factor must be positive", loop, factor);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "split({}, {}): loop {} is {}; split it before changing its kind",
                     loop, factor, loop, for_kind_name(f->for_kind));
  const int64_t* extent = as_const_int(f->extent);
  if (extent)
    STRATA_SCHED_CHECK(factor < *extent, "split({}, {}): the factor is not smaller than the extent {}", loop, factor,
                       *extent);
  NameGen names(k_);
  const std::string outer = names.fresh(loop + "_o"), inner = names.fresh(loop + "_i");
  const Expr vo = var(outer), vi = var(inner);
  const Annotations ann = f->annotations;
  Stmt result;
  SplitLoops made{outer, inner, ""};
  if (extent && (tail_strategy != TailStrategy::Guard || *extent % factor == 0)) {
    const int64_t main = *extent / factor, tail = *extent % factor;
    Stmt body = substitute(f->body, {{loop, add(add(f->min, mul(vo, make_int(factor))), vi)}});
    result = for_loop(outer, make_int(0), make_int(main), ForKind::Serial,
                      for_loop(inner, make_int(0), make_int(factor), ForKind::Serial, body, ann), ann);
    if (tail > 0) {
      const std::string t = made.tail = names.fresh(loop + "_t");
      // The tail copies the body: its loops and locals get fresh names.
      Stmt tail_body =
          rename_locals(substitute(f->body, {{loop, add(add(f->min, make_int(main * factor)), var(t))}}), "_t", &names);
      result = seq({result, for_loop(t, make_int(0), make_int(tail), ForKind::Serial, tail_body, ann)});
    }
  } else if (tail_strategy == TailStrategy::Peel) {
    // Symbolic extent, peeled: extent / factor full blocks, then the remainder in a
    // loop of its own, so the blocks' bodies carry no guard.
    const Expr blocks = div(f->extent, make_int(factor));
    Stmt body = substitute(f->body, {{loop, add(add(f->min, mul(vo, make_int(factor))), vi)}});
    const std::string t = made.tail = names.fresh(loop + "_t");
    result = seq({for_loop(outer, make_int(0), blocks, ForKind::Serial,
                           for_loop(inner, make_int(0), make_int(factor), ForKind::Serial, body, ann), ann),
                  for_loop(t, add(f->min, mul(blocks, make_int(factor))), mod(f->extent, make_int(factor)),
                           ForKind::Serial, rename_locals(substitute(f->body, {{loop, var(t)}}), "_t", &names), ann)});
  } else {
    // Symbolic extent (or a guarded tail): round up and guard the last, partial outer
    // iteration.
    Expr pos = add(mul(vo, make_int(factor)), vi);
    Stmt body = if_then_else(lt(pos, f->extent), substitute(f->body, {{loop, add(f->min, pos)}}));
    Expr outer_ext = div(add(f->extent, make_int(factor - 1)), make_int(factor));
    result = for_loop(outer, make_int(0), outer_ext, ForKind::Serial,
                      for_loop(inner, make_int(0), make_int(factor), ForKind::Serial, body, ann), ann);
  }
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return result; }),
         tail_strategy == TailStrategy::Guard  ? fmt::format("split({}, {}, guard)", loop, factor)
         : tail_strategy == TailStrategy::Peel ? fmt::format("split({}, {}, peel)", loop, factor)
                                               : fmt::format("split({}, {})", loop, factor));
  return made;
}

void Schedule::reorder(const std::string& outer, const std::string& inner) {
  const ForNode* o = loop_or_throw("reorder", outer);
  loop_or_throw("reorder", inner);
  const ForNode* i = o->body.as<ForNode>();
  STRATA_SCHED_CHECK(i && i->var == inner, "reorder({}, {}): {} is not the only statement in {}'s body", outer, inner,
                     inner, outer);
  STRATA_SCHED_CHECK(!uses_var(i->min, outer) && !uses_var(i->extent, outer),
                     "reorder({}, {}): the bounds of {} depend on {}", outer, inner, inner, outer);
  STRATA_SCHED_CHECK(o->for_kind == ForKind::Serial && i->for_kind == ForKind::Serial,
                     "reorder({}, {}): only serial loops can be reordered", outer, inner);
  Stmt swapped = for_loop(i->var, i->min, i->extent, i->for_kind,
                          for_loop(o->var, o->min, o->extent, o->for_kind, i->body, o->annotations), i->annotations);
  commit(replace_loop(k_.body, outer, [&](const ForNode*) { return swapped; }),
         fmt::format("reorder({}, {})", outer, inner));
}

std::string Schedule::fuse(const std::string& outer, const std::string& inner) {
  const ForNode* o = loop_or_throw("fuse", outer);
  loop_or_throw("fuse", inner);
  const ForNode* i = o->body.as<ForNode>();
  STRATA_SCHED_CHECK(i && i->var == inner, "fuse({}, {}): {} is not the only statement in {}'s body", outer, inner,
                     inner, outer);
  STRATA_SCHED_CHECK(!uses_var(i->min, outer) && !uses_var(i->extent, outer),
                     "fuse({}, {}): the bounds of {} depend on {}", outer, inner, inner, outer);
  STRATA_SCHED_CHECK(o->for_kind == ForKind::Serial && i->for_kind == ForKind::Serial,
                     "fuse({}, {}): only serial loops can be fused", outer, inner);
  NameGen names(k_);
  const std::string fused = names.fresh(outer + "_" + inner);
  const Expr v = var(fused);
  Stmt body = substitute(i->body, {{outer, add(o->min, div(v, i->extent))}, {inner, add(i->min, mod(v, i->extent))}});
  Annotations ann = o->annotations;
  ann["axis"] = o->annotations.count("axis") && i->annotations.count("axis")
                    ? o->annotations.at("axis") + "*" + i->annotations.at("axis")
                    : "";
  if (ann["axis"].empty()) ann.erase("axis");
  Stmt result = for_loop(fused, make_int(0), mul(o->extent, i->extent), ForKind::Serial, body, ann);
  commit(replace_loop(k_.body, outer, [&](const ForNode*) { return result; }),
         fmt::format("fuse({}, {})", outer, inner));
  return fused;
}

std::string Schedule::balance(const std::string& loop, const std::string& indptr, int64_t grain) {
  const ForNode* f = loop_or_throw("balance", loop);
  STRATA_SCHED_CHECK(grain >= 1, "balance({}, {}, {}): the grain must be positive", loop, indptr, grain);
  const Param* p = k_.find_param(indptr);
  STRATA_SCHED_CHECK(p && p->is_buffer() && p->dtype == DType::I64,
                     "balance({}, {}, {}): {} is not an int64 buffer parameter of kernel {}", loop, indptr, grain,
                     indptr, k_.name);
  STRATA_SCHED_CHECK(is_zero(f->min) && f->for_kind == ForKind::Serial,
                     "balance({}, {}, {}): loop {} must be a serial loop starting at 0", loop, indptr, grain, loop);
  NameGen names(k_);
  const std::string chunk = names.fresh(loop + "_chunk"), nchunks = names.fresh(loop + "_nchunks"),
                    total = names.fresh(loop + "_nnz"), lo = names.fresh(loop + "_lo"), hi = names.fresh(loop + "_hi");
  const Expr rows = f->extent, c = var(chunk), C = var(nchunks), T = var(total);
  // First row of chunk k: the first row whose non-zeros start at or after k/C of
  // the total; the last chunk ends at the last row, whatever trailing empty rows.
  auto boundary = [&](const Expr& k) {
    return select(ge(k, C), rows,
                  call(Type::i64(), "lower_bound", {make_int(0), add(rows, make_int(1)), div(mul(k, T), C)}, {indptr}));
  };
  Stmt row_loop = for_loop(loop, var(lo), sub(var(hi), var(lo)), ForKind::Serial, f->body, f->annotations);
  Stmt chunk_body = let_stmt(lo, boundary(c), let_stmt(hi, boundary(add(c, make_int(1))), row_loop));
  Annotations ann{{"balance", indptr}, {"grain", std::to_string(grain)}};
  Stmt chunks = for_loop(chunk, make_int(0), C, ForKind::Serial, chunk_body, ann);
  Expr count = max(make_int(1), min(rows, div(add(T, make_int(grain - 1)), make_int(grain))));
  Stmt result = let_stmt(total, load(Type::i64(), indptr, rows), let_stmt(nchunks, count, chunks));
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return result; }),
         fmt::format("balance({}, {}, {})", loop, indptr, grain));
  return chunk;
}

namespace {

// Buffers a statement stores to, and the index expressions of its loads/stores.
struct Accesses {
  std::map<std::string, std::vector<Expr>> stores, loads;
};
Accesses accesses_of(const Stmt& s) {
  class V : public IRVisitor {
   public:
    Accesses a;

   protected:
    void visit(const StoreNode* op) override {
      a.stores[op->buffer].push_back(op->index);
      IRVisitor::visit(op);
    }
    void visit(const LoadNode* op) override {
      a.loads[op->buffer].push_back(op->index);
      IRVisitor::visit(op);
    }
  } v;
  v.visit_stmt(s);
  return v.a;
}

// The part of an index that depends on the fused loop variables (as a linear
// form restricted to terms mentioning them, constant 0).
LinearForm fused_part(const Expr& index, const std::vector<std::string>& vars) {
  LinearForm f = to_linear(simplify(index)), out;
  for (const auto& [t, k] : f.terms) {
    bool uses = false;
    for (const auto& v : vars) uses |= uses_var(t, v);
    if (uses) out.add_term(t, k);
  }
  return out;
}

}  // namespace

void Schedule::fuse_nests(const std::string& first, const std::string& second, int depth) {
  const std::string call = fmt::format("fuse_nests({}, {}, {})", first, second, depth);
  STRATA_SCHED_CHECK(depth >= 1, "{}: depth must be at least 1", call);
  const ForNode* a = loop_or_throw("fuse_nests", first);
  const ForNode* b = loop_or_throw("fuse_nests", second);
  // Both nests must be consecutive statements of one sequence.
  class FindSeq : public IRVisitor {
   public:
    const ForNode *a, *b;
    const SeqNode* found = nullptr;
    size_t index = 0;

   protected:
    void visit(const SeqNode* op) override {
      for (size_t k = 0; k + 1 < op->stmts.size(); ++k)
        if (op->stmts[k].get() == a && op->stmts[k + 1].get() == b) {
          found = op;
          index = k;
        }
      IRVisitor::visit(op);
    }
  } fs;
  fs.a = a;
  fs.b = b;
  fs.visit_stmt(k_.body);
  STRATA_SCHED_CHECK(fs.found, "{}: the loops are not consecutive statements of one sequence", call);
  // Walk the levels: equal bounds (after renaming B's variables to A's).
  std::map<std::string, Expr> rename;
  std::vector<std::string> vars;
  const ForNode *la = a, *lb = b;
  Stmt body_a, body_b;
  for (int d = 0; d < depth; ++d) {
    STRATA_SCHED_CHECK(la && lb, "{}: the nests are less than {} loops deep", call, depth);
    STRATA_SCHED_CHECK(la->for_kind == ForKind::Serial && lb->for_kind == ForKind::Serial,
                       "{}: only serial loops can be fused", call);
    STRATA_SCHED_CHECK(structural_equal(la->min, substitute(lb->min, rename)) &&
                           structural_equal(la->extent, substitute(lb->extent, rename)),
                       "{}: loops {} and {} run over different ranges", call, la->var, lb->var);
    rename[lb->var] = var(la->var);
    vars.push_back(la->var);
    body_a = la->body;
    body_b = substitute(lb->body, rename);
    if (d + 1 < depth) {
      la = body_a.as<ForNode>();
      lb = body_b.as<ForNode>();
      STRATA_SCHED_CHECK(la && lb && la->body.defined(), "{}: level {} is not a single nested loop", call, d + 1);
      lb = lb ? find_loop(body_b, lb->var) : nullptr;
    }
  }
  // Dependences: B may read what A writes only at the same fused iteration; A
  // must not read what B writes.
  const Accesses acc_a = accesses_of(body_a), acc_b = accesses_of(body_b);
  for (const auto& [buf, idx] : acc_b.stores)
    STRATA_SCHED_CHECK(!acc_a.loads.count(buf) && !acc_a.stores.count(buf),
                       "{}: {} is written by the second nest and accessed by the first", call, buf);
  for (const auto& [buf, writes] : acc_a.stores) {
    auto it = acc_b.loads.find(buf);
    if (it == acc_b.loads.end()) continue;
    const LinearForm w = fused_part(writes.front(), vars);
    for (const auto& e : writes)
      STRATA_SCHED_CHECK(same_linear_form(fused_part(e, vars), w), "{}: the first nest writes {} at unaligned places", call, buf);
    for (const auto& e : it->second)
      STRATA_SCHED_CHECK(same_linear_form(fused_part(e, vars), w),
                         "{}: the second nest reads {} at {} from another iteration of the fused loops", call, buf,
                         to_string(e));
  }
  // Rebuild: A's nest with B's body appended at the innermost fused level.
  std::function<Stmt(const ForNode*, int)> rebuild = [&](const ForNode* f, int d) -> Stmt {
    Stmt inner = d + 1 < depth ? rebuild(f->body.as<ForNode>(), d + 1) : seq({f->body, body_b});
    return for_loop(f->var, f->min, f->extent, f->for_kind, inner, f->annotations);
  };
  Stmt fused = rebuild(a, 0);
  class Swap : public IRMutator {
   public:
    Swap(const SeqNode* s, size_t i, Stmt n) : s_(s), i_(i), n_(std::move(n)) {}

   protected:
    Stmt visit(const SeqNode* op, const Stmt& self) override {
      if (op != s_) return IRMutator::visit(op, self);
      std::vector<Stmt> out;
      for (size_t k = 0; k < op->stmts.size(); ++k) {
        if (k == i_) out.push_back(n_);
        else if (k != i_ + 1) out.push_back(op->stmts[k]);
      }
      return seq(out);
    }

   private:
    const SeqNode* s_;
    size_t i_;
    Stmt n_;
  } swap(fs.found, fs.index, fused);
  commit(swap.mutate(k_.body), call);
}

namespace {

// Checks that distinct iterations of loop `loop` (running `body`) touch disjoint
// data: every access to a buffer written in `body` (and not allocated in it) lies,
// at iteration v, in the window c * key(v) + base + [lo, hi] with hi - lo < |c|.
// key(v) is v itself, or a load from one of `distinct` (index arrays the caller
// guarantees hold distinct values, e.g. a sparse axis's strictly increasing
// coordinates) at a position that moves with v. Throws a ScheduleError naming
// `call`, the buffer and the reason otherwise.
void check_iterations_disjoint(const std::string& call, const std::string& loop, const Stmt& body,
                               const std::vector<std::string>& distinct) {
  // What the body binds: loops with constant bounds (their ranges), other loops
  // and lets (varying, unknown ranges), and buffers it allocates (private to one
  // iteration, so never shared between iterations).
  struct Bound {
    std::map<std::string, std::pair<int64_t, int64_t>> ranges;  // var -> (min, max)
    std::set<std::string> varying, allocated;
  };
  class Binder : public IRVisitor {
   public:
    Bound b;

   protected:
    void visit(const ForNode* op) override {
      const int64_t *mn = as_const_int(op->min), *ext = as_const_int(op->extent);
      if (mn && ext && *ext >= 1) b.ranges[op->var] = {*mn, *mn + *ext - 1};
      else b.varying.insert(op->var);
      IRVisitor::visit(op);
    }
    void visit(const LetStmtNode* op) override {
      b.varying.insert(op->var);
      IRVisitor::visit(op);
    }
    void visit(const AllocateNode* op) override {
      b.allocated.insert(op->buffer);
      IRVisitor::visit(op);
    }
  } binder;
  binder.visit_stmt(body);
  const Bound& B = binder.b;
  auto varies_inside = [&](const Expr& e) {
    bool v = false;
    for (const auto& [name, r] : B.ranges) v |= uses_var(e, name);
    for (const auto& name : B.varying) v |= uses_var(e, name);
    return v;
  };
  // The key of one term: the loop variable, or a distinct array's load at a
  // position linear in it.
  auto is_key = [&](const Expr& term) {
    if (const auto* v = term.as<VarNode>()) return v->name == loop;
    Expr e = term;
    while (const auto* c = e.as<CastNode>()) e = c->value;
    const auto* ld = e.as<LoadNode>();
    if (!ld || std::find(distinct.begin(), distinct.end(), ld->buffer) == distinct.end()) return false;
    const LinearForm pos = to_linear(simplify(ld->index));
    if (pos.coefficient_of_var(loop) == 0 || varies_inside(ld->index)) return false;
    for (const auto& [t, k] : pos.without_var(loop).terms)
      if (uses_var(t, loop)) return false;
    return true;
  };
  const Accesses acc = accesses_of(body);
  for (const auto& [buf, stores] : acc.stores) {
    if (B.allocated.count(buf)) continue;
    std::vector<Expr> all = stores;
    if (auto it = acc.loads.find(buf); it != acc.loads.end()) all.insert(all.end(), it->second.begin(), it->second.end());
    int64_t stride = 0, lo = 0, hi = 0;
    Expr key;
    LinearForm base;
    bool first = true;
    for (const Expr& e : all) {
      STRATA_SCHED_CHECK(e.type().is_scalar(), "{}: {} is accessed with a vector index; schedule this before vectorizing",
                         call, buf);
      const LinearForm F = to_linear(simplify(e));
      LinearForm rest;
      Expr k;
      int64_t c = 0, mn = F.constant, mx = F.constant;
      for (const auto& [term, coef] : F.terms) {
        if (uses_var(term, loop)) {
          STRATA_SCHED_CHECK(!k.defined() && is_key(term),
                             "{}: the index {} of {} depends on {} in a way that does not separate iterations{}", call,
                             to_string(e), buf, loop,
                             distinct.empty() ? "" : " (nor through a load from an array of distinct values)");
          k = term;
          c = coef;
          continue;
        }
        const auto* v = term.as<VarNode>();
        if (auto r = v ? B.ranges.find(v->name) : B.ranges.end(); r != B.ranges.end()) {
          mn += coef > 0 ? coef * r->second.first : coef * r->second.second;
          mx += coef > 0 ? coef * r->second.second : coef * r->second.first;
          continue;
        }
        STRATA_SCHED_CHECK(!varies_inside(term), "{}: the index {} of {} is not affine in the loops inside {}", call,
                           to_string(e), buf, loop);
        rest.add_term(term, coef);
      }
      STRATA_SCHED_CHECK(k.defined(), "{}: {} is accessed at {}, which does not depend on {} (every iteration touches it)",
                         call, buf, to_string(e), loop);
      if (first) {
        key = k;
        stride = c;
        base = rest;
        lo = mn;
        hi = mx;
        first = false;
      }
      STRATA_SCHED_CHECK(structural_equal(k, key) && c == stride,
                         "{}: {} is accessed through {} * {} and {} * {}", call, buf, stride, to_string(key), c,
                         to_string(k));
      STRATA_SCHED_CHECK(same_linear_form(rest, base), "{}: accesses to {} do not share one base ({} vs {})", call, buf,
                         to_string(from_linear(base, Type::i64())), to_string(from_linear(rest, Type::i64())));
      lo = std::min(lo, mn);
      hi = std::max(hi, mx);
    }
    STRATA_SCHED_CHECK(hi - lo < std::abs(stride),
                       "{}: one iteration accesses {} over {} elements, more than the stride {} between iterations "
                       "(iterations would overlap)",
                       call, buf, hi - lo + 1, std::abs(stride));
  }
}

}  // namespace

std::vector<std::string> Schedule::fission(const std::string& loop) {
  const ForNode* f = loop_or_throw("fission", loop);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "fission({}): loop {} is {}; only serial loops can be distributed",
                     loop, loop, for_kind_name(f->for_kind));
  const auto* sq = f->body.as<SeqNode>();
  STRATA_SCHED_CHECK(sq && sq->stmts.size() >= 2, "fission({}): the body of {} is not a sequence of statements", loop,
                     loop);
  check_iterations_disjoint(fmt::format("fission({})", loop), loop, f->body, {});
  NameGen names(k_);
  std::vector<std::string> out{loop};
  std::vector<Stmt> loops;
  for (size_t k = 0; k < sq->stmts.size(); ++k) {
    if (k > 0) out.push_back(names.fresh(loop + "_" + std::to_string(k)));
    const Stmt body = k == 0 ? sq->stmts[k] : substitute(sq->stmts[k], {{loop, var(out.back())}});
    loops.push_back(for_loop(out.back(), f->min, f->extent, ForKind::Serial, body, f->annotations));
  }
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return seq(loops); }), fmt::format("fission({})", loop));
  return out;
}

void Schedule::unroll_and_jam(const std::string& loop, const std::string& jam, const std::vector<std::string>& distinct) {
  const std::string call = fmt::format("unroll_and_jam({}, {})", loop, jam);
  const ForNode* f = loop_or_throw("unroll_and_jam", loop);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "{}: loop {} is {}", call, loop, for_kind_name(f->for_kind));
  const int64_t *mn = as_const_int(f->min), *ext = as_const_int(f->extent);
  STRATA_SCHED_CHECK(mn && ext, "{}: loop {} needs constant bounds", call, loop);
  STRATA_SCHED_CHECK(*ext >= 2 && *ext <= 32, "{}: {} copies; unroll and jam takes 2 to 32", call, *ext);
  // The body: locals allocated per iteration around a sequence in which loop
  // `jam` is one top-level statement.
  std::vector<const AllocateNode*> allocs;
  Stmt inner = f->body;
  while (const auto* a = inner.as<AllocateNode>()) {
    allocs.push_back(a);
    inner = a->body;
  }
  std::vector<Stmt> stmts;
  if (const auto* sq = inner.as<SeqNode>()) stmts = sq->stmts;
  else stmts = {inner};
  int at = -1;
  for (size_t k = 0; k < stmts.size(); ++k)
    if (const auto* j = stmts[k].as<ForNode>(); j && j->var == jam) at = static_cast<int>(k);
  STRATA_SCHED_CHECK(at >= 0, "{}: {} is not a loop at the top of {}'s body (under its locals)", call, jam, loop);
  const ForNode* J = stmts[at].as<ForNode>();
  STRATA_SCHED_CHECK(J->for_kind == ForKind::Serial, "{}: loop {} is {}", call, jam, for_kind_name(J->for_kind));
  STRATA_SCHED_CHECK(!uses_var(J->min, loop) && !uses_var(J->extent, loop), "{}: the bounds of {} depend on {}", call,
                     jam, loop);
  // Copies run interleaved: they must touch disjoint data.
  check_iterations_disjoint(call, loop, f->body, distinct);
  NameGen names(k_);
  std::vector<Stmt> pre, jammed, post;
  std::vector<std::tuple<std::string, Type, int64_t, MemoryScope>> locals;
  for (int64_t b = 0; b < *ext; ++b) {
    // Copy b: the loop variable fixed, and (for b > 0) every loop, let and local
    // inside renamed, so the copies sit side by side (the statements are wrapped
    // in their allocations for that, then unwrapped).
    Stmt copy = seq(stmts);
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it)
      copy = allocate((*it)->buffer, (*it)->type, (*it)->size, (*it)->scope, copy);
    copy = substitute(copy, {{loop, make_int(*mn + b)}});
    if (b > 0) copy = rename_locals(copy, fmt::format("_u{}", b), &names);
    while (const auto* a = copy.as<AllocateNode>()) {
      locals.emplace_back(a->buffer, a->type, a->size, a->scope);
      copy = a->body;
    }
    std::vector<Stmt> cs;
    if (const auto* sq = copy.as<SeqNode>()) cs = sq->stmts;
    else cs = {copy};
    const ForNode* Jb = cs[at].as<ForNode>();
    for (int k = 0; k < at; ++k) pre.push_back(cs[k]);
    jammed.push_back(substitute(Jb->body, {{Jb->var, var(jam)}}));
    for (size_t k = at + 1; k < cs.size(); ++k) post.push_back(cs[k]);
  }
  std::vector<Stmt> all = pre;
  all.push_back(for_loop(jam, J->min, J->extent, J->for_kind, seq(jammed), J->annotations));
  all.insert(all.end(), post.begin(), post.end());
  Stmt result = seq(all);
  for (auto it = locals.rbegin(); it != locals.rend(); ++it)
    result = allocate(std::get<0>(*it), std::get<1>(*it), std::get<2>(*it), std::get<3>(*it), result);
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return result; }), call);
}

std::string Schedule::partition_tasks(const std::vector<std::string>& loops, const std::vector<std::string>& ranges,
                                      const std::string& tasks) {
  const std::string call = fmt::format("partition_tasks({} loops, {})", loops.size(), tasks);
  STRATA_SCHED_CHECK(!loops.empty() && loops.size() == ranges.size(), "{}: give one range array per loop", call);
  const Param* t = k_.find_param(tasks);
  STRATA_SCHED_CHECK(t && t->kind == ParamKind::Scalar, "{}: {} is not a scalar parameter", call, tasks);
  for (const auto& r : ranges) {
    const Param* p = k_.find_param(r);
    STRATA_SCHED_CHECK(p && p->is_buffer() && p->dtype == DType::I64, "{}: {} is not an int64 buffer parameter", call, r);
  }
  std::vector<Stmt> top;
  if (const auto* sq = k_.body.as<SeqNode>()) top = sq->stmts;
  else top = {k_.body};
  STRATA_SCHED_CHECK(top.size() == loops.size(), "{}: the body has {} top-level statements; all must be listed", call,
                     top.size());
  NameGen names(k_);
  const std::string tv = names.fresh("task");
  std::vector<Stmt> parts;
  for (size_t k = 0; k < top.size(); ++k) {
    const size_t slash = loops[k].find('/');
    const std::string outer = loops[k].substr(0, slash);
    const auto* f = top[k].as<ForNode>();
    STRATA_SCHED_CHECK(f && f->var == outer, "{}: top-level statement {} is not loop {}", call, k, outer);
    STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "{}: loop {} is already {}", call, f->var,
                       for_kind_name(f->for_kind));
    if (slash == std::string::npos) {
      Expr lo = load(Type::i64(), ranges[k], var(tv)), hi = load(Type::i64(), ranges[k], add(var(tv), make_int(1)));
      parts.push_back(for_loop(f->var, lo, sub(hi, lo), ForKind::Serial, f->body, f->annotations));
      continue;
    }
    // outer/inner: the outer loop runs whole in every task; the inner one runs the
    // task's share of each outer iteration.
    const std::string inner = loops[k].substr(slash + 1);
    const auto* g = f->body.as<ForNode>();
    STRATA_SCHED_CHECK(g && g->var == inner, "{}: loop {} is not the whole body of loop {}", call, inner, outer);
    const Expr base = add(mul(var(outer), add(var(tasks), make_int(1))), var(tv));
    Expr lo = load(Type::i64(), ranges[k], base), hi = load(Type::i64(), ranges[k], add(base, make_int(1)));
    parts.push_back(for_loop(f->var, f->min, f->extent, ForKind::Serial,
                             for_loop(g->var, lo, sub(hi, lo), ForKind::Serial, g->body, g->annotations),
                             f->annotations));
  }
  Stmt result = for_loop(tv, make_int(0), var(tasks), ForKind::Parallel, seq(parts), {{"tasks", tasks}});
  std::string list;
  for (const auto& l : loops) list += (list.empty() ? "" : ", ") + l;
  commit(result, fmt::format("partition_tasks([{}], {})", list, tasks));
  return tv;
}

}  // namespace strata::sc
