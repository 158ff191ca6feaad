// Uniform neighbour sampling for mini-batch training (GraphSAGE, Hamilton et al.
// 2017; what DGL's NeighborSampler and PyG's NeighborLoader do). Hand-written graph
// code that prepares each batch's graphs; the message passing over them runs through
// the generated kernels like any other graph's.
//
// For a batch of seed nodes and one fanout per layer (input layer first), sampling
// walks from the seeds outwards: the last layer's destinations are the seeds, each
// keeps up to fanout[L-1] of its in-neighbours (uniformly, without replacement, in the
// graph's own order), and every node reached becomes a source; the sources of layer l
// are the destinations of layer l - 1. A layer's block lists its destinations first
// among its sources (so a node's own row, for a root weight, is its local id), and is
// stored as a square graph over the sources whose rows past the destinations are
// empty: every aggregation kernel runs on it unchanged, and a layer's output is then
// cut to its destinations' rows.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "core/rng.h"

namespace strata {

struct SampledBlock {
  Graph graph;  // [num_src, num_src]; row i < num_dst: destination i's sampled in-neighbours (local ids)
  int64_t num_dst = 0;
  std::vector<int64_t> src_nodes;  // the graph's node id of each local id; the first num_dst are the destinations
  int64_t num_src() const { return static_cast<int64_t>(src_nodes.size()); }
};

struct SampledBatch {
  std::vector<int64_t> seeds;
  std::vector<SampledBlock> blocks;  // input layer first; blocks.back()'s destinations are the seeds
  const std::vector<int64_t>& input_nodes() const { return blocks.front().src_nodes; }
};

// Samples the blocks of one batch from A (rows = destinations, core/graph.h).
// fanouts[l] is layer l's (input layer first): at most that many in-neighbours per
// destination, or every one for -1. Seeds must be distinct node ids of A. The blocks
// keep A's index type and, on a weighted A, each kept edge's value. Each layer with a fanout
// takes one draw from `rng` (a layer of -1 takes none); every destination then picks from its own stream derived from
// that draw and its position, so large layers pick on all threads and the batch is the same whatever the thread count.
SampledBatch sample_blocks(const Graph& A, const std::vector<int64_t>& seeds, const std::vector<int64_t>& fanouts,
                           Rng& rng);

}  // namespace strata
