#include "sparse_compiler/ops/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "core/json_input.h"

namespace strata::sc {

std::string KernelPlan::str() const {
  std::string s = format.str() + " " + knobs.str();
  if (feature_tile > 0) s += fmt::format(",tile={}", feature_tile);
  if (!x_layout.is_row()) s += ",x=" + x_layout.str();
  if (pair_rounds > 0) s += fmt::format(",pairs=r{}m{}", pair_rounds, pair_min_rows);
  return s;
}

std::string KernelPlan::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = format.str();
  j["lanes"] = knobs.vector_lanes;
  j["grain"] = knobs.grain;
  j["prefetch"] = knobs.prefetch;
  j["tile"] = feature_tile;
  j["x_layout"] = x_layout.str();
  j["stream"] = knobs.stream_stores;
  // Written only when set, so plans and records from before the knob read the same.
  if (knobs.static_tasks) j["static_tasks"] = true;
  if (knobs.accumulator_sets > 1) j["accumulator_sets"] = knobs.accumulator_sets;
  if (knobs.edge_groups) j["edge_groups"] = true;
  if (pair_rounds > 0) {
    j["pair_rounds"] = pair_rounds;
    j["pair_min_rows"] = pair_min_rows;
  }
  return j.dump();
}

KernelPlan KernelPlan::from_json(const std::string& text, const std::string& what) {
  const nlohmann::json j = parse_user_json(text, what);
  static const std::vector<std::string> kKeys = {
      "format",           "lanes",       "grain",       "prefetch",     "tile", "x_layout", "stream", "static_tasks",
      "accumulator_sets", "edge_groups", "pair_rounds", "pair_min_rows"};
  STRATA_CHECK(j.is_object(), "{}: expected a JSON object with keys {}", what, fmt::join(kKeys, ", "));
  for (const auto& [k, v] : j.items())
    STRATA_CHECK(std::find(kKeys.begin(), kKeys.end(), k) != kKeys.end(), "{}: unknown key '{}' (expected {})", what, k,
                 fmt::join(kKeys, ", "));
  KernelPlan p;
  auto integer = [&](const char* key, int64_t lo, int64_t hi, int64_t fallback) {
    if (!j.contains(key)) return fallback;
    STRATA_CHECK(j[key].is_number_integer(), "{}: '{}' must be an integer", what, key);
    const int64_t v = j[key].get<int64_t>();
    STRATA_CHECK(v >= lo && v <= hi, "{}: '{}' must be in [{}, {}], got {}", what, key, lo, hi, v);
    return v;
  };
  STRATA_CHECK(j.contains("format") && j["format"].is_string(), "{}: 'format' must be a string such as \"csr\"", what);
  p.format = FormatSpec::parse(j["format"].get<std::string>(), what + ".format");
  p.knobs.vector_lanes = static_cast<int>(integer("lanes", 1, 64, p.knobs.vector_lanes));
  STRATA_CHECK((p.knobs.vector_lanes & (p.knobs.vector_lanes - 1)) == 0, "{}: 'lanes' must be a power of two, got {}",
               what, p.knobs.vector_lanes);
  p.knobs.grain = integer("grain", 1, int64_t{1} << 40, p.knobs.grain);
  p.knobs.prefetch = integer("prefetch", 0, int64_t{1} << 20, 0);
  p.feature_tile = integer("tile", 0, int64_t{1} << 20, 0);
  p.knobs.accumulator_sets = static_cast<int>(integer("accumulator_sets", 1, 8, 1));
  p.pair_rounds = static_cast<int>(integer("pair_rounds", 0, 64, 0));
  p.pair_min_rows = integer("pair_min_rows", 3, int64_t{1} << 40, p.pair_min_rows);
  if (j.contains("stream")) {
    STRATA_CHECK(j["stream"].is_boolean(), "{}: 'stream' must be true or false", what);
    p.knobs.stream_stores = j["stream"].get<bool>();
  }
  if (j.contains("static_tasks")) {
    STRATA_CHECK(j["static_tasks"].is_boolean(), "{}: 'static_tasks' must be true or false", what);
    p.knobs.static_tasks = j["static_tasks"].get<bool>();
  }
  if (j.contains("edge_groups")) {
    STRATA_CHECK(j["edge_groups"].is_boolean(), "{}: 'edge_groups' must be true or false", what);
    p.knobs.edge_groups = j["edge_groups"].get<bool>();
  }
  if (j.contains("x_layout")) {
    STRATA_CHECK(j["x_layout"].is_string(), "{}: 'x_layout' must be a string such as \"panel:64\"", what);
    p.x_layout = DenseLayout::parse(j["x_layout"].get<std::string>(), what + ".x_layout");
  }
  return p;
}

}  // namespace strata::sc
