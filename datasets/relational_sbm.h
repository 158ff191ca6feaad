// A relational stochastic block model: the heterograph that needs no files, for
// R-GCN (`rsbm:nodes=2000,types=2,relations=6,classes=4,seed=1`). `types` node types
// t0, t1, … of `nodes` nodes each, every node in one of `classes` balanced blocks;
// t0's blocks are the labels. Relation r ("r<r>") runs from type s = r mod T to type
// (s + 1 + r div T) mod T, and shifts blocks by r: a destination of block c draws
// each in-edge of relation r from the source type's block (c + r) mod C with
// probability q (`ratio` = p_in / p_out, as sbm.h), else from any block. Every
// relation is stored with its inverse ("rev-r<r>"), and `avg_degree` counts a
// node's in-edges over all of them. Which block a neighbour's block points to
// depends on the relation it came through, so a model that ignores relation types
// sees a mixture, and one that keeps a weight per relation (R-GCN) can undo the
// shifts. Features: none by default (one-hot or embedded input); with
// `feature_dim` > 0, every type gets its block's centroid N(0, 1) plus N(0, noise²)
// per entry. A seeded train/val/test split of t0 comes with it.
#pragma once

#include <string>
#include <string_view>

#include "datasets/dataset.h"

namespace strata::data {

struct RelationalSbmParams {
  int64_t nodes = 2000;  // per node type
  int64_t types = 2;
  int64_t relations = 6;  // drawn relations; the graph holds each and its inverse
  int64_t classes = 4;
  double avg_degree = 8;  // in-edges per node over every relation and inverse
  double ratio = 8;       // p_in / p_out
  int64_t feature_dim = 0;
  double noise = 1.0;
  uint64_t seed = 1;
  double train = 0.6, val = 0.2;  // of t0's nodes; test takes the rest
};

RelationalSbmParams parse_relational_sbm_params(std::string_view text);  // "nodes=2000,relations=6,seed=1"
std::string relational_sbm_spec(const RelationalSbmParams& p);
Dataset generate_relational_sbm(const RelationalSbmParams& p);

}  // namespace strata::data
