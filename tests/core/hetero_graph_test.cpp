#include <gtest/gtest.h>

#include "core/hetero_graph.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

Tensor I64(std::initializer_list<int64_t> v) { return Tensor::from_list<int64_t>(v); }

HeteroGraph small() {
  HeteroGraph h;
  h.add_node_type("paper", 3);
  h.add_node_type("author", 2);
  // writes: author -> paper; rows = papers, cols = authors
  h.add_relation("author", "writes", "paper", Graph::from_coo(3, 2, I64({0, 1, 2}), I64({0, 0, 1})));
  h.add_relation("paper", "cites", "paper", Graph::from_coo(3, 3, I64({1}), I64({0})));
  return h;
}

TEST(HeteroGraph, CountsAndInverses) {
  HeteroGraph h = small();
  EXPECT_EQ(h.num_nodes(), 5);
  EXPECT_EQ(h.num_edges(), 4);
  h.add_inverse_relations();
  ASSERT_EQ(h.num_relations(), 4);
  const Relation& inv = h.relation(2);
  EXPECT_EQ(inv.name, "rev-writes");
  EXPECT_EQ(inv.src_type, "paper");
  EXPECT_EQ(inv.dst_type, "author");
  EXPECT_TRUE(inv.is_inverse);
  EXPECT_EQ(inv.adj.num_rows(), 2);
  EXPECT_EQ(inv.adj.degree(0), 2);  // author 0 wrote papers 0 and 1
  EXPECT_EQ(h.relation(2).str(), "paper-rev-writes->author");
}

TEST(HeteroGraph, HomogeneousViewOffsetsAndRelationIds) {
  HeteroGraph h = small();
  HomogeneousView v = h.to_homogeneous();
  EXPECT_EQ(v.type_offsets, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(v.graph.num_rows(), 5);
  EXPECT_EQ(v.graph.nnz(), 4);
  // paper 0 (global 0) receives from author 0 (global 3) through relation 0.
  ASSERT_EQ(v.graph.degree(0), 1);
  EXPECT_EQ(v.graph.column(v.graph.row_begin(0)), 3);
  EXPECT_EQ(v.edge_relation.at<int32_t>(v.graph.row_begin(0)), 0);
  // paper 1 receives from author 0 (rel 0) and paper 0 (rel 1).
  ASSERT_EQ(v.graph.degree(1), 2);
  EXPECT_EQ(v.graph.column(v.graph.row_begin(1)), 0);
  EXPECT_EQ(v.edge_relation.at<int32_t>(v.graph.row_begin(1)), 1);
}

TEST(HeteroGraphErrorTest, MismatchedRelationIsNamed) {
  HeteroGraph h = small();
  testing::expect_user_error(
      [&] { h.add_relation("author", "reviews", "paper", Graph::from_coo(2, 2, I64({}), I64({}))); },
      {"relation 'reviews'", "2 x 2", "expected 3 x 2"});
  testing::expect_user_error([&] { h.add_relation("venue", "in", "paper", Graph()); }, {"unknown source node type 'venue'"});
  testing::expect_user_error([&] { h.add_node_type("paper", 1); }, {"'paper' is defined twice"});
}

}  // namespace
}  // namespace strata
