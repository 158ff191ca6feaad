// Max aggregation (ops/max_aggregation.h): the generated kernels and the
// interpreted programs against plain loops in double, on every edge-case graph,
// int32 and int64 indices, odd feature sizes, with continuous inputs and with
// inputs drawn from five values (ties everywhere: the gradient is shared among
// tied maxima).
#include "sparse_compiler/ops/max_aggregation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/sparse_compiler/edge_case_graphs.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

struct Expected {
  std::vector<double> y, c, dx;
};

Expected dense_max(const Graph& g, const Tensor& X, const Tensor& dY, int64_t F) {
  Expected e;
  const int64_t m = g.num_rows(), n = g.num_cols();
  e.y.assign(static_cast<size_t>(m * F), -std::numeric_limits<double>::infinity());
  e.c.assign(static_cast<size_t>(m * F), 0);
  e.dx.assign(static_cast<size_t>(n * F), 0);
  const float* x = X.data<float>();
  const float* dy = dY.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = g.row_begin(i); p < g.row_end(i); ++p)
      for (int64_t f = 0; f < F; ++f) e.y[i * F + f] = std::max(e.y[i * F + f], double(x[g.column(p) * F + f]));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = g.row_begin(i); p < g.row_end(i); ++p)
      for (int64_t f = 0; f < F; ++f) e.c[i * F + f] += double(x[g.column(p) * F + f]) == e.y[i * F + f];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = g.row_begin(i); p < g.row_end(i); ++p)
      for (int64_t f = 0; f < F; ++f)
        if (double(x[g.column(p) * F + f]) == e.y[i * F + f])
          e.dx[g.column(p) * F + f] += dy[i * F + f] / e.c[i * F + f];
  for (int64_t k = 0; k < m * F; ++k)
    if (e.c[k] == 0) e.y[k] = 0;
  return e;
}

double max_diff(const Tensor& t, const std::vector<double>& want) {
  double d = 0;
  for (int64_t k = 0; k < t.numel(); ++k) d = std::max(d, std::abs(double(t.data<float>()[k]) - want[k]));
  return d;
}

class MaxAggregationTest : public ::testing::TestWithParam<bool> {};

TEST_P(MaxAggregationTest, MatchesPlainLoopsOnEveryEdgeCase) {
  Rng rng(41);
  for (const auto& [name, g] : testing::edge_case_graphs(GetParam()))
    for (int64_t F : {1, 7, 16, 37})
      for (bool ties : {false, true}) {
        SCOPED_TRACE(name + " F=" + std::to_string(F) + (ties ? " ties" : ""));
        Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
        if (ties)
          for (int64_t k = 0; k < X.numel(); ++k) X.data<float>()[k] = std::floor(X.data<float>()[k] * 2.5f);
        const Tensor dY = Tensor::uniform({g.num_rows(), F}, -1, 1, rng);
        const Expected want = dense_max(g, X, dY, F);
        for (Backend b : {Backend::Generated, Backend::Interpreter}) {
          SCOPED_TRACE(backend_name(b));
          const MaxAggregationKernels k(g, F, b);
          Tensor Y = Tensor::full({g.num_rows(), F}, DType::F32, 7.0),
                 C = Tensor::full({g.num_rows(), F}, DType::F32, 7.0);
          k.forward(X, Y, C);
          EXPECT_EQ(max_diff(Y, want.y), 0.0);  // a maximum is exact
          EXPECT_EQ(max_diff(C, want.c), 0.0);
          Tensor dX = Tensor::full({g.num_cols(), F}, DType::F32, 7.0);
          k.backward(X, Y, C, dY, dX);
          EXPECT_LT(max_diff(dX, want.dx), 1e-5);
        }
      }
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, MaxAggregationTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

TEST(MaxAggregationErrorTest, ArgumentsAreNamed) {
  testing::RandomGraphSpec s;
  s.rows = s.cols = 20;
  s.seed = 5;
  const Graph g = testing::random_graph(s);
  const MaxAggregationKernels fwd_only(g, 4, Backend::Generated,
                                       /*backward=*/false);
  Tensor X = Tensor::zeros({20, 4}, DType::F32), Y = Tensor::zeros({20, 4}, DType::F32),
         C = Tensor::zeros({20, 3}, DType::F32);
  testing::expect_user_error([&] { fwd_only.forward(X, Y, C); }, {"max aggregation C"});
  testing::expect_user_error([&] { fwd_only.backward(X, Y, Y, Y, X); }, {"built without a backward (evaluation)"});
  testing::expect_user_error([&] { MaxAggregationKernels(g, 0); }, {"feature size must be at least 1, got 0"});
}

}  // namespace
}  // namespace strata::sc
