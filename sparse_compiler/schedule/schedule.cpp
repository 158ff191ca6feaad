// Schedule bookkeeping and the primitives that only change a loop's kind.
#include "sparse_compiler/schedule/schedule.h"

#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/passes/vectorize_loops.h"
#include "sparse_compiler/schedule/loop_tree.h"

namespace strata::sc {

Schedule::Schedule(Kernel k) : k_(std::move(k)) { k_.require_stage(Stage::Loops, "Schedule"); }

std::vector<std::string> Schedule::loops() const { return loop_names(k_.body); }

const ForNode* Schedule::loop_or_throw(const char* prim, const std::string& loop) const {
  const ForNode* f = find_loop(k_.body, loop);
  if (!f) {
    std::string known;
    for (const auto& n : loops()) known += (known.empty() ? "" : ", ") + n;
    throw ScheduleError(fmt::format("{}({}): kernel {} has no loop named {} (loops: {})", prim, loop, k_.name, loop,
                                    known));
  }
  return f;
}

void Schedule::commit(Stmt body, std::string step) {
  k_.body = std::move(body);
  trace_.push_back(std::move(step));
}

std::string Schedule::attempt(const std::function<void()>& fn) {
  const Kernel saved = k_;
  const size_t steps = trace_.size();
  try {
    fn();
    return "";
  } catch (const ScheduleError& e) {
    k_ = saved;
    trace_.resize(steps);
    return e.what();
  }
}

namespace {
Stmt with_kind(const ForNode* f, ForKind kind) {
  return for_loop(f->var, f->min, f->extent, kind, f->body, f->annotations);
}
bool has_kind_inside(const Stmt& s, ForKind kind) {
  bool found = false;
  for (const auto& n : loop_names(s)) {
    if (const ForNode* f = find_loop(s, n); f && f->for_kind == kind) found = true;
  }
  return found;
}
}  // namespace

void Schedule::parallel(const std::string& loop) {
  const ForNode* f = loop_or_throw("parallel", loop);
  STRATA_SCHED_CHECK(f->annotations.count("iter") == 0 || f->annotations.at("iter") != "R",
                     "parallel({}): loop {} carries a reduction; running its iterations on threads would race on the "
                     "output",
                     loop, loop);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "parallel({}): loop {} is already {}", loop, loop,
                     for_kind_name(f->for_kind));
  for (const ForNode* outer : enclosing_loops(k_.body, loop))
    STRATA_SCHED_CHECK(outer->for_kind != ForKind::Parallel, "parallel({}): it is inside parallel loop {}", loop,
                       outer->var);
  STRATA_SCHED_CHECK(!has_kind_inside(f->body, ForKind::Parallel), "parallel({}): it contains a parallel loop", loop);
  commit(replace_loop(k_.body, loop, [](const ForNode* x) { return with_kind(x, ForKind::Parallel); }),
         fmt::format("parallel({})", loop));
}

void Schedule::static_tasks(const std::string& loop) {
  const ForNode* f = loop_or_throw("static_tasks", loop);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Parallel,
                     "static_tasks({}): loop {} is {}, not parallel; make it parallel first", loop, loop,
                     for_kind_name(f->for_kind));
  commit(replace_loop(k_.body, loop,
                      [](const ForNode* x) {
                        Annotations a = x->annotations;
                        a[kTaskAssignment] = "static";
                        return for_loop(x->var, x->min, x->extent, x->for_kind, x->body, a);
                      }),
         fmt::format("static_tasks({})", loop));
}

void Schedule::vectorize(const std::string& loop) {
  const ForNode* f = loop_or_throw("vectorize", loop);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "vectorize({}): loop {} is already {}", loop, loop,
                     for_kind_name(f->for_kind));
  const int64_t* n = as_const_int(f->extent);
  STRATA_SCHED_CHECK(n, "vectorize({}): loop {} has non-constant extent {}", loop, loop, to_string(f->extent));
  // Validate now, so an impossible request fails here and not in code generation.
  Stmt marked = with_kind(f, ForKind::Vectorized);
  (void)vectorize_loop(marked.as<ForNode>());
  commit(replace_loop(k_.body, loop, [](const ForNode* x) { return with_kind(x, ForKind::Vectorized); }),
         fmt::format("vectorize({})", loop));
}

void Schedule::unroll(const std::string& loop) {
  const ForNode* f = loop_or_throw("unroll", loop);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "unroll({}): loop {} is already {}", loop, loop,
                     for_kind_name(f->for_kind));
  const int64_t* n = as_const_int(f->extent);
  STRATA_SCHED_CHECK(n, "unroll({}): loop {} has non-constant extent {}", loop, loop, to_string(f->extent));
  STRATA_SCHED_CHECK(*n <= 512, "unroll({}): {} iterations is too many to unroll (at most 512)", loop, *n);
  commit(replace_loop(k_.body, loop, [](const ForNode* x) { return with_kind(x, ForKind::Unrolled); }),
         fmt::format("unroll({})", loop));
}

void Schedule::bind(const std::string& loop, ForKind axis) {
  const ForNode* f = loop_or_throw("bind", loop);
  STRATA_SCHED_CHECK(is_gpu_binding(axis), "bind({}): {} is not a GPU block or thread axis", loop,
                     for_kind_name(axis));
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial, "bind({}): loop {} is already {}", loop, loop,
                     for_kind_name(f->for_kind));
  for (const ForNode* outer : enclosing_loops(k_.body, loop))
    STRATA_SCHED_CHECK(outer->for_kind != axis, "bind({}, {}): enclosing loop {} is already bound to {}", loop,
                       for_kind_name(axis), outer->var, for_kind_name(axis));
  commit(replace_loop(k_.body, loop, [axis](const ForNode* x) { return with_kind(x, axis); }),
         fmt::format("bind({}, {})", loop, for_kind_name(axis)));
}

void Schedule::annotate(const std::string& loop, const std::string& key, const std::string& value) {
  loop_or_throw("annotate", loop);
  commit(replace_loop(k_.body, loop,
                      [&](const ForNode* x) {
                        Annotations a = x->annotations;
                        a[key] = value;
                        return for_loop(x->var, x->min, x->extent, x->for_kind, x->body, a);
                      }),
         fmt::format("annotate({}, {}={})", loop, key, value));
}

}  // namespace strata::sc
