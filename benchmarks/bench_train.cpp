// strata_bench_train: per-epoch training time (forward + backward + optimizer step)
// of GraphSAGE with each way the kernels can be planned, and where the time goes:
// sparse kernels (aggregation and sparse-feature products, forward and backward),
// dense matmul (Eigen GEMM, forward and backward), everything else (element-wise
// ops, loss, optimizer, allocation).
//
//   strata_bench_train [--datasets cora,citeseer,facebook,rmat] [--hidden 128]
//                      [--epochs 20] [--warmup 3]
//                      [--variants tuned,generated,plain_csr,reference]
//                      [--threads 0] [--data-root DIR] [--json FILE]
//
// Variants: tuned = runtime tuning on (each kernel's format and schedule measured
// on this graph by sc::tune_spmm, or read from its tuning record); generated = the
// untuned plan for the graph (what `strata train` runs with tuning off); plain_csr =
// the plan template for every kernel (CSR, no prefetch, plain stores), the
// [formats] baseline; reference = the plain loops of reference_kernels.h.
//
// Real datasets go through the same preparation as `strata train` (symmetrized,
// sparse features for the first layer where at most 10% are non-zero, Planetoid
// split); `rmat` is rmat:scale=17,edge_factor=16,seed=1 with 128 random normal
// features and 16 random classes (the split and labels only size the loss). Every
// variant runs the same model from the same seed in the same process, their epochs
// interleaved (A B C D A B C D ...) so that all see the same load on a shared
// machine; times are medians over the timed epochs, shares are of the mean epoch.
// The variants' last losses must agree: they compute the same thing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/training/trainer.h"
#include "core/file_util.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/timer.h"
#include "datasets/load.h"

using namespace strata;
using json = nlohmann::ordered_json;

namespace {

struct Measurement {
  double median_ms = 0, mean_ms = 0;
  double sparse_ms = 0, dense_ms = 0, other_ms = 0;  // per epoch (means)
  double build_ms = 0, compile_ms = 0, tune_ms = 0;
  int64_t kernels = 0;
  std::vector<std::string> plans;  // "mean f=128 forward (A): csr lanes=16,..." per kernel
  double loss_first = 0, loss_last = 0;
};

// Times every backend on the same data, interleaved epoch by epoch (A B A B ...), so
// both see the same machine: on a shared machine load comes and goes within a run.
std::vector<Measurement> measure(std::vector<std::unique_ptr<train::Context>>& ctxs, int warmup, int epochs) {
  std::vector<Measurement> ms(ctxs.size());
  std::vector<std::unique_ptr<train::RunState>> states;
  std::vector<std::unique_ptr<ag::Tape>> tapes;
  std::vector<std::vector<double>> times(ctxs.size());
  std::vector<double> totals(ctxs.size(), 0.0);
  for (size_t b = 0; b < ctxs.size(); ++b) {
    states.push_back(std::make_unique<train::RunState>(*ctxs[b], 0));
    ctxs[b]->build_kernels(*states[b]->model);
    ms[b].build_ms = ctxs[b]->kernels->build_ms();
    ms[b].compile_ms = ctxs[b]->kernels->compile_ms();
    ms[b].tune_ms = ctxs[b]->kernels->tune_ms();
    ms[b].kernels = static_cast<int64_t>(ctxs[b]->kernels->records().size());
    for (const nn::KernelRecord& r : ctxs[b]->kernels->records())
      ms[b].plans.push_back(fmt::format("{} ({}): {}", r.role, r.graph, r.plan.str()));
    tapes.push_back(std::make_unique<ag::Tape>());
  }
  for (int e = 1; e <= warmup; ++e)
    for (size_t b = 0; b < ctxs.size(); ++b) train::train_step(*ctxs[b], *states[b], *tapes[b], 1, e);
  for (auto& t : tapes) t->profile().clear();
  for (int e = 1; e <= epochs; ++e) {
    for (size_t b = 0; b < ctxs.size(); ++b) {
      const train::StepResult r = train::train_step(*ctxs[b], *states[b], *tapes[b], 1, warmup + e);
      times[b].push_back(r.ms);
      totals[b] += r.ms;
      if (e == 1) ms[b].loss_first = r.loss;
      ms[b].loss_last = r.loss;
    }
  }
  for (size_t b = 0; b < ctxs.size(); ++b) {
    const ag::OpProfile& p = tapes[b]->profile();
    Measurement& m = ms[b];
    m.median_ms = median(times[b]);
    m.mean_ms = totals[b] / epochs;
    m.sparse_ms = p.ms[static_cast<int>(ag::OpCategory::Sparse)] / epochs;
    m.dense_ms = p.ms[static_cast<int>(ag::OpCategory::Dense)] / epochs;
    m.other_ms = std::max(0.0, m.mean_ms - m.sparse_ms - m.dense_ms);
  }
  return ms;
}

std::string pct(double part, double whole) { return whole > 0 ? fmt::format("{:.0f}%", 100 * part / whole) : "-"; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"strata_bench_train: GraphSAGE epoch time: tuned, untuned and plain-CSR kernels and the reference path"};
  std::vector<std::string> datasets = {"cora", "citeseer", "facebook", "rmat"};
  std::vector<std::string> variants = {"tuned", "generated", "plain_csr", "reference"};
  int64_t hidden = 128;
  int epochs = 20, warmup = 3, threads = 0;
  std::string data_root, json_out, rmat = "rmat:scale=17,edge_factor=16,seed=1";
  app.add_option("--datasets", datasets, "datasets (names or specs); rmat = " + rmat)->delimiter(',');
  app.add_option("--variants,--backends", variants, "tuned, generated (untuned plans), plain_csr, reference")
      ->delimiter(',')
      ->check(CLI::IsMember({"tuned", "generated", "plain_csr", "reference"}));
  app.add_option("--hidden", hidden, "hidden width")->check(CLI::PositiveNumber);
  app.add_option("--epochs", epochs, "timed epochs per measurement")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed epochs first")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "OpenMP threads (0: all cores)");
  app.add_option("--rmat", rmat, "the R-MAT generator spec");
  app.add_option("--data-root", data_root, "data root (default: $STRATA_DATA_ROOT or ../shared/datasets)");
  app.add_option("--json", json_out, "also write the results as JSON");
  CLI11_PARSE(app, argc, argv);

  try {
    set_num_threads(threads);
    json results = json::array();
    std::printf("GraphSAGE, 2 layers, hidden %lld, mean aggregator, root weight, Adam; %d threads; %d warm-up + %d "
                "timed epochs\n\n",
                static_cast<long long>(hidden), num_threads(), warmup, epochs);
    std::printf(
        "| dataset | nodes | edges | features | variant | epoch (median) | sparse | dense | other | kernels "
        "built |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& name : datasets) {
      train::Context base;
      base.config.model.hidden = hidden;
      base.config.model.layers = 2;
      base.config.model.dropout = 0.5f;
      base.config.optimizer.weight_decay = 5e-4;
      if (name == "rmat") {
        base.data = train::random_task(rmat, 128, 16, 1);
      } else {
        train::DataConfig dc;
        dc.dataset = name;
        dc.data_root = data_root;
        dc.undirected = train::Tristate::Yes;
        dc.split.kind = train::SplitKind::Planetoid;
        base.data = train::prepare_data(dc, nn::ModelKind::GraphSage, "strata_bench_train");
      }
      const train::TrainingData& d = base.data;
      json row = {{"dataset", name}, {"nodes", d.num_nodes()}, {"edges", d.graph.nnz()}, {"features", d.features_text}};
      std::vector<std::unique_ptr<train::Context>> ctxs;
      for (const std::string& v : variants) {
        auto ctx = std::make_unique<train::Context>();
        ctx->config = base.config;
        nn::KernelRuntime& k = ctx->config.runtime.kernels;
        k.backend = v == "reference" ? sc::Backend::Reference : sc::Backend::Generated;
        k.tuning = v == "tuned";
        k.plan_template = v == "plain_csr";
        ctx->data = base.data;
        ctxs.push_back(std::move(ctx));
      }
      const std::vector<Measurement> measured = measure(ctxs, warmup, epochs);
      std::map<std::string, Measurement> by_variant;
      for (size_t i = 0; i < variants.size(); ++i) {
        const std::string& v = variants[i];
        const Measurement& m = measured[i];
        by_variant[v] = m;
        std::printf("| %s | %lld | %lld | %s | %s | %.2f ms | %.2f ms (%s) | %.2f ms (%s) | %.2f ms (%s) | %.0f ms |\n",
                    name.c_str(), static_cast<long long>(d.num_nodes()), static_cast<long long>(d.graph.nnz()),
                    d.features_text.c_str(), v.c_str(), m.median_ms, m.sparse_ms, pct(m.sparse_ms, m.mean_ms).c_str(),
                    m.dense_ms, pct(m.dense_ms, m.mean_ms).c_str(), m.other_ms, pct(m.other_ms, m.mean_ms).c_str(),
                    m.build_ms);
        std::fflush(stdout);
        row[v] = {{"epoch_median_ms", m.median_ms}, {"epoch_mean_ms", m.mean_ms},
                  {"sparse_ms", m.sparse_ms},       {"dense_ms", m.dense_ms},
                  {"other_ms", m.other_ms},         {"kernels", m.kernels},
                  {"build_ms", m.build_ms},         {"compile_ms", m.compile_ms},
                  {"tune_ms", m.tune_ms},           {"plans", m.plans},
                  {"loss_first", m.loss_first},     {"loss_last", m.loss_last}};
      }
      // Same model, seed and data: the losses must agree (up to float rounding).
      const Measurement& first = measured.front();
      for (size_t i = 1; i < variants.size(); ++i)
        STRATA_CHECK(
            std::abs(measured[i].loss_last - first.loss_last) <= 1e-3 * std::max(1.0, std::abs(first.loss_last)),
            "{}: the {} and {} losses differ ({} vs {})", name, variants[i], variants[0], measured[i].loss_last,
            first.loss_last);
      // Speed-ups over the plain-CSR kernels and over the reference path, when measured.
      for (const char* base_name : {"plain_csr", "reference"}) {
        if (!by_variant.count(base_name)) continue;
        const Measurement& b = by_variant[base_name];
        for (const std::string& v : variants) {
          if (v == base_name) continue;
          const Measurement& m = by_variant[v];
          row["speedup_over_" + std::string(base_name)][v] = {{"epoch", b.median_ms / m.median_ms},
                                                              {"sparse", b.sparse_ms / m.sparse_ms}};
        }
      }
      results.push_back(row);
    }
    for (const char* base_name : {"plain_csr", "reference"}) {
      const std::string key = "speedup_over_" + std::string(base_name);
      bool header = false;
      for (const auto& row : results) {
        if (!row.contains(key)) continue;
        for (const auto& [v, s] : row[key].items()) {
          if (!header) {
            std::printf(
                "\n| dataset | variant | epoch speed-up over %s | sparse-kernel speed-up over %s |\n"
                "|---|---|---|---|\n",
                base_name, base_name);
            header = true;
          }
          std::printf("| %s | %s | %.2fx | %.2fx |\n", row["dataset"].get<std::string>().c_str(), v.c_str(),
                      s["epoch"].get<double>(), s["sparse"].get<double>());
        }
      }
    }
    // What the tuner chose for each kernel (the untuned plans are in strata train's header).
    for (const auto& row : results) {
      if (!row.contains("tuned")) continue;
      std::printf("\n%s, tuned in %.0f ms:\n", row["dataset"].get<std::string>().c_str(),
                  row["tuned"]["tune_ms"].get<double>());
      for (const auto& p : row["tuned"]["plans"]) std::printf("  %s\n", p.get<std::string>().c_str());
    }
    if (!json_out.empty()) write_file_atomic(json_out, results.dump(2) + "\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_bench_train: %s\n", e.what());
    return 1;
  }
}
