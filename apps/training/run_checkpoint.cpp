#include "apps/training/run_checkpoint.h"

#include <fmt/format.h>

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
