// The split_gather primitive: a row's non-zeros gathered from two operands.
#include <fmt/ranges.h>

#include <algorithm>

#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {
namespace {

// Whether s loads from `buffer` or prefetches it (unlike loop_tree's reads_buffer, a
// prefetch counts).
bool loads_or_prefetches(const Stmt& s, const std::string& buffer) {
  bool found = false;
  for_each_expr(s, [&](const Expr& e) {
    if (const auto* l = e.as<LoadNode>(); l && l->buffer == buffer) found = true;
  });
  struct Prefetches : IRVisitor {
    const std::string& name;
    bool found = false;
    explicit Prefetches(const std::string& n) : name(n) {}
    using IRVisitor::visit;
    void visit(const PrefetchNode* op) override { found = found || op->buffer == name; }
  } prefetches(buffer);
  prefetches.visit_stmt(s);
  return found || prefetches.found;
}

// One copy of a segment loop: loads of indptr[row] or indptr[row + 1] (as `bound` says)
// become split[row], and, for the second copy, every access to `from` one to `to` and every
// load of a buffer in `ones` the constant 1.
class SegmentCopy : public IRMutator {
 public:
  SegmentCopy(const std::string& indptr, Expr bound, Expr split, std::string from, std::string to,
              std::vector<std::string> ones = {})
      : indptr_(indptr),
        bound_(std::move(bound)),
        split_(std::move(split)),
        from_(std::move(from)),
        to_(std::move(to)),
        ones_(std::move(ones)) {}

 protected:
  using IRMutator::visit;
  Expr visit(const LoadNode* op, const Expr& self) override {
    if (op->buffer == indptr_ && structural_equal(simplify(op->index), bound_)) return split_;
    if (std::find(ones_.begin(), ones_.end(), op->buffer) != ones_.end()) {
      const Expr one = make_float(1.0, op->type.element_of());
      return op->type.is_vector() ? broadcast(one, op->type.lanes) : one;
    }
    Expr r = IRMutator::visit(op, self);
    if (from_.empty() || op->buffer != from_) return r;
    const auto* l = r.as<LoadNode>();
    return load(l->type.element_of(), to_, l->index);
  }
  Stmt visit(const PrefetchNode* op, const Stmt& self) override {
    Stmt r = IRMutator::visit(op, self);
    if (from_.empty() || op->buffer != from_) return r;
    return prefetch(to_, r.as<PrefetchNode>()->index);
  }

 private:
  const std::string& indptr_;
  Expr bound_, split_;
  std::string from_, to_;
  std::vector<std::string> ones_;
};

}  // namespace

void Schedule::split_gather(const std::string& row, const std::string& buffer, const std::string& second,
                            const std::string& indptr, const std::string& split,
                            const std::vector<std::string>& first_only) {
  const std::string step = fmt::format("split_gather({}, {}, {}, {}, {}{}{})", row, buffer, second, indptr, split,
                                       first_only.empty() ? "" : ", ", fmt::join(first_only, ", "));
  const ForNode* R = loop_or_throw("split_gather", row);
  const Param* b = k_.find_param(buffer);
  STRATA_SCHED_CHECK(b && b->is_buffer() && b->role == ParamRole::Input, "{}: {} is not an input buffer parameter",
                     step, buffer);
  const Param* p = k_.find_param(indptr);
  STRATA_SCHED_CHECK(p && p->is_buffer() && p->dtype == DType::I64, "{}: {} is not an int64 buffer parameter", step,
                     indptr);
  NameGen names(k_);
  for (const std::string& name : {second, split})
    STRATA_SCHED_CHECK(!names.used(name), "{}: the name {} is taken in kernel {}", step, name, k_.name);
  for (const std::string& name : first_only) {
    const Param* f = k_.find_param(name);
    STRATA_SCHED_CHECK(
        f && f->is_buffer() && f->role == ParamRole::Input && (f->dtype == DType::F32 || f->dtype == DType::F64),
        "{}: {} is not a floating-point input buffer parameter", step, name);
  }
  const Expr lo = simplify(var(row)), hi = simplify(add(var(row), make_int(1)));

  // The segment loops: the outermost loops in the row's body that read `buffer`. Each must
  // be a reduction over the row's non-zeros whose range reads `indptr` only at the row's
  // two bounds; it is then run twice, over [lo, split) and over [split, hi).
  const DType x_dtype = b->dtype;
  class Splitter : public IRMutator {
   public:
    Splitter(const std::string& step, const std::string& row, const std::string& buffer, const std::string& second,
             const std::string& indptr, const std::string& split, const std::vector<std::string>& first_only, Expr lo,
             Expr hi, NameGen& names)
        : step_(step),
          row_(row),
          buffer_(buffer),
          second_(second),
          indptr_(indptr),
          split_(split),
          first_only_(first_only),
          lo_(std::move(lo)),
          hi_(std::move(hi)),
          names_(names) {}
    int segments = 0;

   protected:
    using IRMutator::visit;
    Stmt visit(const ForNode* op, const Stmt& self) override {
      if (!loads_or_prefetches(self, buffer_)) return self;
      const bool reduction = op->annotations.count("iter") && op->annotations.at("iter") == "R";
      if (!reduction) return IRMutator::visit(op, self);
      bool bounds = false;
      for_each_expr(self, [&](const Expr& e) {
        const auto* l = e.as<LoadNode>();
        if (!l || l->buffer != indptr_) return;
        const Expr at = simplify(l->index);
        STRATA_SCHED_CHECK(structural_equal(at, lo_) || structural_equal(at, hi_),
                           "{}: loop {} reads {} at {}, not only at row {}'s bounds", step_, op->var, indptr_,
                           to_string(l->index), row_);
        bounds = true;
      });
      STRATA_SCHED_CHECK(bounds, "{}: loop {} reads {} over a range that does not come from {}[{}]", step_, op->var,
                         buffer_, indptr_, row_);
      const Expr at_split = load(Type::i64(), split_, var(row_));
      Stmt head = SegmentCopy(indptr_, hi_, at_split, "", "").mutate(self);
      Stmt tail = SegmentCopy(indptr_, lo_, at_split, buffer_, second_, first_only_).mutate(self);
      ++segments;
      return seq({head, rename_locals(tail, "_tail", &names_)});
    }
    Expr visit(const LoadNode* op, const Expr& self) override {
      STRATA_SCHED_CHECK(op->buffer != buffer_, "{}: row {} reads {} outside a reduction loop over its non-zeros",
                         step_, row_, buffer_);
      return IRMutator::visit(op, self);
    }
    Stmt visit(const PrefetchNode* op, const Stmt& self) override {
      STRATA_SCHED_CHECK(op->buffer != buffer_, "{}: row {} prefetches {} outside a reduction loop over its non-zeros",
                         step_, row_, buffer_);
      return IRMutator::visit(op, self);
    }

   private:
    const std::string &step_, &row_, &buffer_, &second_, &indptr_, &split_;
    const std::vector<std::string>& first_only_;
    Expr lo_, hi_;
    NameGen& names_;
  } splitter(step, row, buffer, second, indptr, split, first_only, lo, hi, names);
  Stmt body = splitter.mutate(R->body);
  STRATA_SCHED_CHECK(splitter.segments > 0, "{}: row {} does not read {}", step, row, buffer);
  const Stmt result = for_loop(R->var, R->min, R->extent, R->for_kind, body, R->annotations);
  k_.params.push_back(Param::buffer(split, DType::I64));
  k_.params.push_back(Param::buffer(second, x_dtype));
  commit(replace_loop(k_.body, row, [&](const ForNode*) { return result; }), step);
}

}  // namespace strata::sc
