#include "datasets/feature_matrix.h"

#include <algorithm>
#include <cstring>

namespace strata::data {

FeatureMatrix FeatureMatrix::dense(Tensor x) {
  check_tensor(x, "dense node features", DType::F32, 2);
  FeatureMatrix f;
  f.kind_ = Kind::Dense;
  f.rows_ = x.dim(0);
  f.cols_ = x.dim(1);
  f.dense_ = std::move(x);
  return f;
}

FeatureMatrix FeatureMatrix::sparse(int64_t rows, int64_t cols, Tensor indptr, Tensor indices, Tensor values) {
  check_tensor(indptr, "sparse feature indptr", DType::I64, 1);
  check_tensor(indices, "sparse feature indices", DType::I32, 1);
  check_shape(indptr, "sparse feature indptr", {rows + 1});
  const int64_t* ip = indptr.data<int64_t>();
  STRATA_CHECK(ip[0] == 0 && ip[rows] == indices.numel(),
               "sparse features: indptr runs from {} to {}, expected 0 to {} (the number of indices)", ip[0],
               ip[rows], indices.numel());
  const int32_t* ix = indices.data<int32_t>();
  for (int64_t r = 0; r < rows; ++r) {
    STRATA_CHECK(ip[r + 1] >= ip[r], "sparse features: indptr decreases at row {}", r);
    for (int64_t p = ip[r]; p < ip[r + 1]; ++p)
      STRATA_CHECK(ix[p] >= 0 && ix[p] < cols, "sparse features: row {} has column {} outside [0, {})", r, ix[p],
                   cols);
  }
  if (values.defined()) {
    check_tensor(values, "sparse feature values", DType::F32, 1);
    check_shape(values, "sparse feature values", {indices.numel()});
  }
  FeatureMatrix f;
  f.kind_ = Kind::Sparse;
  f.rows_ = rows;
  f.cols_ = cols;
  f.indptr_ = std::move(indptr);
  f.indices_ = std::move(indices);
  f.values_ = std::move(values);
  return f;
}

int64_t FeatureMatrix::stored() const {
  if (kind_ == Kind::Sparse) return indices_.numel();
  if (kind_ == Kind::Dense) return rows_ * cols_;
  return 0;
}

int64_t FeatureMatrix::row_nnz(int64_t r) const {
  STRATA_ASSERT(r >= 0 && r < rows_, "row {} outside [0, {})", r, rows_);
  if (kind_ == Kind::Sparse) return indptr_.data<int64_t>()[r + 1] - indptr_.data<int64_t>()[r];
  if (kind_ == Kind::Dense) {
    const float* x = dense_.data<float>() + r * cols_;
    return std::count_if(x, x + cols_, [](float v) { return v != 0.0f; });
  }
  return 0;
}

Tensor FeatureMatrix::to_dense() const {
  STRATA_CHECK(defined(), "to_dense: this node set has no features");
  if (kind_ == Kind::Dense) return dense_;
  Tensor out = Tensor::zeros({rows_, cols_}, DType::F32);
  float* y = out.data<float>();
  const int64_t* ip = indptr_.data<int64_t>();
  const int32_t* ix = indices_.data<int32_t>();
  const float* v = values_.defined() ? values_.data<float>() : nullptr;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows_; ++r)
    for (int64_t p = ip[r]; p < ip[r + 1]; ++p) y[r * cols_ + ix[p]] = v ? v[p] : 1.0f;
  return out;
}

std::string FeatureMatrix::describe() const {
  switch (kind_) {
    case Kind::None: return "none";
    case Kind::Dense: return fmt::format("dense float32 [{}, {}]", rows_, cols_);
    case Kind::Sparse:
      return fmt::format("sparse {} [{}, {}], {} non-zeros", is_binary() ? "binary" : "float32", rows_, cols_,
                         indices_.numel());
  }
  return "";
}

FeatureMatrix make_features(int64_t rows, int64_t cols, std::vector<int64_t> indptr, std::vector<int32_t> indices,
                            std::vector<float> values, double max_sparse_density) {
  STRATA_ASSERT(static_cast<int64_t>(indptr.size()) == rows + 1, "make_features: {} offsets for {} rows",
                indptr.size(), rows);
  STRATA_ASSERT(indices.size() == values.size(), "make_features: {} indices but {} values", indices.size(),
                values.size());
  const double cells = static_cast<double>(rows) * static_cast<double>(cols);
  const double density = cells > 0 ? static_cast<double>(indices.size()) / cells : 1.0;
  if (density > max_sparse_density) {
    Tensor x = Tensor::zeros({rows, cols}, DType::F32);
    float* y = x.data<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = indptr[r]; p < indptr[r + 1]; ++p) y[r * cols + indices[p]] = values[p];
    return FeatureMatrix::dense(std::move(x));
  }
  const bool binary = std::all_of(values.begin(), values.end(), [](float v) { return v == 1.0f; });
  Tensor v = binary ? Tensor() : Tensor::from_vector(values);
  return FeatureMatrix::sparse(rows, cols, Tensor::from_vector(indptr), Tensor::from_vector(indices), std::move(v));
}

}  // namespace strata::data
