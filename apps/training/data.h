// From a `data:` config section to what training consumes: the dataset loaded
// (through the binary cache), the training graph after the configured transforms,
// the input features in the storage the first layer reads, labels and the split.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/training/config.h"
#include "apps/training/link_split.h"
#include "apps/training/node_classification.h"
#include "datasets/load.h"
#include "layers/graph_kernels.h"

namespace strata::train {

// A feature matrix in the storage a first layer reads, by data.feature_storage
// (auto: sparse at <= 10% non-zeros) and data.normalize_features (rows divided by
// their sum): the GNN inputs and each R-GCN node type's.
struct StoredFeatures {
  Tensor dense;                              // float32 [N, F], or undefined when sparse
  std::optional<nn::SparseFeatures> sparse;  // CSR, when stored sparse
  bool binary = false;                       // sparse with every value 1
  std::string note;                          // what was converted, for the run header
};
StoredFeatures store_features(const data::FeatureMatrix& f, const DataConfig& c);

struct TrainingData {
  std::string name;             // dataset name ("cora")
  std::string source;           // resolved source
  std::string eval_metric;      // the dataset's own metric, as its source names it (data::Dataset::eval_metric)
  data::LoadReport load;        // how the dataset was loaded (time, cache)
  Graph graph;                  // the training graph: rows = destinations, square, no values
  Tensor dense_features;        // float32 [N, F], or undefined when sparse
  std::optional<nn::SparseFeatures> sparse_features;
  std::string features_text;    // "sparse binary [2708, 1433], 49216 non-zeros (1.27%)"
  // int64 [N], -1 = unlabelled; multi-label: int64 [N, C] of 0/1, a row of -1 for
  // the unlabelled (node_classification.h).
  Tensor labels;
  int64_t num_classes = 0;
  std::vector<std::string> class_names;
  std::vector<std::string> node_names;  // ids as the files write them (LINQS paper ids), or empty
  data::Splits splits;          // run 1's split (data.split.per_run: split_for_run gives run k's)
  SplitKind split_kind = SplitKind::Auto;  // resolved: dataset, planetoid, random or file
  // The dataset's own split or one read from a file: the same for every run, no seed.
  bool split_is_fixed() const { return split_kind == SplitKind::Dataset || split_kind == SplitKind::File; }
  std::vector<std::string> notes;  // what the transforms did ("symmetrized: 5429 -> 10556 edges")
  double prepare_ms = 0;

  int64_t num_nodes() const { return graph.num_rows(); }
  int64_t in_features() const { return sparse_features ? sparse_features->cols() : dense_features.dim(1); }
  bool sparse_input() const { return sparse_features.has_value(); }
  bool multilabel() const { return is_multilabel(labels); }
};

// Loads data.dataset with the config's data root, cache and seed; a loader error
// becomes a UserError naming the config and the key.
data::Dataset load_configured_dataset(const DataConfig& config, const std::string& config_source,
                                      data::LoadReport* report);

// Loads and prepares the data. `model` decides data.self_loops: auto. Throws a
// UserError naming the config key for anything training cannot use.
TrainingData prepare_data(const DataConfig& config, nn::ModelKind model, const std::string& config_source);

// data.task: link: the dataset's undirected edges split by data.link and
// data.split.seed (link_split.h) into `split`; td.graph is the training edges in both
// directions (self-loops by data.self_loops, as prepare_data), the features as
// prepare_data reads them; no labels or node split. UserErrors name the config key.
TrainingData prepare_link_data(const DataConfig& config, nn::ModelKind model, const std::string& config_source,
                               LinkSplit& split);
// The split run `run` (from 1) trains on: td.splits unless data.split.per_run, which
// draws a planetoid or random split from seed data.split.seed + run - 1. Checked as
// prepare_data checks run 1's (UserError naming the config).
data::Splits split_for_run(const TrainingData& td, const DataConfig& config, const std::string& config_source,
                           int run);

// The graph without its diagonal entries.
Graph remove_self_loops(const Graph& g);
// The seeded Planetoid-style split over the labelled nodes: `per_class` training
// nodes of every class, then `val` and `test` nodes, in the order of one seeded
// permutation (PyG's RandomNodeSplit with num_train_per_class).
data::Splits planetoid_split(const Tensor& labels, int64_t num_classes, int64_t per_class, int64_t val, int64_t test,
                             uint64_t seed);

// A benchmark task on any dataset string's graph (e.g. an R-MAT generator): seeded
// normal features [N, features], uniform labels over `classes`, a 60/20/20 split.
TrainingData random_task(const std::string& spec, int64_t features, int64_t classes, uint64_t seed);

}  // namespace strata::train
