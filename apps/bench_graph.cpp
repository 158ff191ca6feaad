#include "apps/bench_graph.h"

#include <fmt/format.h>

#include "core/log.h"
#include "datasets/load.h"

namespace strata::apps {

BenchGraph load_bench_graph(const std::string& spec, const std::optional<std::string>& data_root, bool as_stored) {
  data::LoadOptions opt;
  if (data_root) opt.data_root = *data_root;
  data::LoadReport report;
  data::Dataset ds = data::load_dataset(spec, opt, &report);
  BenchGraph b;
  b.name = spec;
  b.graph = ds.graph;
  std::string how = "as stored";
  if (ds.undirected && !as_stored && ds.graph.num_rows() == ds.graph.num_cols()) {
    b.graph = ds.graph.symmetrized();
    how = "symmetrized";
  }
  b.graph = b.graph.without_values();
  b.description = fmt::format("{}: {} x {}, {} non-zeros ({})", spec, b.graph.num_rows(), b.graph.num_cols(),
                              b.graph.nnz(), how);
  return b;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  // Empty items ("32,,64", "32,") are kept, so the caller's check reports them.
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    if (c == std::string::npos) c = s.size();
    out.push_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

std::vector<int64_t> parse_int_list(const std::string& s, const std::string& what, int64_t max) {
  std::vector<int64_t> out;
  for (const auto& item : split_list(s)) {
    bool ok = false;
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      ok = used == item.size() && v > 0 && v <= max;
      out.push_back(v);
    } catch (const std::exception&) {
    }
    STRATA_CHECK(ok, "{}: '{}' is not an integer in [1, {}] (expected a list such as 32,64,128)", what, item, max);
  }
  STRATA_CHECK(!out.empty(), "{}: expected at least one value", what);
  return out;
}

}  // namespace strata::apps
