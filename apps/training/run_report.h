// Pieces every training driver (GNN and R-GCN) shares to report a run: number
// formatting, a console that keeps its lines for log.txt, accuracy and loss over
// a node index, a digest of logits (eval reproduces training bit for bit), and the
// run-directory pattern.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/training/config.h"
#include "core/autograd.h"
#include "core/tensor.h"
#include "datasets/splits.h"

namespace strata::train {

using Printer = std::function<void(const std::string&)>;

std::string commas(int64_t v);       // 1234567 -> "1,234,567"
std::string epoch_str(int64_t e);    // 7 -> "0007"

// Prints and keeps every line (for log.txt).
struct Console {
  explicit Console(const Printer& p) : print(p) {}
  // Not copyable: a copy (say, converted to a Printer) would collect lines that never
  // reach log.txt. Pass printer() where a Printer is wanted.
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  const Printer& print;
  std::vector<std::string> lines;
  void operator()(const std::string& s) {
    lines.push_back(s);
    print(s);
  }
  Printer printer() {
    return [this](const std::string& s) { (*this)(s); };
  }
  std::string text() const;
};

// The header's config lines: the config's summary (Config::summary_lines), the first
// labelled "config".
void print_config_lines(const Printer& print, const Config& config);
// The header's runtime lines: threads, backend and tuning; then the build and the
// host that ran it ("build      strata 0.1.0 (commit …, Release, GNU 12.2.0) on <CPU>").
void print_runtime(const Printer& print, const TrainingConfig& c);
// {"strata": "0.1.0", "commit": …, "build_type": …, "compiler": …, "host_cpu": …, "threads": N}
nlohmann::json provenance_json();

// Where a run's training steps spent their time, from the tape's profile: "sparse
// 54%, dense 22%, other 24%" of `total_ms` (empty when it is 0), and as JSON
// (sparse_ms, dense_ms, other_ms, optimizer_ms, total_ms) for summary.json.
std::string time_shares(const ag::OpProfile& p, double total_ms);
nlohmann::ordered_json profile_json(const ag::OpProfile& p, double optimizer_ms, double total_ms);

// Argmax accuracy and mean NLL of log-probabilities [N, C] over `index` (int64
// node ids into `labels`); both 0 for an empty index.
std::pair<double, double> accuracy_and_loss(const Tensor& logp, const Tensor& labels, const Tensor& index);

// Hex digest of the logits rows listed in `index`.
std::string logits_hash(const Tensor& logits, const Tensor& index);

// The first line of a training run: "strata train <file> (config <hash>, version N[, --set ...])".
std::string train_banner(const Config& config);

// output.run_dir with every "{config}" replaced by the config's name.
std::string expand_run_dir(const std::string& pattern, const std::string& config_name);

}  // namespace strata::train
