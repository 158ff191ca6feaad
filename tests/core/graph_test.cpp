#include "core/graph.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <map>
#include <optional>
#include <tuple>

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

// Past kParallelTransposeNnz the transpose splits the rows over the threads. Its
// output must be the same arrays whatever the thread count (one thread takes the
// serial path), and each column must list its rows in order with their edge ids
// and values, built here by a plain loop.
TEST(Graph, ParallelTransposeMatchesAPlainLoopAtEveryThreadCount) {
  for (bool int64_indices : {false, true}) {
    testing::RandomGraphSpec spec;
    spec.rows = 5003;
    spec.cols = 1777;
    spec.avg_degree = 70;  // about 350,000 non-zeros, past the parallel threshold (2^17)
    spec.long_row_length = 1500;
    spec.weighted = true;
    spec.int64_indices = int64_indices;
    spec.seed = 7;
    const Graph g = testing::random_graph(spec);
    ASSERT_GT(g.nnz(), int64_t{1} << 17);
    std::vector<std::vector<std::tuple<int64_t, int64_t, float>>> by_col(static_cast<size_t>(g.num_cols()));
    const Tensor ge = g.edge_ids();
    for (int64_t r = 0; r < g.num_rows(); ++r)
      for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p)
        by_col[static_cast<size_t>(g.column(p))].emplace_back(r, ge.at<int64_t>(p), g.values().at<float>(p));

    const int saved = omp_get_max_threads();
    std::optional<Graph> serial;
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "int64 " << int64_indices << ", threads " << threads);
      omp_set_num_threads(threads);
      const Graph t = g.transpose();
      omp_set_num_threads(saved);
      ASSERT_EQ(t.index_dtype(), g.index_dtype());
      ASSERT_EQ(t.num_rows(), g.num_cols());
      ASSERT_EQ(t.nnz(), g.nnz());
      const Tensor te = t.edge_ids();
      for (int64_t c = 0; c < t.num_rows(); ++c) {
        const auto& want = by_col[static_cast<size_t>(c)];
        ASSERT_EQ(t.degree(c), static_cast<int64_t>(want.size())) << "column " << c;
        for (int64_t k = 0; k < t.degree(c); ++k) {
          const int64_t p = t.row_begin(c) + k;
          ASSERT_EQ(t.column(p), std::get<0>(want[static_cast<size_t>(k)])) << "column " << c << ", entry " << k;
          ASSERT_EQ(te.at<int64_t>(p), std::get<1>(want[static_cast<size_t>(k)]));
          ASSERT_EQ(t.values().at<float>(p), std::get<2>(want[static_cast<size_t>(k)]));
        }
      }
      if (!serial) {
        serial = t;
      } else {
        EXPECT_TRUE(t.same_structure(*serial));
        EXPECT_EQ(std::memcmp(te.raw_data(), serial->edge_ids().raw_data(), te.nbytes()), 0);
      }
    }
    // Called from inside a parallel region (a loader's threads): serial there, same arrays.
    std::vector<Graph> inside(2);
#pragma omp parallel for num_threads(2)
    for (int k = 0; k < 2; ++k) inside[static_cast<size_t>(k)] = g.transpose();
    for (const Graph& t : inside) {
      EXPECT_TRUE(t.same_structure(*serial));
      EXPECT_EQ(std::memcmp(t.edge_ids().raw_data(), serial->edge_ids().raw_data(), t.edge_ids().nbytes()), 0);
    }
  }
}

// Values follow their entries through the row sort, duplicate merging, self-loops and
// symmetrizing: each entry's value encodes its (row, column), so a value left behind
// by the sort lands on another column and shows. Rows arrive unsorted and with repeats.
TEST(Graph, ValuesStayWithTheirEntriesWhateverTheInputOrder) {
  const auto code = [](int64_t r, int64_t c) { return static_cast<float>(1000 * r + c); };
  Rng rng(3);
  const int64_t n = 300;
  std::vector<int64_t> rows, cols;
  std::vector<float> vals;
  std::map<std::pair<int64_t, int64_t>, float> summed;  // (row, col) -> the sum of its copies' values
  for (int64_t k = 0; k < 4000; ++k) {
    const auto r = static_cast<int64_t>(rng.below(n)), c = static_cast<int64_t>(rng.below(n));
    rows.push_back(r);
    cols.push_back(c);
    vals.push_back(code(r, c));
    summed[{r, c}] += code(r, c);
  }
  // Counts the entries of g whose value is not want(row, column).
  const auto misplaced = [](const Graph& g, const auto& want) {
    int64_t wrong = 0;
    for (int64_t r = 0; r < g.num_rows(); ++r)
      for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p)
        wrong += g.values().data<float>()[p] != want(r, g.column(p));
    return wrong;
  };
  const Tensor R = Tensor::from_vector(rows), C = Tensor::from_vector(cols), V = Tensor::from_vector(vals);
  for (const DuplicatePolicy d : {DuplicatePolicy::Keep, DuplicatePolicy::KeepFirst, DuplicatePolicy::Sum}) {
    for (const ColumnOrder order : {ColumnOrder::Sorted, ColumnOrder::InputOrder}) {
      SCOPED_TRACE(::testing::Message() << "duplicate policy " << static_cast<int>(d) << ", "
                                        << (order == ColumnOrder::Sorted ? "sorted" : "input order"));
      CooOptions o;
      o.duplicates = d;
      o.order = order;
      const Graph g = Graph::from_coo(n, n, R, C, o, V);
      const auto in_g = [&](int64_t r, int64_t c) { return summed.count({r, c}) > 0; };
      const auto value = [&](int64_t r, int64_t c) {
        return d == DuplicatePolicy::Sum ? summed.at({r, c}) : code(r, c);
      };
      EXPECT_EQ(misplaced(g, value), 0) << "from_coo, of " << g.nnz();
      // A new self-loop weighs 1; every other entry keeps its value.
      const Graph loops = g.with_self_loops();
      EXPECT_EQ(misplaced(loops, [&](int64_t r, int64_t c) { return in_g(r, c) ? value(r, c) : 1.0f; }), 0)
          << "with_self_loops, of " << loops.nnz();
      // An entry present one way only takes its value to the mirror entry.
      const Graph sym = g.symmetrized();
      EXPECT_EQ(misplaced(sym, [&](int64_t r, int64_t c) { return in_g(r, c) ? value(r, c) : value(c, r); }), 0)
          << "symmetrized, of " << sym.nnz();
    }
  }
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

// Large CSRs are checked in parallel; the error still names the first bad entry.
TEST(GraphErrorTest, LargeBadCsrNamesTheFirstBadEntry) {
  const int64_t rows = int64_t{1} << 21;  // one entry per row, past the parallel threshold
  std::vector<int64_t> indptr(static_cast<size_t>(rows) + 1);
  std::vector<int32_t> cols(static_cast<size_t>(rows));
  for (int64_t r = 0; r <= rows; ++r) indptr[static_cast<size_t>(r)] = r;
  for (int64_t r = 0; r < rows; ++r) cols[static_cast<size_t>(r)] = static_cast<int32_t>(r % 1000);
  cols[300001] = -3;
  cols[1800000] = 5000;  // in the second thread's half: the first one is named
  testing::expect_user_error(
      [&] { Graph::from_csr(rows, 1000, Tensor::from_vector(indptr), Tensor::from_vector(cols)); },
      {"CSR indices: entry 300001 (row 300001) is -3, outside [0, 1000)"});
  cols[300001] = 1;
  cols[1800000] = 1;
  indptr[300001] = 300002;  // row 300000 holds entries 300000 and 300001: columns 0 then 1
  EXPECT_TRUE(Graph::from_csr(rows, 1000, Tensor::from_vector(indptr), Tensor::from_vector(cols)).columns_sorted());
  cols[300001] = 0;  // now 0 then 0 (sorted), and with 999 before them, not
  EXPECT_TRUE(Graph::from_csr(rows, 1000, Tensor::from_vector(indptr), Tensor::from_vector(cols)).columns_sorted());
  cols[300000] = 999;
  EXPECT_FALSE(Graph::from_csr(rows, 1000, Tensor::from_vector(indptr), Tensor::from_vector(cols)).columns_sorted());
  indptr[200000] = 199990;  // row 199999 then goes from 199999 down to 199990
  testing::expect_user_error(
      [&] { Graph::from_csr(rows, 1000, Tensor::from_vector(indptr), Tensor::from_vector(cols)); },
      {"CSR indptr: decreases at row 199999 (199999 then 199990)"});
}

}  // namespace
}  // namespace strata
