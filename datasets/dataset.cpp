#include "datasets/dataset.h"

namespace strata::data {

std::string_view task_name(Task t) {
  switch (t) {
    case Task::None: return "none";
    case Task::NodeClassification: return "node classification";
    case Task::MultiLabelNodeClassification: return "multi-label node classification";
    case Task::NodeRegression: return "node regression";
    case Task::LinkPrediction: return "link prediction";
  }
  return "none";
}

int64_t Dataset::num_label_nodes() const {
  if (hetero && target_node_type >= 0) return hetero->node_types()[target_node_type].count;
  return num_nodes();
}

int64_t Dataset::num_labelled() const {
  if (!labels.defined()) return 0;
  const int64_t* y = labels.data<int64_t>();
  const int64_t n = labels.dim(0), c = labels.ndim() == 2 ? labels.dim(1) : 1;
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) k += y[i * c] >= 0;
  return k;
}

std::vector<int64_t> Dataset::class_counts() const {
  std::vector<int64_t> counts(static_cast<size_t>(num_classes), 0);
  if (!labels.defined()) return counts;
  const int64_t* y = labels.data<int64_t>();
  if (multilabel()) {
    const int64_t n = labels.dim(0), c = labels.dim(1);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < c; ++k) counts[k] += y[i * c + k] == 1;
  } else {
    for (int64_t i = 0; i < labels.numel(); ++i)
      if (y[i] >= 0) ++counts[y[i]];
  }
  return counts;
}

const FeatureMatrix& Dataset::label_node_features() const {
  if (hetero && target_node_type >= 0) return type_features.at(target_node_type);
  return features;
}

namespace {
void check_ids(const Tensor& ids, int64_t n, const char* what) {
  if (!ids.defined()) return;
  STRATA_ASSERT(ids.dtype() == DType::I64 && ids.ndim() == 1, "{} split must be int64 [k], got {}", what,
                ids.describe());
  const int64_t* p = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    STRATA_ASSERT(p[i] >= 0 && p[i] < n, "{} split holds node {} outside [0, {})", what, p[i], n);
}
}  // namespace

void Dataset::validate() const {
  STRATA_ASSERT(!graph.empty(), "dataset '{}' has no graph", name);
  const int64_t n = num_nodes();
  STRATA_ASSERT(graph.num_cols() == n || format == "mtx", "dataset '{}': graph is {} x {}, expected square", name,
                graph.num_rows(), graph.num_cols());
  if (hetero) {
    STRATA_ASSERT(hetero->num_nodes() == n, "dataset '{}': heterograph has {} nodes, flattened graph {}", name,
                  hetero->num_nodes(), n);
    STRATA_ASSERT(static_cast<int>(type_features.size()) == hetero->num_node_types(),
                  "dataset '{}': {} per-type feature slots for {} node types", name, type_features.size(),
                  hetero->num_node_types());
    for (int t = 0; t < hetero->num_node_types(); ++t)
      STRATA_ASSERT(!type_features[t].defined() || type_features[t].rows() == hetero->node_types()[t].count,
                    "dataset '{}': features of type '{}' have {} rows for {} nodes", name,
                    hetero->node_types()[t].name, type_features[t].rows(), hetero->node_types()[t].count);
    STRATA_ASSERT(target_node_type >= -1 && target_node_type < hetero->num_node_types(),
                  "dataset '{}': target node type {} out of range", name, target_node_type);
  } else {
    STRATA_ASSERT(type_features.empty() && target_node_type == -1,
                  "dataset '{}': per-type data on a homogeneous dataset", name);
  }
  STRATA_ASSERT(!features.defined() || features.rows() == n, "dataset '{}': {} feature rows for {} nodes", name,
                features.rows(), n);
  const int64_t ln = num_label_nodes();
  if (labels.defined()) {
    STRATA_ASSERT(labels.dtype() == DType::I64 && (labels.ndim() == 1 || labels.ndim() == 2) && labels.dim(0) == ln,
                  "dataset '{}': labels are {}, expected int64 [{}] or [{}, C]", name, labels.describe(), ln, ln);
    if (labels.ndim() == 2)
      STRATA_ASSERT(labels.dim(1) == num_classes, "dataset '{}': multi-label width {} but {} classes", name,
                    labels.dim(1), num_classes);
    const int64_t* y = labels.data<int64_t>();
    for (int64_t i = 0; i < labels.numel(); ++i)
      STRATA_ASSERT(y[i] >= -1 && y[i] < (labels.ndim() == 2 ? 2 : num_classes),
                    "dataset '{}': label {} at {} out of range ({} classes)", name, y[i], i, num_classes);
  }
  STRATA_ASSERT(class_names.empty() || static_cast<int64_t>(class_names.size()) == num_classes,
                "dataset '{}': {} class names for {} classes", name, class_names.size(), num_classes);
  if (targets.defined())
    STRATA_ASSERT(targets.dtype() == DType::F32 && targets.ndim() == 1 && targets.dim(0) == ln,
                  "dataset '{}': targets are {}, expected float32 [{}]", name, targets.describe(), ln);
  if (edge_features.defined())
    STRATA_ASSERT(edge_features.dtype() == DType::F32 && edge_features.ndim() == 2,
                  "dataset '{}': edge features are {}, expected float32 [E, D]", name, edge_features.describe());
  check_ids(splits.train, ln, "train");
  check_ids(splits.val, ln, "val");
  check_ids(splits.test, ln, "test");
  STRATA_ASSERT(node_names.empty() || static_cast<int64_t>(node_names.size()) == ln,
                "dataset '{}': {} node names for {} nodes", name, node_names.size(), ln);
  if (original_ids.defined())
    STRATA_ASSERT(original_ids.dtype() == DType::I64 && original_ids.numel() == n,
                  "dataset '{}': original ids are {}, expected int64 [{}]", name, original_ids.describe(), n);
}

}  // namespace strata::data
