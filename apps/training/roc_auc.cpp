#include "apps/training/roc_auc.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"

namespace strata::train {
namespace {

void check_shapes(const Tensor& labels, const Tensor* logits, const Tensor& index) {
  STRATA_ASSERT(labels.ndim() == 2 && labels.dtype() == DType::I64 && index.dtype() == DType::I64,
                "roc_auc: labels {} and index {} (expected int64 [N, C] and int64 ids)", labels.describe(),
                index.describe());
  if (logits)
    STRATA_ASSERT(logits->ndim() == 2 && logits->dim(0) == labels.dim(0) && logits->dim(1) == labels.dim(1),
                  "roc_auc: logits {} for labels {}", logits->describe(), labels.describe());
  for (int64_t k = 0; k < index.numel(); ++k) {
    const int64_t i = index.data<int64_t>()[k];
    STRATA_ASSERT(i >= 0 && i < labels.dim(0), "roc_auc: node {} outside [0, {})", i, labels.dim(0));
  }
}

// Positives and negatives of every class over the index, in one pass over its rows.
std::vector<std::pair<int64_t, int64_t>> class_counts(const Tensor& labels, const Tensor& index) {
  const int64_t classes = labels.dim(1);
  std::vector<std::pair<int64_t, int64_t>> counts(static_cast<size_t>(classes), {0, 0});
  for (int64_t k = 0; k < index.numel(); ++k) {
    const int64_t i = index.data<int64_t>()[k];
    const int64_t* y = labels.data<int64_t>() + i * classes;
    for (int64_t c = 0; c < classes; ++c) {
      STRATA_ASSERT(y[c] == 0 || y[c] == 1, "roc_auc: node {} class {} has label {} (expected 0 or 1)", i, c, y[c]);
      counts[static_cast<size_t>(c)].first += y[c] == 1;
      counts[static_cast<size_t>(c)].second += y[c] == 0;
    }
  }
  return counts;
}

// Orders scores with NaN below every number, so the sort has a strict weak order
// whatever a broken model outputs (a NaN logit then ranks lowest).
bool score_less(float a, float b) {
  if (std::isnan(a)) return !std::isnan(b);
  return !std::isnan(b) && a < b;
}

// The area for class c: (sum of the positives' mean ranks - P(P+1)/2) / (P N).
double class_auc(const Tensor& logits, const Tensor& labels, const Tensor& index, int64_t c, int64_t pos, int64_t neg) {
  const int64_t classes = labels.dim(1), n = index.numel();
  std::vector<std::pair<float, bool>> s(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = index.data<int64_t>()[k];
    s[static_cast<size_t>(k)] = {logits.data<float>()[i * classes + c], labels.data<int64_t>()[i * classes + c] == 1};
  }
  std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return score_less(a.first, b.first); });
  double rank_sum = 0;  // of the positives, ranks from 1
  for (size_t b = 0; b < s.size();) {
    size_t e = b + 1;
    while (e < s.size() && !score_less(s[b].first, s[e].first)) ++e;  // [b, e) tie
    int64_t tied_pos = 0;
    for (size_t k = b; k < e; ++k) tied_pos += s[k].second;
    rank_sum += static_cast<double>(tied_pos) * (static_cast<double>(b + 1 + e) / 2.0);  // mean of ranks b+1 .. e
    b = e;
  }
  const double p = static_cast<double>(pos), q = static_cast<double>(neg);
  return (rank_sum - p * (p + 1) / 2) / (p * q);
}

}  // namespace

RocAuc mean_roc_auc(const Tensor& logits, const Tensor& labels, const Tensor& index) {
  check_shapes(labels, &logits, index);
  const int64_t classes = labels.dim(1);
  const auto counts = class_counts(labels, index);              // checks the labels before the parallel part
  std::vector<double> auc(static_cast<size_t>(classes), -1.0);  // -1: not counted
#pragma omp parallel for schedule(dynamic, 1) if (index.numel() * classes > (1 << 16))
  for (int64_t c = 0; c < classes; ++c) {
    const auto [pos, neg] = counts[static_cast<size_t>(c)];
    if (pos > 0 && neg > 0) auc[static_cast<size_t>(c)] = class_auc(logits, labels, index, c, pos, neg);
  }
  RocAuc r;
  double sum = 0;
  for (double a : auc)
    if (a >= 0) {
      sum += a;
      ++r.classes;
    }
  r.mean = r.classes ? sum / static_cast<double>(r.classes) : 0.0;
  return r;
}

int64_t roc_auc_classes(const Tensor& labels, const Tensor& index) {
  check_shapes(labels, nullptr, index);
  int64_t n = 0;
  for (const auto& [pos, neg] : class_counts(labels, index)) n += pos > 0 && neg > 0;
  return n;
}

}  // namespace strata::train
