// R-GCN entity classification on heterogeneous graphs (RDF: AIFB, MUTAG; HGB: ACM,
// DBLP): what `strata train`, `strata eval` and `strata infer` run when model.name
// is rgcn. The loop, the console lines and the run dir follow trainer.h; what differs:
//   - data: the dataset must be a heterograph; all node types are flattened into one
//     id space (sc::RelationalGraph::from_hetero, normalisation 1/|N_r(i)|), labels
//     and splits move to that space (target type offset); a split without validation
//     nodes gets data.split.holdout of its training nodes (seeded by data.split.seed);
//   - kernels: the model's RGMS kernels (layers/relational_ops.h; tuned orders with
//     runtime.tuning) and, per node type with sparse features, the feature-product
//     kernels of its input projection;
//   - metrics: accuracy (= micro-F1 for single-label classes) and macro-F1;
//   - multi-label datasets (HGB IMDB): a sigmoid per class, trained on the binary
//     cross-entropy; the "accuracy" fields then hold micro-F1 (node_classification.h).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/training/inference.h"
#include "apps/training/node_classification.h"
#include "apps/training/trainer.h"
#include "layers/relational_ops.h"
#include "models/rgcn.h"

namespace strata::train {

struct RgcnData {
  std::string name, source;
  std::string eval_metric;  // the dataset's own metric, as its source names it (data::Dataset::eval_metric)
  data::LoadReport load;
  std::vector<std::string> type_names;
  std::vector<int64_t> type_offsets;  // type t owns [offsets[t], offsets[t+1])
  int target_type = 0;
  std::vector<std::string> relation_names;
  std::optional<sc::RelationalGraph> graph;
  // A receptive field's (strata infer --batch) one-hot first layer: the field's rows
  // with the whole graph's column ids, by which it reads its weight rows.
  std::optional<sc::RelationalGraph> first_layer_graph;
  std::deque<nn::SparseFeatures> sparse;  // owned sparse features (types point into it)
  std::vector<nn::RgcnTypeInput> types;
  // int64 [N] (global ids), -1 = unlabelled or not the target type; multi-label:
  // int64 [N, C] of 0/1, a row of -1 for the unlabelled.
  Tensor labels;
  int64_t num_classes = 0;
  std::vector<std::string> class_names;
  std::vector<std::string> target_names;  // names of the target type's nodes when the dataset has them
  data::Splits splits;                    // global ids
  std::vector<std::string> notes;
  int64_t num_nodes() const { return type_offsets.back(); }
  int64_t target_offset() const { return type_offsets[static_cast<size_t>(target_type)]; }
  int64_t target_count() const { return type_offsets[static_cast<size_t>(target_type) + 1] - target_offset(); }
  bool multilabel() const { return is_multilabel(labels); }
};

RgcnData prepare_rgcn_data(const DataConfig& c, const nn::ModelConfig& m, const std::string& config_source);

// Data, the model's kernels, and the per-type feature kernels.
struct RgcnContext {
  TrainingConfig config;
  RgcnData data;
  Metric metric = Metric::Accuracy;  // training.metric, resolved for the data (node_classification.h)
  std::unique_ptr<nn::RelationalKernels> kernels;
  std::unique_ptr<nn::RelationalKernels> first_layer_kernels;  // with data.first_layer_graph: layer 0's
  std::vector<std::unique_ptr<nn::GraphKernels>> feature_kernels;
  double build_ms = 0;
  // `backward` false (eval, infer): the relational kernels the forward pass runs only.
  void build_kernels(const nn::RgcnModel& model, bool backward = true);
  std::unique_ptr<nn::RgcnModel> make_model(uint64_t seed) const;
};

// Multi-label: the accuracies are micro-F1 and val_loss the binary cross-entropy.
Evaluation evaluate_rgcn(const RgcnContext& ctx, const nn::RgcnModel& model);

// `strata train` for model.name: rgcn; keeps `position` where it is (trainer.h).
Summary run_rgcn_training(const Config& config, const std::string& config_name, const Printer& print, bool resume,
                          LoopPosition& position);
EvalReport run_rgcn_evaluation(const Config& config, const fs::path& checkpoint, const Printer& print);

// `strata infer`: the checkpoint's model on the config's graph (the batch: target-type
// node ids).
InferReport run_rgcn_inference(const Config& config, const InferOptions& options, const Printer& print);

}  // namespace strata::train
