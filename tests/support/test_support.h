// Helpers shared by the test suites: where the datasets are, skip messages, and
// small random graphs with the edge cases every kernel must survive.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/rng.h"

namespace strata::testing {

// The data root tests read: STRATA_DATA_ROOT, else ../shared/datasets beside the source.
std::filesystem::path data_root();
// True when `relative` exists under the data root; otherwise the caller should skip
// with skip_message(relative), which names the missing path.
bool have_data(const std::string& relative);
std::string skip_message(const std::string& relative);

// STRATA_CXXFLAGS when it asks for sanitizers (-fsanitize=..., as scripts/sanitize.sh sets it
// for the kernels it generates), else "": tests that judge machine code or mix compilers
// adapt to sanitized kernels.
std::string kernel_sanitizer_flags();

#define STRATA_REQUIRE_DATA(rel) \
  if (!::strata::testing::have_data(rel)) GTEST_SKIP() << ::strata::testing::skip_message(rel)

// A random graph with `rows` x `cols`, about `avg_degree` non-zeros per row, and
// optionally some empty rows and one row far longer than the rest.
struct RandomGraphSpec {
  int64_t rows = 100, cols = 100;
  double avg_degree = 4;
  double empty_row_fraction = 0.1;
  int64_t long_row_length = 0;  // 0 = none
  bool weighted = false;
  bool int64_indices = false;
  uint64_t seed = 1;
};
Graph random_graph(const RandomGraphSpec& spec);

// Seeded draws for the randomized tests: an element of `v`, and true one time in `n`.
inline int64_t pick(Rng& rng, const std::vector<int64_t>& v) { return v[rng.below(v.size())]; }
inline bool one_in(Rng& rng, uint64_t n) { return rng.below(n) == 0; }
// The seeds of a seeded fuzz suite: `defaults` in CI, or STRATA_FUZZ_SEEDS when set, as
// "1-40" or "5,9,12" (a longer hunt, e.g. under scripts/sanitize.sh --thread).
std::vector<uint64_t> fuzz_seeds(std::vector<uint64_t> defaults);

// While alive, STRATA_CACHE_DIR points at a fresh private folder (named after `tag`,
// the process and a counter), so tuning records of other runs never interfere; the
// old value is restored and the folder removed on destruction.
class ScopedCacheRoot {
 public:
  explicit ScopedCacheRoot(const std::string& tag);
  ~ScopedCacheRoot();
  ScopedCacheRoot(const ScopedCacheRoot&) = delete;
  ScopedCacheRoot& operator=(const ScopedCacheRoot&) = delete;
  const std::filesystem::path& path() const { return root_; }

 private:
  std::filesystem::path root_;
  std::string saved_;
  bool had_ = false;
};

// A fixture whose every test gets a fresh, empty folder `dir_` (named after `tag`,
// the process and the test), removed when the test ends.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string tag) : tag_(std::move(tag)) {}
  void SetUp() override;
  void TearDown() override;
  std::filesystem::path dir_;

 private:
  std::string tag_;
};

// Asserts that `fn` throws UserError whose message contains every one of `parts`.
template <class F>
void expect_user_error(F&& fn, std::initializer_list<std::string> parts);

}  // namespace strata::testing

#include "tests/support/test_support_inl.h"
