#include "apps/training/run_checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/parallel.h"

namespace strata::train {

nlohmann::ordered_json checkpoint_meta(const Config& config, sc::Backend backend, const RunCheckpointInfo& info) {
  nlohmann::ordered_json meta = {{"format", "strata-checkpoint"},
                                 {"model", info.model},
                                 {"model_describe", info.model_describe},
                                 {"config_hash", config.hash().hex()},
                                 {"config", config.to_yaml()},
                                 {"dataset", info.dataset},
                                 {"run", info.run},
                                 {"seed", info.seed},
                                 {"policy", info.best ? "best" : "last"},
                                 {"epoch", info.epoch}};
  for (const auto& [key, value] : info.metrics.items()) meta[key] = value;
  meta["backend"] = sc::backend_name(backend);
  meta["threads"] = num_threads();
  return meta;
}

namespace {

enum class Field { String, Count, Run, Number, Boolean, Object, Array, Strings };

// Every header field the drivers write (checkpoint_meta, the drivers' own, resume points')
// and the type its readers expect. Count: an integer >= 0; Run: an integer 1..2^31-1.
struct MetaField {
  const char* path;  // "dataset.nodes": the field "nodes" of the object "dataset"
  Field type;
};
constexpr MetaField kMetaFields[] = {
    {"format", Field::String},
    {"version", Field::Count},
    {"model", Field::String},
    {"model_describe", Field::String},
    {"config_hash", Field::String},
    {"config", Field::String},
    {"dataset", Field::Object},
    {"dataset.name", Field::String},
    {"dataset.nodes", Field::Count},
    {"dataset.in_features", Field::Count},
    {"dataset.classes", Field::Count},
    {"dataset.multilabel", Field::Boolean},
    {"dataset.embedding", Field::Count},
    {"graph", Field::Object},
    {"graph.name", Field::String},
    {"graph.nodes", Field::Count},
    {"graph.classes", Field::Count},
    {"graph.multilabel", Field::Boolean},
    {"graph.target_type", Field::String},
    {"graph.node_types", Field::Array},
    {"graph.relations", Field::Strings},
    {"run", Field::Run},
    {"seed", Field::Count},
    {"policy", Field::String},
    {"epoch", Field::Count},
    {"train_acc", Field::Number},
    {"val_acc", Field::Number},
    {"test_acc", Field::Number},
    {"test_macro_f1", Field::Number},
    {"val_loss", Field::Number},
    {"val_rocauc", Field::Number},
    {"test_rocauc", Field::Number},
    {"test_logits_hash", Field::String},
    {"test_scores_hash", Field::String},
    {"backend", Field::String},
    {"threads", Field::Count},
    {"metric", Field::String},
    {"task", Field::String},
    {"split_seed", Field::Count},
    {"split_origin", Field::String},
    {"progress", Field::Object},
    {"console", Field::Strings},
    {"metrics_bytes", Field::Count},
    {"metrics_digest", Field::String},
};

const char* field_type_text(Field t) {
  switch (t) {
    case Field::String:
      return "a string";
    case Field::Count:
      return "an integer >= 0";
    case Field::Run:
      return "a run number (1 or more)";
    case Field::Number:
      return "a number";
    case Field::Boolean:
      return "true or false";
    case Field::Object:
      return "an object";
    case Field::Array:
      return "an array";
    case Field::Strings:
      return "an array of strings";
  }
  return "?";
}

bool has_type(const nlohmann::ordered_json& v, Field t) {
  const auto integer_in = [&](int64_t lo, int64_t hi) {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      return u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(u) >= lo;
    }
    return v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
  };
  switch (t) {
    case Field::String:
      return v.is_string();
    case Field::Count:
      return v.is_number_unsigned() || integer_in(0, INT64_MAX);
    case Field::Run:
      return integer_in(1, INT32_MAX);
    case Field::Number:
      return v.is_number();
    case Field::Boolean:
      return v.is_boolean();
    case Field::Object:
      return v.is_object();
    case Field::Array:
      return v.is_array();
    case Field::Strings:
      return v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_string(); });
  }
  return false;
}

}  // namespace

nn::Checkpoint read_training_checkpoint(const std::filesystem::path& path) {
  nn::Checkpoint ck = nn::read_checkpoint(path);
  const std::string file = path.string();
  STRATA_CHECK(ck.meta.is_object(), "checkpoint '{}': its header's meta is {}, expected an object", file,
               ck.meta.type_name());
  for (const MetaField& f : kMetaFields) {
    const std::string path_text = f.path;
    const size_t dot = path_text.find('.');
    nlohmann::ordered_json* v = &ck.meta;
    if (dot != std::string::npos) {
      const auto parent = ck.meta.find(path_text.substr(0, dot));
      if (parent == ck.meta.end() || !parent->is_object()) continue;  // the parent's own entry says so
      v = &*parent;
    }
    const auto it = v->find(path_text.substr(dot == std::string::npos ? 0 : dot + 1));
    if (it == v->end()) continue;
    // JSON has no NaN: a metric that was NaN was written as null.
    if (f.type == Field::Number && it->is_null()) *it = std::numeric_limits<double>::quiet_NaN();
    STRATA_CHECK(has_type(*it, f.type), "checkpoint '{}': header field '{}' is {}, expected {}", file, f.path,
                 it->dump(), field_type_text(f.type));
  }
  return ck;
}

void check_config_matches_checkpoint(const Config& config, const nlohmann::json& meta, const std::string& file) {
  if (!meta.contains("config") || !meta["config"].is_string()) return;
  std::optional<Config> trained;
  try {
    trained = Config::parse(meta["config"].get<std::string>(), fmt::format("checkpoint '{}'", file));
  } catch (const UserError&) {
    return;  // written by a build with other keys: the architecture checks still apply
  }
  // A model of another kind: the caller's own check says so.
  if (config.text("model.name") != trained->text("model.name")) return;
  static const std::set<std::string> kNotCompared = {
      "data.dataset",    "data.random_features", "data.random_classes",   // which graph: the size checks
      "data.data_root",  "data.cache",           "data.feature_storage",  // where and how it is read
      "data.split.seed", "data.split.per_run"};                           // the split check
  for (const KeySpec& k : config_schema()) {
    const bool relevant = k.path.starts_with("data.") || k.path.starts_with("model.");
    if (!relevant || kNotCompared.count(k.path) || config.text(k.path) == trained->text(k.path)) continue;
    STRATA_FAIL(
        "checkpoint '{}' was trained with {}={}, but the config gives {} ({}); evaluate with the config the run dir "
        "holds (config.yaml) and the same --set overrides",
        file, k.path, trained->text(k.path), config.text(k.path), config.origin(k.path));
  }
}

Metric recorded_metric(const nlohmann::json& meta, bool multilabel) {
  if (const auto m = metric_from_key(meta.value("metric", std::string()))) return *m;
  return multilabel ? Metric::MicroF1 : Metric::Accuracy;
}

std::string recorded_score_text(Metric recorded, Metric now, double score) {
  if (recorded == now) return fmt::format("recorded {:.4f}", score);
  return fmt::format("the run recorded {} {:.4f}", metric_name(recorded), score);
}

std::string write_run_checkpoint(RunDirectory& dir, int run, const nn::Checkpoint& ck) {
  const std::string name = fmt::format("checkpoints/run-{:02d}.ckpt", run);
  nn::write_checkpoint(dir.staging_path() / name, ck);
  return name;
}

}  // namespace strata::train
