// strata inspect --graph <dataset> --format hyb:c=2,B=5
// Runs a format's inspector on a graph and prints each part: rows, slots, padding
// ratio, share of non-zeros, bytes; then the task partition.
#include <cstdio>

#include "apps/bench_graph.h"
#include "apps/commands.h"
#include "apps/option_checks.h"
#include "sparse_compiler/formats/inspected_format.h"

namespace strata::apps {
namespace {

struct InspectArgs {
  std::string graph, format = "hyb:c=1,B=5";
  int64_t grain = 4096;
  bool as_stored = false;
  std::optional<std::string> data_root;
};

int run_inspect(const InspectArgs& a) {
  const sc::FormatSpec spec = sc::FormatSpec::parse(a.format, "--format");
  STRATA_CHECK(sc::needs_inspection(spec), "--format: csr is the graph as loaded; nothing to inspect");
  const BenchGraph bg = load_bench_graph(a.graph, a.data_root, a.as_stored);
  const sc::InspectedFormat F = sc::inspect_format(bg.graph, spec, a.grain);
  std::printf("%s\nformat %s: %zu part(s), %lld slots for %lld non-zeros (padding %.1f%%), %.1f MiB, inspected in %.2f ms\n\n",
              bg.description.c_str(), spec.str().c_str(), F.parts.size(), static_cast<long long>(F.slots()),
              static_cast<long long>(F.nnz), 100 * F.padding_ratio(), F.memory_bytes() / double(1 << 20), F.inspect_ms);
  if (!F.parts.empty()) {
    std::printf("  %-5s %-26s %12s %12s %9s %10s %10s\n", "part", "layout", "rows", "slots", "padding", "nnz share", "bytes");
    for (const auto& p : F.parts) {
      int64_t bytes = 0;
      for (const auto& [k, t] : p.arrays) bytes += t.nbytes();
      const double pad = p.slots ? 100.0 * (p.slots - p.real) / p.slots : 0.0;
      const double share = F.nnz ? 100.0 * p.real / F.nnz : 0.0;
      std::printf("  %-5s %-26s %12lld %12lld %8.1f%% %9.1f%% %10lld\n", p.name.c_str(), p.describe().c_str(),
                  static_cast<long long>(p.outer), static_cast<long long>(p.slots), pad, share,
                  static_cast<long long>(bytes));
    }
  }
  // Column tiles: a part's rows are (row, tile) segments; how long they are is
  // what decides whether the tiles pay (sparse_compiler/ops/untuned_knobs.h).
  for (const auto& p : F.parts)
    if (p.kind == sc::PartKind::Dcsr && p.width > 0 && p.outer > 0)
      std::printf("\n%s: %.2f non-zeros per (row, tile) segment on average\n", p.name.c_str(),
                  static_cast<double>(p.real) / static_cast<double>(p.outer));
  std::printf("\n%lld owner task(s) of ~%lld slots; each output row belongs to one task\n",
              static_cast<long long>(F.num_tasks), static_cast<long long>(a.grain));
  return 0;
}

RegisterCommand reg({"inspect", "Run a format's inspector on a graph and print its parts",
                     [](CLI::App& app) {
                       auto a = std::make_shared<InspectArgs>();
                       app.add_option("--graph", a->graph, "dataset string")->required();
                       app.add_option("--format", a->format, "coo, dcsr, dcsr:cols=.., ell:w=.., bsr:b=.., hyb:c=..,B=..")
                           ->capture_default_str();
                       app.add_option("--grain", a->grain, "slots per owner task")
                           ->check(integer_at_least(1))
                           ->capture_default_str();
                       app.add_flag("--as-stored", a->as_stored, "do not symmetrize undirected datasets");
                       app.add_option("--data-root", a->data_root, "dataset folder");
                       return [a] { return run_inspect(*a); };
                     }});

}  // namespace
}  // namespace strata::apps
