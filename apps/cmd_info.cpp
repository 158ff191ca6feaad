// `strata info <dataset>`: what a dataset holds (sizes, direction, features,
// classes, splits, node types and relations, degree distribution) and how it was
// loaded (time, cache). --json prints the same facts as one JSON object; the table
// is rendered from that object, so the two never disagree.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/option_checks.h"
#include "core/error.h"
#include "core/timer.h"
#include "datasets/load.h"

namespace strata::apps {
namespace {

using json = nlohmann::ordered_json;
using namespace strata::data;

std::string commas(int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string bytes_str(int64_t b) {
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

json features_json(const FeatureMatrix& f) {
  if (!f.defined()) return nullptr;
  json j = {{"rows", f.rows()}, {"dim", f.cols()}, {"storage", f.is_sparse() ? "sparse" : "dense"}};
  if (f.is_sparse()) {
    j["nonzeros"] = f.stored();
    j["binary"] = f.is_binary();
  }
  return j;
}

json degree_json(const DegreeStats& s) {
  json hist = json::array();
  for (size_t k = 0; k < s.histogram.size(); ++k)
    hist.push_back({{"degree", DegreeStats::bucket_label(k)}, {"nodes", s.histogram[k]}});
  return {{"min", s.min}, {"median", s.median}, {"p90", s.p90},         {"p99", s.p99},
          {"max", s.max}, {"mean", s.mean},     {"zero", s.empty_rows}, {"histogram", hist}};
}

int64_t count_self_loops(const Graph& g) {
  int64_t k = 0;
  for (int64_t r = 0; r < std::min(g.num_rows(), g.num_cols()); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) k += g.column(p) == r;
  return k;
}

json describe(const Dataset& ds, const LoadReport& rep) {
  json j;
  j["name"] = ds.name;
  j["format"] = ds.format;
  j["source"] = ds.source;
  j["task"] = std::string(task_name(ds.task));
  j["nodes"] = ds.num_nodes();
  j["edges"] = ds.num_edges();
  if (ds.graph.num_cols() != ds.graph.num_rows()) j["columns"] = ds.graph.num_cols();
  j["undirected"] = ds.undirected;
  const Graph t = ds.graph.transpose();
  j["symmetric"] = ds.graph.num_rows() == ds.graph.num_cols() && ds.graph.same_structure(t);
  j["self_loops"] = count_self_loops(ds.graph);
  j["weighted"] = ds.graph.has_values();
  j["features"] = features_json(ds.features);
  if (ds.edge_features.defined()) j["edge_features"] = {{"dim", ds.edge_features.dim(1)}};
  if (ds.num_classes > 0) {
    json cls = json::array();
    const auto counts = ds.class_counts();
    for (int64_t c = 0; c < ds.num_classes; ++c)
      cls.push_back({{"name", c < static_cast<int64_t>(ds.class_names.size()) ? ds.class_names[c] : std::to_string(c)},
                     {"nodes", counts[c]}});
    j["classes"] = {{"count", ds.num_classes}, {"multilabel", ds.multilabel()}, {"labelled", ds.num_labelled()},
                    {"of", ds.num_label_nodes()}, {"per_class", cls}};
  } else {
    j["classes"] = nullptr;
  }
  if (ds.targets.defined()) j["regression_targets"] = ds.targets.numel();
  j["splits"] = {{"train", ds.splits.train_size()},
                 {"val", ds.splits.val_size()},
                 {"test", ds.splits.test_size()},
                 {"origin", ds.splits.origin}};
  if (!ds.eval_metric.empty()) j["eval_metric"] = ds.eval_metric;
  if (ds.hetero) {
    json types = json::array();
    for (int t = 0; t < ds.hetero->num_node_types(); ++t)
      types.push_back({{"name", ds.hetero->node_types()[t].name},
                       {"nodes", ds.hetero->node_types()[t].count},
                       {"features", features_json(ds.type_features[t])},
                       {"target", t == ds.target_node_type}});
    json rels = json::array();
    for (const auto& r : ds.hetero->relations())
      rels.push_back({{"src", r.src_type}, {"name", r.name}, {"dst", r.dst_type}, {"edges", r.adj.nnz()},
                      {"inverse", r.is_inverse}});
    j["node_types"] = types;
    j["relations"] = rels;
  }
  j["degree"] = {{"in", degree_json(ds.graph.degree_stats())}, {"out", degree_json(t.degree_stats())}};
  j["load"] = {{"seconds", rep.seconds}, {"cache", std::string(cache_status_name(rep.cache))},
               {"cache_hit", rep.cache == CacheStatus::Hit}};
  if (!rep.cache_file.empty()) {
    j["load"]["cache_file"] = rep.cache_file.string();
    j["load"]["cache_bytes"] = rep.cache_bytes;
  }
  if (!rep.cache_detail.empty()) j["load"]["cache_detail"] = rep.cache_detail;
  j["notes"] = ds.notes;
  return j;
}

std::string feature_text(const json& f) {
  if (f.is_null()) return "none";
  std::string s = fmt::format("{} dims, {}", commas(f["dim"]), f["storage"].get<std::string>());
  if (f["storage"] == "sparse")
    s += fmt::format(" {} ({} non-zeros)", f["binary"].get<bool>() ? "binary" : "float32", commas(f["nonzeros"]));
  else
    s += " float32";
  return s;
}

void print_text(const json& j) {
  auto row = [](const char* key, const std::string& value) { fmt::print("  {:<12}{}\n", key, value); };
  const std::string format = j["format"], source = j["source"];
  fmt::print("{}  {}\n", j["name"].get<std::string>(),
             source.rfind(format + ":", 0) == 0 ? source : format + ":" + source);
  const json& ld = j["load"];
  std::string cache = ld["cache"].get<std::string>();
  if (ld.contains("cache_file"))
    cache += fmt::format(", {} ({})", ld["cache_file"].get<std::string>(), bytes_str(ld["cache_bytes"]));
  fmt::print("  loaded in {:.1f} ms; cache: {}\n", ld["seconds"].get<double>() * 1e3, cache);
  if (ld.contains("cache_detail")) fmt::print("  (cache {})\n", ld["cache_detail"].get<std::string>());
  fmt::print("\n");

  row("task", j["task"]);
  row("nodes", commas(j["nodes"]) + (j.contains("columns") ? fmt::format(" rows x {} columns", commas(j["columns"])) : ""));
  const int64_t edges = j["edges"];
  const bool sym = j["symmetric"];
  const char* direction = j["undirected"].get<bool>()
                              ? (sym ? "undirected, both directions stored" : "undirected, each edge stored once")
                              : (sym ? "directed (symmetric structure)" : "directed");
  row("edges", fmt::format("{}  {}{}", commas(edges), direction, j["weighted"].get<bool>() ? ", weighted" : ""));
  row("self-loops", commas(j["self_loops"]));
  row("features", feature_text(j["features"]));
  if (j.contains("edge_features")) row("edge feats", fmt::format("{} dims", commas(j["edge_features"]["dim"])));
  if (!j["classes"].is_null()) {
    const json& c = j["classes"];
    row("classes", fmt::format("{}{}, {} of {} nodes labelled", commas(c["count"]),
                               c["multilabel"].get<bool>() ? " (multi-label)" : "", commas(c["labelled"]),
                               commas(c["of"])));
    const json& per = c["per_class"];
    size_t width = 0;
    for (const auto& k : per) width = std::max(width, k["name"].get<std::string>().size());
    width = std::min<size_t>(width, 48);
    const size_t shown = std::min<size_t>(per.size(), 20);
    for (size_t k = 0; k < shown; ++k) {
      std::string name = per[k]["name"];
      if (name.size() > width) name = "..." + name.substr(name.size() - width + 3);
      fmt::print("  {:<12}  {:<{}}  {:>9}\n", "", name, width, commas(per[k]["nodes"]));
    }
    if (per.size() > shown) fmt::print("  {:<12}  ... and {} more classes\n", "", per.size() - shown);
  } else {
    row("classes", j.contains("regression_targets") ? "none (regression targets)" : "none");
  }
  const json& sp = j["splits"];
  if (sp["train"] == 0 && sp["val"] == 0 && sp["test"] == 0)
    row("splits", "none in the files");
  else
    row("splits", fmt::format("train {}, val {}, test {}  ({})", commas(sp["train"]), commas(sp["val"]), commas(sp["test"]),
                              sp["origin"].get<std::string>()));
  if (j.contains("eval_metric")) row("metric", j["eval_metric"].get<std::string>() + " (the source's own)");

  if (j.contains("node_types")) {
    fmt::print("\nnode types\n");
    fmt::print("  {:<16}{:>10}  {}\n", "type", "nodes", "features");
    for (const auto& t : j["node_types"])
      fmt::print("  {:<16}{:>10}  {}{}\n", t["name"].get<std::string>(), commas(t["nodes"]), feature_text(t["features"]),
                 t["target"].get<bool>() ? "   <- labels" : "");
    fmt::print("\nrelations ({})\n", j["relations"].size());
    size_t width = 8;
    for (const auto& r : j["relations"])
      width = std::max(width, fmt::format("{} -[{}]-> {}", r["src"].get<std::string>(), r["name"].get<std::string>(),
                                          r["dst"].get<std::string>()).size());
    width = std::min<size_t>(width, 90);
    const size_t limit = 30;
    size_t shown = 0;
    for (const auto& r : j["relations"]) {
      if (shown++ == limit) {
        fmt::print("  ... and {} more (--json lists them all)\n", j["relations"].size() - limit);
        break;
      }
      std::string label = fmt::format("{} -[{}]-> {}", r["src"].get<std::string>(), r["name"].get<std::string>(),
                                      r["dst"].get<std::string>());
      if (label.size() > width) label = label.substr(0, width - 3) + "...";
      fmt::print("  {:<{}}  {:>10}\n", label, width, commas(r["edges"]));
    }
  }

  const json& din = j["degree"]["in"];
  const json& dout = j["degree"]["out"];
  fmt::print("\ndegree distribution (in = entries per row, the neighbours a node aggregates; out = per column)\n");
  fmt::print("  {:<6}{:>8}{:>8}{:>8}{:>8}{:>10}{:>10}\n", "", "min", "median", "p99", "max", "mean", "zero");
  for (const auto* d : {&din, &dout})
    fmt::print("  {:<6}{:>8}{:>8}{:>8}{:>8}{:>10.2f}{:>10}\n", d == &din ? "in" : "out", commas((*d)["min"]),
               commas((*d)["median"]), commas((*d)["p99"]), commas((*d)["max"]), (*d)["mean"].get<double>(),
               commas((*d)["zero"]));
  const size_t buckets = std::max(din["histogram"].size(), dout["histogram"].size());
  const double total = std::max<double>(1.0, static_cast<double>(j["nodes"].get<int64_t>()));
  fmt::print("\n  {:<13}{:>10}{:>8}  {:<26}{:>10}{:>8}\n", "degree", "in", "share", "", "out", "share");
  auto at = [](const json& h, size_t k) { return k < h.size() ? h[k]["nodes"].get<int64_t>() : int64_t{0}; };
  for (size_t k = 0; k < buckets; ++k) {
    const int64_t a = at(din["histogram"], k), b = at(dout["histogram"], k);
    const double sa = static_cast<double>(a) / total, sb = static_cast<double>(b) / total;
    const std::string bar(static_cast<size_t>(sa * 25 + 0.5), '#');
    fmt::print("  {:<13}{:>10}{:>7.1f}%  {:<26}{:>10}{:>7.1f}%\n", DegreeStats::bucket_label(k), commas(a), 100 * sa, bar,
               commas(b), 100 * sb);
  }
  if (!j["notes"].empty()) {
    fmt::print("\nnotes\n");
    for (const auto& n : j["notes"]) fmt::print("  - {}\n", n.get<std::string>());
  }
}

const RegisterCommand kInfo{Command{
    "info", "Load a dataset and describe it: sizes, features, classes, splits, degrees",
    [](CLI::App& app) -> std::function<int()> {
      struct Args {
        std::string dataset, data_root;
        bool json = false, no_cache = false;
        uint64_t seed = 0;
      };
      auto args = std::make_shared<Args>();
      // Positional, or --graph as inspect, tune, bench and export spell it: one of
      // the two, so neither is marked required in --help.
      CLI::Option* positional =
          app.add_option("dataset", args->dataset,
                         "a name (cora, aifb, ddi, ...), FORMAT:PATH (mtx:x.mtx, ogb:dir, ...) or a generator "
                         "(sbm:nodes=2000,classes=5,seed=1, rmat:scale=16, er:nodes=1000,avg_degree=8, "
                         "rsbm:nodes=2000,relations=6,seed=1)");
      app.add_option("--graph", args->dataset, "the dataset, as the other commands name it (instead of the positional)")
          ->excludes(positional);
      app.add_option("--data-root", args->data_root, "folder holding the datasets (default: $STRATA_DATA_ROOT or "
                                                     "../shared/datasets)");
      app.add_flag("--json", args->json, "print one JSON object instead of the table");
      app.add_flag("--no-cache", args->no_cache, "parse the files even if a binary cache entry exists");
      app.add_option("--seed", args->seed, "seed for splits the loader draws itself (HGB train/val)")
          ->check(integer_at_least(0));
      return [args] {
        STRATA_CHECK(!args->dataset.empty(),
                     "strata info: name the dataset, as the first argument or with --graph (e.g. strata info cora)");
        LoadOptions opt;
        if (!args->data_root.empty()) opt.data_root = args->data_root;
        opt.use_cache = !args->no_cache;
        opt.seed = args->seed;
        LoadReport rep;
        const Dataset ds = load_dataset(args->dataset, opt, &rep);
        json j;
        try {
          j = describe(ds, rep);  // degree statistics and the transpose: memory as large as the graph's
        } catch (const UserError& e) {
          STRATA_FAIL("strata info '{}' ({} x {}, {} edges): {}", args->dataset, ds.graph.num_rows(),
                      ds.graph.num_cols(), ds.num_edges(), e.what());
        }
        if (args->json)
          fmt::print("{}\n", j.dump(2));
        else
          print_text(j);
        std::fflush(stdout);
        return 0;
      };
    }}};

}  // namespace
}  // namespace strata::apps
