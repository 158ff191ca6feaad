// FeatureMatrix: the node features of one node set, either a dense float32 [N, F]
// tensor or a sparse CSR matrix. Sparse storage is for bag-of-words style features
// that are almost all zero (MUSAE JSON lists, HGB's DBLP/IMDB vectors): DBLP's paper
// features are 0.16% non-zero, so dense they would take 240 MB for 1.5 MB of data.
// A sparse matrix without values is binary (every stored entry is 1).
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace strata::data {

class FeatureMatrix {
 public:
  FeatureMatrix() = default;  // undefined: the node set has no features

  static FeatureMatrix dense(Tensor x);  // float32 [N, F]
  // indptr int64 [N+1], indices int32 [nnz] (columns < F), values float32 [nnz] or
  // undefined for binary features. Validated.
  static FeatureMatrix sparse(int64_t rows, int64_t cols, Tensor indptr, Tensor indices, Tensor values = {});

  bool defined() const { return kind_ != Kind::None; }
  bool is_sparse() const { return kind_ == Kind::Sparse; }
  bool is_binary() const { return is_sparse() && !values_.defined(); }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  // Stored entries (sparse) or rows * cols (dense).
  int64_t stored() const;

  const Tensor& dense_values() const { return dense_; }  // dense only
  const Tensor& indptr() const { return indptr_; }       // sparse only
  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }

  // A dense float32 [N, F] tensor (a copy for sparse matrices; shared for dense ones).
  Tensor to_dense() const;
  // Stored entries per row, for checks and statistics.
  int64_t row_nnz(int64_t r) const;
  // "dense float32 [2708, 1433]" / "sparse binary [22470, 4714], 314583 non-zeros"
  std::string describe() const;

 private:
  enum class Kind : uint8_t { None, Dense, Sparse };
  Kind kind_ = Kind::None;
  int64_t rows_ = 0, cols_ = 0;
  Tensor dense_, indptr_, indices_, values_;
};

// Builds a FeatureMatrix from sparse rows, storing it sparse when at most
// `max_dense_density` of its entries are non-zero and dense otherwise.
// rows_ptr/cols/vals are CSR arrays (int64, int32, float); binary when every value is 1.
FeatureMatrix make_features(int64_t rows, int64_t cols, std::vector<int64_t> indptr, std::vector<int32_t> indices,
                            std::vector<float> values, double max_sparse_density = 0.10);

}  // namespace strata::data
