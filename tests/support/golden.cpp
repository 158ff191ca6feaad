#include "tests/support/golden.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/file_util.h"

namespace strata::testing {

void expect_golden(const std::string& relative, const std::string& actual) {
  const std::filesystem::path path = std::filesystem::path(STRATA_SOURCE_DIR) / "tests" / relative;
  if (env_flag("STRATA_UPDATE_GOLDEN")) {
    write_file_atomic(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << "golden file " << path
                                             << " is missing; run with STRATA_UPDATE_GOLDEN=1 to create it. Actual:\n"
                                             << actual;
  const std::string want = read_file(path);
  EXPECT_EQ(want, actual) << "golden mismatch for " << relative << "\n--- want\n" << want << "--- got\n" << actual;
}

}  // namespace strata::testing
