#include "datasets/generator_params.h"

#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "core/error.h"
#include "datasets/text_fields.h"

namespace strata::data {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best_d <= std::max<size_t>(2, word.size() / 3) ? best : std::string();
}

GeneratorParams::GeneratorParams(std::string kind, std::string_view text, std::vector<ParamSpec> valid)
    : kind_(std::move(kind)), valid_(std::move(valid)) {
  std::vector<std::string> keys;
  for (const auto& v : valid_) keys.push_back(v.key);
  std::vector<std::string_view> items;
  if (trim(text).empty()) return;
  split_fields(text, ',', items);
  for (std::string_view item : items) {
    item = trim(item);
    STRATA_CHECK(!item.empty(), "{}: empty parameter in '{}' (expected key=value,key=value)", kind_, text);
    const size_t eq = item.find('=');
    STRATA_CHECK(eq != std::string_view::npos && eq > 0,
                 "{}: parameter '{}' is not key=value (valid keys: {})", kind_, item, fmt::join(keys, ", "));
    const std::string key(trim(item.substr(0, eq)));
    const std::string value(trim(item.substr(eq + 1)));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const std::string hint = nearest_name(key, keys);
      STRATA_FAIL("{}: unknown parameter '{}'{} (valid keys: {})", kind_, key,
                  hint.empty() ? "" : fmt::format(", did you mean '{}'?", hint), fmt::join(keys, ", "));
    }
    STRATA_CHECK(!value.empty(), "{}: parameter '{}' has no value", kind_, key);
    STRATA_CHECK(values_.emplace(key, value).second, "{}: parameter '{}' is given twice", kind_, key);
  }
}

int64_t GeneratorParams::get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  auto v = try_parse_int(it->second);
  if (!v) {
    // Accept integral values written as 1e6 or 2.0.
    auto d = try_parse_double(it->second);
    if (d && std::isfinite(*d) && std::floor(*d) == *d && std::fabs(*d) < 9e18) v = static_cast<int64_t>(*d);
  }
  STRATA_CHECK(v && *v >= lo && *v <= hi, "{}: parameter '{}' is '{}', expected an integer in [{}, {}]", kind_, key,
               it->second, lo, hi);
  return *v;
}

double GeneratorParams::get_double(const std::string& key, double fallback, double lo, double hi) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  auto v = try_parse_double(it->second);
  STRATA_CHECK(v && std::isfinite(*v) && *v >= lo && *v <= hi, "{}: parameter '{}' is '{}', expected a number in [{}, {}]",
               kind_, key, it->second, lo, hi);
  return *v;
}

bool GeneratorParams::get_bool(const std::string& key, bool fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& v = it->second;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  STRATA_FAIL("{}: parameter '{}' is '{}', expected 0 or 1 (or true/false)", kind_, key, v);
}

std::string GeneratorParams::describe_keys() const {
  std::string out;
  for (const auto& v : valid_) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", v.key, v.help);
  return out;
}

}  // namespace strata::data
