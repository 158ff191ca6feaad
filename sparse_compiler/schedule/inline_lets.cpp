// Schedule::inline_lets: let bindings in a loop's body replaced by their values.
#include <fmt/format.h>

#include <set>

#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

namespace {

std::set<std::string> buffers_loaded(const Expr& e) {
  std::set<std::string> out;
  for_each_expr(e, [&](const Expr& x) {
    if (const auto* l = x.as<LoadNode>()) out.insert(l->buffer);
  });
  return out;
}

class InlineLets : public IRMutator {
 public:
  explicit InlineLets(std::string where) : where_(std::move(where)) {}
  int inlined = 0;

 protected:
  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    for (const auto& b : buffers_loaded(op->value))
      STRATA_SCHED_CHECK(!writes_buffer(op->body, b), "{}: let {} = {} reads {}, which its body writes", where_,
                         op->var, to_string(op->value), b);
    ++inlined;
    // Lets nested in the body (or in the value's uses) are inlined in turn.
    return mutate(substitute(op->body, {{op->var, op->value}}));
  }

 private:
  std::string where_;
};

}  // namespace

void Schedule::inline_lets(const std::string& loop) {
  const std::string where = fmt::format("inline_lets({})", loop);
  loop_or_throw("inline_lets", loop);
  InlineLets inl(where);
  const Stmt body = replace_loop(k_.body, loop, [&](const ForNode* f) {
    return for_loop(f->var, f->min, f->extent, f->for_kind, inl.mutate(f->body), f->annotations);
  });
  STRATA_SCHED_CHECK(inl.inlined > 0, "{}: loop {} binds no lets", where, loop);
  commit(body, where);
}

}  // namespace strata::sc
