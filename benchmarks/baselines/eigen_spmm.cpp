// Baseline: Eigen's sparse x dense product (Eigen parallelises the row-major
// sparse x dense product with OpenMP).
#include <Eigen/Sparse>

#include "benchmarks/baselines/baselines.h"

namespace strata::baselines {

struct EigenSpmmBaseline::Impl {
  Eigen::SparseMatrix<float, Eigen::RowMajor, int64_t> A;
};

EigenSpmmBaseline::EigenSpmmBaseline(const Graph& A) : impl_(std::make_unique<Impl>()) {
  std::vector<Eigen::Triplet<float, int64_t>> t;
  t.reserve(static_cast<size_t>(A.nnz()));
  for (int64_t r = 0; r < A.num_rows(); ++r)
    for (int64_t p = A.row_begin(r); p < A.row_end(r); ++p) t.emplace_back(r, A.column(p), 1.0f);
  impl_->A.resize(A.num_rows(), A.num_cols());
  impl_->A.setFromTriplets(t.begin(), t.end());
  impl_->A.makeCompressed();
}

EigenSpmmBaseline::~EigenSpmmBaseline() = default;

void EigenSpmmBaseline::run(const Tensor& X, Tensor& Y) const {
  auto y = Y.as_matrix<float>();
  y.noalias() = impl_->A * X.as_matrix<float>();
}

}  // namespace strata::baselines
