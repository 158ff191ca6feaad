// strata tune spmm|sddmm --graph <dataset> --feat F [--exhaustive] [--x-layouts] [--no-records]
// Runs the tuner and prints one row per candidate (format and schedule, predicted
// and measured time, padding, speedup over the default CSR plan) and the choice.
#include <cstdio>

#include "apps/bench_graph.h"
#include "apps/commands.h"
#include "apps/option_checks.h"
#include "core/parallel.h"
#include "sparse_compiler/tune/tuner.h"

namespace strata::apps {
namespace {

struct TuneArgs {
  std::string op, graph;
  int64_t feat = 64;
  bool exhaustive = false, no_records = false, as_stored = false, x_layouts = false;
  std::optional<std::string> data_root;
  int threads = 0;
};

int run_tune(const TuneArgs& a) {
  STRATA_CHECK(a.op == "spmm" || a.op == "sddmm", "unknown op '{}' (expected spmm or sddmm)", a.op);
  if (a.threads > 0) set_num_threads(a.threads);
  const BenchGraph bg = load_bench_graph(a.graph, a.data_root, a.as_stored);
  std::printf("%s\nop %s, F=%lld, target %s%s\n", bg.description.c_str(), a.op.c_str(), static_cast<long long>(a.feat),
              sc::cpu_target().c_str(), a.exhaustive ? ", exhaustive" : "");
  sc::TuneOptions o;
  o.exhaustive = a.exhaustive;
  o.x_layouts = a.x_layouts;
  o.use_records = !a.no_records;
  const sc::TuneResult r = a.op == "spmm" ? sc::tune_spmm(bg.graph, a.feat, o) : sc::tune_sddmm(bg.graph, a.feat, o);
  if (r.from_record) std::printf("using the tuning record %s (no measurements)\n", r.record_file.c_str());
  std::printf("\n  %-52s %12s %12s %8s %9s  %s\n", "plan", "predicted", "measured", "padding", "vs csr", "status");
  for (const auto& c : r.candidates) {
    if (c.measured_ms < 0 && c.status == "not measured" && !a.exhaustive) continue;
    const std::string meas = c.measured_ms >= 0 ? fmt::format("{:.3f} ms", c.measured_ms) : "-";
    const std::string vs = (c.measured_ms > 0 && r.default_ms > 0) ? fmt::format("{:.2f}x", r.default_ms / c.measured_ms) : "-";
    std::printf("  %-52s %9.3f ms %12s %7.1f%% %9s  %s%s%s%s\n", c.plan.str().c_str(), c.predicted_ms, meas.c_str(),
                100 * c.padding, vs.c_str(), c.status.c_str(), c.neighbour ? " (neighbour)" : "",
                c.final_round ? " (final)" : "", c.plan == r.chosen ? "  <- chosen" : "");
  }
  std::printf("\n(neighbour): one knob away from the best ranked candidate, measured next\n");
  std::printf("(final): timed again in the interleaved final round, which decides the choice\n");
  std::printf("\nchosen: %s\n", r.chosen.str().c_str());
  if (r.fastest_within_noise)
    std::printf("(the untuned plan, kept: the fastest, %s, measured less than %.0f%% faster, within the noise)\n",
                r.fastest_within_noise->str().c_str(), 100 * o.min_gain);
  std::printf("plan json: %s\ntuning took %.0f ms (compile %.0f ms); record %s\n", r.chosen.to_json().c_str(),
              r.tune_ms, r.compile_ms, r.record_file.c_str());
  return 0;
}

RegisterCommand reg({"tune", "Choose a format and schedule for an op on a graph, measuring the best candidates",
                     [](CLI::App& app) {
                       auto a = std::make_shared<TuneArgs>();
                       app.add_option("op", a->op, "spmm or sddmm")->required();
                       app.add_option("--graph", a->graph, "dataset string")->required();
                       app.add_option("--feat", a->feat, "feature size")
                           ->capture_default_str()
                           ->check(integer_in(1, kMaxFeatureSize));
                       app.add_flag("--exhaustive", a->exhaustive, "measure the whole search space");
                       app.add_flag("--x-layouts", a->x_layouts,
                                    "also try other operand layouts (spmm: X in panels or padded rows; sddmm: X and Y "
                                    "in panels)");
                       app.add_flag("--no-records", a->no_records, "neither read nor write tuning records");
                       app.add_flag("--as-stored", a->as_stored, "do not symmetrize undirected datasets");
                       app.add_option("--data-root", a->data_root, "dataset folder");
                       app.add_option("--threads", a->threads, "threads (default: all cores)")
                           ->check(integer_in(1, 4096));
                       return [a] { return run_tune(*a); };
                     }});

}  // namespace
}  // namespace strata::apps
