// F1 scores of a node classifier over a node index, as HGB reports them (micro- and
// macro-F1 over the classes):
//   - single-label: each row's argmax against int64 [N] labels (micro-F1 is then
//     the accuracy);
//   - multi-label: a node carries every class whose logit is positive (sigmoid >
//     0.5, HGB's threshold), against int64 [N, C] labels of 0/1.
// Macro-F1 averages the per-class F1 = 2·TP / (2·TP + FP + FN) as scikit-learn's
// f1_score(average="macro") does by default (which HGB's scorer calls): single-label
// over the classes present in the labels or the predictions; multi-label over all
// C classes, one neither present nor predicted counting 0.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace strata::train {

struct F1Scores {
  double micro = 0, macro = 0;
  double exact = 0;  // share of nodes whose predicted class set is exactly right (the accuracy)
};

F1Scores single_label_f1(const Tensor& scores, const Tensor& labels, const Tensor& index, int64_t classes);
F1Scores multi_label_f1(const Tensor& logits, const Tensor& labels, const Tensor& index);

// The classes a multi-label node is predicted to carry: the columns of `row` whose
// logit is positive, in increasing order.
std::vector<int64_t> positive_classes(const Tensor& logits, int64_t row);

}  // namespace strata::train
