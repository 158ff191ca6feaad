// The graphs every generated kernel must survive: empty rows, one very long row,
// a single node, isolated nodes, no edges at all, many more columns than rows;
// int32 or int64 indices. Shared by the CPU differential tests and the CUDA tests.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "tests/support/test_support.h"

namespace strata::testing {

struct GraphCase {
  std::string name;
  Graph g;
};

inline std::vector<GraphCase> edge_case_graphs(bool int64) {
  std::vector<GraphCase> out;
  RandomGraphSpec s;
  s.int64_indices = int64;
  s.rows = 300;
  s.cols = 250;
  s.avg_degree = 6;
  s.empty_row_fraction = 0.15;
  s.seed = 11;
  out.push_back({"random_with_empty_rows", random_graph(s)});
  s.rows = 120;
  s.cols = 3000;
  s.long_row_length = 1500;
  s.seed = 12;
  out.push_back({"one_long_row", random_graph(s)});
  CooOptions o;
  o.force_int64 = int64;
  out.push_back({"single_node", Graph::from_coo(1, 1, Tensor::from_list<int64_t>({0}),
                                                Tensor::from_list<int64_t>({0}), o)});
  out.push_back({"isolated_nodes", Graph::from_coo(40, 40, Tensor::from_list<int64_t>({3, 3, 17, 39}),
                                                   Tensor::from_list<int64_t>({5, 38, 17, 0}), o)});
  out.push_back({"no_edges", Graph::from_coo(25, 30, Tensor::arange(0), Tensor::arange(0), o)});
  s = {};
  s.int64_indices = int64;
  s.rows = 6;
  s.cols = 5000;
  s.avg_degree = 40;
  s.empty_row_fraction = 0;
  s.seed = 13;
  out.push_back({"few_rows_many_columns", random_graph(s)});
  return out;
}

}  // namespace strata::testing
