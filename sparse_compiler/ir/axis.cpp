#include "sparse_compiler/ir/axis.h"

#include <algorithm>

#include "core/error.h"
#include "sparse_compiler/ir/expr.h"

namespace strata::sc {

const char* axis_kind_name(AxisKind k) {
  switch (k) {
    case AxisKind::DenseFixed: return "dense_fixed";
    case AxisKind::DenseVariable: return "dense_variable";
    case AxisKind::SparseFixed: return "sparse_fixed";
    case AxisKind::SparseVariable: return "sparse_variable";
  }
  return "?";
}

Expr AxisNode::fixed_extent() const {
  if (kind == AxisKind::DenseFixed) return length;
  if (kind == AxisKind::SparseFixed) return make_int(width);
  return Expr();
}

std::vector<Axis> AxisNode::chain() const {
  std::vector<Axis> c;
  for (Axis a = parent; a; a = a->parent) c.push_back(a);
  std::reverse(c.begin(), c.end());
  return c;  // ancestors only; callers append the axis itself (they hold its shared_ptr)
}

int AxisNode::depth() const {
  int d = 0;
  for (Axis a = parent; a; a = a->parent) ++d;
  return d;
}

namespace {
void check_name(const std::string& n) {
  STRATA_ASSERT(!n.empty(), "axis with an empty name");
}
void check_length(const Expr& e, const std::string& axis) {
  STRATA_ASSERT(e.defined() && e.type() == Type::i64(), "axis {}: length must be an int64 expression", axis);
}
}  // namespace

Axis dense_fixed(std::string name, Expr length) {
  check_name(name);
  check_length(length, name);
  auto a = std::make_shared<AxisNode>();
  a->name = std::move(name);
  a->kind = AxisKind::DenseFixed;
  a->length = std::move(length);
  return a;
}

Axis dense_variable(std::string name, Axis parent, Expr max_length, Expr nnz, std::string indptr) {
  check_name(name);
  check_length(max_length, name);
  STRATA_ASSERT(parent, "dense_variable axis {} needs a parent", name);
  STRATA_ASSERT(!indptr.empty(), "dense_variable axis {} needs an indptr", name);
  auto a = std::make_shared<AxisNode>();
  a->name = std::move(name);
  a->kind = AxisKind::DenseVariable;
  a->parent = std::move(parent);
  a->length = std::move(max_length);
  a->nnz = std::move(nnz);
  a->indptr = std::move(indptr);
  return a;
}

Axis sparse_fixed(std::string name, Axis parent, Expr length, int64_t width, std::string indices, DType idtype,
                  bool sorted) {
  check_name(name);
  check_length(length, name);
  STRATA_ASSERT(parent, "sparse_fixed axis {} needs a parent", name);
  STRATA_ASSERT(width >= 0, "sparse_fixed axis {} has negative width {}", name, width);
  STRATA_ASSERT(idtype == DType::I32 || idtype == DType::I64, "axis {}: index dtype must be int32 or int64", name);
  auto a = std::make_shared<AxisNode>();
  a->name = std::move(name);
  a->kind = AxisKind::SparseFixed;
  a->parent = std::move(parent);
  a->length = std::move(length);
  a->width = width;
  a->indices = std::move(indices);
  a->idtype = idtype;
  a->sorted = sorted;
  return a;
}

Axis sparse_variable(std::string name, Axis parent, Expr length, Expr nnz, std::string indptr, std::string indices,
                     DType idtype, bool sorted) {
  check_name(name);
  check_length(length, name);
  STRATA_ASSERT(parent, "sparse_variable axis {} needs a parent", name);
  STRATA_ASSERT(idtype == DType::I32 || idtype == DType::I64, "axis {}: index dtype must be int32 or int64", name);
  auto a = std::make_shared<AxisNode>();
  a->name = std::move(name);
  a->kind = AxisKind::SparseVariable;
  a->parent = std::move(parent);
  a->length = std::move(length);
  a->nnz = std::move(nnz);
  a->indptr = std::move(indptr);
  a->indices = std::move(indices);
  a->idtype = idtype;
  a->sorted = sorted;
  return a;
}

bool is_ancestor_or_self(const Axis& a, const Axis& b) {
  for (const AxisNode* p = b.get(); p; p = p->parent.get())
    if (p == a.get()) return true;
  return false;
}

SparseBuffer sparse_buffer(std::string name, std::vector<Axis> axes, DType dtype) {
  STRATA_ASSERT(!name.empty() && !axes.empty(), "sparse buffer needs a name and at least one axis");
  // A sparse or variable axis must follow its parent directly (CSF layout).
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k]->parent)
      STRATA_ASSERT(k > 0 && axes[k - 1] == axes[k]->parent, "buffer {}: axis {} must follow its parent {}", name,
                    axes[k]->name, axes[k]->parent->name);
  }
  auto b = std::make_shared<SparseBufferNode>();
  b->name = std::move(name);
  b->axes = std::move(axes);
  b->dtype = dtype;
  return b;
}

}  // namespace strata::sc
