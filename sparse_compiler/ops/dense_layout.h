// How an SpMM's gathered dense operand X is laid out in memory. The layout is a
// transformation across kernels (DESIGN.md, "Schedules that pay on CPUs"): the op
// that produces X (a dense matmul, a previous layer) writes it in the layout the
// next SpMM's plan asks for, so no copy is paid; to_layout/from_layout convert
// when a caller holds a row-major X.
//
//   row        X[j, f] at j*F + f                      shape [n, F]
//   pad:P      X[j, f] at j*(F+P) + f                  shape [n, F+P]  (rows off the
//              power-of-two stride that makes tiles of many rows collide in cache sets)
//   panel:W    X[j, f] at ((f/W)*n + j)*W + f%W        shape [F/W, n, W]  (a feature
//              tile of all rows is one contiguous array: the tile loop streams it)
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace strata::sc {

struct DenseLayout {
  enum class Kind : uint8_t { Row, Padded, Panel };
  Kind kind = Kind::Row;
  int64_t param = 0;  // Padded: extra floats per row; Panel: the panel width W

  static DenseLayout row() { return {}; }
  static DenseLayout padded(int64_t pad) { return {Kind::Padded, pad}; }
  static DenseLayout panel(int64_t width) { return {Kind::Panel, width}; }

  // "row", "pad:16", "panel:64"; throws UserError naming `what` on anything else.
  static DenseLayout parse(const std::string& s, const std::string& what = "layout");
  std::string str() const;
  bool is_row() const { return kind == Kind::Row; }
  bool operator==(const DenseLayout& o) const { return kind == o.kind && param == o.param; }

  // Whether F features fit this layout (a panel width must divide F); if not and
  // `what` is non-empty, throws UserError naming it.
  bool fits(int64_t feat, const std::string& what = "") const;
  // The storage shape of an [rows, feat] operand in this layout.
  Shape storage_shape(int64_t rows, int64_t feat) const;
};

// A row-major float32 [rows, feat] tensor copied into `layout` (padding zeroed),
// and back. Multi-threaded streaming copies.
Tensor to_layout(const Tensor& X, const DenseLayout& layout);
Tensor from_layout(const Tensor& stored, const DenseLayout& layout, int64_t rows, int64_t feat);

}  // namespace strata::sc
