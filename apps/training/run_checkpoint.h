// The checkpoint a training run leaves in its run dir (output.checkpoint: best or
// last). Both drivers (GNN and R-GCN) write the same header fields, which `strata
// eval` and `strata infer` check before they load a model: the format, the model,
// the config it was trained with (and its hash), the dataset, the run and epoch,
// the metrics at that epoch, and the backend and threads it ran on.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/training/config.h"
#include "apps/training/node_classification.h"
#include "apps/training/run_dir.h"
#include "models/checkpoint.h"

namespace strata::train {

struct RunCheckpointInfo {
  std::string model;           // "graphsage", "gcn", "gat", "rgcn"
  std::string model_describe;  // the model's describe()
  nlohmann::ordered_json dataset;  // name, nodes, classes, ...
  int run = 1;
  uint64_t seed = 0;
  bool best = true;  // the best-validation epoch's model, else the last epoch's
  int64_t epoch = 0;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();  // train_acc, val_acc, ... at `epoch`
};

// The header of a run's checkpoint; callers may add fields of their own after it.
nlohmann::ordered_json checkpoint_meta(const Config& config, sc::Backend backend, const RunCheckpointInfo& info);

// Reads a checkpoint `strata train` wrote (a run's checkpoint or a resume point):
// nn::read_checkpoint checks the file, then each header field Strata reads is checked
// for its JSON type (a field of another type is refused naming the file and the field,
// so the callers' lookups cannot fail); absent fields are left to the callers' checks.
nn::Checkpoint read_training_checkpoint(const std::filesystem::path& path);

// `strata eval` / `strata infer`: refuses a config whose data or model keys differ
// from those the checkpoint was trained with (the recorded accuracy could not be
// reproduced, and predictions would come from another model), naming the first
// such key, both values and where the config's value came from. Not compared: which
// graph is read (data.dataset and the synthetic sizes: inference on another graph is
// legal, and the callers check its sizes and relations), where and how it is read
// (data.data_root, data.cache, data.feature_storage), the split's seed (checked
// against the run's own split), and anything when the model kinds differ (the
// callers' message) or the checkpoint records no config.
void check_config_matches_checkpoint(const Config& config, const nlohmann::json& meta, const std::string& file);

// The metric a checkpoint's *_acc fields hold: its "metric" field (metric_key), or
// for checkpoints written before training.metric, the label kind's default
// (accuracy; multi-label, micro-F1).
Metric recorded_metric(const nlohmann::json& meta, bool multilabel);
// What eval prints beside a recomputed test score: "recorded 0.8123", or "the run
// recorded micro-F1 0.8123" when it was scored by another metric than `now`.
std::string recorded_score_text(Metric recorded, Metric now, double score);

// Writes checkpoints/run-NN.ckpt into the run's staging folder and returns that
// relative path (what summary.json names).
std::string write_run_checkpoint(RunDirectory& dir, int run, const nn::Checkpoint& ck);

}  // namespace strata::train
