// Controls for the checking runs of scripts/sanitize.sh: a clean run there means something
// only if a bug in a generated kernel would have been reported. Each test compiles, through
// the JIT and with STRATA_CXXFLAGS as every kernel gets them, a small OpenMP kernel with
// one deliberate bug, runs it in a child process and expects the sanitizer's report: two
// threads adding into the same output rows (ThreadSanitizer, `--thread`), and a read past the
// end of a buffer (AddressSanitizer). The same kernel without its bug must run clean. Outside
// those runs, kernels carry no sanitizer and the tests skip.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "sparse_compiler/codegen/jit_compiler.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

// Every thread adds into rows 0..3 (`racy`), or each row has one owner (`owned`).
constexpr const char* kRowsKernel = R"(
extern "C" void racy(float* y, int n) {
#pragma omp parallel for num_threads(2) schedule(static)
  for (int i = 0; i < n; ++i) y[i % 4] += 1.0f;
}
extern "C" void owned(float* y, int n) {
#pragma omp parallel for num_threads(2) schedule(static)
  for (int i = 0; i < n; ++i) y[i] += 1.0f;
}
extern "C" float sum_to(const float* x, int n) {
  float s = 0;
#pragma omp parallel for reduction(+ : s) num_threads(2)
  for (int i = 0; i <= n; ++i) s += i < n ? x[i] : 0.0f;
  return s;
}
extern "C" float sum_past(const float* x, int n) {
  float s = 0;
#pragma omp parallel for reduction(+ : s) num_threads(2)
  for (int i = 0; i <= n; ++i) s += x[i];  // reads x[n]
  return s;
}
)";

bool kernels_sanitized_with(const std::string& sanitizer) {
  return ::strata::testing::kernel_sanitizer_flags().find(sanitizer) != std::string::npos;
}

// A library of kRowsKernel in a temporary folder, compiled as the tests' kernels are.
class SanitizerControl : public ::strata::testing::TempDirTest {
 protected:
  SanitizerControl() : TempDirTest("sanitizer-control") {}
  CompiledLibrary build() {
    CompileOptions options;
    options.work_dir = dir_;
    return compile(kRowsKernel, options);
  }
};

TEST_F(SanitizerControl, ThreadSanitizerReportsTwoThreadsAddingIntoOneRow) {
  if (!kernels_sanitized_with("thread")) GTEST_SKIP() << "kernels not built with -fsanitize=thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const CompiledLibrary lib = build();
  const auto owned = lib.library->function<void(float*, int)>("owned");
  const auto racy = lib.library->function<void(float*, int)>("racy");
  std::vector<float> y(4096, 0.0f);
  owned(y.data(), static_cast<int>(y.size()));  // a report here would end this process
  EXPECT_EQ(y[4095], 1.0f);
  EXPECT_DEATH(racy(y.data(), static_cast<int>(y.size())), "ThreadSanitizer: data race");
}

TEST_F(SanitizerControl, AddressSanitizerReportsAReadPastABuffer) {
  if (!kernels_sanitized_with("address")) GTEST_SKIP() << "kernels not built with -fsanitize=address";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const CompiledLibrary lib = build();
  const auto sum_to = lib.library->function<float(const float*, int)>("sum_to");
  const auto sum_past = lib.library->function<float(const float*, int)>("sum_past");
  std::vector<float> x(1000, 1.0f);
  EXPECT_EQ(sum_to(x.data(), static_cast<int>(x.size())), 1000.0f);
  EXPECT_DEATH(sum_past(x.data(), static_cast<int>(x.size())), "AddressSanitizer: (heap|container)-buffer-overflow");
}

}  // namespace
}  // namespace strata::sc
