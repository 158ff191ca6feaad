// Link prediction's data (data.task: link): a graph's undirected edges split into
// training, validation and test edges, the non-edges the held-out edges are ranked
// against, the non-edges drawn for training, and OGB's Hits@K.
//
// The split follows PyG's RandomLinkSplit for undirected graphs: every undirected
// edge {u, v} (u < v; self-loops dropped) once, one seeded permutation, the first
// val_ratio·E edges for validation, the next test_ratio·E for testing, the rest for
// training. Message passing sees only the training edges (both directions), so a
// held-out edge never carries a message. Validation and test each get as many
// non-edges (uniform node pairs u ≠ v that are not edges of the whole graph), drawn
// once from the same seed; training draws fresh ones every epoch, avoiding only
// the training edges (nothing of the held-out split leaks into training).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/rng.h"

namespace strata::train {

// Node pairs (u[k], v[k]).
struct NodePairs {
  std::vector<int64_t> u, v;
  int64_t size() const { return static_cast<int64_t>(u.size()); }
  void push(int64_t a, int64_t b) {
    u.push_back(a);
    v.push_back(b);
  }
};

struct LinkSplit {
  NodePairs train, val, test;             // edges, each undirected edge once (u < v)
  NodePairs val_negative, test_negative;  // non-edges of the whole graph
  uint64_t seed = 0;
  std::string origin() const;  // "link split seed 0: 907,725 / 53,396 / 106,790 edges"
};

// The undirected edges of a square graph: each {u, v} with u ≠ v once, as (min, max),
// in row-major order of the symmetrized graph.
NodePairs undirected_edges(const Graph& g);

// The split described above. `where` names the config for errors (a split left
// without training, validation or test edges).
LinkSplit split_links(const Graph& g, double val_ratio, double test_ratio, uint64_t seed, const std::string& where);

// Membership of node pairs in a square graph with sorted columns: a bit per pair where
// that fits in 8 MiB (ogbl-ddi's 4,267 nodes: 2.2 MiB), else a binary search of the
// row. Built once per graph; sampling tests every draw twice.
class EdgeSet {
 public:
  explicit EdgeSet(const Graph& g);
  int64_t num_nodes() const { return n_; }
  bool has(int64_t u, int64_t v) const {
    if (!bits_.empty()) {
      const uint64_t k = static_cast<uint64_t>(u) * static_cast<uint64_t>(n_) + static_cast<uint64_t>(v);
      return (bits_[k >> 6] >> (k & 63)) & 1;
    }
    return search(u, v);
  }

 private:
  bool search(int64_t u, int64_t v) const;
  Graph g_;
  int64_t n_ = 0;
  std::vector<uint64_t> bits_;
};

// `count` uniform pairs u ≠ v such that neither (u, v) nor (v, u) is an edge of
// `known`. A UserError naming `where` when the graph is too dense to find them (fewer
// than one in 100 draws succeeds).
NodePairs sample_non_edges(const EdgeSet& known, int64_t count, Rng& rng, const std::string& where);

// The graph holding each pair in both directions (n x n, unweighted): the message
// passing graph of the training edges.
Graph symmetric_pair_graph(int64_t n, const NodePairs& pairs);

// Positive pairs then negative pairs as one graph P (n x n, rows u), and the label of
// each of P's non-zeros in its CSR position order (1: from `positive`).
struct LabelledPairs {
  Graph pairs;
  std::vector<int64_t> labels;
};
LabelledPairs labelled_pair_graph(int64_t n, const NodePairs& positive, const NodePairs& negative);

// OGB's Hits@K: the share of positive scores strictly above the K-th highest
// negative score. Needs at least K negatives (asserted).
double hits_at_k(const std::vector<float>& positive, const std::vector<float>& negative, int64_t k);

}  // namespace strata::train
