// Link prediction's data (apps/training/link_split.h): the undirected edges of a
// graph, the seeded split into disjoint parts, non-edges that are never edges, the
// labels of a pair graph and OGB's Hits@K, worked out by hand.
#include "apps/training/link_split.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "core/error.h"

namespace strata::train {
namespace {

using Pair = std::pair<int64_t, int64_t>;

std::set<Pair> as_set(const NodePairs& p) {
  std::set<Pair> s;
  for (int64_t k = 0; k < p.size(); ++k) s.insert({p.u[k], p.v[k]});
  return s;
}

Graph graph_of(int64_t n, std::vector<int64_t> rows, std::vector<int64_t> cols) {
  return Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols));
}

// A ring of n nodes with chords: every node to its next two, so 2n undirected edges.
Graph ring(int64_t n) {
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d : {1, 2}) {
      r.push_back(i);
      c.push_back((i + d) % n);
    }
  return graph_of(n, r, c);
}

TEST(LinkSplit, UndirectedEdgesOnceEachWithoutSelfLoops) {
  // (0,1) both ways, (2,1) one way, (3,3) a self-loop, (0,2) twice.
  const Graph g = graph_of(4, {0, 1, 2, 3, 0, 0}, {1, 0, 1, 3, 2, 2});
  const NodePairs e = undirected_edges(g);
  EXPECT_EQ(as_set(e), (std::set<Pair>{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(e.size(), 3);
}

TEST(LinkSplit, PartsAreDisjointCoverEveryEdgeAndFollowTheSeed) {
  const Graph g = ring(500);  // 1000 undirected edges
  const LinkSplit s = split_links(g, 0.05, 0.1, 7, "cfg.yaml");
  EXPECT_EQ(s.val.size(), 50);
  EXPECT_EQ(s.test.size(), 100);
  EXPECT_EQ(s.train.size(), 850);
  std::set<Pair> all = as_set(s.train);
  for (const NodePairs* p : {&s.val, &s.test})
    for (const Pair& e : as_set(*p)) EXPECT_TRUE(all.insert(e).second) << "edge in two parts";
  EXPECT_EQ(all, as_set(undirected_edges(g)));
  // As many non-edges as held-out edges, none an edge of the graph either way, none a self-pair.
  ASSERT_EQ(s.val_negative.size(), 50);
  ASSERT_EQ(s.test_negative.size(), 100);
  for (const NodePairs* p : {&s.val_negative, &s.test_negative})
    for (int64_t k = 0; k < p->size(); ++k) {
      const int64_t u = p->u[k], v = p->v[k];
      EXPECT_NE(u, v);
      EXPECT_FALSE(all.count({std::min(u, v), std::max(u, v)})) << u << "-" << v << " is an edge";
    }
  // The same seed gives the same split; another seed another one.
  const LinkSplit again = split_links(g, 0.05, 0.1, 7, "cfg.yaml");
  EXPECT_EQ(again.val.u, s.val.u);
  EXPECT_EQ(again.test_negative.v, s.test_negative.v);
  EXPECT_NE(split_links(g, 0.05, 0.1, 8, "cfg.yaml").val.u, s.val.u);
  EXPECT_EQ(s.origin(), "link split seed 7: 850 / 50 / 100 edges");
}

TEST(LinkSplit, RefusesASplitThatLeavesAPartEmpty) {
  try {
    split_links(ring(5), 0.05, 0.1, 0, "cfg.yaml");  // 10 edges: 0 validation edges
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.yaml: the graph has 10 undirected edges"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("leave 0 validation, 1 test and 9 training edges"), std::string::npos)
        << e.what();
  }
}

TEST(LinkSplit, NonEdgesOfACompleteGraphCannotBeDrawn) {
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j)
      if (i != j) {
        r.push_back(i);
        c.push_back(j);
      }
  Rng rng(1);
  try {
    sample_non_edges(EdgeSet(graph_of(6, r, c)), 3, rng, "cfg.yaml");
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.yaml: could not draw 3 non-edges"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("too dense"), std::string::npos) << e.what();
  }
}

TEST(LinkSplit, EdgeSetAnswersAsTheGraphDoesWithBitsOrSearch) {
  // 300 nodes fit the 8 MiB bitmap; 9000 nodes (81 M pairs, 10 MiB of bits) take the
  // binary search.
  for (int64_t n : {300, 9000}) {
    std::vector<int64_t> r, c;
    Rng rng(static_cast<uint64_t>(n));
    std::set<Pair> edges;
    for (int k = 0; k < 2000; ++k) {
      const auto u = static_cast<int64_t>(rng.below(n)), v = static_cast<int64_t>(rng.below(n));
      r.push_back(u);
      c.push_back(v);
      edges.insert({u, v});
    }
    const EdgeSet set(graph_of(n, r, c));
    for (const Pair& e : edges) EXPECT_TRUE(set.has(e.first, e.second));
    int64_t absent = 0;
    for (int k = 0; k < 5000; ++k) {
      const auto u = static_cast<int64_t>(rng.below(n)), v = static_cast<int64_t>(rng.below(n));
      EXPECT_EQ(set.has(u, v), edges.count({u, v}) > 0) << n << ": " << u << "-" << v;
      absent += edges.count({u, v}) ? 0 : 1;
    }
    EXPECT_GT(absent, 4000);
  }
}

TEST(LinkSplit, LabelsFollowThePairsIntoCsrOrder) {
  NodePairs pos, neg;
  pos.push(3, 1);
  pos.push(0, 2);
  pos.push(3, 1);  // listed twice: kept twice
  neg.push(1, 0);
  neg.push(3, 0);
  const LabelledPairs lp = labelled_pair_graph(4, pos, neg);
  ASSERT_EQ(lp.pairs.nnz(), 5);
  std::multiset<Pair> got_pos, got_neg;
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t q = lp.pairs.row_begin(r); q < lp.pairs.row_end(r); ++q)
      (lp.labels[q] == 1 ? got_pos : got_neg).insert({r, lp.pairs.column(q)});
  EXPECT_EQ(got_pos, (std::multiset<Pair>{{3, 1}, {0, 2}, {3, 1}}));
  EXPECT_EQ(got_neg, (std::multiset<Pair>{{1, 0}, {3, 0}}));
}

TEST(LinkSplit, SymmetricPairGraphHoldsBothDirectionsOnce) {
  NodePairs p;
  p.push(0, 1);
  p.push(1, 2);
  p.push(0, 1);
  const Graph g = symmetric_pair_graph(3, p);
  EXPECT_EQ(g.nnz(), 4);
  EXPECT_EQ(as_set(undirected_edges(g)), (std::set<Pair>{{0, 1}, {1, 2}}));
}

TEST(LinkSplit, HitsAtKCountsPositivesAboveTheKthNegative) {
  const std::vector<float> pos = {0.9f, 0.5f, 0.1f, 0.6f};
  const std::vector<float> neg = {0.8f, 0.6f, 0.3f, 0.2f};
  EXPECT_DOUBLE_EQ(hits_at_k(pos, neg, 1), 0.25);  // above 0.8: 0.9
  EXPECT_DOUBLE_EQ(hits_at_k(pos, neg, 2), 0.25);  // above 0.6 (0.6 itself ties, not above)
  EXPECT_DOUBLE_EQ(hits_at_k(pos, neg, 3), 0.75);  // above 0.3: 0.9, 0.5, 0.6
  EXPECT_DOUBLE_EQ(hits_at_k(pos, neg, 4), 0.75);  // above 0.2
  EXPECT_DOUBLE_EQ(hits_at_k({}, neg, 2), 0.0);
}

}  // namespace
}  // namespace strata::train
