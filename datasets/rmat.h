// R-MAT graphs (Chakrabarti et al. 2004) with the Graph500 defaults a=0.57, b=0.19,
// c=0.19 (d = 1 - a - b - c): 2^scale nodes and edge_factor * 2^scale generated edges,
// each placed by descending `scale` times into one quadrant of the adjacency matrix.
// `noise` > 0 perturbs a, b, c, d at each level (multiplicatively, uniform in
// [1-noise, 1+noise], then renormalised; the "noisy SKG" of Seshadhri et al.), which
// smooths the staircase in the degree distribution. Node ids are permuted (as Graph500
// does) so high degrees are not all at low ids; `simple` drops duplicate edges and
// self-loops; `undirected` stores each edge both ways. Edges are generated in fixed
// chunks, each with its own seeded stream, so the graph depends only on the parameters,
// not on the thread count.
#pragma once

#include <string>
#include <string_view>

#include "datasets/dataset.h"

namespace strata::data {

struct RmatParams {
  int scale = 16;
  int64_t edge_factor = 16;
  double a = 0.57, b = 0.19, c = 0.19;
  double noise = 0.0;
  uint64_t seed = 1;
  bool undirected = false;
  bool simple = true;
  bool permute = true;
};

RmatParams parse_rmat_params(std::string_view text);  // "scale=16,edge_factor=16,seed=1"
std::string rmat_spec(const RmatParams& p);           // canonical "rmat:scale=16,..."
Dataset generate_rmat(const RmatParams& p);

}  // namespace strata::data
