#include "apps/training/node_classification.h"

#include "apps/training/f1_scores.h"
#include "apps/training/run_report.h"
#include "core/autograd_ops.h"

namespace strata::train {

bool is_labelled(const Tensor& labels, int64_t node) {
  return labels.data<int64_t>()[is_multilabel(labels) ? node * labels.dim(1) : node] >= 0;
}

std::vector<int64_t> labelled_nodes(const Tensor& labels, int64_t begin, int64_t count) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < count; ++i)
    if (is_labelled(labels, begin + i)) ids.push_back(i);
  return ids;
}

const char* accuracy_name(const Tensor& labels) { return is_multilabel(labels) ? "micro-F1" : "accuracy"; }

ag::Var classification_loss(ag::Tape& tape, const ag::Var& logits, const Tensor& labels, const Tensor& index) {
  if (is_multilabel(labels)) return ag::bce_with_logits(tape, logits, labels, index);
  return ag::nll_loss(tape, ag::log_softmax(tape, logits), labels, index);
}

NodeScores::NodeScores(const Tensor& logits, const Tensor& labels, int64_t classes)
    : logits_(logits), labels_(labels), classes_(classes) {
  if (is_multilabel(labels)) {
    predictions_ = logits;
  } else {
    ag::Tape tape;
    tape.set_grad_enabled(false);
    tape.set_profiling(false);
    predictions_ = ag::log_softmax(tape, ag::Var::constant(logits)).value();
  }
}

std::pair<double, double> NodeScores::accuracy_and_loss(const Tensor& index) const {
  if (!is_multilabel(labels_)) return train::accuracy_and_loss(predictions_, labels_, index);
  if (index.numel() == 0) return {0.0, 0.0};
  ag::Tape tape;
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  const double loss = ag::bce_with_logits(tape, ag::Var::constant(logits_), labels_, index).value().data<float>()[0];
  return {multi_label_f1(logits_, labels_, index).micro, loss};
}

double NodeScores::macro_f1(const Tensor& index) const {
  return is_multilabel(labels_) ? multi_label_f1(logits_, labels_, index).macro
                                : single_label_f1(predictions_, labels_, index, classes_).macro;
}

}  // namespace strata::train
