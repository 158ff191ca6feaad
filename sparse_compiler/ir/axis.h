// Axes and sparse buffers: the structure half of Strata's sparse IR.
//
// An axis is one dimension of an iteration space or of a sparse buffer, with two
// independent properties (SparseTIR §1.1):
//   dense-fixed      every coordinate 0..length-1 is present          extent: length
//   dense-variable   a ragged prefix per parent position (indptr)        extent: indptr[p+1]-indptr[p]
//   sparse-fixed     exactly `width` stored coordinates per parent (indices)   extent: width
//   sparse-variable  indptr + indices (the CSR column level)              extent: indptr[p+1]-indptr[p]
// "Variable" means the axis has an indptr array, "sparse" that it has an indices
// array. A format is a chain of axes linked by parents: CSR = dense-fixed rows ->
// sparse-variable columns; ELL(w) = dense-fixed -> sparse-fixed(w); BSR(b) = dense
// block rows -> sparse-variable block columns -> dense-fixed(b) -> dense-fixed(b).
//
// A sparse buffer holds values only, over a list of axes. Structure (indptr,
// indices) belongs to the axes, so several buffers share one structure: the SDDMM
// output shares the adjacency's axes.
//
// Lengths and nnz are expressions: a Var naming a scalar kernel parameter (graph
// sizes stay run-time arguments) or an IntImm (compiled-in constants such as the
// feature size or an ELL width).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "sparse_compiler/ir/node.h"

namespace strata::sc {

enum class AxisKind : uint8_t { DenseFixed, DenseVariable, SparseFixed, SparseVariable };
const char* axis_kind_name(AxisKind k);  // "dense_fixed", ...

struct AxisNode;
using Axis = std::shared_ptr<const AxisNode>;

struct AxisNode {
  std::string name;
  AxisKind kind = AxisKind::DenseFixed;
  Axis parent;            // null for root axes
  Expr length;            // number of coordinates (columns for a CSR column axis)
  Expr nnz;               // variable axes: total stored positions down to this axis
  int64_t width = 0;      // sparse-fixed: stored coordinates per parent position
  std::string indptr;     // variable axes: name of the int64 indptr parameter
  std::string indices;    // sparse axes: name of the indices parameter
  DType idtype = DType::I32;
  bool sorted = true;

  bool is_sparse() const { return kind == AxisKind::SparseFixed || kind == AxisKind::SparseVariable; }
  bool is_variable() const { return kind == AxisKind::DenseVariable || kind == AxisKind::SparseVariable; }
  bool is_fixed() const { return !is_variable(); }
  bool is_dense() const { return !is_sparse(); }
  // Number of positions of this axis per parent position when fixed (length for
  // dense-fixed, width for sparse-fixed); undefined for variable axes.
  Expr fixed_extent() const;
  // The chain root -> ... -> this axis.
  std::vector<Axis> chain() const;
  int depth() const;
};

Axis dense_fixed(std::string name, Expr length);
Axis dense_variable(std::string name, Axis parent, Expr max_length, Expr nnz, std::string indptr);
Axis sparse_fixed(std::string name, Axis parent, Expr length, int64_t width, std::string indices,
                  DType idtype = DType::I32, bool sorted = true);
Axis sparse_variable(std::string name, Axis parent, Expr length, Expr nnz, std::string indptr,
                     std::string indices, DType idtype = DType::I32, bool sorted = true);

// True when `a` is `b` or one of b's ancestors.
bool is_ancestor_or_self(const Axis& a, const Axis& b);

struct SparseBufferNode;
using SparseBuffer = std::shared_ptr<const SparseBufferNode>;

struct SparseBufferNode {
  std::string name;  // also the name of the value-array parameter
  std::vector<Axis> axes;
  DType dtype = DType::F32;
  int ndim() const { return static_cast<int>(axes.size()); }
};

SparseBuffer sparse_buffer(std::string name, std::vector<Axis> axes, DType dtype);

}  // namespace strata::sc
