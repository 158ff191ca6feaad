// Graph: a sparse matrix in CSR form, the structure every kernel runs over.
//
// Orientation. For message passing, Strata stores the adjacency with one row per
// *destination* node and one column per *source* node: row i lists the nodes whose
// messages node i aggregates (its in-neighbours), so aggregation is Y = A·X. Loaders
// build it with from_coo(dst, src). transpose() gives the out-edge view (CSC of A)
// that backward passes use.
//
// Storage: 64-bit row offsets (indptr) always, so nnz may exceed 2^31; column
// indices in int32 when the column count allows (half the memory traffic) or int64.
// Optional per-edge values (float32). Edge ids map each stored non-zero back to the
// edge it came from (position in the COO input); when absent they are the identity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace strata {

// What from_coo does with repeated (row, col) pairs.
enum class DuplicatePolicy : uint8_t {
  Keep,       // keep every copy (a multigraph)
  Sum,        // merge into one non-zero whose value is the sum (count if unweighted)
  KeepFirst,  // merge into the first copy in input order
  Error,      // throw a UserError naming the pair
};
// What from_coo does with (i, i) entries.
enum class SelfLoopPolicy : uint8_t { Keep, Remove, Error };
// Order of columns inside a row.
enum class ColumnOrder : uint8_t {
  Sorted,      // ascending column ids (needed for binary search; the default)
  InputOrder,  // the order the entries came in (stable)
};

struct CooOptions {
  ColumnOrder order = ColumnOrder::Sorted;
  DuplicatePolicy duplicates = DuplicatePolicy::Keep;
  SelfLoopPolicy self_loops = SelfLoopPolicy::Keep;
  // Index dtype of the result; I32 when it fits unless force_int64.
  bool force_int64 = false;
  // Names the input in error messages ("cora.cites").
  std::string source = "edge list";
};

struct DegreeStats {
  int64_t rows = 0, nnz = 0;
  int64_t min = 0, max = 0, median = 0, p90 = 0, p99 = 0;
  double mean = 0;
  int64_t empty_rows = 0;
  // histogram[0] counts degree 0, histogram[k] (k >= 1) counts degrees in [2^(k-1), 2^k).
  std::vector<int64_t> histogram;
  static std::string bucket_label(size_t k);  // "0", "1", "2-3", "4-7", ...
};

class Graph {
 public:
  Graph() = default;

  // Builds CSR from coordinate lists (int32 or int64 tensors of equal length).
  // values: optional float32 per entry. Entries are validated against the shape.
  static Graph from_coo(int64_t num_rows, int64_t num_cols, const Tensor& rows, const Tensor& cols,
                        const CooOptions& options = {}, const Tensor& values = {});
  // Adopts CSR arrays after validating them (monotone indptr, indices in range).
  static Graph from_csr(int64_t num_rows, int64_t num_cols, Tensor indptr, Tensor indices,
                        Tensor values = {}, Tensor edge_ids = {});

  int64_t num_rows() const { return num_rows_; }
  int64_t num_cols() const { return num_cols_; }
  int64_t nnz() const { return indices_.defined() ? indices_.numel() : 0; }
  bool empty() const { return !indptr_.defined(); }
  DType index_dtype() const { return indices_.dtype(); }
  bool columns_sorted() const { return sorted_; }

  const Tensor& indptr() const { return indptr_; }    // int64 [rows + 1]
  const Tensor& indices() const { return indices_; }  // int32 or int64 [nnz]
  const Tensor& values() const { return values_; }    // float32 [nnz] or undefined
  bool has_values() const { return values_.defined(); }
  bool has_edge_ids() const { return edge_ids_.defined(); }
  // int64 [nnz]: the original edge of each non-zero; builds the identity if absent.
  Tensor edge_ids() const;
  const int64_t* indptr_data() const { return indptr_.data<int64_t>(); }
  int64_t row_begin(int64_t r) const { return indptr_.data<int64_t>()[r]; }
  int64_t row_end(int64_t r) const { return indptr_.data<int64_t>()[r + 1]; }
  int64_t degree(int64_t r) const { return row_end(r) - row_begin(r); }
  int64_t column(int64_t p) const;

  // Aᵀ in CSR (= CSC of A), with edge ids permuted so edge_ids() still names the
  // original edge of every non-zero, and values carried along.
  Graph transpose() const;
  // A + I for the missing diagonal entries (square graphs). New loops get value 1
  // and edge ids num_edges + node, where num_edges = 1 + the largest existing id.
  Graph with_self_loops() const;
  // The union of A and Aᵀ (square graphs); an entry present both ways is kept once,
  // with A's value and edge id.
  Graph symmetrized() const;
  Graph without_values() const;
  Graph with_values(Tensor values) const;
  Graph with_index_dtype(DType dtype) const;
  // Same structure, values of the result ignored; cheap equality for tests.
  bool same_structure(const Graph& other) const;

  DegreeStats degree_stats() const;
  // "2708 x 2708, 10556 non-zeros, int32 indices"
  std::string describe() const;

 private:
  int64_t num_rows_ = 0, num_cols_ = 0;
  Tensor indptr_, indices_, values_, edge_ids_;
  bool sorted_ = true;
};

}  // namespace strata
