// The graph a kernel command (bench, tune, inspect) runs on: a dataset string
// loaded through datasets/, as the adjacency GNN layers aggregate over. Undirected
// datasets stored one way are symmetrized (what PyG and DGL train on), unless the
// caller asks for the file's direction.
#pragma once

#include <optional>
#include <string>

#include "core/graph.h"

namespace strata::apps {

struct BenchGraph {
  std::string name;        // the dataset string as given
  std::string description; // "cora: 2708 x 2708, 10556 non-zeros (symmetrized)"
  Graph graph;
};

BenchGraph load_bench_graph(const std::string& spec, const std::optional<std::string>& data_root, bool as_stored);

// Splits "32,64,128" into numbers in [1, max]; throws UserError naming `what` on bad items.
std::vector<int64_t> parse_int_list(const std::string& s, const std::string& what, int64_t max);
std::vector<std::string> split_list(const std::string& s);

}  // namespace strata::apps
