// Checks for numeric command-line options, with messages that say what was
// expected ("--repeats: expected an integer >= 1, got 0"); CLI11 reports them as
// command-line errors (exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace strata::apps {

// The largest feature size a command accepts (--feat, --feat-out), as configs bound
// model.hidden; and the most attention heads, as model.gat.heads.
inline constexpr int64_t kMaxFeatureSize = 65536;
inline constexpr int64_t kMaxHeads = 256;

CLI::Validator integer_at_least(int64_t min);
// "--threads: expected an integer in [1, 4096], got '10000'"
CLI::Validator integer_in(int64_t min, int64_t max);
CLI::Validator power_of_two_up_to(int64_t max);

}  // namespace strata::apps
