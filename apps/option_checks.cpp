#include "apps/option_checks.h"

#include <charconv>
#include <string>

namespace strata::apps {
namespace {

bool parse_integer(const std::string& text, int64_t& out) {
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, out);
  return r.ec == std::errc() && r.ptr == end;
}

}  // namespace

CLI::Validator integer_at_least(int64_t min) {
  return CLI::Validator(
      [min](const std::string& text) {
        int64_t v = 0;
        if (parse_integer(text, v) && v >= min) return std::string();
        return "expected an integer >= " + std::to_string(min) + ", got '" + text + "'";
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator integer_in(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](const std::string& text) {
        int64_t v = 0;
        if (parse_integer(text, v) && v >= min && v <= max) return std::string();
        return "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + text + "'";
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

CLI::Validator power_of_two_up_to(int64_t max) {
  return CLI::Validator(
      [max](const std::string& text) {
        int64_t v = 0;
        if (parse_integer(text, v) && v >= 1 && v <= max && (v & (v - 1)) == 0) return std::string();
        return "expected a power of two from 1 to " + std::to_string(max) + ", got '" + text + "'";
      },
      "POW2<=" + std::to_string(max));
}

}  // namespace strata::apps
