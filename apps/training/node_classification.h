// What single- and multi-label node classification differ in, for every training
// driver (GraphSAGE, GCN and GAT in trainer.h; R-GCN in rgcn.h):
//   - single-label, labels int64 [N] (-1 = unlabelled): log-softmax and NLL; a node
//     is predicted its argmax class, scored by accuracy (= micro-F1);
//   - multi-label, labels int64 [N, C] of 0/1 (a row of -1 = unlabelled): a sigmoid
//     per class and the binary cross-entropy; a node is predicted every class of
//     positive logit, scored by micro-F1 where single-label reports accuracy
//     (f1_scores.h).
// training.metric picks the score runs report and select by (Metric, below); runs
// keep it in their "accuracy" fields.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/tensor.h"
#include "datasets/splits.h"

namespace strata::train {

inline bool is_multilabel(const Tensor& labels) { return labels.ndim() == 2; }
// Whether `node` has a label (a class, or a row of 0/1).
bool is_labelled(const Tensor& labels, int64_t node);
// The labelled nodes among rows [begin, begin + count) of `labels`, as ids from 0 (the
// nodes a random split draws from).
std::vector<int64_t> labelled_nodes(const Tensor& labels, int64_t begin, int64_t count);
// The score of a run (training.metric):
//   Accuracy: the share of nodes predicted exactly (multi-label: the whole class set);
//   MicroF1:  micro-F1 over the classes (single-label: the accuracy);
//   RocAuc:   multi-label only, the mean per-class ROC-AUC of OGB's evaluator (roc_auc.h).
enum class Metric { Accuracy, MicroF1, RocAuc };
const char* metric_name(Metric m);  // "accuracy", "micro-F1", "ROC-AUC"
const char* metric_key(Metric m);   // training.metric's value: "accuracy", "micro_f1", "rocauc"
std::optional<Metric> metric_from_key(const std::string& key);
// training.metric `setting` for `labels`: auto is the dataset's own metric where its
// source names one we compute (`eval_metric` "rocauc"; data::Dataset::eval_metric), else
// accuracy, or micro-F1 for multi-label labels. A UserError naming `where` (the config
// and the key's origin) and `dataset` when the metric does not apply to the labels.
Metric resolve_metric(const std::string& setting, const Tensor& labels, const std::string& eval_metric,
                      const std::string& where, const std::string& dataset);
// resolve_metric for a config's training.metric, errors naming metric_origin.
class Config;
Metric configured_metric(const Config& config, const Tensor& labels, const std::string& eval_metric,
                         const std::string& dataset);
// Where a config's metric came from, for errors: the key's origin ("cfg.yaml:41:11",
// "--set training.metric=rocauc"), or the config with "(training.metric: auto[, the
// dataset's own metric])".
std::string metric_origin(const Config& config, const std::string& eval_metric);
// Why the header's "scored by" says what it does: " (training.metric)" where the config
// chose, " (the dataset's own: OGB's master.csv)" where auto took the dataset's, else "".
std::string metric_note(const Config& config, Metric m, const std::string& eval_metric);
// ROC-AUC is defined over a set of nodes only where some class has both a positive
// and a negative node in it: a UserError naming `where`, the dataset and the split
// when a non-empty split has none. Other metrics are defined on any split.
void check_metric_defined(Metric m, const Tensor& labels, const data::Splits& splits, const std::string& where,
                          const std::string& dataset);

// The training loss over the nodes in `index`: NLL of the log-softmax, or multi-label
// the mean binary cross-entropy of the logits.
ag::Var classification_loss(ag::Tape& tape, const ag::Var& logits, const Tensor& labels, const Tensor& index);

// A model's logits [N, C] scored against `labels` over node indices.
class NodeScores {
 public:
  NodeScores(const Tensor& logits, const Tensor& labels, int64_t classes, Metric metric);
  // The metric (0 over no node) and the mean loss over `index`.
  std::pair<double, double> accuracy_and_loss(const Tensor& index) const;
  double accuracy(const Tensor& index) const { return accuracy_and_loss(index).first; }
  double macro_f1(const Tensor& index) const;
  // What predict_batch (inference.h) reads: log-probabilities, or multi-label the logits.
  const Tensor& predictions() const { return predictions_; }

 private:
  Tensor logits_, labels_, predictions_;
  int64_t classes_;
  Metric metric_;
};

}  // namespace strata::train
