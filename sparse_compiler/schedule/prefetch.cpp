// The prefetch primitive: software prefetch of gathered rows ahead of use.
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/linear_form.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

void Schedule::prefetch(const std::string& loop, const std::string& buffer, int64_t distance,
                        const std::string& bound) {
  const ForNode* L = loop_or_throw("prefetch", loop);
  STRATA_SCHED_CHECK(distance >= 1, "prefetch({}, {}, {}): the distance must be positive", loop, buffer, distance);
  const Param* b = k_.find_param(bound);
  STRATA_SCHED_CHECK(b && b->kind == ParamKind::Scalar, "prefetch({}, {}, {}, {}): {} is not a scalar parameter", loop,
                     buffer, distance, bound, bound);
  const Param* buf = k_.find_param(buffer);
  STRATA_SCHED_CHECK(buf && buf->is_buffer(), "prefetch({}, {}, {}): {} is not a buffer parameter", loop, buffer,
                     distance, buffer);
  // The first load of `buffer` whose address depends on the loop.
  Expr index;
  for_each_expr(L->body, [&](const Expr& e) {
    if (const auto* l = e.as<LoadNode>(); l && !index.defined() && l->buffer == buffer && uses_var(l->index, loop))
      index = l->index;
  });
  STRATA_SCHED_CHECK(index.defined(), "prefetch({}, {}, {}): no load of {} inside loop {} depends on {}", loop, buffer,
                     distance, buffer, loop, loop);
  // Inner loops: prefetch from their first iteration, covering their span.
  std::map<std::string, Expr> at_start;
  int64_t span = 1;
  LinearForm form = to_linear(simplify(index));
  for (const auto& n : loop_names(L->body)) {
    const ForNode* f = find_loop(L->body, n);
    if (!f || !uses_var(index, n)) continue;
    const int64_t *ext = as_const_int(f->extent);
    const int64_t coef = form.coefficient_of_var(n);
    STRATA_SCHED_CHECK(ext && coef >= 0, "prefetch({}, {}, {}): the address of {} varies along loop {} irregularly",
                       loop, buffer, distance, buffer, n);
    at_start[n] = f->min;
    span += coef * (*ext - 1);
  }
  at_start[loop] = min(add(var(loop), make_int(distance)), sub(var(bound), make_int(1)));
  const Expr ahead = simplify(substitute(index, at_start));
  const int64_t elem = dtype_size(buf->dtype), per_line = 64 / elem;
  const int64_t lines = (span * elem + 63) / 64;
  NameGen names(k_);
  Stmt pf;
  if (lines == 1) {
    pf = sc::prefetch(buffer, ahead);
  } else {
    const std::string v = names.fresh(loop + "_pf");
    pf = for_loop(v, make_int(0), make_int(lines), ForKind::Unrolled,
                  sc::prefetch(buffer, add(ahead, mul(var(v), make_int(per_line)))));
  }
  Stmt result = for_loop(L->var, L->min, L->extent, L->for_kind, seq({pf, L->body}), L->annotations);
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return result; }),
         fmt::format("prefetch({}, {}, {}, {})", loop, buffer, distance, bound));
}

}  // namespace strata::sc
