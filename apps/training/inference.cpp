#include "apps/training/inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "core/file_util.h"
#include "core/log.h"
#include "datasets/text_fields.h"

namespace strata::train {

std::vector<int64_t> read_node_batch(const std::string& batch, int64_t count, const std::string& what, bool by_name,
                                     const std::vector<std::string>& names) {
  std::vector<int64_t> ids;
  if (batch == "all") {
    ids.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) ids[static_cast<size_t>(i)] = i;
    return ids;
  }
  STRATA_CHECK(!by_name || !names.empty(),
               "--names: {} has no node names (its files number the nodes 0..{}); list node ids in '{}'", what,
               count - 1, batch);
  std::unordered_map<std::string, int64_t> id_of;
  if (by_name)
    for (size_t i = 0; i < names.size(); ++i) id_of.emplace(names[i], static_cast<int64_t>(i));
  std::error_code ec;
  STRATA_CHECK(!fs::is_directory(batch, ec),
               "--batch '{}' is a folder (expected 'all' or a file of node {}, one per line)", batch,
               by_name ? "names" : "ids");
  std::ifstream in(batch);
  STRATA_CHECK(in.good(), "--batch '{}': cannot read the file (expected 'all' or a file of node {}, one per line)",
               batch, by_name ? "names" : "ids");
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    std::string s = line;
    // A UTF-8 byte-order mark (Windows editors write one) is not part of the first line.
    if (lineno == 1) s = std::string(data::without_byte_order_mark(s));
    if (const size_t h = s.find('#'); h != std::string::npos) s.resize(h);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    s = s.substr(b);
    if (s.empty()) continue;
    if (by_name) {
      const auto it = id_of.find(s);
      STRATA_CHECK(it != id_of.end(),
                   "{}:{}: no node of {} is named '{}' (--names: the name column of the predictions)", batch, lineno,
                   what, data::excerpt(s));
      ids.push_back(it->second);
      continue;
    }
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    STRATA_CHECK(r.ec != std::errc::result_out_of_range || r.ptr != s.data() + s.size(),
                 "{}:{}: node id '{}' is out of range: {} has {} nodes (ids 0..{})", batch, lineno, data::excerpt(s),
                 what, count, count - 1);
    STRATA_CHECK(r.ec == std::errc() && r.ptr == s.data() + s.size(),
                 "{}:{}: expected a node id (an integer in [0, {})), got '{}'{}", batch, lineno, count,
                 data::excerpt(s),
                 names.empty() ? "" : "; --names reads node names (the name column of the predictions) instead");
    STRATA_CHECK(v >= 0 && v < count, "{}:{}: node id {} is out of range: {} has {} nodes (ids 0..{}){}", batch, lineno,
                 v, what, count, count - 1,
                 names.empty() ? "" : "; --names reads node names (the name column of the predictions) instead");
    ids.push_back(v);
  }
  STRATA_CHECK(!ids.empty(), "{}: no node {} per line; '#' starts a comment)", batch,
               by_name ? "names (one name" : "ids (one integer");
  return ids;
}

int64_t argmax_row(const Tensor& scores, int64_t row) {
  const int64_t c = scores.dim(1);
  const float* p = scores.data<float>() + row * c;
  return std::max_element(p, p + c) - p;
}

std::string csv_quote(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : std::string(1, ch);
  return q + "\"";
}

void write_csv_output(const std::string& out, const std::string& csv) {
  if (out.empty()) return;
  if (out == "-") {
    const bool ok = std::fwrite(csv.data(), 1, csv.size(), stdout) == csv.size() && std::fflush(stdout) == 0;
    STRATA_CHECK(ok, "--out -: cannot write to standard output: {}", std::strerror(errno));
    return;
  }
  AtomicFile f(out);
  f.write(csv);
  f.commit();
}

namespace {
std::string class_name(const std::vector<std::string>& class_names, int64_t c) {
  return c < static_cast<int64_t>(class_names.size()) ? class_names[static_cast<size_t>(c)] : "";
}

// predict_batch for int64 [N, C] labels of 0/1.
void predict_multi_label(const std::vector<int64_t>& batch, const std::vector<int64_t>& rows, const Tensor& logits,
                         const Tensor& labels, const std::vector<char>& is_test, const std::vector<std::string>& names,
                         const std::vector<std::string>& class_names, const std::string& out, InferReport& report) {
  const int64_t classes = labels.dim(1);
  std::vector<int64_t> labelled, tests;
  std::string csv = "node,name,predicted,predicted_class,label,correct\n";
  for (size_t k = 0; k < batch.size(); ++k) {
    const int64_t v = batch[k], g = rows[k];
    const std::vector<int64_t> p = positive_classes(logits, g);
    std::string ids, cls, label, correct;
    for (size_t c = 0; c < p.size(); ++c) {
      ids += (c ? ";" : "") + std::to_string(p[c]);
      cls += (c ? ";" : "") + class_name(class_names, p[c]);
    }
    ++report.predicted;
    const int64_t* y = labels.data<int64_t>() + g * classes;
    if (y[0] >= 0) {
      std::vector<int64_t> present;
      for (int64_t c = 0; c < classes; ++c)
        if (y[c] == 1) present.push_back(c);
      for (size_t c = 0; c < present.size(); ++c) label += (c ? ";" : "") + std::to_string(present[c]);
      const bool right = present == p;
      ++report.labelled;
      report.correct += right;
      correct = right ? "1" : "0";
      labelled.push_back(g);
      if (is_test[static_cast<size_t>(g)]) {
        ++report.tests;
        report.tests_correct += right;
        tests.push_back(g);
      }
    }
    const std::string name = v < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(v)] : "";
    csv += fmt::format("{},{},{},{},{},{}\n", v, csv_quote(name), ids, csv_quote(cls), label, correct);
  }
  report.multilabel = true;
  report.accuracy = report.labelled ? static_cast<double>(report.correct) / static_cast<double>(report.labelled) : 0.0;
  report.labelled_f1 = multi_label_f1(logits, labels, Tensor::from_vector(labelled));
  report.test_f1 = multi_label_f1(logits, labels, Tensor::from_vector(tests));
  report.labelled_auc = mean_roc_auc(logits, labels, Tensor::from_vector(labelled));
  report.test_auc = mean_roc_auc(logits, labels, Tensor::from_vector(tests));
  write_csv_output(out, csv);
}

}  // namespace

void predict_batch(const std::vector<int64_t>& batch, int64_t offset, const Tensor& scores, const Tensor& labels,
                   const Tensor& test, const std::vector<std::string>& names,
                   const std::vector<std::string>& class_names, const std::string& out, InferReport& report) {
  std::vector<int64_t> rows(batch.size());
  for (size_t k = 0; k < batch.size(); ++k) rows[k] = offset + batch[k];
  predict_batch(batch, rows, scores, labels, test, names, class_names, out, report);
}

void predict_batch(const std::vector<int64_t>& batch, const std::vector<int64_t>& rows, const Tensor& scores,
                   const Tensor& labels, const Tensor& test, const std::vector<std::string>& names,
                   const std::vector<std::string>& class_names, const std::string& out, InferReport& report) {
  std::vector<char> is_test(static_cast<size_t>(scores.dim(0)), 0);
  for (int64_t k = 0; k < test.numel(); ++k) is_test[static_cast<size_t>(test.data<int64_t>()[k])] = 1;
  if (labels.ndim() == 2) {
    predict_multi_label(batch, rows, scores, labels, is_test, names, class_names, out, report);
    return;
  }
  std::string csv = "node,name,predicted,predicted_class,label,correct\n";
  for (size_t k = 0; k < batch.size(); ++k) {
    const int64_t v = batch[k], g = rows[k], p = argmax_row(scores, g), y = labels.data<int64_t>()[g];
    ++report.predicted;
    std::string label, correct;
    if (y >= 0) {
      ++report.labelled;
      report.correct += p == y;
      label = std::to_string(y);
      correct = p == y ? "1" : "0";
      if (is_test[static_cast<size_t>(g)]) {
        ++report.tests;
        report.tests_correct += p == y;
      }
    }
    const std::string name = v < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(v)] : "";
    csv += fmt::format("{},{},{},{},{},{}\n", v, csv_quote(name), p, csv_quote(class_name(class_names, p)), label,
                       correct);
  }
  report.accuracy = report.labelled ? static_cast<double>(report.correct) / static_cast<double>(report.labelled) : 0.0;
  write_csv_output(out, csv);
}

void print_inference(const Printer& print, const InferReport& r, const std::string& of_type, int64_t graph_nodes,
                     const std::string& out) {
  const auto nodes = [](int64_t n, const char* kind) {
    return fmt::format("{} {}node{}", commas(n), kind, n == 1 ? "" : "s");
  };
  print(
      fmt::format("Inference: {}{} in {:.2f} ms (forward over {}); kernels built in {:.1f} ms (compile "
                  "{:.1f} ms, tune {:.1f} ms)",
                  nodes(r.predicted, ""), of_type, r.infer_ms,
                  r.forward.empty() ? fmt::format("all {} nodes", commas(graph_nodes)) : r.forward, r.build_ms,
                  r.compile_ms, r.tune_ms));
  const auto share = [](int64_t k, int64_t n) { return static_cast<double>(k) / static_cast<double>(n); };
  // Undefined where no class has both a positive and a negative node.
  const auto auc = [](const RocAuc& a) { return a.defined() ? fmt::format("{:.4f}", a.mean) : std::string("-"); };
  if (r.labelled && r.multilabel)
    print(
        fmt::format("Micro-F1 on the {} of the batch: {:.4f} (macro-F1 {:.4f}; ROC-AUC {}; {} with the exact "
                    "class set); on its {}: {}",
                    nodes(r.labelled, "labelled "), r.labelled_f1.micro, r.labelled_f1.macro, auc(r.labelled_auc),
                    commas(r.correct), nodes(r.tests, "test "),
                    r.tests ? fmt::format("{:.4f} (macro-F1 {:.4f}; ROC-AUC {}; exact set {:.4f})", r.test_f1.micro,
                                          r.test_f1.macro, auc(r.test_auc), share(r.tests_correct, r.tests))
                            : "-"));
  else if (r.labelled)
    print(fmt::format("Accuracy on the {} of the batch: {:.4f} ({} correct); on its {}: {}",
                      nodes(r.labelled, "labelled "), r.accuracy, commas(r.correct), nodes(r.tests, "test "),
                      r.tests ? fmt::format("{:.4f}", share(r.tests_correct, r.tests)) : "-"));
  else
    print(r.multilabel ? "Micro-F1: no labelled node in the batch" : "Accuracy: no labelled node in the batch");
  if (!out.empty()) print(fmt::format("Predictions written to {}", out == "-" ? "standard output" : out));
}

}  // namespace strata::train
