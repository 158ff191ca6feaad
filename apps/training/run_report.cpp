#include "apps/training/run_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "core/parallel.h"
#include "core/provenance.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::train {

std::string commas(int64_t v) {
  const std::string d = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

std::string epoch_str(int64_t e) { return fmt::format("{:04d}", e); }

std::string Console::text() const {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

void print_config_lines(const Printer& print, const Config& config) {
  bool first = true;
  for (const std::string& line : config.summary_lines()) {
    print(fmt::format("{:<11}{}", first ? "config" : "", line));
    first = false;
  }
}

void print_runtime(const Printer& print, const TrainingConfig& c) {
  print(fmt::format("{:<11}{} thread{}, backend {}, tuning {}", "runtime", num_threads(), num_threads() == 1 ? "" : "s",
                    sc::backend_name(c.runtime.kernels.backend), c.runtime.kernels.tuning ? "on" : "off"));
  print(fmt::format("{:<11}{} on {}", "build", build_info().str(), host_cpu_model()));
}

nlohmann::json provenance_json() {
  const BuildInfo& b = build_info();
  return {{"strata", b.version},    {"commit", b.commit},           {"build_type", b.build_type},
          {"compiler", b.compiler}, {"host_cpu", host_cpu_model()}, {"threads", num_threads()}};
}

std::string time_shares(const ag::OpProfile& p, double total_ms) {
  if (total_ms <= 0) return "";
  const double sparse = p.ms[static_cast<int>(ag::OpCategory::Sparse)];
  const double dense = p.ms[static_cast<int>(ag::OpCategory::Dense)];
  return fmt::format("sparse {:.0f}%, dense {:.0f}%, other {:.0f}%", 100 * sparse / total_ms, 100 * dense / total_ms,
                     100 * std::max(0.0, total_ms - sparse - dense) / total_ms);
}

nlohmann::ordered_json profile_json(const ag::OpProfile& p, double optimizer_ms, double total_ms) {
  const double sparse = p.ms[static_cast<int>(ag::OpCategory::Sparse)];
  const double dense = p.ms[static_cast<int>(ag::OpCategory::Dense)];
  return {{"sparse_ms", sparse},
          {"dense_ms", dense},
          {"other_ms", std::max(0.0, total_ms - sparse - dense)},
          {"optimizer_ms", optimizer_ms},
          {"total_ms", total_ms}};
}

std::pair<double, double> accuracy_and_loss(const Tensor& logp, const Tensor& labels, const Tensor& index) {
  const int64_t c = logp.dim(1), n = index.numel();
  const float* lp = logp.data<float>();
  const int64_t* y = labels.data<int64_t>();
  const int64_t* ip = index.data<int64_t>();
  int64_t correct = 0;
  double loss = 0;
  for (int64_t k = 0; k < n; ++k) {
    const float* row = lp + ip[k] * c;
    const int64_t pred = std::max_element(row, row + c) - row;
    correct += pred == y[ip[k]];
    loss -= row[y[ip[k]]];
  }
  if (n == 0) return {0.0, 0.0};
  return {static_cast<double>(correct) / static_cast<double>(n), loss / static_cast<double>(n)};
}

std::string logits_hash(const Tensor& logits, const Tensor& index) {
  Hasher h;
  const int64_t c = logits.dim(1);
  for (int64_t k = 0; k < index.numel(); ++k)
    h.add(logits.data<float>() + index.data<int64_t>()[k] * c, static_cast<size_t>(c) * sizeof(float));
  return h.digest().hex();
}

std::string expand_run_dir(const std::string& pattern, const std::string& config_name) {
  std::string out = pattern;
  for (size_t p; (p = out.find("{config}")) != std::string::npos;) out.replace(p, 8, config_name);
  return out;
}

std::string train_banner(const Config& config) {
  return fmt::format("strata train {} (config {}, version {}{})", config.source(), config.hash().hex().substr(0, 12),
                     kConfigVersion,
                     config.overrides().empty() ? ""
                                                : fmt::format(", --set {}", fmt::join(config.overrides(), " --set ")));
}

}  // namespace strata::train
