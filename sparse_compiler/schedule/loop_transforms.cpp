// Primitives that restructure loop nests: split, reorder, fuse, balance.
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

void Schedule::split(const std::string& loop, int64_t factor, TailStrategy tail_strategy) {
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
  if (extent && (tail_strategy == TailStrategy::Loop || *extent % factor == 0)) {
    const int64_t main = *extent / factor, tail = *extent % factor;
    Stmt body = substitute(f->body, {{loop, add(add(f->min, mul(vo, make_int(factor))), vi)}});
    result = for_loop(outer, make_int(0), make_int(main), ForKind::Serial,
                      for_loop(inner, make_int(0), make_int(factor), ForKind::Serial, body, ann), ann);
    if (tail > 0) {
      const std::string t = names.fresh(loop + "_t");
      Stmt tail_body = substitute(f->body, {{loop, add(add(f->min, make_int(main * factor)), var(t))}});
      result = seq({result, for_loop(t, make_int(0), make_int(tail), ForKind::Serial, tail_body, ann)});
    }
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
         tail_strategy == TailStrategy::Guard ? fmt::format("split({}, {}, guard)", loop, factor)
                                              : fmt::format("split({}, {})", loop, factor));
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

}  // namespace strata::sc
