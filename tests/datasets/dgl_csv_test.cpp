// DGL's CSVDataset folders: the guide's examples (featureless, features + labels +
// masks), remapped string ids, several edge files, the cache, and every refusal with
// the file, line and what was expected.
#include "datasets/dgl_csv.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/rng.h"
#include "datasets/load.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::expect_user_error;
using testing::TempDir;

std::vector<int64_t> ints(const Tensor& t) {
  return t.defined() ? std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel()) : std::vector<int64_t>{};
}

const char* kMeta = "dataset_name: mini\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n";

TEST(DglCsvTest, FeaturelessGraphKeepsIdsAndDirection) {
  TempDir d;
  d.write("meta.yaml", kMeta);
  d.write("nodes.csv", "node_id\n0\n1\n2\n3\n4\n");
  d.write("edges.csv", "src_id,dst_id\n4,4\n4,1\n3,0\n4,1\n4,0\n1,2\n1,3\n3,3\n1,1\n4,1\n");
  const Dataset ds = load_dgl_csv(d.path(), {});
  EXPECT_EQ(ds.name, "mini");
  EXPECT_EQ(ds.format, "dglcsv");
  EXPECT_EQ(ds.num_nodes(), 5);
  EXPECT_EQ(ds.num_edges(), 10);  // duplicates kept, as DGL keeps them
  EXPECT_FALSE(ds.undirected);
  EXPECT_EQ(ds.task, Task::None);
  EXPECT_FALSE(ds.features.defined());
  EXPECT_TRUE(ds.splits.empty());
  // Rows are destinations: 4 -> 1 three times lands in row 1.
  const auto pairs = testing::edge_pairs(ds.graph);
  EXPECT_EQ(std::count(pairs.begin(), pairs.end(), std::make_pair(int64_t{1}, int64_t{4})), 3);
  EXPECT_EQ(std::count(pairs.begin(), pairs.end(), std::make_pair(int64_t{0}, int64_t{3})), 1);
}

// A shuffled, string-named graph: every node's features, label, every edge's weight and
// edge features must land on the node and the edge they were written for, however the
// loader renumbers nodes and sorts rows (a weight once stayed at its input position).
TEST(DglCsvTest, EveryValueLandsOnItsNodeAndEdgeInAShuffledGraph) {
  TempDir d;
  Rng rng(12);
  const int64_t n = 200;
  const std::vector<int64_t> order = rng.permutation(n);  // the rows of nodes.csv
  std::string nodes = "node_id,label,feat\n", edges = "src_id,dst_id,weight,feat\n";
  for (int64_t k : order) nodes += fmt::format("n{},{},\"{}, 0.5\"\n", k, k % 3, k);
  for (int e = 0; e < 1500; ++e) {
    const auto u = static_cast<int64_t>(rng.below(n)), v = static_cast<int64_t>(rng.below(n));
    edges += fmt::format("n{},n{},{},\"{}\"\n", u, v, 1000 * v + u, e);
  }
  d.write("meta.yaml", kMeta);
  d.write("nodes.csv", nodes);
  d.write("edges.csv", edges);
  const Dataset ds = load_dgl_csv(d.path(), {});
  ASSERT_EQ(ds.num_nodes(), n);
  ASSERT_EQ(ds.node_names.size(), static_cast<size_t>(n));
  const auto number = [&](int64_t i) { return std::stoll(ds.node_names[static_cast<size_t>(i)].substr(1)); };
  const Tensor x = ds.features.to_dense();
  int64_t wrong_nodes = 0, wrong_edges = 0;
  for (int64_t i = 0; i < n; ++i)
    wrong_nodes += x.data<float>()[2 * i] != static_cast<float>(number(i)) || ints(ds.labels)[i] != number(i) % 3;
  const Tensor eid = ds.graph.edge_ids();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t p = ds.graph.row_begin(r); p < ds.graph.row_end(r); ++p) {
      const float w = ds.graph.values().data<float>()[p];
      wrong_edges += w != static_cast<float>(1000 * number(r) + number(ds.graph.column(p)));
      // The edge's features, by its input edge id, belong to the same line of edges.csv.
      const int64_t line = eid.data<int64_t>()[p];
      wrong_edges += ds.edge_features.data<float>()[line] != static_cast<float>(line);
    }
  EXPECT_EQ(wrong_nodes, 0);
  EXPECT_EQ(wrong_edges, 0) << "of " << ds.graph.nnz() << " edges";
}

TEST(DglCsvTest, FeaturesLabelsMasksWeightsAndEdgeFeatures) {
  TempDir d;
  d.write("meta.yaml", "version: 1.0.0\n" + std::string(kMeta));
  // Ids 0..4 out of order; masks as pandas writes them; a column Strata does not read.
  d.write("nodes.csv",
          "node_id,label,train_mask,val_mask,test_mask,feat,year\n"
          "3,0,True,False,False,\"0.5, 0.25, 1\",2001\n"
          "0,1,False,True,False,\"1, 2, 3\",2002\n"
          "1,2,false,false,true,\"-1,0,0.5\",2003\n"
          "2,1,0,0,1,\"[4, 5, 6]\",2004\n"
          "4,0,1,0,0,\"7,8,9\",2005\n");
  d.write("edges.csv", "src_id,dst_id,weight,feat\n0,1,0.5,\"1,2\"\n1,2,2,\"3,4\"\n3,0,-1,\"5,6\"\n");
  const Dataset ds = load_dgl_csv(d / "meta.yaml", {});  // meta.yaml itself names the folder too
  ASSERT_EQ(ds.num_nodes(), 5);
  EXPECT_EQ(ds.task, Task::NodeClassification);
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ints(ds.labels), (std::vector<int64_t>{1, 2, 1, 0, 0}));
  const Tensor x = ds.features.to_dense();
  ASSERT_EQ(x.shape(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(x.data<float>()[3 * 3 + 1], 0.25f);  // node 3's row
  EXPECT_EQ(x.data<float>()[2 * 3 + 2], 6.0f);   // "[4, 5, 6]" for node 2
  EXPECT_EQ(ints(ds.splits.train), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ints(ds.splits.val), (std::vector<int64_t>{0}));
  EXPECT_EQ(ints(ds.splits.test), (std::vector<int64_t>{1, 2}));
  EXPECT_NE(ds.splits.origin.find("nodes.csv"), std::string::npos) << ds.splits.origin;
  EXPECT_TRUE(ds.node_names.empty()) << "ids 0..N-1 are kept as they are";
  ASSERT_TRUE(ds.graph.has_values());
  // Row 2 (destination) holds the edge 1 -> 2 with weight 2.
  ASSERT_EQ(ds.graph.row_end(2) - ds.graph.row_begin(2), 1);
  EXPECT_EQ(ds.graph.column(ds.graph.row_begin(2)), 1);
  EXPECT_EQ(ds.graph.values().data<float>()[ds.graph.row_begin(2)], 2.0f);
  ASSERT_TRUE(ds.edge_features.defined());
  EXPECT_EQ(ds.edge_features.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ds.edge_features.data<float>()[5], 6.0f);  // by input edge id
  bool noted = false;
  for (const auto& n : ds.notes) noted |= n == "nodes.csv: columns not read: year";
  EXPECT_TRUE(noted);
}

TEST(DglCsvTest, StringIdsAreNumberedInFileOrderAndEdgeFilesConcatenate) {
  TempDir d;
  d.write("meta.yaml",
          "dataset_name: people\nseparator: ';'\nedge_data:\n- file_name: a.csv\n  etype: [user, follows, user]\n"
          "- file_name: b.csv\n  etype: [user, follows, user]\n  src_id_field: from\n  dst_id_field: to\n"
          "node_data:\n- file_name: users.csv\n  ntype: user\n  node_id_field: name\n");
  d.write("users.csv", "name;label\nbob;1\nann;0\n\"c;d\";1\n");
  d.write("a.csv", "src_id;dst_id\nbob;ann\n");
  d.write("b.csv", "from;to\nann;\"c;d\"\n\"c;d\";bob\n");
  const Dataset ds = load_dgl_csv(d.path(), {});
  EXPECT_EQ(ds.node_names, (std::vector<std::string>{"bob", "ann", "c;d"}));
  EXPECT_EQ(ds.num_edges(), 3);
  const auto pairs = testing::edge_pairs(ds.graph);
  EXPECT_EQ(pairs, (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 0}, {2, 1}}));
}

TEST(DglCsvTest, FolderIsFoundByNameAndCachedLikeEveryTextFormat) {
  TempDir d;
  d.write("ds/meta.yaml", kMeta);
  d.write("ds/nodes.csv", "node_id,label\n0,0\n1,1\n2,0\n");
  d.write("ds/edges.csv", "src_id,dst_id\n0,1\n1,2\n");
  LoadOptions o;
  o.data_root = d.path();
  o.cache_dir = d / "cache";
  LoadReport first, second;
  const Dataset a = load_dataset((d / "ds").string(), o, &first);  // a bare folder with meta.yaml
  const Dataset b = load_dataset("dglcsv:ds/meta.yaml", o, &second);
  EXPECT_EQ(first.cache, CacheStatus::Written);
  EXPECT_EQ(second.cache, CacheStatus::Hit) << "meta.yaml names its folder: the same cache entry";
  testing::expect_same_dataset(a, b);
}

// A synthetic dataset written out in DGL's layout (features printed with %.9g, which
// float32 survives exactly) reads back as the same graph, features and labels.
TEST(DglCsvTest, SyntheticDatasetRoundTripsThroughTheCsvLayout) {
  const Dataset src = load_dataset("sbm:nodes=300,classes=4,avg_degree=6,feature_dim=7,seed=2");
  TempDir d;
  d.write("meta.yaml", kMeta);
  const Tensor x = src.features.to_dense();
  std::string nodes = "node_id,label,feat\n";
  for (int64_t i = 0; i < src.num_nodes(); ++i) {
    nodes += fmt::format("{},{},\"", i, src.labels.data<int64_t>()[i]);
    for (int64_t f = 0; f < x.shape()[1]; ++f)
      nodes += fmt::format("{}{:.9g}", f ? ", " : "", x.data<float>()[i * x.shape()[1] + f]);
    nodes += "\"\n";
  }
  d.write("nodes.csv", nodes);
  std::string edges = "src_id,dst_id\n";
  for (int64_t r = 0; r < src.graph.num_rows(); ++r)
    for (int64_t p = src.graph.row_begin(r); p < src.graph.row_end(r); ++p)
      edges += fmt::format("{},{}\n", src.graph.column(p), r);
  d.write("edges.csv", edges);
  const Dataset back = load_dgl_csv(d.path(), {});
  // The same structure (edge ids differ: the file lists the edges row by row).
  EXPECT_TRUE(src.graph.same_structure(back.graph));
  EXPECT_EQ(testing::edge_pairs(src.graph), testing::edge_pairs(back.graph));
  testing::expect_same_tensor(x, back.features.to_dense(), "features");
  testing::expect_same_tensor(src.labels, back.labels, "labels");
  EXPECT_EQ(back.num_classes, src.num_classes);
}

// Two node types and two edge types: a heterograph with inverse relations, per-type
// features, and labels and splits on the one labelled type.
TEST(DglCsvTest, HeterogeneousGraphHasTypedRelationsAndALabelledType) {
  TempDir d;
  d.write("meta.yaml",
          "dataset_name: shop\nedge_data:\n- file_name: follows.csv\n  etype: [user, follows, user]\n"
          "- file_name: likes.csv\n  etype: [user, likes, item]\nnode_data:\n- file_name: users.csv\n  ntype: user\n"
          "- file_name: items.csv\n  ntype: item\n");
  d.write("users.csv",
          "node_id,label,train_mask,test_mask,feat\nu1,1,True,False,\"1,2\"\nu2,0,False,True,\"3,4\"\n"
          "u3,1,True,False,\"5,6\"\n");
  d.write("items.csv", "node_id,price,train_mask\n0,3,True\n1,4,False\n");
  d.write("follows.csv", "src_id,dst_id\nu1,u2\nu2,u3\n");
  d.write("likes.csv", "src_id,dst_id,weight\nu1,0,2\nu3,1,1\nu3,0,1\n");
  const Dataset ds = load_dgl_csv(d.path(), {});
  ASSERT_TRUE(ds.is_hetero());
  const HeteroGraph& hg = *ds.hetero;
  ASSERT_EQ(hg.num_node_types(), 2);
  EXPECT_EQ(hg.node_types()[0].name, "user");
  EXPECT_EQ(hg.node_types()[1].count, 2);
  ASSERT_EQ(hg.num_relations(), 4);  // follows, likes and their inverses
  EXPECT_EQ(hg.relation(1).str(), "user-likes->item");
  EXPECT_EQ(hg.relation(1).adj.num_rows(), 2);  // items are the destinations
  EXPECT_EQ(hg.relation(1).adj.num_cols(), 3);
  EXPECT_EQ(hg.relation(1).adj.nnz(), 3);
  EXPECT_TRUE(hg.relation(1).adj.has_values());
  EXPECT_EQ(hg.relation(3).str(), "item-rev-likes->user");
  EXPECT_TRUE(hg.relation(3).is_inverse);
  EXPECT_EQ(ds.num_nodes(), 5);
  EXPECT_EQ(ds.num_edges(), 10);
  EXPECT_EQ(ds.target_node_type, 0);
  EXPECT_EQ(ints(ds.labels), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(ds.node_names, (std::vector<std::string>{"u1", "u2", "u3"}));
  EXPECT_EQ(ints(ds.splits.train), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(ints(ds.splits.test), (std::vector<int64_t>{1}));
  ASSERT_EQ(ds.type_features.size(), 2u);
  EXPECT_EQ(ds.type_features[0].to_dense().data<float>()[5], 6.0f);
  EXPECT_FALSE(ds.type_features[1].defined()) << "items have no feat column";
  bool noted = false;
  bool masks_noted = false;
  for (const auto& n : ds.notes) {
    noted |= n == "items.csv: columns not read: price";
    masks_noted |= n == "items.csv: mask columns not read (splits are of the labelled type's nodes)";
  }
  EXPECT_TRUE(noted);
  EXPECT_TRUE(masks_noted);
  // Typed layouts are refused where they are ambiguous.
  auto meta = [&](const std::string& text) {
    d.write("meta.yaml", text);
    return load_dgl_csv(d.path(), {});
  };
  const std::string nodes =
      "node_data:\n- file_name: users.csv\n  ntype: user\n- file_name: items.csv\n  ntype: item\n";
  expect_user_error([&] { meta("dataset_name: x\nedge_data:\n- file_name: likes.csv\n" + nodes); },
                    {"edge file 'likes.csv' has no etype, but the node files are typed"});
  expect_user_error(
      [&] {
        d.write("likes2.csv", "src_id,dst_id\nu1,1\n");
        meta(
            "dataset_name: x\nedge_data:\n- file_name: likes.csv\n  etype: [user, likes, item]\n- file_name: "
            "likes2.csv\n  etype: [user, likes, item]\n" +
            nodes);
      },
      {"edge type [user, likes, item] has two edge files"});
  d.write("items.csv", "node_id,label\n0,3\n1,4\n");
  expect_user_error(
      [&] { meta("dataset_name: x\nedge_data:\n- file_name: likes.csv\n  etype: [user, likes, item]\n" + nodes); },
      {"node types user, item all have a 'label' column; one type is the one classified"});
}

// What pandas and Excel write: -1 for unlabelled, 1.0 in a label column with
// missing values, a byte-order mark before the header.
TEST(DglCsvTest, UnlabelledNodesIntegralFloatLabelsAndAByteOrderMark) {
  TempDir d;
  d.write("meta.yaml", kMeta);
  d.write("nodes.csv", "\xEF\xBB\xBFnode_id,label,train_mask,\n0,-1,False,\n1,1.0,True,\n2,0,False,\n");
  d.write("edges.csv", "src_id,dst_id\n0,1\n");
  const Dataset ds = load_dgl_csv(d.path(), {});
  EXPECT_EQ(ints(ds.labels), (std::vector<int64_t>{-1, 1, 0}));
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_EQ(ints(ds.splits.train), (std::vector<int64_t>{1}));
  bool noted = false;
  for (const auto& n : ds.notes) {
    noted |= n == "nodes.csv: 1 nodes have label -1 (unlabelled)";
    EXPECT_EQ(n.find("columns not read"), std::string::npos) << "a trailing comma is no column: " << n;
  }
  EXPECT_TRUE(noted);
}

TEST(DglCsvErrorTest, EmptyFileNameAndEmptyMetaYaml) {
  TempDir d;
  d.write("nodes.csv", "node_id\n0\n1\n");
  d.write("edges.csv", "src_id,dst_id\n0,1\n");
  // Was "'<folder>/' is a directory, expected a file".
  d.write("meta.yaml", "dataset_name: mini\nedge_data:\n- file_name: ''\nnode_data:\n- file_name: nodes.csv\n");
  expect_user_error([&] { load_dgl_csv(d.path(), {}); },
                    {"meta.yaml:3:", "file_name is empty, expected the name of a CSV file"});
  d.write("meta.yaml", "dataset_name: mini\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: '  '\n");
  expect_user_error([&] { load_dgl_csv(d.path(), {}); }, {"meta.yaml:5:", "file_name is empty"});
  // Was "meta.yaml:0:0: meta.yaml must be a mapping of keys".
  for (const char* text : {"", "# only a comment\n", "\n\n"}) {
    d.write("meta.yaml", text);
    try {
      load_dgl_csv(d.path(), {});
      ADD_FAILURE() << "an empty meta.yaml was accepted";
    } catch (const UserError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("meta.yaml': the file is empty (no keys), expected a mapping with dataset_name"),
                std::string::npos)
          << msg;
      EXPECT_EQ(msg.find(":0:0"), std::string::npos) << msg;
    }
  }
}

TEST(DglCsvTest, BadInputIsNamedWithFileLineAndExpectation) {
  TempDir d;
  auto load = [&](const std::string& meta, const std::string& nodes, const std::string& edges) {
    d.write("meta.yaml", meta);
    d.write("nodes.csv", nodes);
    d.write("edges.csv", edges);
    return load_dgl_csv(d.path(), {});
  };
  const std::string nodes = "node_id,label\n0,0\n1,1\n";
  const std::string edges = "src_id,dst_id\n0,1\n";
  expect_user_error([&] { load(std::string(kMeta) + "colour: red\n", nodes, edges); },
                    {"meta.yaml:6:1: unknown key 'colour' in meta.yaml", "CSVDataset defines: version, dataset_name"});
  expect_user_error([&] { load(std::string(kMeta) + "dataset_name: other\n", nodes, edges); },
                    {"meta.yaml:6:1: key 'dataset_name' appears twice in meta.yaml"});
  expect_user_error(
      [&] {
        load(
            "dataset_name: m\nedge_data:\n- file_name: edges.csv\n  file_name: e2.csv\nnode_data:\n- file_name: "
            "nodes.csv\n",
            nodes, edges);
      },
      {"meta.yaml:4:3: key 'file_name' appears twice in an edge_data entry"});
  expect_user_error(
      [&] { load("edge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n", nodes, edges); },
      {"meta.yaml", "'dataset_name' is required"});
  expect_user_error([&] { load(std::string(kMeta) + "graph_data:\n  file_name: graphs.csv\n", nodes, edges); },
                    {"graph_data makes this a dataset of many graphs (graph classification)"});
  expect_user_error(
      [&] {
        load(
            "dataset_name: h\nedge_data:\n- file_name: edges.csv\n  etype: [user, like, item]\nnode_data:\n"
            "- file_name: nodes.csv\n  ntype: user\n",
            nodes, edges);
      },
      {"edge type [user, like, item] joins types the node files do not list (node type 'user')"});
  expect_user_error([&] { load(std::string(kMeta) + "separator: ab\n", nodes, edges); },
                    {"meta.yaml:6:12: 'separator' must be one character"});
  expect_user_error([&] { load(kMeta, "id,label\n0,0\n", edges); },
                    {"nodes.csv:1: the header has no 'node_id' column (columns: id, label"});
  expect_user_error([&] { load(kMeta, "node_id,label\n0,0\n1,cat\n", edges); },
                    {"nodes.csv:3: label is 'cat', expected an integer"});
  expect_user_error([&] { load(kMeta, "node_id,label\n0,0\n1,-2\n", edges); },
                    {"nodes.csv:3: label is -2, expected a class number in [0, 1048576) or -1 (unlabelled)"});
  // A class number that would make a huge classifier is refused before anything is allocated.
  expect_user_error([&] { load(kMeta, "node_id,label\n0,2000000000\n", edges); },
                    {"nodes.csv:2: label is 2000000000, expected a class number in [0, 1048576)"});
  expect_user_error([&] { load(std::string(kMeta) + "? [a, b]\n: 1\n", nodes, edges); },
                    {"meta.yaml:6:3: a key of meta.yaml is a list, expected a name"});
  expect_user_error([&] { load(kMeta, "node_id,label,label\n0,0,1\n", edges); },
                    {"nodes.csv:1: column 'label' appears twice in the header"});
  expect_user_error([&] { load(kMeta, "node_id,train_mask,test_mask\n0,False,False\n1,0,0\n", edges); },
                    {"the mask columns select no node (every value is False)"});
  expect_user_error(
      [&] {
        load(
            "dataset_name: x\nedge_data:\n- file_name: edges.csv\n- file_name: ./edges.csv\nnode_data:\n"
            "- file_name: nodes.csv\n",
            nodes, edges);
      },
      {"meta.yaml:4:3: edge file 'edges.csv' is listed twice"});
  // Files outside the folder could change without the dataset cache noticing.
  d.write("../outside-" + d.path().filename().string() + ".csv", edges);
  expect_user_error(
      [&] {
        load("dataset_name: x\nedge_data:\n- file_name: ../outside-" + d.path().filename().string() +
                 ".csv\nnode_data:\n- file_name: nodes.csv\n",
             nodes, edges);
      },
      {"meta.yaml:3:", "file_name '../outside-", "lies outside the dataset folder"});
  fs::remove(d.path().parent_path() / ("outside-" + d.path().filename().string() + ".csv"));
  expect_user_error(
      [&] {
        load(
            "dataset_name: h\nedge_data:\n- file_name: edges.csv\n  etype: [a, rev-x, b]\n- file_name: n.csv\n"
            "  etype: [b, x, a]\nnode_data:\n- file_name: nodes.csv\n  ntype: a\n- file_name: nodes.csv\n"
            "  ntype: b\n",
            nodes, edges);
      },
      {"relation names starting with 'rev-' are the inverses the loader adds"});
  expect_user_error([&] { load(kMeta, "node_id,train_mask\n0,yes\n", edges); },
                    {"nodes.csv:2: train_mask is 'yes', expected True, False, 1 or 0"});
  expect_user_error([&] { load(kMeta, "node_id,train_mask,test_mask\n0,True,True\n1,False,False\n", edges); },
                    {"node '0' is in both train_mask and test_mask; the splits must not overlap"});
  expect_user_error([&] { load(kMeta, "node_id,feat\n0,\"1,2\"\n1,\"1,2,3\"\n", edges); },
                    {"nodes.csv:3: feat has 3 values, but the first row had 2"});
  expect_user_error([&] { load(kMeta, "node_id,feat\n0,\"1,x\"\n", edges); }, {"nodes.csv:2", "feat"});
  expect_user_error([&] { load(kMeta, "node_id\n0\n0\n", edges); }, {"node id '0' appears twice"});
  expect_user_error([&] { load(kMeta, nodes, "src_id,dst_id\n0,1\n1,7\n"); },
                    {"edges.csv:3: dst_id '7' is not a node of nodes.csv"});
  expect_user_error([&] { load(kMeta, nodes, "source,dst_id\n0,1\n"); },
                    {"edges.csv:1: the header lacks 'src_id' (columns: source, dst_id"});
  expect_user_error([&] { load(kMeta, nodes, "src_id,dst_id,weight\n0,1,inf\n"); }, {"edges.csv:2", "weight"});
  expect_user_error([&] { load(kMeta, nodes, "src_id,dst_id\n0,1,2\n"); },
                    {"edges.csv:2: 3 fields, but the header has 2"});
  expect_user_error([&] { load_dgl_csv(d / "nowhere", {}); }, {"dgl-csv: '", "is not a folder"});
  fs::create_directories(d / "dir/meta.yaml");
  expect_user_error([&] { load_dgl_csv(d / "dir", {}); }, {"meta.yaml': not a regular file"});
  expect_user_error([&] { load("dataset_name: [1\n", nodes, edges); }, {"meta.yaml:", "not valid YAML"});
}

}  // namespace
}  // namespace strata::data
