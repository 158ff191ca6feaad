#include "sparse_compiler/passes/lower_sparse_buffer.h"

#include "core/error.h"
#include "sparse_compiler/ir/mutator.h"

namespace strata::sc {

Expr flat_offset(const SparseBuffer& b, const std::vector<Expr>& positions) {
  STRATA_ASSERT(positions.size() == b->axes.size(), "flat_offset of {}: {} positions for {} axes", b->name,
                positions.size(), b->axes.size());
  Expr offset;
  for (size_t d = 0; d < positions.size(); ++d) {
    const Axis& a = b->axes[d];
    const Expr& p = positions[d];
    if (d == 0) {
      offset = p;
    } else if (!a->parent) {
      STRATA_ASSERT(a->is_fixed(), "buffer {}: root axis {} in inner position must be fixed", b->name, a->name);
      offset = add(mul(offset, a->fixed_extent()), p);
    } else if (a->is_variable()) {
      offset = add(load(Type::i64(), a->indptr, offset), p);
    } else {
      offset = add(mul(offset, a->fixed_extent()), p);
    }
  }
  return offset;
}

namespace {
class Flattener : public IRMutator {
 protected:
  Expr visit(const SparseLoadNode* op, const Expr&) override {
    std::vector<Expr> pos;
    for (const auto& i : op->indices) pos.push_back(mutate(i));
    return load(op->type, op->buffer->name, flat_offset(op->buffer, pos));
  }
  Stmt visit(const SparseStoreNode* op, const Stmt&) override {
    std::vector<Expr> pos;
    for (const auto& i : op->indices) pos.push_back(mutate(i));
    return store(op->buffer->name, flat_offset(op->buffer, pos), mutate(op->value));
  }
};
}  // namespace

Kernel lower_sparse_buffer(const Kernel& k) {
  k.require_stage(Stage::Position, "lower_sparse_buffer");
  Flattener f;
  Kernel out = k;
  out.body = f.mutate(k.body);
  out.preprocess = f.mutate(k.preprocess);
  out.stage = Stage::Loops;
  out.axes.clear();
  out.buffers.clear();
  return out;
}

}  // namespace strata::sc
