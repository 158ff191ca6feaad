// Small generated-kernel stand-ins shared by the JIT tests and their helper program.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace strata::sc::testing {

// An OpenMP reduction with `multiplier` compiled in, like the emitter's kernels:
// strata_test_sum(n) = multiplier * (0 + 1 + ... + n-1) + STRATA_TEST_OFFSET, where the
// offset is 0 unless a -DSTRATA_TEST_OFFSET=... flag says otherwise.
inline std::string sum_kernel(int64_t multiplier) {
  return fmt::format(R"(#include <cstdint>
#ifndef STRATA_TEST_OFFSET
#define STRATA_TEST_OFFSET 0
#endif
extern "C" int64_t strata_test_sum(int64_t n) {{
  int64_t s = 0;
#pragma omp parallel for reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += i * {};
  return s + STRATA_TEST_OFFSET;
}}
)",
                     multiplier);
}

inline int64_t sum_expected(int64_t multiplier, int64_t n, int64_t offset = 0) {
  return multiplier * (n * (n - 1) / 2) + offset;
}

using SumFn = int64_t(int64_t);

}  // namespace strata::sc::testing
