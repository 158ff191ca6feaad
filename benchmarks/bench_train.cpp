// strata_bench_train: per-epoch training time (forward + backward + optimizer step)
// of GraphSAGE, with the generated kernels and with the reference path, and where
// the time goes: sparse kernels (aggregation and sparse-feature products, forward and
// backward), dense matmul (Eigen GEMM, forward and backward), everything else
// (element-wise ops, loss, optimizer, allocation).
//
//   strata_bench_train [--datasets cora,citeseer,facebook,rmat] [--hidden 128]
//                      [--epochs 20] [--warmup 3] [--backends generated,reference]
//                      [--threads 0] [--data-root DIR] [--json FILE]
//
// Real datasets go through the same preparation as `strata train` (symmetrized,
// sparse features for the first layer where at most 10% are non-zero, Planetoid
// split); `rmat` is rmat:scale=17,edge_factor=16,seed=1 with 128 random normal
// features and 16 random classes (the split and labels only size the loss). Both
// backends run the same model from the same seed in the same process, their epochs
// interleaved (A B A B ...) so that both see the same load on a shared machine;
// times are medians over the timed epochs, shares are of the mean epoch.
// A "tuned" column is left for when the tuner is wired into layers/graph_kernels.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

#include "apps/training/trainer.h"
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
  double build_ms = 0, compile_ms = 0;
  int64_t kernels = 0;
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
    ms[b].kernels = static_cast<int64_t>(ctxs[b]->kernels->records().size());
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
  CLI::App app{"strata_bench_train: GraphSAGE epoch time, generated kernels vs the reference path"};
  std::vector<std::string> datasets = {"cora", "citeseer", "facebook", "rmat"};
  std::vector<std::string> backends = {"generated", "reference"};
  int64_t hidden = 128;
  int epochs = 20, warmup = 3, threads = 0;
  std::string data_root, json_out, rmat = "rmat:scale=17,edge_factor=16,seed=1";
  app.add_option("--datasets", datasets, "datasets (names or specs); rmat = " + rmat)->delimiter(',');
  app.add_option("--backends", backends, "generated and/or reference")->delimiter(',');
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
    std::printf("| dataset | nodes | edges | features | backend | epoch (median) | sparse | dense | other | kernels "
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
      for (const std::string& b : backends) {
        auto ctx = std::make_unique<train::Context>();
        ctx->config = base.config;
        ctx->config.runtime.kernels.backend = sc::parse_backend(b, "--backends");
        ctx->data = base.data;
        ctxs.push_back(std::move(ctx));
      }
      const std::vector<Measurement> measured = measure(ctxs, warmup, epochs);
      std::map<std::string, Measurement> by_backend;
      for (size_t i = 0; i < backends.size(); ++i) {
        const std::string& b = backends[i];
        const Measurement& m = measured[i];
        by_backend[b] = m;
        std::printf("| %s | %lld | %lld | %s | %s | %.2f ms | %.2f ms (%s) | %.2f ms (%s) | %.2f ms (%s) | %.0f ms |\n",
                    name.c_str(), static_cast<long long>(d.num_nodes()), static_cast<long long>(d.graph.nnz()),
                    d.features_text.c_str(), b.c_str(), m.median_ms, m.sparse_ms, pct(m.sparse_ms, m.mean_ms).c_str(),
                    m.dense_ms, pct(m.dense_ms, m.mean_ms).c_str(), m.other_ms, pct(m.other_ms, m.mean_ms).c_str(),
                    m.build_ms);
        std::fflush(stdout);
        row[b] = {{"epoch_median_ms", m.median_ms}, {"epoch_mean_ms", m.mean_ms},   {"sparse_ms", m.sparse_ms},
                  {"dense_ms", m.dense_ms},         {"other_ms", m.other_ms},       {"kernels", m.kernels},
                  {"build_ms", m.build_ms},         {"compile_ms", m.compile_ms},   {"loss_first", m.loss_first},
                  {"loss_last", m.loss_last}};
      }
      if (by_backend.count("generated") && by_backend.count("reference")) {
        const Measurement &g = by_backend["generated"], &r = by_backend["reference"];
        // Same model, seed and data: the losses must agree (up to float rounding).
        STRATA_ASSERT(std::abs(g.loss_last - r.loss_last) <= 1e-3 * std::max(1.0, std::abs(r.loss_last)),
                      "{}: generated and reference losses differ ({} vs {})", name, g.loss_last, r.loss_last);
        row["speedup_epoch"] = r.median_ms / g.median_ms;
        row["speedup_sparse"] = r.sparse_ms / g.sparse_ms;
      }
      results.push_back(row);
    }
    std::printf("\n| dataset | epoch speed-up, generated over reference | sparse-kernel speed-up | tuned |\n|---|---|---|---|\n");
    for (const auto& row : results)
      if (row.contains("speedup_epoch"))
        std::printf("| %s | %.2fx | %.2fx | (tuner not wired yet) |\n", row["dataset"].get<std::string>().c_str(),
                    row["speedup_epoch"].get<double>(), row["speedup_sparse"].get<double>());
    if (!json_out.empty()) {
      std::ofstream f(json_out);
      f << results.dump(2) << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_bench_train: %s\n", e.what());
    return 1;
  }
}
