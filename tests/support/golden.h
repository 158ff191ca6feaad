// Golden-file comparison for IR printer output. STRATA_UPDATE_GOLDEN=1 rewrites
// the files instead of comparing (for intentional changes; review the diff).
#pragma once

#include <string>

namespace strata::testing {

// Compares `actual` with tests/<relative>; on mismatch reports both texts.
void expect_golden(const std::string& relative, const std::string& actual);

}  // namespace strata::testing
