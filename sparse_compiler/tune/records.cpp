#include "sparse_compiler/tune/records.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "core/log.h"

namespace strata::sc {

using json = nlohmann::ordered_json;

std::string record_key(const std::string& graph, const std::string& op, const std::string& target,
                       const std::string& compiler) {
  Hasher h;
  // The version changes with the search spaces, so that a record chosen from an
  // older space is tuned again (v2: SpMM's accumulator sets; v3: SDDMM's edge groups; v4:
  // SpMM's shared pairs; v5: shared pairs for column-scaled SpMM too; v6: SDDMM's edge
  // groups over COO slots; v7: those at any width where Y is under four L2s).
  h.add("strata tuning record v7").add(graph).add(op).add(target).add(compiler);
  return h.digest().hex();
}

fs::path record_path(const std::string& key) { return cache_root() / "tuning" / (key + ".json"); }

std::optional<TuningRecord> load_record(const std::string& key) {
  const fs::path path = record_path(key);
  if (!fs::exists(path)) return std::nullopt;
  try {
    const json j = json::parse(read_file(path));
    TuningRecord r;
    r.key = j.at("key").get<std::string>();
    if (r.key != key) {
      log_warn("tuning record {} holds key {}; ignored", path.string(), r.key);
      return std::nullopt;
    }
    r.graph = j.at("graph").get<std::string>();
    r.op = j.at("op").get<std::string>();
    r.target = j.at("target").get<std::string>();
    r.compiler = j.at("compiler").get<std::string>();
    r.chosen = KernelPlan::from_json(j.at("chosen").dump(), path.string());
    r.tune_ms = j.value("tune_ms", 0.0);
    r.choice = j.value("choice", "");
    for (const auto& c : j.value("candidates", json::array())) {
      MeasuredCandidate m;
      m.plan = KernelPlan::from_json(c.at("plan").dump(), path.string());
      m.predicted_ms = c.value("predicted_ms", 0.0);
      m.measured_ms = c.value("measured_ms", -1.0);
      m.padding = c.value("padding", 0.0);
      m.status = c.value("status", "ok");
      m.final_round = c.value("final_round", false);
      m.neighbour = c.value("neighbour", false);
      r.candidates.push_back(m);
    }
    return r;
  } catch (const std::exception& e) {
    log_warn("tuning record {} is unreadable ({}); it will be rewritten", path.string(), e.what());
    return std::nullopt;
  }
}

void save_record(const TuningRecord& r) {
  json j;
  j["key"] = r.key;
  j["graph"] = r.graph;
  j["op"] = r.op;
  j["target"] = r.target;
  j["compiler"] = r.compiler;
  j["chosen"] = json::parse(r.chosen.to_json());
  if (!r.choice.empty()) j["choice"] = r.choice;
  j["tune_ms"] = r.tune_ms;
  j["candidates"] = json::array();
  for (const auto& c : r.candidates)
    j["candidates"].push_back({{"plan", json::parse(c.plan.to_json())},
                               {"predicted_ms", c.predicted_ms},
                               {"measured_ms", c.measured_ms},
                               {"final_round", c.final_round},
                               {"neighbour", c.neighbour},
                               {"padding", c.padding},
                               {"status", c.status}});
  // A record saves the next run a search; failing to write one costs only that, so
  // it is a warning, never the end of the tuning that produced it.
  const fs::path path = record_path(r.key);
  try {
    std::error_code ec;
    if (fs::is_directory(path, ec)) fs::remove_all(path, ec);  // a folder in its place: not a record
    write_file_atomic(path, j.dump(2) + "\n");
  } catch (const UserError& e) {
    log_warn("tuning record not written ({}); the next run tunes again", e.what());
  }
}

}  // namespace strata::sc
