// Uniform random graphs (Erdős–Rényi G(n, m)): exactly m distinct edges drawn
// uniformly among the n·(n-1) ordered pairs without self-loops (n·(n-1)/2 unordered
// pairs when undirected, each then stored both ways). m comes from `edges`, or from
// `avg_degree` as round(n · avg_degree) stored edges. The degree distribution is
// binomial: the opposite of R-MAT's hubs, for comparing kernels on both.
#pragma once

#include <string>
#include <string_view>

#include "datasets/dataset.h"

namespace strata::data {

struct ErParams {
  int64_t nodes = 1 << 16;
  double avg_degree = 16;  // stored non-zeros per node
  int64_t edges = -1;      // stored edges; overrides avg_degree when >= 0
  uint64_t seed = 1;
  bool undirected = false;
};

ErParams parse_er_params(std::string_view text);  // "nodes=65536,avg_degree=16,seed=1"
std::string er_spec(const ErParams& p);
Dataset generate_er(const ErParams& p);

}  // namespace strata::data
