#include "apps/training/node_classification.h"

#include "apps/training/config.h"
#include "apps/training/f1_scores.h"
#include "apps/training/roc_auc.h"
#include "apps/training/run_report.h"
#include "core/autograd_ops.h"
#include "core/error.h"

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

namespace {
struct MetricNames {
  Metric metric;
  const char* name;  // as printed
  const char* key;   // as configs, checkpoints and summary.json write it
};
constexpr MetricNames kMetricNames[] = {{Metric::Accuracy, "accuracy", "accuracy"},
                                        {Metric::MicroF1, "micro-F1", "micro_f1"},
                                        {Metric::RocAuc, "ROC-AUC", "rocauc"}};
const MetricNames& names_of(Metric m) {
  for (const MetricNames& n : kMetricNames)
    if (n.metric == m) return n;
  return kMetricNames[0];
}
}  // namespace

const char* metric_name(Metric m) { return names_of(m).name; }
const char* metric_key(Metric m) { return names_of(m).key; }

std::optional<Metric> metric_from_key(const std::string& key) {
  for (const MetricNames& n : kMetricNames)
    if (key == n.key) return n.metric;
  return std::nullopt;
}

Metric resolve_metric(const std::string& setting, const Tensor& labels, const std::string& eval_metric,
                      const std::string& where, const std::string& dataset) {
  const bool multi = is_multilabel(labels);
  if (setting == "auto") {
    if (multi && eval_metric == "rocauc") return Metric::RocAuc;
    return multi ? Metric::MicroF1 : Metric::Accuracy;
  }
  const std::optional<Metric> named = metric_from_key(setting);
  STRATA_CHECK(named.has_value(), "{}: training.metric '{}' is not one of auto, accuracy, micro_f1, rocauc", where,
               setting);
  if (*named != Metric::RocAuc) return *named;
  STRATA_CHECK(multi,
               "{}: training.metric is 'rocauc', which scores multi-label classes (a ROC curve per class over 0/1 "
               "labels), but '{}' has one class per node; use accuracy or micro_f1",
               where, dataset);
  return Metric::RocAuc;
}

Metric configured_metric(const Config& config, const Tensor& labels, const std::string& eval_metric,
                         const std::string& dataset) {
  return resolve_metric(config.get_string("training.metric"), labels, eval_metric, metric_origin(config, eval_metric),
                        dataset);
}

std::string metric_origin(const Config& config, const std::string& eval_metric) {
  const std::string& setting = config.get_string("training.metric");
  if (setting != "auto") return config.origin("training.metric");
  return config.source() +
         (eval_metric == "rocauc" ? " (training.metric: auto, the dataset's own metric)" : " (training.metric: auto)");
}

std::string metric_note(const Config& config, Metric m, const std::string& eval_metric) {
  if (config.get_string("training.metric") != "auto") return " (training.metric)";
  if (m == Metric::RocAuc && eval_metric == "rocauc") return " (the dataset's own: OGB's master.csv)";
  return "";
}

void check_metric_defined(Metric m, const Tensor& labels, const data::Splits& splits, const std::string& where,
                          const std::string& dataset) {
  if (m != Metric::RocAuc) return;
  const std::pair<const char*, const Tensor*> parts[] = {
      {"training", &splits.train}, {"validation", &splits.val}, {"test", &splits.test}};
  for (const auto& [what, index] : parts) {
    if (data::Splits::size_of(*index) == 0) continue;
    STRATA_CHECK(roc_auc_classes(labels, *index) > 0,
                 "{}: training.metric is ROC-AUC, which needs a class with both a positive and a negative node, but "
                 "no class of '{}' has both among its {} {} nodes ({}); use micro_f1 or another split",
                 where, dataset, index->numel(), what, splits.origin);
  }
}

ag::Var classification_loss(ag::Tape& tape, const ag::Var& logits, const Tensor& labels, const Tensor& index) {
  if (is_multilabel(labels)) return ag::bce_with_logits(tape, logits, labels, index);
  return ag::nll_loss(tape, ag::log_softmax(tape, logits), labels, index);
}

NodeScores::NodeScores(const Tensor& logits, const Tensor& labels, int64_t classes, Metric metric)
    : logits_(logits), labels_(labels), classes_(classes), metric_(metric) {
  STRATA_ASSERT(metric != Metric::RocAuc || is_multilabel(labels), "NodeScores: ROC-AUC of single-label classes");
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
  // Single-label accuracy and micro-F1 are one number.
  if (!is_multilabel(labels_)) return train::accuracy_and_loss(predictions_, labels_, index);
  if (index.numel() == 0) return {0.0, 0.0};
  ag::Tape tape;
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  const double loss = ag::bce_with_logits(tape, ag::Var::constant(logits_), labels_, index).value().data<float>()[0];
  if (metric_ == Metric::RocAuc) return {mean_roc_auc(logits_, labels_, index).mean, loss};
  const F1Scores f1 = multi_label_f1(logits_, labels_, index);
  return {metric_ == Metric::Accuracy ? f1.exact : f1.micro, loss};
}

double NodeScores::macro_f1(const Tensor& index) const {
  return is_multilabel(labels_) ? multi_label_f1(logits_, labels_, index).macro
                                : single_label_f1(predictions_, labels_, index, classes_).macro;
}

}  // namespace strata::train
