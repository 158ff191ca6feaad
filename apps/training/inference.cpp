#include "apps/training/inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

#include "core/file_util.h"
#include "core/log.h"

namespace strata::train {

std::vector<int64_t> read_node_batch(const std::string& batch, int64_t count, const std::string& what) {
  std::vector<int64_t> ids;
  if (batch == "all") {
    ids.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) ids[static_cast<size_t>(i)] = i;
    return ids;
  }
  std::ifstream in(batch);
  STRATA_CHECK(in.good(), "--batch '{}': cannot read the file (expected 'all' or a file of node ids, one per line)",
               batch);
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    std::string s = line;
    if (const size_t h = s.find('#'); h != std::string::npos) s.resize(h);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    s = s.substr(b);
    if (s.empty()) continue;
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    STRATA_CHECK(r.ec == std::errc() && r.ptr == s.data() + s.size(),
                 "{}:{}: expected a node id (an integer in [0, {})), got '{}'", batch, lineno, count, s);
    STRATA_CHECK(v >= 0 && v < count, "{}:{}: node id {} is out of range: {} has {} nodes (ids 0..{})", batch, lineno,
                 v, what, count, count - 1);
    ids.push_back(v);
  }
  STRATA_CHECK(!ids.empty(), "{}: no node ids (one integer per line; '#' starts a comment)", batch);
  return ids;
}

int64_t argmax_row(const Tensor& scores, int64_t row) {
  const int64_t c = scores.dim(1);
  const float* p = scores.data<float>() + row * c;
  return std::max_element(p, p + c) - p;
}

namespace {
std::string csv_quote(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : std::string(1, ch);
  return q + "\"";
}
}  // namespace

void predict_batch(const std::vector<int64_t>& batch, int64_t offset, const Tensor& scores, const Tensor& labels,
                   const Tensor& test, const std::vector<std::string>& names,
                   const std::vector<std::string>& class_names, const std::string& out, InferReport& report) {
  std::vector<char> is_test(static_cast<size_t>(scores.dim(0)), 0);
  for (int64_t k = 0; k < test.numel(); ++k) is_test[static_cast<size_t>(test.data<int64_t>()[k])] = 1;
  std::string csv = "node,name,predicted,predicted_class,label,correct\n";
  for (int64_t v : batch) {
    const int64_t g = offset + v, p = argmax_row(scores, g), y = labels.data<int64_t>()[g];
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
    const std::string cls = p < static_cast<int64_t>(class_names.size()) ? class_names[static_cast<size_t>(p)] : "";
    csv += fmt::format("{},{},{},{},{},{}\n", v, csv_quote(name), p, csv_quote(cls), label, correct);
  }
  report.accuracy = report.labelled ? static_cast<double>(report.correct) / static_cast<double>(report.labelled) : 0.0;
  if (!out.empty()) {
    AtomicFile f(out);
    f.write(csv);
    f.commit();
  }
}

void print_inference(const Printer& print, const InferReport& r, const std::string& what, int64_t graph_nodes,
                     const std::string& out) {
  print(
      fmt::format("Inference: {} {} in {:.2f} ms (forward over all {} nodes); kernels built in {:.1f} ms (compile "
                  "{:.1f} ms, tune {:.1f} ms)",
                  commas(r.predicted), what, r.infer_ms, commas(graph_nodes), r.build_ms, r.compile_ms, r.tune_ms));
  if (r.labelled)
    print(fmt::format(
        "Accuracy on the {} labelled nodes of the batch: {:.4f} ({} correct); on its {} test nodes: {}",
        commas(r.labelled), r.accuracy, commas(r.correct), commas(r.tests),
        r.tests ? fmt::format("{:.4f}", static_cast<double>(r.tests_correct) / static_cast<double>(r.tests)) : "-"));
  else
    print("Accuracy: no labelled node in the batch");
  if (!out.empty()) print(fmt::format("Predictions written to {}", out));
}

}  // namespace strata::train
