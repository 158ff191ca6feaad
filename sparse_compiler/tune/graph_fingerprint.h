// What the tuner knows about a graph without inspecting it: sizes and the
// power-of-two histograms of row and column degrees. Two graphs with the same
// fingerprint share tuning records; the histograms also drive the cost model.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"

namespace strata::sc {

struct GraphFingerprint {
  int64_t rows = 0, cols = 0, nnz = 0;
  DType index_dtype = DType::I32;
  std::vector<int64_t> row_histogram;  // DegreeStats::histogram of rows
  std::vector<int64_t> col_histogram;  // of columns (Aᵀ's rows)
  int64_t max_row_degree = 0;
  int64_t empty_rows = 0;

  static GraphFingerprint of(const Graph& A);
  // A representative degree of histogram bucket k (0, 1, [2,3], [4,7], ...): its middle.
  static double bucket_degree(size_t k);
  // Stable hex digest of every field.
  std::string digest() const;
};

}  // namespace strata::sc
