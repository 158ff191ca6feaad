// Synthetic generators: R-MAT, Erdős–Rényi, the SBM demo dataset and its relational (R-GCN) sibling, which must be
// learnable (a linear model on neighbour-averaged features reaches high accuracy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/parallel.h"
#include "datasets/erdos_renyi.h"
#include "datasets/generator_params.h"
#include "datasets/relational_sbm.h"
#include "datasets/rmat.h"
#include "datasets/sbm.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

int64_t loops_of(const Graph& g) {
  int64_t k = 0;
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) k += g.column(p) == r;
  return k;
}

bool has_duplicates(const Graph& g) {
  auto e = testing::edge_pairs(g);
  return std::adjacent_find(e.begin(), e.end()) != e.end();
}

TEST(Rmat, SizeSkewAndNoDuplicates) {
  const Dataset ds = generate_rmat(parse_rmat_params("scale=12,edge_factor=8,seed=3"));
  EXPECT_EQ(ds.num_nodes(), 4096);
  EXPECT_LE(ds.num_edges(), 4096 * 8);
  EXPECT_GT(ds.num_edges(), 4096 * 8 * 3 / 4);  // duplicates dropped, most edges kept
  EXPECT_EQ(loops_of(ds.graph), 0);
  EXPECT_FALSE(has_duplicates(ds.graph));
  EXPECT_FALSE(ds.undirected);
  const DegreeStats st = ds.graph.degree_stats();
  EXPECT_GT(static_cast<double>(st.max), 10 * st.mean);  // power-law hubs
  EXPECT_GT(st.empty_rows, 0);
  EXPECT_EQ(ds.source, "rmat:scale=12,edge_factor=8,a=0.57,b=0.19,c=0.19,noise=0,seed=3,undirected=0,simple=1,permute=1");
}

TEST(Rmat, DeterministicForAnyThreadCountAndSeedSensitive) {
  const RmatParams p = parse_rmat_params("scale=14,edge_factor=8,seed=9,noise=0.1");
  set_num_threads(1);
  const Dataset one = generate_rmat(p);
  set_num_threads(2);
  const Dataset two = generate_rmat(p);
  set_num_threads(0);
  testing::expect_same_graph(one.graph, two.graph, "1 vs 2 threads");
  RmatParams q = p;
  q.seed = 10;
  EXPECT_FALSE(generate_rmat(q).graph.same_structure(one.graph));
}

TEST(Rmat, UnpermutedHubIsNodeZeroAndUndirectedIsSymmetric) {
  const Dataset ds = generate_rmat(parse_rmat_params("scale=10,edge_factor=16,permute=0,simple=0"));
  EXPECT_EQ(ds.num_edges(), 1024 * 16);  // simple=0 keeps every generated edge
  const Graph t = ds.graph.transpose();
  int64_t best = -1, best_deg = -1;
  for (int64_t v = 0; v < 1024; ++v) {
    const int64_t d = ds.graph.degree(v) + t.degree(v);
    if (d > best_deg) best_deg = d, best = v;
  }
  EXPECT_EQ(best, 0);  // a = 0.57 sends most edges to the top-left corner
  const Dataset u = generate_rmat(parse_rmat_params("scale=10,edge_factor=4,undirected=1"));
  EXPECT_TRUE(u.undirected);
  EXPECT_TRUE(u.graph.same_structure(u.graph.transpose()));
}

TEST(ErdosRenyi, ExactEdgeCountsUniformDegreesSymmetry) {
  const Dataset d = generate_er(parse_er_params("nodes=5000,avg_degree=8,seed=2"));
  EXPECT_EQ(d.num_nodes(), 5000);
  EXPECT_EQ(d.num_edges(), 40000);
  EXPECT_EQ(loops_of(d.graph), 0);
  EXPECT_FALSE(has_duplicates(d.graph));
  const DegreeStats st = d.graph.degree_stats();
  EXPECT_LT(st.max, 3 * 8);  // binomial: no hubs
  EXPECT_GE(st.median, 6);
  const Dataset e = generate_er(parse_er_params("nodes=300,edges=1000,undirected=1,seed=4"));
  EXPECT_EQ(e.num_edges(), 1000);
  EXPECT_TRUE(e.graph.same_structure(e.graph.transpose()));
  // A complete directed graph on 5 nodes is reachable exactly.
  EXPECT_EQ(generate_er(parse_er_params("nodes=5,edges=20")).num_edges(), 20);
  testing::expect_same_graph(generate_er(parse_er_params("nodes=500,edges=900,seed=7")).graph,
                             generate_er(parse_er_params("nodes=500,edges=900,seed=7")).graph, "same seed");
}

// Softmax regression trained by gradient descent on `x`, scored on the test split.
double linear_accuracy(const Dataset& ds, const RowMatrix<float>& x) {
  const int64_t f = x.cols(), k = ds.num_classes;
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(f + 1, k);
  const Tensor& tr = ds.splits.train;
  const int64_t* y = ds.labels.data<int64_t>();
  Eigen::MatrixXd xt(tr.numel(), f + 1);
  Eigen::MatrixXd yt = Eigen::MatrixXd::Zero(tr.numel(), k);
  for (int64_t i = 0; i < tr.numel(); ++i) {
    const int64_t v = tr.data<int64_t>()[i];
    xt.row(i).head(f) = x.row(v).cast<double>();
    xt(i, f) = 1.0;
    yt(i, y[v]) = 1.0;
  }
  for (int it = 0; it < 300; ++it) {
    Eigen::MatrixXd z = xt * w;
    for (int64_t i = 0; i < z.rows(); ++i) {
      const double m = z.row(i).maxCoeff();
      z.row(i) = (z.row(i).array() - m).exp();
      z.row(i) /= z.row(i).sum();
    }
    w -= 0.05 * xt.transpose() * (z - yt) / static_cast<double>(z.rows());
  }
  int64_t ok = 0;
  const Tensor& te = ds.splits.test;
  for (int64_t i = 0; i < te.numel(); ++i) {
    const int64_t v = te.data<int64_t>()[i];
    Eigen::VectorXd xv(f + 1);
    xv.head(f) = x.row(v).cast<double>().transpose();
    xv(f) = 1.0;
    Eigen::Index best;
    (w.transpose() * xv).maxCoeff(&best);
    ok += best == y[v];
  }
  return static_cast<double>(ok) / static_cast<double>(te.numel());
}

TEST(Sbm, LearnableFromTheGraphMoreThanFromFeaturesAlone) {
  const Dataset ds = generate_sbm(parse_sbm_params("nodes=2000,classes=5,seed=1"));
  EXPECT_EQ(ds.num_nodes(), 2000);
  EXPECT_EQ(ds.num_edges(), 2 * 10000);  // avg_degree 10, stored both ways
  EXPECT_TRUE(ds.undirected);
  EXPECT_TRUE(ds.graph.same_structure(ds.graph.transpose()));
  EXPECT_EQ(loops_of(ds.graph), 0);
  EXPECT_EQ(ds.class_counts(), (std::vector<int64_t>{400, 400, 400, 400, 400}));
  EXPECT_EQ(ds.splits.train_size(), 1200);
  EXPECT_EQ(ds.splits.val_size(), 400);
  EXPECT_EQ(ds.splits.test_size(), 400);
  // Homophily: an edge stays in its block with probability r / (r + k - 1) = 20/24.
  int64_t intra = 0;
  const int64_t* y = ds.labels.data<int64_t>();
  for (const auto& [d, s] : testing::edge_pairs(ds.graph)) intra += y[d] == y[s];
  EXPECT_NEAR(static_cast<double>(intra) / static_cast<double>(ds.num_edges()), 20.0 / 24.0, 0.02);

  const Tensor x = ds.features.to_dense();
  const auto xm = x.as_matrix<float>();
  RowMatrix<float> raw = xm;
  RowMatrix<float> agg = xm;  // mean over the node and its neighbours
  for (int64_t v = 0; v < ds.num_nodes(); ++v) {
    for (int64_t p = ds.graph.row_begin(v); p < ds.graph.row_end(v); ++p) agg.row(v) += xm.row(ds.graph.column(p));
    agg.row(v) /= static_cast<float>(1 + ds.graph.degree(v));
  }
  const double acc_raw = linear_accuracy(ds, raw), acc_agg = linear_accuracy(ds, agg);
  EXPECT_GT(acc_agg, 0.9) << "raw " << acc_raw;
  EXPECT_LT(acc_raw, acc_agg - 0.1) << "the graph should matter";
  EXPECT_GT(acc_raw, 0.4) << "features alone should carry some signal";
}

TEST(Sbm, DeterministicAndParameterised) {
  const Dataset a = generate_sbm(parse_sbm_params("nodes=600,classes=3,seed=5"));
  const Dataset b = generate_sbm(parse_sbm_params("nodes=600,classes=3,seed=5"));
  testing::expect_same_dataset(a, b);
  const Dataset c = generate_sbm(parse_sbm_params("nodes=600,classes=3,seed=6"));
  EXPECT_FALSE(a.graph.same_structure(c.graph));
  const Dataset d = generate_sbm(parse_sbm_params("nodes=300,classes=4,avg_degree=6,feature_dim=7,train=0.5,val=0.25"));
  EXPECT_EQ(d.features.cols(), 7);
  EXPECT_EQ(d.num_edges(), 300 * 6);
  EXPECT_EQ(d.splits.train_size(), 150);
  EXPECT_EQ(d.splits.val_size(), 75);
  EXPECT_EQ(d.source, "sbm:nodes=300,classes=4,avg_degree=6,ratio=20,feature_dim=7,noise=3.5,seed=1,train=0.5,val=0.25");
}

TEST(RelationalSbm, TypedRelationsShiftBlocksAndComeWithTheirInverses) {
  const Dataset ds =
      generate_relational_sbm(parse_relational_sbm_params("nodes=600,types=2,relations=4,classes=3,seed=2"));
  ASSERT_TRUE(ds.is_hetero());
  const HeteroGraph& h = *ds.hetero;
  ASSERT_EQ(h.num_node_types(), 2);
  EXPECT_EQ(h.node_types()[0].name, "t0");
  EXPECT_EQ(h.node_types()[1].count, 600);
  EXPECT_EQ(ds.target_node_type, 0);
  EXPECT_EQ(ds.num_nodes(), 1200);
  // avg_degree 8 over 2 x 600 nodes: 4,800 edges per direction, 1,200 per relation.
  EXPECT_EQ(ds.num_edges(), 1200 * 8);
  ASSERT_EQ(h.num_relations(), 8);
  const std::vector<std::string> want{"t0-r0->t1", "t1-r1->t0", "t0-r2->t0", "t1-r3->t1"};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(h.relation(r).str(), want[r]);
    EXPECT_EQ(h.relation(r).adj.nnz(), 1200);
    const int inv = h.find_relation("rev-r" + std::to_string(r));
    ASSERT_GE(inv, 0) << r;
    EXPECT_TRUE(h.relation(inv).adj.same_structure(h.relation(r).adj.transpose())) << r;
  }
  EXPECT_EQ(ds.class_counts(), (std::vector<int64_t>{200, 200, 200}));
  EXPECT_EQ(ds.splits.train_size(), 360);
  EXPECT_EQ(ds.splits.test_size(), 120);
  for (const FeatureMatrix& f : ds.type_features) EXPECT_FALSE(f.defined());
  // r2 runs t0 -> t0 and shifts blocks by 2: a source sits in its destination's
  // block + 2 with probability q + (1 - q) / C, q = 8·200 / (8·200 + 400) = 0.8.
  const Graph& A = h.relation(2).adj;
  const int64_t* y = ds.labels.data<int64_t>();
  int64_t shifted = 0, same = 0, undone = 0, blind = 0;
  for (const auto& [d, s] : testing::edge_pairs(A)) {
    shifted += y[s] == (y[d] + 2) % 3;
    same += y[s] == y[d];
  }
  EXPECT_NEAR(static_cast<double>(shifted) / static_cast<double>(A.nnz()), 0.8 + 0.2 / 3, 0.03);
  EXPECT_NEAR(static_cast<double>(same) / static_cast<double>(A.nnz()), 0.2 / 3, 0.03);
  // So a node's block is its r2 in-neighbours' majority block shifted back, not
  // their majority block: what a weight per relation can learn and one weight cannot.
  for (int64_t v = 0; v < 600; ++v) {
    if (A.degree(v) == 0) continue;
    std::vector<int64_t> votes(3, 0);
    for (int64_t p = A.row_begin(v); p < A.row_end(v); ++p) ++votes[y[A.column(p)]];
    const int64_t top = std::max_element(votes.begin(), votes.end()) - votes.begin();
    undone += (top + 1) % 3 == y[v];
    blind += top == y[v];
  }
  EXPECT_GT(undone, 450);
  EXPECT_LT(blind, 100);

  const Dataset again =
      generate_relational_sbm(parse_relational_sbm_params("nodes=600,types=2,relations=4,classes=3,seed=2"));
  testing::expect_same_dataset(ds, again);
  const Dataset other =
      generate_relational_sbm(parse_relational_sbm_params("nodes=600,types=2,relations=4,classes=3,seed=3"));
  EXPECT_FALSE(ds.graph.same_structure(other.graph));
  const Dataset featured =
      generate_relational_sbm(parse_relational_sbm_params("nodes=50,types=3,relations=1,feature_dim=5"));
  ASSERT_EQ(featured.type_features.size(), 3u);
  for (const FeatureMatrix& f : featured.type_features) EXPECT_EQ(f.cols(), 5);
  EXPECT_EQ(featured.hetero->relation(0).str(), "t0-r0->t1");
  EXPECT_EQ(featured.source,
            "rsbm:nodes=50,types=3,relations=1,classes=4,avg_degree=8,ratio=8,feature_dim=5,noise=1,seed=1,train=0.6,"
            "val=0.2");
  testing::expect_user_error([] { parse_relational_sbm_params("relation=3"); },
                             {"rsbm: unknown parameter 'relation'", "did you mean 'relations'?"});
  testing::expect_user_error([] { parse_relational_sbm_params("nodes=3,classes=4"); },
                             {"4 classes need at least as many nodes per type"});
  testing::expect_user_error([] { parse_relational_sbm_params("nodes=10,relations=1,avg_degree=50"); },
                             {"avg_degree=50 is too dense for 1 relations over 10 nodes per type"});
  testing::expect_user_error(
      [] { generate_relational_sbm(parse_relational_sbm_params("nodes=268435456,types=64,avg_degree=10000")); },
      {"out of host memory: generating 'rsbm:nodes=268435456", "needs about", "available"});
}

TEST(GeneratorErrorTest, UnknownKeysAndBadValuesNameTheKey) {
  testing::expect_user_error([] { parse_rmat_params("sclae=3"); },
                             {"rmat: unknown parameter 'sclae'", "did you mean 'scale'?", "valid keys: scale, edge_factor"});
  testing::expect_user_error([] { parse_rmat_params("scale=abc"); }, {"rmat: parameter 'scale' is 'abc'", "[1, 31]"});
  testing::expect_user_error([] { parse_rmat_params("scale=40"); }, {"'scale' is '40'"});
  testing::expect_user_error([] { parse_rmat_params("a=0.6,b=0.3,c=0.3"); }, {"a + b + c", "exceeds 1"});
  testing::expect_user_error([] { parse_rmat_params("scale"); }, {"rmat: parameter 'scale' is not key=value"});
  testing::expect_user_error([] { parse_rmat_params("seed=1,seed=2"); }, {"'seed' is given twice"});
  testing::expect_user_error([] { parse_er_params("nodes=10,edges=5,avg_degree=2"); }, {"either 'edges' or 'avg_degree'"});
  testing::expect_user_error([] { generate_er(parse_er_params("nodes=3,edges=7")); }, {"7 edges requested", "only 6"});
  testing::expect_user_error([] { parse_er_params("nodes=-4"); }, {"er: parameter 'nodes' is '-4'"});
  testing::expect_user_error([] { parse_sbm_params("classes=5,nodes=3"); }, {"5 classes need at least as many nodes"});
  testing::expect_user_error([] { parse_sbm_params("noize=1"); }, {"sbm: unknown parameter 'noize'", "did you mean 'noise'?"});
  testing::expect_user_error([] { parse_sbm_params("train=0.9,val=0.3"); }, {"train=0.9 + val=0.3 exceeds 1"});
  testing::expect_user_error([] { parse_sbm_params("undirected=maybe"); }, {"unknown parameter 'undirected'"});
  testing::expect_user_error([] { parse_rmat_params("simple=maybe"); }, {"'simple' is 'maybe'", "expected 0 or 1"});
  // Sizes inside the parameters' ranges whose graph no machine holds: refused, not swapped or killed.
  testing::expect_user_error([] { generate_sbm(parse_sbm_params("nodes=268435456,avg_degree=10000")); },
                             {"out of host memory: generating 'sbm:nodes=268435456", "needs about", "available"});
  // R-MAT and Erdős–Rényi too, before a single edge is drawn (2^34 edges: ~900 GiB).
  testing::expect_user_error(
      [] { generate_rmat(parse_rmat_params("scale=31,edge_factor=8")); },
      {"out of host memory: generating 'rmat:scale=31,edge_factor=8", "needs about", "available"});
  testing::expect_user_error([] { generate_er(parse_er_params("nodes=1000000000,avg_degree=16")); },
                             {"out of host memory: generating 'er:nodes=1000000000", "needs about", "available"});
}

}  // namespace
}  // namespace strata::data
