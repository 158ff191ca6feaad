// Schedule::transpose_sums: W dot products, one per iteration of a loop, summed
// horizontally all at once.
//
// A dot product whose feature loop was vectorized with rfactor ends in a
// horizontal sum of its W-lane partial vector, then a scalar store. At small
// feature sizes that sum costs as many shuffles as the products cost multiply-adds
// (SDDMM at F = 32: four shuffles and four adds per edge against two FMAs). When
// a loop of W iterations computes W such products into consecutive outputs, the
// W partial vectors can instead be kept side by side and reduced by one transposing
// sum (lane_sums: W - 1 folds of two shuffles and an add for all W) whose lane k is
// product k, stored as one vector.
#include <fmt/format.h>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

namespace {

std::vector<Stmt> statements(const Stmt& s) {
  if (const auto* sq = s.as<SeqNode>()) return sq->stmts;
  return {s};
}

// A vectorized loop `for v in [0, W): body` and its parts, or nullptr.
const ForNode* vector_loop(const Stmt& s, int64_t w) {
  const auto* f = s.as<ForNode>();
  const int64_t* n = f ? as_const_int(f->extent) : nullptr;
  const int64_t* lo = f ? as_const_int(f->min) : nullptr;
  return f && f->for_kind == ForKind::Vectorized && n && *n == w && lo && *lo == 0 ? f : nullptr;
}

// `for v in [lo, lo + 1): body` -> body[v := lo]; anything else unchanged.
Stmt unit_loop_body(const Stmt& s) {
  const auto* f = s.as<ForNode>();
  const int64_t* one = f ? as_const_int(f->extent) : nullptr;
  return one && *one == 1 ? substitute(f->body, {{f->var, f->min}}) : s;
}

bool is_var(const Expr& e, const std::string& name) {
  const auto* v = e.as<VarNode>();
  return v && v->name == name;
}

// rf[e] -> rfs[row * W + e] in loads and stores: iteration `row`'s partials in
// their own W-lane slot of the combined local.
class Widen : public IRMutator {
 public:
  Widen(std::string rf, std::string rfs, Expr offset)
      : rf_(std::move(rf)), rfs_(std::move(rfs)), offset_(std::move(offset)) {}

 protected:
  Expr visit(const LoadNode* op, const Expr& self) override {
    if (op->buffer != rf_) return IRMutator::visit(op, self);
    return load(op->type, rfs_, add(offset_, mutate(op->index)));
  }
  Stmt visit(const StoreNode* op, const Stmt& self) override {
    if (op->buffer != rf_) return IRMutator::visit(op, self);
    return store(rfs_, add(offset_, mutate(op->index)), mutate(op->value), op->store_kind);
  }

 private:
  std::string rf_, rfs_;
  Expr offset_;
};

}  // namespace

void Schedule::transpose_sums(const std::string& loop) {
  const ForNode* f = loop_or_throw("transpose_sums", loop);
  const std::string where = fmt::format("transpose_sums({})", loop);
  const int64_t* w = as_const_int(f->extent);
  const int64_t* lo = as_const_int(f->min);
  STRATA_SCHED_CHECK(f->for_kind == ForKind::Serial && w && lo && *lo == 0,
                     "{}: loop {} must be a serial loop from 0 over a constant extent (it is {} over [{}, {} + {}))",
                     where, loop, for_kind_name(f->for_kind), to_string(f->min), to_string(f->min),
                     to_string(f->extent));
  const int64_t W = *w;
  STRATA_SCHED_CHECK(W >= 2 && (W & (W - 1)) == 0 && W <= 64,
                     "{}: loop {} has {} iterations; the transposing sum needs a power of two from 2 to 64", where,
                     loop, W);

  // The body: statements that do not touch the output (prefetches), then the
  // accumulator cache_write made: allocate acc[1] { acc[0] = init; allocate rf[W]
  // { zero rf; update rf...; acc[0] += sum of rf's lanes }; out[index] = acc[0] }.
  std::vector<Stmt> before = statements(f->body);
  const auto* acc = before.empty() ? nullptr : before.back().as<AllocateNode>();
  STRATA_SCHED_CHECK(acc && acc->size == 1 && acc->scope == MemoryScope::Register,
                     "{}: the body of loop {} must end in one register accumulator (cache_write of the output)", where,
                     loop);
  before.pop_back();
  // Statements ahead of the initialisation (cache_write wraps the whole body, a
  // prefetch included) stay per iteration, as do those before the accumulator.
  std::vector<Stmt> acc_body = statements(acc->body);
  while (acc_body.size() > 3) {
    before.push_back(acc_body.front());
    acc_body.erase(acc_body.begin());
  }
  // cache_write loads (when the output is read first) and writes back through
  // loops of one iteration: their bodies.
  if (acc_body.size() == 3) {
    acc_body[0] = unit_loop_body(acc_body[0]);
    acc_body[2] = unit_loop_body(acc_body[2]);
  }
  const auto* init = acc_body.size() == 3 ? acc_body[0].as<StoreNode>() : nullptr;
  const auto* rf = acc_body.size() == 3 ? acc_body[1].as<AllocateNode>() : nullptr;
  const auto* out = acc_body.size() == 3 ? acc_body[2].as<StoreNode>() : nullptr;
  STRATA_SCHED_CHECK(init && init->buffer == acc->buffer && rf && rf->size == W && rf->scope == MemoryScope::Register &&
                         out && out->store_kind == StoreKind::Plain,
                     "{}: accumulator {} must be initialised, summed from a partial vector of {} lanes (rfactor, "
                     "vectorized) and written to the output once",
                     where, acc->buffer, W);
  const auto* out_value = out->value.as<LoadNode>();
  STRATA_SCHED_CHECK(out_value && out_value->buffer == acc->buffer,
                     "{}: the output {} must be stored from accumulator {} unchanged", where, out->buffer, acc->buffer);
  // One output per iteration, consecutive: out[index] with index = base + loop.
  const Expr next = substitute(out->index, {{loop, add(var(loop), make_int(1))}});
  const Expr stride = simplify(sub(next, out->index));  // held: as_const_int points into it
  const int64_t* step = as_const_int(stride);
  STRATA_SCHED_CHECK(step && *step == 1 && out->index.type().is_scalar(),
                     "{}: iteration k must write {}[base + k] (it writes {}[{}])", where, out->buffer, out->buffer,
                     to_string(out->index));
  for (const Stmt& s : before)
    STRATA_SCHED_CHECK(!touches_buffer(s, out->buffer) && !touches_buffer(s, acc->buffer),
                       "{}: a statement before the accumulator touches {}", where, out->buffer);

  const std::vector<Stmt> rf_body = statements(rf->body);
  const ForNode* zero = rf_body.size() >= 3 ? vector_loop(rf_body.front(), W) : nullptr;
  const ForNode* sum = rf_body.size() >= 3 ? vector_loop(rf_body.back(), W) : nullptr;
  const auto* zero_store = zero ? zero->body.as<StoreNode>() : nullptr;
  const auto* sum_store = sum ? sum->body.as<StoreNode>() : nullptr;
  const auto* sum_add = sum_store ? sum_store->value.as<AddNode>() : nullptr;
  const auto* sum_acc = sum_add ? sum_add->a.as<LoadNode>() : nullptr;
  const auto* sum_rf = sum_add ? sum_add->b.as<LoadNode>() : nullptr;
  STRATA_SCHED_CHECK(zero_store && zero_store->buffer == rf->buffer && is_var(zero_store->index, zero->var) &&
                         !uses_var(zero_store->value, loop) && sum_acc && sum_acc->buffer == acc->buffer && sum_rf &&
                         sum_rf->buffer == rf->buffer && is_var(sum_rf->index, sum->var) &&
                         sum_store->buffer == acc->buffer,
                     "{}: partial vector {} must be zeroed first and added into {} last, lane by lane", where,
                     rf->buffer, acc->buffer);
  std::vector<Stmt> updates(rf_body.begin() + 1, rf_body.end() - 1);
  for (const Stmt& s : updates)
    STRATA_SCHED_CHECK(!touches_buffer(s, out->buffer) && !touches_buffer(s, acc->buffer),
                       "{}: the products read or write {} or {} before the sum", where, out->buffer, acc->buffer);

  // Where the sums go: init + lane_sums over the W partial vectors, stored as one
  // vector at the first iteration's output. An init that reads the output (a panel
  // pass adding into O) reads all W outputs as one vector.
  const int lanes = static_cast<int>(W);
  const Expr outputs = ramp(simplify(substitute(out->index, {{loop, make_int(0)}})), make_int(1), lanes);
  Expr start;
  if (!uses_var(init->value, loop) && !touches_buffer(evaluate(init->value), out->buffer)) {
    start = broadcast(init->value, lanes);
  } else {
    const auto* reads = init->value.as<LoadNode>();
    STRATA_SCHED_CHECK(
        reads && reads->buffer == out->buffer && structural_equal(simplify(reads->index), simplify(out->index)),
        "{}: accumulator {} starts from {}, which is neither the same for every iteration nor the "
        "output it is written to",
        where, acc->buffer, to_string(init->value));
    start = load(rf->type, out->buffer, outputs);
  }
  const std::string rfs = rf->buffer + "_t";
  STRATA_SCHED_CHECK(!touches_buffer(k_.body, rfs), "{}: the name {} is taken", where, rfs);
  std::vector<Expr> partials;
  for (int64_t k = 0; k < W; ++k) partials.push_back(load(rf->type, rfs, ramp(make_int(k * W), make_int(1), lanes)));

  Widen widen(rf->buffer, rfs, mul(var(loop), make_int(W)));
  std::vector<Stmt> per_iteration = before;
  per_iteration.push_back(widen.mutate(rf_body.front()));
  for (const Stmt& s : updates) per_iteration.push_back(widen.mutate(s));
  const Stmt products = for_loop(f->var, f->min, f->extent, f->for_kind, seq(per_iteration), f->annotations);
  const Stmt stored = store(out->buffer, outputs, add(start, lane_sums(std::move(partials))));
  const Stmt replacement = allocate(rfs, rf->type, W * W, MemoryScope::Register, seq({products, stored}));
  commit(replace_loop(k_.body, loop, [&](const ForNode*) { return replacement; }), where);
}

}  // namespace strata::sc
