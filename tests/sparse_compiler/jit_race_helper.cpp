// Helper for KernelCacheSlowTest: one of several processes started at once on the same
// cache root and the same kernel. Prints "<outcome> <result>" and exits 0 when the
// kernel's result is right, 2 when it is wrong, 1 on an error (printed to stderr).
//   strata_jit_race_helper <cache-root> <cxx> <multiplier> <n>
#include <cstdio>
#include <exception>
#include <string>

#include "sparse_compiler/codegen/kernel_cache.h"
#include "tests/sparse_compiler/jit_test_kernels.h"

int main(int argc, char** argv) {
  using namespace strata::sc;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <cache-root> <cxx> <multiplier> <n>\n", argv[0]);
    return 1;
  }
  try {
    const int64_t multiplier = std::stoll(argv[3]);
    const int64_t n = std::stoll(argv[4]);
    KernelCache cache(argv[1]);
    CompileOptions options;
    options.cxx = argv[2];
    const CacheResult r = cache.get_or_compile(testing::sum_kernel(multiplier), options);
    const int64_t got = r.library->function<testing::SumFn>("strata_test_sum")(n);
    std::printf("%s %lld\n", to_string(r.outcome), static_cast<long long>(got));
    return got == testing::sum_expected(multiplier, n) ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
