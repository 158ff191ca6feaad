// Dataset: what every loader and generator returns, and what training, `strata info`
// and the binary cache consume.
//
// Orientation follows core/graph.h: graph rows are destination nodes, columns are
// source nodes, so aggregation is Y = A·X. Loaders keep the direction the file gives
// and never symmetrize; `undirected` records that the data describes undirected
// edges (each stored once or both ways, see notes), and configs decide whether to
// call Graph::symmetrized().
//
// Heterographs (RDF, HGB) keep the typed view in `hetero`; `graph` is then the
// flattened view (HeteroGraph::to_homogeneous()). Labels, splits and the class list
// then refer to local ids of `target_node_type`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/hetero_graph.h"
#include "datasets/feature_matrix.h"
#include "datasets/splits.h"

namespace strata::data {

namespace fs = std::filesystem;

enum class Task : uint8_t {
  None,                          // structure only (benchmark graphs, missing labels)
  NodeClassification,            // one class per node: labels int64 [N]
  MultiLabelNodeClassification,  // 0/1 per class: labels int64 [N, C]
  NodeRegression,                // a real value per node: targets float32 [N]
  LinkPrediction,                // predict edges (ogbl-*)
};
std::string_view task_name(Task t);

// Class ids are used as they are (a classifier gets max + 1 outputs), so loaders
// refuse ids at or above this rather than build a model of millions of outputs.
inline constexpr int64_t kMaxClasses = int64_t{1} << 20;

struct Dataset {
  std::string name;    // "cora", "sbm", or the file stem
  std::string format;  // "linqs", "pubmed", "ogb", "rdf", "hgb", "mtx", "edgelist", "csv", "musae", "dglcsv", "rmat", "er", "sbm", "rsbm"
  std::string source;  // resolved path or canonical generator spec
  Task task = Task::None;

  Graph graph;  // homogeneous adjacency (flattened view for heterographs)
  bool undirected = false;

  std::optional<HeteroGraph> hetero;
  int target_node_type = -1;  // heterographs: the type labels and splits refer to

  FeatureMatrix features;                  // homogeneous node features (undefined if none)
  std::vector<FeatureMatrix> type_features;  // heterographs: one per node type, undefined if featureless
  Tensor edge_features;                      // float32 [E, D] by input edge id (Graph::edge_ids), or undefined

  // int64 [N]: class id, -1 = unlabelled. Multi-label: int64 [N, C] of 0/1, a row of
  // -1 = unlabelled. N counts the target type's nodes for heterographs.
  Tensor labels;
  int64_t num_classes = 0;
  std::vector<std::string> class_names;  // num_classes names (values as written in the files)
  Tensor targets;                        // float32 [N] for NodeRegression (NaN = unknown)
  Splits splits;

  std::vector<std::string> node_names;  // ids as written in the file when they are strings (LINQS, RDF)
  Tensor original_ids;                  // int64 [N]: the file's id of each node when ids were remapped
  std::vector<std::string> notes;       // what was missing, skipped or assumed
  // The metric the dataset's distributor ranks models by, in its own words ("rocauc",
  // "acc": OGB's master.csv); empty where the source names none.
  std::string eval_metric;

  int64_t num_nodes() const { return graph.num_rows(); }
  int64_t num_edges() const { return graph.nnz(); }
  bool is_hetero() const { return hetero.has_value(); }
  bool multilabel() const { return labels.defined() && labels.ndim() == 2; }
  // Nodes the labels refer to: the target type's count, or num_nodes().
  int64_t num_label_nodes() const;
  int64_t num_labelled() const;
  // Labelled nodes per class (for multi-label: nodes carrying each class).
  std::vector<int64_t> class_counts() const;
  // Features of the nodes labels refer to (the target type's for heterographs).
  const FeatureMatrix& label_node_features() const;

  // Checks every invariant between the parts (sizes, id ranges, dtypes); throws
  // InternalError naming the broken one. Loaders and the cache call it before
  // handing a dataset out.
  void validate() const;
};

}  // namespace strata::data
