#include <gtest/gtest.h>

#include <map>

#include "core/graph.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

Tensor I64(std::initializer_list<int64_t> v) { return Tensor::from_list<int64_t>(v); }

std::vector<int64_t> cols_of(const Graph& g, int64_t r) {
  std::vector<int64_t> c;
  for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) c.push_back(g.column(p));
  return c;
}

TEST(Graph, FromCooSortsColumnsAndKeepsEdgeIds) {
  // entries: (0,2) (1,0) (0,1) (2,2)
  Graph g = Graph::from_coo(3, 3, I64({0, 1, 0, 2}), I64({2, 0, 1, 2}));
  EXPECT_EQ(g.nnz(), 4);
  EXPECT_EQ(g.index_dtype(), DType::I32);
  EXPECT_TRUE(g.columns_sorted());
  EXPECT_EQ(cols_of(g, 0), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(cols_of(g, 1), (std::vector<int64_t>{0}));
  Tensor e = g.edge_ids();
  EXPECT_EQ(e.at<int64_t>(0), 2);  // (0,1) was entry 2
  EXPECT_EQ(e.at<int64_t>(1), 0);
  EXPECT_EQ(e.at<int64_t>(2), 1);
  EXPECT_EQ(e.at<int64_t>(3), 3);
}

TEST(Graph, InputOrderPolicyKeepsOrder) {
  CooOptions opt;
  opt.order = ColumnOrder::InputOrder;
  Graph g = Graph::from_coo(1, 4, I64({0, 0, 0}), I64({3, 0, 2}), opt);
  EXPECT_FALSE(g.columns_sorted());
  EXPECT_EQ(cols_of(g, 0), (std::vector<int64_t>{3, 0, 2}));
}

TEST(Graph, DuplicatePolicies) {
  Tensor r = I64({0, 0, 0, 1}), c = I64({1, 1, 2, 0});
  Tensor v = Tensor::from_list<float>({1, 2, 3, 4});
  CooOptions keep;
  EXPECT_EQ(Graph::from_coo(2, 3, r, c, keep).nnz(), 4);
  CooOptions first;
  first.duplicates = DuplicatePolicy::KeepFirst;
  Graph f = Graph::from_coo(2, 3, r, c, first, v);
  EXPECT_EQ(f.nnz(), 3);
  EXPECT_EQ(f.values().at<float>(0), 1.0f);
  EXPECT_EQ(f.edge_ids().at<int64_t>(0), 0);
  CooOptions sum;
  sum.duplicates = DuplicatePolicy::Sum;
  Graph s = Graph::from_coo(2, 3, r, c, sum, v);
  EXPECT_EQ(s.values().at<float>(0), 3.0f);
  Graph counted = Graph::from_coo(2, 3, r, c, sum);
  ASSERT_TRUE(counted.has_values());
  EXPECT_EQ(counted.values().at<float>(0), 2.0f);
}

TEST(Graph, SelfLoopPolicies) {
  Tensor r = I64({0, 1, 1}), c = I64({0, 0, 1});
  CooOptions rm;
  rm.self_loops = SelfLoopPolicy::Remove;
  Graph g = Graph::from_coo(2, 2, r, c, rm);
  EXPECT_EQ(g.nnz(), 1);
  EXPECT_EQ(g.column(0), 0);
  EXPECT_EQ(g.row_begin(1), 0);
}

TEST(Graph, TransposeCarriesValuesAndEdgeIds) {
  testing::RandomGraphSpec spec;
  spec.rows = 57;
  spec.cols = 31;
  spec.weighted = true;
  Graph g = testing::random_graph(spec);
  Graph t = g.transpose();
  EXPECT_EQ(t.num_rows(), 31);
  EXPECT_EQ(t.num_cols(), 57);
  EXPECT_EQ(t.nnz(), g.nnz());
  EXPECT_TRUE(t.columns_sorted());
  // Every non-zero of the transpose names an edge of g with the same endpoints and value.
  Tensor ge = g.edge_ids(), te = t.edge_ids();
  std::map<int64_t, std::tuple<int64_t, int64_t, float>> by_edge;
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p)
      by_edge[ge.at<int64_t>(p)] = {r, g.column(p), g.values().at<float>(p)};
  for (int64_t r = 0; r < t.num_rows(); ++r) {
    for (int64_t p = t.row_begin(r); p < t.row_end(r); ++p) {
      auto [gr, gc, gv] = by_edge.at(te.at<int64_t>(p));
      EXPECT_EQ(gr, t.column(p));
      EXPECT_EQ(gc, r);
      EXPECT_EQ(gv, t.values().at<float>(p));
    }
  }
  EXPECT_TRUE(t.transpose().same_structure(g));
}

TEST(Graph, SelfLoopsAndSymmetrize) {
  Graph g = Graph::from_coo(3, 3, I64({0, 1, 1}), I64({1, 2, 1}));
  Graph l = g.with_self_loops();
  EXPECT_EQ(l.nnz(), 5);  // (1,1) existed; (0,0) and (2,2) added
  EXPECT_EQ(cols_of(l, 0), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(cols_of(l, 2), (std::vector<int64_t>{2}));
  Tensor e = l.edge_ids();
  EXPECT_EQ(e.at<int64_t>(0), 3 + 0);  // new loop on node 0: base 3 + node 0
  Graph s = g.symmetrized();
  EXPECT_EQ(cols_of(s, 0), (std::vector<int64_t>{1}));
  EXPECT_EQ(cols_of(s, 1), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(cols_of(s, 2), (std::vector<int64_t>{1}));
  EXPECT_TRUE(s.same_structure(s.transpose()));
}

TEST(Graph, DegreeStatsAndHistogram) {
  // degrees: 0, 1, 2, 3, 8
  std::vector<int64_t> r, c;
  int degs[] = {0, 1, 2, 3, 8};
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < degs[i]; ++k) {
      r.push_back(i);
      c.push_back(k);
    }
  Graph g = Graph::from_coo(5, 10, Tensor::from_vector(r), Tensor::from_vector(c));
  DegreeStats s = g.degree_stats();
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 8);
  EXPECT_EQ(s.median, 2);
  EXPECT_EQ(s.empty_rows, 1);
  EXPECT_DOUBLE_EQ(s.mean, 14.0 / 5);
  // buckets: 0 | 1 | 2-3 | 4-7 | 8-15
  EXPECT_EQ(s.histogram, (std::vector<int64_t>{1, 1, 2, 0, 1}));
  EXPECT_EQ(DegreeStats::bucket_label(4), "8-15");
}

TEST(Graph, Int64IndicesAndConversion) {
  testing::RandomGraphSpec spec;
  spec.int64_indices = true;
  Graph g = testing::random_graph(spec);
  EXPECT_EQ(g.index_dtype(), DType::I64);
  Graph n = g.with_index_dtype(DType::I32);
  EXPECT_EQ(n.index_dtype(), DType::I32);
  EXPECT_TRUE(n.same_structure(g));
  EXPECT_EQ(g.transpose().index_dtype(), DType::I64);
}

TEST(GraphErrorTest, BadCooNamesTheEntry) {
  CooOptions opt;
  opt.source = "edges.txt";
  testing::expect_user_error([&] { Graph::from_coo(2, 2, I64({0, 5}), I64({1, 1}), opt); },
                             {"edges.txt", "entry 1", "row id 5", "[0, 2)"});
  testing::expect_user_error([&] { Graph::from_coo(2, 2, I64({0}), I64({-1}), opt); },
                             {"edges.txt", "column id -1"});
  testing::expect_user_error([&] { Graph::from_coo(2, 2, I64({0, 1}), I64({1}), opt); },
                             {"2 row ids but 1 column ids"});
  CooOptions strict = opt;
  strict.duplicates = DuplicatePolicy::Error;
  testing::expect_user_error([&] { Graph::from_coo(2, 2, I64({0, 0}), I64({1, 1}), strict); },
                             {"entry 1 repeats entry 0", "row 0, column 1"});
  CooOptions noloops = opt;
  noloops.self_loops = SelfLoopPolicy::Error;
  testing::expect_user_error([&] { Graph::from_coo(2, 2, I64({1}), I64({1}), noloops); }, {"self-loop (1, 1)"});
}

TEST(GraphErrorTest, BadCsrIsRejected) {
  testing::expect_user_error(
      [] { Graph::from_csr(2, 2, Tensor::from_list<int64_t>({0, 2, 1}), Tensor::from_list<int32_t>({0, 1})); },
      {"decreases at row 1"});
  testing::expect_user_error(
      [] { Graph::from_csr(2, 2, Tensor::from_list<int64_t>({0, 1, 2}), Tensor::from_list<int32_t>({0, 7})); },
      {"entry 1", "is 7"});
  testing::expect_user_error([] { Graph::from_coo(2, 3, Tensor::arange(0), Tensor::arange(0)).with_self_loops(); },
                             {"square"});
}

}  // namespace
}  // namespace strata
