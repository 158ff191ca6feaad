#include "apps/training/f1_scores.h"

#include "apps/training/inference.h"
#include "core/error.h"

namespace strata::train {
namespace {

// Per-class true positives, false positives and false negatives.
struct Counts {
  explicit Counts(int64_t classes) : tp(classes, 0), fp(classes, 0), fn(classes, 0) {}
  std::vector<int64_t> tp, fp, fn;
  int64_t nodes = 0, exact = 0;

  // `all_classes` false: the macro average skips classes with no TP, FP or FN (neither
  // present nor predicted).
  F1Scores scores(bool all_classes) const {
    F1Scores s;
    int64_t t = 0, f = 0, averaged = 0;
    double sum = 0;
    for (size_t c = 0; c < tp.size(); ++c) {
      const int64_t d = 2 * tp[c] + fp[c] + fn[c];
      sum += d > 0 ? 2.0 * static_cast<double>(tp[c]) / static_cast<double>(d) : 0.0;
      averaged += all_classes || d > 0;
      t += 2 * tp[c];
      f += fp[c] + fn[c];
    }
    s.micro = t + f > 0 ? static_cast<double>(t) / static_cast<double>(t + f) : 0.0;
    s.macro = averaged > 0 ? sum / static_cast<double>(averaged) : 0.0;
    s.exact = nodes > 0 ? static_cast<double>(exact) / static_cast<double>(nodes) : 0.0;
    return s;
  }
};

}  // namespace

F1Scores single_label_f1(const Tensor& scores, const Tensor& labels, const Tensor& index, int64_t classes) {
  STRATA_ASSERT(labels.ndim() == 1 && scores.ndim() == 2 && scores.dim(1) == classes,
                "single_label_f1: labels {} for scores {} and {} classes", labels.describe(), scores.describe(),
                classes);
  Counts n(classes);
  for (int64_t k = 0; k < index.numel(); ++k) {
    const int64_t i = index.data<int64_t>()[k];
    const int64_t y = labels.data<int64_t>()[i], p = argmax_row(scores, i);
    STRATA_ASSERT(y >= 0 && y < classes, "single_label_f1: node {} has label {} (expected [0, {}))", i, y, classes);
    ++n.nodes;
    if (p == y) {
      ++n.tp[y];
      ++n.exact;
    } else {
      ++n.fp[p];
      ++n.fn[y];
    }
  }
  return n.scores(/*all_classes=*/false);
}

F1Scores multi_label_f1(const Tensor& logits, const Tensor& labels, const Tensor& index) {
  const int64_t classes = logits.dim(1);
  STRATA_ASSERT(labels.ndim() == 2 && labels.dim(0) == logits.dim(0) && labels.dim(1) == classes,
                "multi_label_f1: labels {} for logits {}", labels.describe(), logits.describe());
  Counts n(classes);
  for (int64_t k = 0; k < index.numel(); ++k) {
    const int64_t i = index.data<int64_t>()[k];
    const float* z = logits.data<float>() + i * classes;
    const int64_t* y = labels.data<int64_t>() + i * classes;
    bool right = true;
    for (int64_t c = 0; c < classes; ++c) {
      STRATA_ASSERT(y[c] == 0 || y[c] == 1, "multi_label_f1: node {} class {} has label {} (expected 0 or 1)", i, c,
                    y[c]);
      const bool predicted = z[c] > 0, present = y[c] == 1;
      n.tp[c] += predicted && present;
      n.fp[c] += predicted && !present;
      n.fn[c] += !predicted && present;
      right = right && predicted == present;
    }
    ++n.nodes;
    n.exact += right;
  }
  return n.scores(/*all_classes=*/true);
}

std::vector<int64_t> positive_classes(const Tensor& logits, int64_t row) {
  std::vector<int64_t> out;
  const int64_t classes = logits.dim(1);
  const float* z = logits.data<float>() + row * classes;
  for (int64_t c = 0; c < classes; ++c)
    if (z[c] > 0) out.push_back(c);
  return out;
}

}  // namespace strata::train
