// What single- and multi-label node classification differ in, for every training
// driver (GraphSAGE, GCN and GAT in trainer.h; R-GCN in rgcn.h):
//   - single-label, labels int64 [N] (-1 = unlabelled): log-softmax and NLL; a node
//     is predicted its argmax class, scored by accuracy (= micro-F1);
//   - multi-label, labels int64 [N, C] of 0/1 (a row of -1 = unlabelled): a sigmoid
//     per class and the binary cross-entropy; a node is predicted every class of
//     positive logit, scored by micro-F1 where single-label reports accuracy
//     (f1_scores.h). Runs keep that score in their "accuracy" fields.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/tensor.h"

namespace strata::train {

inline bool is_multilabel(const Tensor& labels) { return labels.ndim() == 2; }
// Whether `node` has a label (a class, or a row of 0/1).
bool is_labelled(const Tensor& labels, int64_t node);
// The labelled nodes among rows [begin, begin + count) of `labels`, as ids from 0 (the
// nodes a random split draws from).
std::vector<int64_t> labelled_nodes(const Tensor& labels, int64_t begin, int64_t count);
// "micro-F1" for multi-label labels, else "accuracy": what the accuracy fields hold.
const char* accuracy_name(const Tensor& labels);

// The training loss over the nodes in `index`: NLL of the log-softmax, or multi-label
// the mean binary cross-entropy of the logits.
ag::Var classification_loss(ag::Tape& tape, const ag::Var& logits, const Tensor& labels, const Tensor& index);

// A model's logits [N, C] scored against `labels` over node indices.
class NodeScores {
 public:
  NodeScores(const Tensor& logits, const Tensor& labels, int64_t classes);
  // Accuracy (multi-label: micro-F1) and the mean loss over `index`.
  std::pair<double, double> accuracy_and_loss(const Tensor& index) const;
  double accuracy(const Tensor& index) const { return accuracy_and_loss(index).first; }
  double macro_f1(const Tensor& index) const;
  // What predict_batch (inference.h) reads: log-probabilities, or multi-label the logits.
  const Tensor& predictions() const { return predictions_; }

 private:
  Tensor logits_, labels_, predictions_;
  int64_t classes_;
};

}  // namespace strata::train
