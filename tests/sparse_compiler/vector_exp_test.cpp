// The emitter's exp over float vectors (a polynomial in vector arithmetic, not one
// expf call per lane) against the C library in double precision, on a generated
// kernel Y[i] = exp(X[i]) vectorized 16 wide: within 4e-7 relative error where the
// result is a normal float, within 3e-45 where it is subnormal, and the edges of
// the range exactly (+inf, 0, NaN, exp(0) = 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/tensor.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {
namespace {

TEST(VectorExp, MatchesTheCLibraryAcrossTheFloatRange) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-8f, -1e-8f, 88.0f, 88.72283f, 88.7229f, 89.0f, 100.0f,
                          -87.3f, -87.34f, -90.0f, -100.0f, -103.9f, -103.98f, -104.0f, -110.0f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  for (double v = -106; v <= 90; v += 0.0137) x.push_back(static_cast<float>(v));
  while (x.size() % 16 != 3) x.push_back(0.25f);  // a scalar tail after the vectors
  const int64_t n = static_cast<int64_t>(x.size());
  Kernel k;
  k.name = "vector_exp";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("Y", DType::F32, ParamRole::Output)};
  k.body = for_loop("i", make_int(0), make_int(n), ForKind::Serial,
                    store("Y", var("i"), exp(load(Type::f32(), "X", var("i")))));
  Schedule s(k);
  s.split("i", 16);
  s.vectorize("i_i");
  const std::vector<CompiledKernel> compiled = compile_cpu({lower_schedule(s.kernel())});
  Tensor X = Tensor::empty({n}, DType::F32);
  std::copy(x.begin(), x.end(), X.data<float>());
  Tensor Y = Tensor::full({n}, DType::F32, -1.0);
  KernelArgs args;
  args.buffer("X", X).buffer("Y", Y);
  compiled.front().run(args);
  for (int64_t i = 0; i < n; ++i) {
    const float in = x[static_cast<size_t>(i)], got = Y.data<float>()[i];
    const double want = std::exp(static_cast<double>(in));
    if (std::isnan(in)) {
      EXPECT_TRUE(std::isnan(got)) << "exp(nan) = " << got;
    } else if (want > std::numeric_limits<float>::max()) {
      EXPECT_EQ(got, std::numeric_limits<float>::infinity()) << "exp(" << in << ")";
    } else if (want >= std::numeric_limits<float>::min()) {
      EXPECT_LE(std::abs(got - want) / want, 4e-7) << "exp(" << in << ") = " << got << ", want " << want;
    } else {
      EXPECT_LE(std::abs(got - want), 3e-45) << "exp(" << in << ") = " << got << ", want " << want;
    }
  }
  EXPECT_EQ(Y.data<float>()[0], 1.0f);
}

}  // namespace
}  // namespace strata::sc
