// The `key=value,key=value` parameter lists of generator specs
// ("rmat:scale=16,edge_factor=16,seed=1"). Unknown keys are rejected with the list of
// valid ones (and the nearest name); bad values name the key and the expected range.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace strata::data {

struct ParamSpec {
  std::string key;
  std::string help;  // "log2 of the node count"
};

class GeneratorParams {
 public:
  // Parses `text` for generator `kind` ("rmat"), accepting only keys in `valid`.
  GeneratorParams(std::string kind, std::string_view text, std::vector<ParamSpec> valid);

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  int64_t get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const;
  double get_double(const std::string& key, double fallback, double lo, double hi) const;
  bool get_bool(const std::string& key, bool fallback) const;

  const std::vector<ParamSpec>& valid() const { return valid_; }
  // "scale: log2 of the node count; edge_factor: ..." for help texts.
  std::string describe_keys() const;

 private:
  std::string kind_;
  std::vector<ParamSpec> valid_;
  std::map<std::string, std::string> values_;
};

// Levenshtein distance, for "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is close enough to be a likely typo.
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace strata::data
