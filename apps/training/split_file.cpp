#include "apps/training/split_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/json_input.h"

namespace strata::train {

std::string split_json(const data::Splits& splits) {
  auto ids = [](const Tensor& t) {
    std::vector<int64_t> v;
    if (t.defined()) v.assign(t.data<int64_t>(), t.data<int64_t>() + t.numel());
    return v;
  };
  nlohmann::ordered_json j = {
      {"origin", splits.origin}, {"train", ids(splits.train)}, {"val", ids(splits.val)}, {"test", ids(splits.test)}};
  return j.dump() + "\n";
}

data::Splits read_split_json(const fs::path& file, int64_t num_nodes) {
  const std::string name = file.string();
  std::error_code ec;
  STRATA_CHECK(fs::is_regular_file(file, ec) || !fs::exists(file, ec),
               "split file '{}' is not a regular file (a folder or a device?)", name);
  const std::string text = read_file(file);
  // A key given twice is refused: it would silently keep the last list.
  const nlohmann::json j = parse_user_json(text, fmt::format("split file '{}'", name),
                                           "{\"train\": [...], \"val\": [...], \"test\": [...]}");
  STRATA_CHECK(j.is_object(),
               "split file '{}': expected a JSON object with \"train\", "
               "\"val\" and \"test\" lists",
               name);
  for (const auto& [key, value] : j.items())
    STRATA_CHECK(key == "train" || key == "val" || key == "test" || key == "origin",
                 "split file '{}': unknown key \"{}\" (a split file holds \"train\", \"val\" and \"test\" lists and "
                 "an optional \"origin\" text)",
                 name, key);
  // Which part holds each node (0: none yet), to refuse repeats and overlaps.
  std::vector<uint8_t> part_of(static_cast<size_t>(num_nodes), 0);
  const char* names[] = {"train", "val", "test"};
  data::Splits out;
  Tensor* parts[] = {&out.train, &out.val, &out.test};
  for (int p = 0; p < 3; ++p) {
    const char* part = names[p];
    STRATA_CHECK(j.contains(part) && j[part].is_array(), "split file '{}': no \"{}\" list of node ids", name, part);
    const auto& list = j[part];
    STRATA_CHECK(!list.empty(), "split file '{}': the \"{}\" list is empty", name, part);
    std::vector<int64_t> ids;
    ids.reserve(list.size());
    for (size_t k = 0; k < list.size(); ++k) {
      const auto& v = list[k];
      STRATA_CHECK(v.is_number_integer(), "split file '{}': {}[{}] is {}, expected an integer node id", name, part, k,
                   v.dump());
      const int64_t id = v.get<int64_t>();
      STRATA_CHECK(id >= 0 && id < num_nodes,
                   "split file '{}': {}[{}] is node {}, outside 0..{} (the "
                   "graph has {} nodes)",
                   name, part, k, id, num_nodes - 1, num_nodes);
      const uint8_t seen = part_of[static_cast<size_t>(id)];
      STRATA_CHECK(seen == 0, "split file '{}': node {} is listed {} (in \"{}\" and \"{}\")", name, id,
                   seen == p + 1 ? "twice" : "in two parts", names[seen - 1], part);
      part_of[static_cast<size_t>(id)] = static_cast<uint8_t>(p + 1);
      ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    *parts[p] = Tensor::from_vector(ids);
  }
  const std::string origin = j.contains("origin") && j["origin"].is_string() ? j["origin"].get<std::string>() : "";
  out.origin = fmt::format("file '{}' (xxh3 {}){}", name, hash_string(text).hex().substr(0, 12),
                           origin.empty() ? "" : ": " + origin);
  return out;
}

}  // namespace strata::train
