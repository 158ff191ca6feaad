// ROC-AUC of a multi-label node classifier, as OGB's Evaluator reports it for
// ogbn-proteins ("rocauc"): per class, the area under the ROC curve of the logits
// (any increasing function of them, such as the sigmoid, ranks alike) against the
// 0/1 labels over the nodes of an index, then the mean over the classes that have at
// least one positive and one negative node there. Each class's area is the
// Mann-Whitney statistic with tied scores given their mean rank, which is what
// scikit-learn's roc_auc_score (OGB's backend) computes with its trapezoids.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace strata::train {

struct RocAuc {
  double mean = 0;      // over the `classes` counted; 0 when there are none
  int64_t classes = 0;  // classes with both a positive and a negative node in the index
  bool defined() const { return classes > 0; }
};

// `logits` float32 [N, C], `labels` int64 [N, C] of 0/1, `index` int64 node ids (every
// one labelled). Classes are scored on all threads.
RocAuc mean_roc_auc(const Tensor& logits, const Tensor& labels, const Tensor& index);

// The classes mean_roc_auc would average over `index` (no scores needed).
int64_t roc_auc_classes(const Tensor& labels, const Tensor& index);

}  // namespace strata::train
