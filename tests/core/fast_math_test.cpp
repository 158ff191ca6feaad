// fast_expf and fast_expm1f against the C library in double precision, across the
// float range and at its edges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/fast_math.h"

namespace strata {
namespace {

// 2 million evenly spaced values in [lo, hi], and 2 million of either sign spaced
// evenly in log scale from 1e-38 up to the larger end's magnitude (the small ones
// are where expm1 would lose its digits to a subtraction).
std::vector<float> sweep(double lo, double hi) {
  std::vector<float> out;
  constexpr int kCount = 2000000;
  for (int k = 0; k <= kCount; ++k) out.push_back(static_cast<float>(lo + (hi - lo) * k / kCount));
  const double top = std::log(std::max(std::fabs(lo), std::fabs(hi)));
  for (int k = 0; k <= kCount; ++k) {
    const double m = std::exp(std::log(1e-38) + (top - std::log(1e-38)) * k / kCount);
    if (m <= hi) out.push_back(static_cast<float>(m));
    if (-m >= lo) out.push_back(static_cast<float>(-m));
  }
  return out;
}

TEST(FastMath, ExpMatchesTheCLibraryAcrossTheFloatRange) {
  double worst = 0;
  int64_t checked = 0;
  for (float x : sweep(-103.0, 88.7)) {
    const double want = std::exp(static_cast<double>(x));
    const float got = fast_expf(x);
    if (want >= std::numeric_limits<float>::min()) {
      worst = std::max(worst, std::fabs(got - want) / want);
    } else {
      EXPECT_LE(std::fabs(got - want), 3e-45) << "x = " << x;  // subnormal results: within an ulp
    }
    ++checked;
  }
  EXPECT_LT(worst, 2e-7);  // 8.2e-8 measured
  EXPECT_GT(checked, 1000000);
  EXPECT_EQ(fast_expf(0.0f), 1.0f);
  EXPECT_EQ(fast_expf(89.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fast_expf(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fast_expf(-104.0f), 0.0f);
  EXPECT_EQ(fast_expf(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(fast_expf(std::numeric_limits<float>::quiet_NaN())));
}

TEST(FastMath, Expm1MatchesTheCLibraryNearZeroAndAcrossTheRange) {
  double worst = 0;
  std::vector<float> xs = sweep(-110.0, 88.0);
  for (float x : {1e-30f, -1e-30f, 1e-40f, -1e-40f, 1e-8f, -1e-8f, 0.3465f, -0.3465f, 0.3466f, -0.3466f}) xs.push_back(x);
  for (float x : xs) {
    const double want = std::expm1(static_cast<double>(x));
    const float got = fast_expm1f(x);
    if (std::fabs(want) >= std::numeric_limits<float>::min()) {
      worst = std::max(worst, std::fabs(got - want) / std::fabs(want));
    } else {
      EXPECT_EQ(got, x) << "tiny x: expm1(x) rounds to x";
    }
  }
  EXPECT_LT(worst, 4e-7);  // 2.4e-7 measured
  EXPECT_EQ(fast_expm1f(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(fast_expm1f(-0.0f))) << "-0 stays -0";
  EXPECT_EQ(fast_expm1f(-200.0f), -1.0f);
  EXPECT_EQ(fast_expm1f(-std::numeric_limits<float>::infinity()), -1.0f);
  EXPECT_EQ(fast_expm1f(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fast_expm1f(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace strata
