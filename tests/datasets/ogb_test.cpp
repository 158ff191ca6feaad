// OGB raw layout: ogbl-ddi from the data root, node-property handling on fixture
// folders written here (gzip files written with zlib).
#include <gtest/gtest.h>

#include <cmath>

#include "datasets/ogb.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

TEST(OgbDataTest, DdiCountsAndDirection) {
  STRATA_REQUIRE_DATA("ogb/ogbl_ddi/raw/edge.csv.gz");
  const Dataset ds = load_ogb(testing::data_root() / "ogb/ogbl_ddi", {});
  EXPECT_EQ(ds.name, "ogbl_ddi");
  EXPECT_EQ(ds.num_nodes(), 4267);
  EXPECT_EQ(ds.num_edges(), 1067911);
  EXPECT_TRUE(ds.undirected);  // OGB add_inverse_edge for ogbl-ddi
  EXPECT_EQ(ds.eval_metric, "hits@20");  // OGB master.csv
  EXPECT_EQ(ds.task, Task::LinkPrediction);
  EXPECT_FALSE(ds.features.defined());
  // Each undirected edge is listed once: no pair appears in both directions, no loops.
  const Graph s = ds.graph.symmetrized();
  EXPECT_EQ(s.nnz(), 2 * 1067911);
  const DegreeStats st = ds.graph.degree_stats();
  EXPECT_EQ(st.rows, 4267);
  // Line 1 of edge.csv.gz is "4039,2424": the edge 4039 -> 2424 is row 2424, column 4039.
  const Tensor eid = ds.graph.edge_ids();
  bool found = false;
  for (int64_t p = ds.graph.row_begin(2424); p < ds.graph.row_end(2424); ++p)
    found |= ds.graph.column(p) == 4039 && eid.data<int64_t>()[p] == 0;
  EXPECT_TRUE(found);
  // mapping/nodeidx2drugid.csv.gz: node 0 is DrugBank's DB00001.
  ASSERT_EQ(ds.node_names.size(), 4267u);
  EXPECT_EQ(ds.node_names[0], "DB00001");
  EXPECT_EQ(ds.node_names[1], "DB00002");
}

// A small node-property dataset in the OGB raw layout.
void write_node_dataset(const TempDir& dir, const std::string& name, const std::string& labels) {
  dir.write_gz(name + "/raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n0,2\n");
  dir.write_gz(name + "/raw/num-node-list.csv.gz", "4\n");
  dir.write_gz(name + "/raw/num-edge-list.csv.gz", "5\n");
  dir.write_gz(name + "/raw/node-feat.csv.gz", "0.5,1.0,-2\n1,0,0\n0,0,1e-3\n2.5,3,4\n");
  dir.write_gz(name + "/raw/edge-feat.csv.gz", "1\n2\n3\n4\n5\n");
  dir.write_gz(name + "/raw/node-label.csv.gz", labels);
  dir.write_gz(name + "/split/time/train.csv.gz", "0\n1\n");
  dir.write_gz(name + "/split/time/valid.csv.gz", "2\n");
  dir.write_gz(name + "/split/time/test.csv.gz", "3\n");
}

TEST(Ogb, NodePropertyFeaturesLabelsAndSplits) {
  TempDir dir;
  write_node_dataset(dir, "ogbn_tiny", "2\n0\nnan\n1\n");
  const Dataset ds = load_ogb(dir / "ogbn_tiny", {});
  EXPECT_EQ(ds.task, Task::NodeClassification);
  EXPECT_EQ(ds.num_nodes(), 4);
  EXPECT_EQ(testing::edge_pairs(ds.graph),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 0}, {2, 0}, {2, 1}, {3, 2}}));
  EXPECT_FALSE(ds.undirected);
  EXPECT_EQ(ds.eval_metric, "");  // not in OGB's table
  ASSERT_EQ(ds.features.cols(), 3);
  const Tensor x = ds.features.to_dense();
  EXPECT_FLOAT_EQ(x.data<float>()[2], -2.0f);
  EXPECT_FLOAT_EQ(x.data<float>()[8], 1e-3f);
  EXPECT_EQ(ds.num_classes, 3);
  const int64_t* y = ds.labels.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(y, y + 4), (std::vector<int64_t>{2, 0, -1, 1}));
  EXPECT_EQ(ds.splits.train_size(), 2);
  EXPECT_EQ(ds.splits.val.data<int64_t>()[0], 2);
  EXPECT_EQ(ds.splits.test.data<int64_t>()[0], 3);
  EXPECT_EQ(ds.splits.origin, "split/time");
  // Edge features follow the input edge order, which Graph::edge_ids() keeps.
  ASSERT_TRUE(ds.edge_features.defined());
  EXPECT_EQ(ds.edge_features.shape(), (Shape{5, 1}));
  const Tensor eid = ds.graph.edge_ids();
  for (int64_t p = 0; p < ds.graph.nnz(); ++p) {
    const int64_t e = eid.data<int64_t>()[p];
    EXPECT_FLOAT_EQ(ds.edge_features.data<float>()[e], static_cast<float>(e + 1));
  }
}

// Several split schemes: the one OGB evaluates the dataset on (master.csv's split)
// for a dataset OGB names, else the first by name, each said in the notes.
TEST(Ogb, SplitSchemeIsOgbsForKnownDatasetsElseTheFirstByName) {
  TempDir dir;
  for (const std::string name : {"ogbn-arxiv", "ogbn_mine"}) {
    write_node_dataset(dir, name, "2\n0\n1\n1\n");
    dir.write_gz(name + "/split/random/train.csv.gz", "3\n");
    dir.write_gz(name + "/split/random/valid.csv.gz", "1\n");
    dir.write_gz(name + "/split/random/test.csv.gz", "0\n2\n");
  }
  auto noted = [](const Dataset& ds, const std::string& text) {
    return std::find(ds.notes.begin(), ds.notes.end(), text) != ds.notes.end();
  };
  const Dataset arxiv = load_ogb(dir / "ogbn-arxiv", {});
  EXPECT_EQ(arxiv.splits.origin, "split/time");
  EXPECT_EQ(arxiv.splits.train_size(), 2);
  EXPECT_TRUE(noted(arxiv, "2 split schemes; using 'time' (OGB's for ogbn_arxiv)"));
  const Dataset mine = load_ogb(dir / "ogbn_mine", {});
  EXPECT_EQ(mine.splits.origin, "split/random");
  EXPECT_EQ(mine.splits.test_size(), 2);
  EXPECT_TRUE(noted(mine, "2 split schemes; using 'random' (the first by name; OGB names no scheme for this dataset)"));
}

TEST(Ogb, NodeNamesFromTheMappingFolder) {
  TempDir dir;
  write_node_dataset(dir, "ogbn_named", "2\n0\n1\n1\n");
  EXPECT_TRUE(load_ogb(dir / "ogbn_named", {}).node_names.empty());  // no mapping/: the nodes keep their numbers
  dir.write_gz("ogbn_named/mapping/nodeidx2paperid.csv.gz",
               "node idx,paper id\n0,9657784\n1,39886162\n2,116214155\n3,121432379\n");
  EXPECT_EQ(load_ogb(dir / "ogbn_named", {}).node_names,
            (std::vector<std::string>{"9657784", "39886162", "116214155", "121432379"}));
  // Rows out of order, a count that is not the graph's, two mappings: refused by file and line.
  dir.write_gz("ogbn_named/mapping/nodeidx2paperid.csv.gz", "node idx,paper id\n0,a\n2,b\n1,c\n3,d\n");
  testing::expect_user_error(
      [&] { load_ogb(dir / "ogbn_named", {}); },
      {"nodeidx2paperid.csv.gz:3: node index 2 where 1 was expected (the rows list the nodes in order)"});
  dir.write_gz("ogbn_named/mapping/nodeidx2paperid.csv.gz", "node idx,paper id\n0,a\n1,b\n");
  testing::expect_user_error([&] { load_ogb(dir / "ogbn_named", {}); },
                             {"nodeidx2paperid.csv.gz': 2 node names, but num-node-list says 4 nodes"});
  dir.write_gz("ogbn_named/mapping/nodeidx2paperid.csv.gz", "node idx,paper id\n0,a\n1,b\n2,c\n3,d\n");
  dir.write_gz("ogbn_named/mapping/nodeidx2other.csv.gz", "node idx,x\n0,a\n1,b\n2,c\n3,d\n");
  testing::expect_user_error([&] { load_ogb(dir / "ogbn_named", {}); },
                             {"two node-name mappings", "expected one mapping/nodeidx2*.csv"});
}

TEST(Ogb, MultiLabelColumnsAndKnownUndirectedNames) {
  TempDir dir;
  write_node_dataset(dir, "ogbn-proteins", "1,0,1\n0,0,0\nnan,nan,nan\n0,1,1\n");
  const Dataset ds = load_ogb(dir / "ogbn-proteins", {});
  EXPECT_TRUE(ds.undirected);  // add_inverse_edge = True in OGB's table
  EXPECT_EQ(ds.eval_metric, "rocauc");
  EXPECT_EQ(ds.task, Task::MultiLabelNodeClassification);
  EXPECT_EQ(ds.labels.shape(), (Shape{4, 3}));
  EXPECT_EQ(ds.num_labelled(), 3);
  EXPECT_EQ(ds.class_counts(), (std::vector<int64_t>{1, 1, 2}));
  // A row with some NaN columns is unlabelled, and the loader says so.
  write_node_dataset(dir, "ogbn-partial", "1,0,1\nnan,1,0\n0,0,0\n0,1,1\n");
  const Dataset partial = load_ogb(dir / "ogbn-partial", {});
  EXPECT_EQ(partial.num_labelled(), 3);
  EXPECT_EQ(partial.labels.data<int64_t>()[1 * 3], -1);
  const std::string said =
      "node-label.csv.gz: 1 node(s) have NaN in some but not all of the 3 label columns; they "
      "are treated as unlabelled";
  EXPECT_EQ(std::count_if(partial.notes.begin(), partial.notes.end(),
                          [&](const std::string& n) { return n.find(said) != std::string::npos; }),
            1);
  // Files may also be plain .csv, and the folder may be raw/ itself.
  dir.write("plain/edge.csv", "0,1\n");
  dir.write("plain/num-node-list.csv", "2\n");
  dir.write("plain/num-edge-list.csv", "1\n");
  EXPECT_EQ(load_ogb(dir / "plain", {}).num_edges(), 1);
}

// A small heterogeneous dataset in OGB's hetero layout (as ogbn-mag ships).
void write_hetero_dataset(const TempDir& dir, const std::string& name) {
  dir.write_gz(name + "/raw/num-node-dict.csv.gz", "author,paper\n3,4\n");
  dir.write_gz(name + "/raw/triplet-type-list.csv.gz", "author,writes,paper\npaper,cites,paper\n");
  dir.write_gz(name + "/raw/relations/author___writes___paper/edge.csv.gz", "0,0\n1,0\n2,3\n");
  dir.write_gz(name + "/raw/relations/author___writes___paper/num-edge-list.csv.gz", "3\n");
  dir.write_gz(name + "/raw/relations/paper___cites___paper/edge.csv.gz", "0,1\n1,2\n");
  dir.write_gz(name + "/raw/relations/paper___cites___paper/num-edge-list.csv.gz", "2\n");
  dir.write_gz(name + "/raw/node-feat/paper/node-feat.csv.gz", "1,0\n0,1\n1,1\n0,0\n");
  dir.write_gz(name + "/raw/node-label/paper/node-label.csv.gz", "0\n2\n1\n0\n");
  dir.write_gz(name + "/split/time/paper/train.csv.gz", "0\n1\n");
  dir.write_gz(name + "/split/time/paper/valid.csv.gz", "2\n");
  dir.write_gz(name + "/split/time/paper/test.csv.gz", "3\n");
}

TEST(Ogb, HeterogeneousLayoutBuildsAHeteroGraph) {
  TempDir dir;
  write_hetero_dataset(dir, "ogbn-mag");
  const Dataset ds = load_ogb(dir / "ogbn-mag", {});
  ASSERT_TRUE(ds.hetero.has_value());
  EXPECT_FALSE(ds.undirected);
  EXPECT_EQ(ds.hetero->num_node_types(), 2);
  EXPECT_EQ(ds.hetero->node_types()[1].name, "paper");
  EXPECT_EQ(ds.hetero->node_types()[1].count, 4);
  ASSERT_EQ(ds.hetero->num_relations(), 2);
  const Relation& writes = ds.hetero->relation(0);
  EXPECT_EQ(writes.str(), "author-writes->paper");
  // author 2 writes paper 3: row 3 (paper), column 2 (author).
  EXPECT_EQ(testing::edge_pairs(writes.adj), (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 1}, {3, 2}}));
  EXPECT_EQ(ds.num_nodes(), 7);
  EXPECT_EQ(ds.num_edges(), 5);
  EXPECT_EQ(ds.target_node_type, 1);
  EXPECT_FALSE(ds.type_features[0].defined());
  EXPECT_EQ(ds.type_features[1].cols(), 2);
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.labels.numel(), 4);
  EXPECT_EQ(ds.splits.origin, "split/time/paper");
  EXPECT_EQ(ds.splits.test.data<int64_t>()[0], 3);
}

TEST(OgbErrorTest, HeterogeneousLayoutErrors) {
  TempDir dir;
  write_hetero_dataset(dir, "a");
  dir.write_gz("a/raw/triplet-type-list.csv.gz", "author,writes,paper\npaper,cites,venue\n");
  testing::expect_user_error([&] { load_ogb(dir / "a", {}); },
                             {"triplet-type-list.csv.gz:2", "node type 'venue' is not in num-node-dict"});
  write_hetero_dataset(dir, "b");
  dir.write_gz("b/raw/relations/author___writes___paper/edge.csv.gz", "0,0\n3,0\n2,3\n");
  testing::expect_user_error([&] { load_ogb(dir / "b", {}); }, {"author___writes___paper/edge.csv.gz:2", "(3, 0)"});
  write_hetero_dataset(dir, "c");
  dir.write_gz("c/raw/relations/paper___cites___paper/num-edge-list.csv.gz", "3\n");
  testing::expect_user_error([&] { load_ogb(dir / "c", {}); }, {"2 edges, but num-edge-list says 3"});
  write_hetero_dataset(dir, "d");
  dir.write_gz("d/raw/node-feat/paper/node-feat.csv.gz", "1,0\n0,1\n");
  testing::expect_user_error([&] { load_ogb(dir / "d", {}); }, {"node-feat.csv.gz", "2 rows, but num-node-dict says 4"});
  write_hetero_dataset(dir, "e");
  dir.write_gz("e/raw/num-node-dict.csv.gz", "author,paper\n3\n");
  testing::expect_user_error([&] { load_ogb(dir / "e", {}); }, {"2 node types on line 1 but 1 counts"});
  // Found by fuzzing: a relation listed twice (was loaded twice, its edges counted
  // twice), a type listed twice (was an error naming no file).
  write_hetero_dataset(dir, "f");
  dir.write_gz("f/raw/triplet-type-list.csv.gz", "author,writes,paper\npaper,cites,paper\nauthor,writes,paper\n");
  testing::expect_user_error([&] { load_ogb(dir / "f", {}); },
                             {"triplet-type-list.csv.gz:3",
                              "relation 'author,writes,paper' is listed again (first on "
                              "line 1)"});
  write_hetero_dataset(dir, "g");
  dir.write_gz("g/raw/num-node-dict.csv.gz", "author,author\n3,4\n");
  testing::expect_user_error([&] { load_ogb(dir / "g", {}); },
                             {"num-node-dict.csv.gz:1", "node type 'author' is listed twice"});
}

TEST(OgbErrorTest, ClassIdsOutOfRange) {
  // Found by fuzzing: 1e30 became INT64_MIN (an internal error), 10^8 a loop over 10^8
  // class names.
  TempDir dir;
  for (const std::string label : {"1e30", "100000000", "inf"}) {
    write_node_dataset(dir, "big", "0\n" + label + "\n1\n0\n");
    testing::expect_user_error([&] { load_ogb(dir / "big", {}); },
                               {"node-label.csv.gz:2", "is not a class id (an integer in [0, 1048576))"});
  }
}

TEST(OgbErrorTest, CountsThatDisagreeIdsOutOfRangeAndDamagedFiles) {
  TempDir dir;
  write_node_dataset(dir, "a", "0\n0\n0\n0\n");
  dir.write_gz("a/raw/num-edge-list.csv.gz", "6\n");
  testing::expect_user_error([&] { load_ogb(dir / "a", {}); },
                             {"edge.csv.gz", "5 edges, but num-edge-list says 6", "disagree"});
  write_node_dataset(dir, "b", "0\n0\n0\n0\n");
  dir.write_gz("b/raw/edge.csv.gz", "0,1\n1,4\n2,3\n3,0\n0,2\n");
  testing::expect_user_error([&] { load_ogb(dir / "b", {}); }, {"edge.csv.gz:2", "(1, 4)", "outside [0, 4)"});
  write_node_dataset(dir, "c", "0\n0\n0\n");
  testing::expect_user_error([&] { load_ogb(dir / "c", {}); }, {"node-label.csv.gz", "3 rows", "says 4"});
  write_node_dataset(dir, "d", "0\n0\n0\n0\n");
  dir.write_gz("d/raw/node-feat.csv.gz", "1,2,3\n1,2\n1,2,3\n1,2,3\n");
  testing::expect_user_error([&] { load_ogb(dir / "d", {}); }, {"node-feat.csv.gz:2", "2 values, expected 3"});
  write_node_dataset(dir, "e", "0\n0\n0\n0\n");
  dir.write_gz("e/raw/edge.csv.gz", "0,1\n1;2\n");
  testing::expect_user_error([&] { load_ogb(dir / "e", {}); }, {"edge.csv.gz:2", "expected '<src>,<dst>'"});
  write_node_dataset(dir, "f", "0\n0\n0\n0\n");
  dir.write_gz("f/raw/edge.csv.gz", "0,1\nx,2\n");
  testing::expect_user_error([&] { load_ogb(dir / "f", {}); }, {"edge.csv.gz:2", "source id is 'x'"});
  write_node_dataset(dir, "g", "0\n0\n0\n0\n");
  const fs::path edges = dir / "g/raw/edge.csv.gz";
  std::string big;
  for (int i = 0; i < 20000; ++i) big += std::to_string(i % 4) + "," + std::to_string((i * 7) % 4) + "\n";
  dir.write_gz("g/raw/edge.csv.gz", big);
  testing::truncate_file(edges, fs::file_size(edges) - 20);
  testing::expect_user_error([&] { load_ogb(dir / "g", {}); }, {"edge.csv.gz", "truncated gzip"});
  write_node_dataset(dir, "h", "0\n0\n0\n0\n");
  fs::remove(dir / "h/raw/num-node-list.csv.gz");
  testing::expect_user_error([&] { load_ogb(dir / "h", {}); }, {"num-node-list.csv.gz", "missing"});
  write_node_dataset(dir, "i", "0\n0\n0\n0\n");
  dir.write_gz("i/raw/num-node-list.csv.gz", "4\n5\n");
  testing::expect_user_error([&] { load_ogb(dir / "i", {}); }, {"num-node-list.csv.gz", "2 counts", "one graph"});
  write_node_dataset(dir, "j", "0\n0\n0\n0\n");
  dir.write_gz("j/split/time/test.csv.gz", "9\n");
  testing::expect_user_error([&] { load_ogb(dir / "j", {}); }, {"test.csv.gz:1", "node id 9 outside [0, 4)"});
  write_node_dataset(dir, "k", "0\n1.5\n0\n0\n");
  testing::expect_user_error([&] { load_ogb(dir / "k", {}); }, {"node-label.csv.gz:2", "is not a class id (an integer in [0, "});
}

}  // namespace
}  // namespace strata::data
