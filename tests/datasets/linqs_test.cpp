// LINQS citation datasets (Cora, Citeseer) and Pubmed-Diabetes: real files with the
// counts their README measured, small fixtures for the layout and the errors.
#include "datasets/linqs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "datasets/pubmed.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

int64_t self_loops(const Graph& g) {
  int64_t k = 0;
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) k += g.column(p) == r;
  return k;
}

// Unique undirected non-loop edges.
int64_t undirected_pairs(const Graph& g) {
  const Graph s = g.symmetrized();
  return (s.nnz() - self_loops(s)) / 2;
}

int64_t node_of(const Dataset& ds, const std::string& name) {
  auto it = std::find(ds.node_names.begin(), ds.node_names.end(), name);
  EXPECT_NE(it, ds.node_names.end()) << name;
  return it - ds.node_names.begin();
}

bool has_edge(const Graph& g, int64_t dst, int64_t src) {
  for (int64_t p = g.row_begin(dst); p < g.row_end(dst); ++p)
    if (g.column(p) == src) return true;
  return false;
}

TEST(CoraDataTest, CountsClassesAndDirectionMatchTheReadme) {
  STRATA_REQUIRE_DATA("citation/cora.tgz");
  const Dataset ds = load_linqs(testing::data_root() / "citation/cora.tgz", {});
  EXPECT_EQ(ds.num_nodes(), 2708);
  EXPECT_EQ(ds.num_edges(), 5429);
  EXPECT_EQ(self_loops(ds.graph), 0);
  EXPECT_EQ(undirected_pairs(ds.graph), 5278);
  EXPECT_FALSE(ds.undirected);
  ASSERT_TRUE(ds.features.defined());
  EXPECT_FALSE(ds.features.is_sparse());
  EXPECT_EQ(ds.features.cols(), 1433);
  const Tensor x = ds.features.to_dense();
  int64_t nnz = 0, other = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    nnz += v == 1.0f;
    other += v != 0.0f && v != 1.0f;
  }
  EXPECT_EQ(nnz, 49216);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(ds.num_classes, 7);
  EXPECT_EQ(ds.num_labelled(), 2708);
  std::map<std::string, int64_t> counts;
  const auto c = ds.class_counts();
  for (int64_t k = 0; k < ds.num_classes; ++k) counts[ds.class_names[k]] = c[k];
  EXPECT_EQ(counts, (std::map<std::string, int64_t>{{"Neural_Networks", 818},
                                                    {"Probabilistic_Methods", 426},
                                                    {"Genetic_Algorithms", 418},
                                                    {"Theory", 351},
                                                    {"Case_Based", 298},
                                                    {"Reinforcement_Learning", 217},
                                                    {"Rule_Learning", 180}}));
  // cora.cites line 1 is "35<TAB>1033": paper 1033 cites paper 35, so the edge runs
  // 1033 -> 35 (row 35 lists column 1033), and not the other way.
  const int64_t p35 = node_of(ds, "35"), p1033 = node_of(ds, "1033");
  EXPECT_TRUE(has_edge(ds.graph, p35, p1033));
  EXPECT_FALSE(has_edge(ds.graph, p1033, p35));
  EXPECT_EQ(ds.graph.degree_stats().rows, 2708);
  EXPECT_TRUE(ds.splits.empty());
}

TEST(CiteseerDataTest, StringIdsCitedOnlyNodesAndSelfLoops) {
  STRATA_REQUIRE_DATA("citation/citeseer.tgz");
  const Dataset ds = load_linqs(testing::data_root() / "citation/citeseer.tgz", {});
  EXPECT_EQ(ds.num_nodes(), 3327);
  EXPECT_EQ(ds.num_edges(), 4732);
  EXPECT_EQ(self_loops(ds.graph), 124);
  // README: 4536 unique undirected non-loop edges between papers with content; the
  // 15 cited-only papers add 16 more.
  EXPECT_EQ(undirected_pairs(ds.graph), 4552);
  int64_t content_pairs = 0;
  for (const auto& [d, s] : testing::edge_pairs(ds.graph.symmetrized()))
    content_pairs += d < s && s < 3312;
  EXPECT_EQ(content_pairs, 4536);
  EXPECT_EQ(ds.features.cols(), 3703);
  EXPECT_EQ(ds.num_classes, 6);
  EXPECT_EQ(ds.num_labelled(), 3312);
  const auto c = ds.class_counts();
  std::map<std::string, int64_t> counts;
  for (int64_t k = 0; k < ds.num_classes; ++k) counts[ds.class_names[k]] = c[k];
  EXPECT_EQ(counts, (std::map<std::string, int64_t>{
                        {"DB", 701}, {"IR", 668}, {"Agents", 596}, {"ML", 590}, {"HCI", 508}, {"AI", 249}}));
  // The 15 cited-only papers come last, with zero features and label -1.
  const Tensor x = ds.features.to_dense();
  int64_t nnz = 0;
  for (int64_t i = 0; i < x.numel(); ++i) nnz += x.data<float>()[i] != 0.0f;
  EXPECT_EQ(nnz, 105165);
  for (int64_t v = 3312; v < 3327; ++v) {
    EXPECT_EQ(ds.labels.data<int64_t>()[v], -1);
    EXPECT_EQ(ds.features.row_nnz(v), 0);
  }
  // Ids are strings such as "abowd00charting".
  EXPECT_NE(std::find(ds.node_names.begin(), ds.node_names.end(), "abowd00charting"), ds.node_names.end());
  int64_t isolated = 0;
  const Graph s = ds.graph.symmetrized();
  for (int64_t v = 0; v < 3312; ++v) {
    bool other = false;
    for (int64_t p = s.row_begin(v); p < s.row_end(v); ++p) other |= s.column(p) != v;
    isolated += !other;
  }
  EXPECT_EQ(isolated, 48);
}

const char* kContent =
    "p1\t0\t1\t0\tA\n"
    "p2\t1\t1\t0\tB\n"
    "p3\t0\t0\t1\tA\n";
const char* kCites = "p1\tp2\np1\tp3\np3\tp9\n";

TEST(Linqs, FolderAndArchiveLayoutsGiveTheSameDataset) {
  TempDir dir;
  dir.write("tiny/tiny.content", kContent);
  dir.write("tiny/tiny.cites", kCites);
  testing::write_archive(dir / "tiny.tgz", "tgz", {{"tiny/README", "x"}, {"tiny/tiny.cites", kCites},
                                                   {"tiny/tiny.content", kContent}});
  SourceOptions opt;
  opt.name = "tiny";
  const Dataset a = load_linqs(dir / "tiny", opt);
  Dataset b = load_linqs(dir / "tiny.tgz", opt);
  b.source = a.source;
  testing::expect_same_dataset(a, b);
  EXPECT_EQ(a.num_nodes(), 4);  // p9 occurs only in .cites
  EXPECT_EQ(a.node_names, (std::vector<std::string>{"p1", "p2", "p3", "p9"}));
  EXPECT_EQ(testing::edge_pairs(a.graph), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {0, 2}, {2, 3}}));
  EXPECT_EQ(a.class_names, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(a.labels.data<int64_t>()[1], 1);
  EXPECT_EQ(a.labels.data<int64_t>()[3], -1);
  EXPECT_EQ(a.features.to_dense().data<float>()[1 * 3 + 0], 1.0f);
  // No split in the files; the note says where the published one comes from.
  EXPECT_TRUE(a.splits.empty());
  EXPECT_NE(std::find_if(a.notes.begin(), a.notes.end(),
                         [](const std::string& n) {
                           return n.find("no train/val/test split in the LINQS files (Planetoid's public split") == 0 &&
                                  n.find("scripts/planetoid_convert.py") != std::string::npos;
                         }),
            a.notes.end());
}

TEST(LinqsErrorTest, MalformedRowsNameFileAndLine) {
  TempDir dir;
  dir.write("a/a.content", "p1\t0\t1\tA\np2\t0\tB\n");
  dir.write("a/a.cites", kCites);
  testing::expect_user_error([&] { load_linqs(dir / "a", {}); },
                             {"a.content:2", "expected 4 TAB-separated fields", "found 3"});
  dir.write("b/b.content", "p1\t0\tx\tA\n");
  dir.write("b/b.cites", "");
  testing::expect_user_error([&] { load_linqs(dir / "b", {}); }, {"b.content:1", "feature 2", "'x'"});
  dir.write("c/c.content", kContent);
  dir.write("c/c.cites", "p1\tp2\tp3\n");
  testing::expect_user_error([&] { load_linqs(dir / "c", {}); }, {"c.cites:1", "expected '<cited_id> TAB <citing_id>'"});
  dir.write("d/d.content", "p1\t0\tA\np1\t1\tB\n");
  dir.write("d/d.cites", "");
  testing::expect_user_error([&] { load_linqs(dir / "d", {}); }, {"d.content", "'p1' appears twice"});
  dir.write("e/e.content", kContent);
  testing::expect_user_error([&] { load_linqs(dir / "e", {}); }, {"no <name>.cites file"});
  testing::expect_user_error([&] { load_linqs(dir / "missing.tgz", {}); }, {"missing.tgz", "does not exist"});
  dir.write("f/f.content", "p1\t0\tnan\tA\n");
  dir.write("f/f.cites", "");
  testing::expect_user_error([&] { load_linqs(dir / "f", {}); },
                             {"f.content:1", "feature 2 is 'nan', expected a finite number"});
}

TEST(PubmedDataTest, StructureOnlyWithANote) {
  STRATA_REQUIRE_DATA("citation/pubmed-diabetes/Pubmed-Diabetes.DIRECTED.cites.tab");
  const Dataset ds = load_pubmed(testing::data_root() / "citation/pubmed-diabetes", {});
  EXPECT_EQ(ds.num_nodes(), 19717);
  EXPECT_EQ(ds.num_edges(), 44338);
  EXPECT_EQ(self_loops(ds.graph), 3);
  EXPECT_EQ(undirected_pairs(ds.graph), 44324);
  EXPECT_FALSE(ds.features.defined());
  EXPECT_FALSE(ds.labels.defined());
  EXPECT_EQ(ds.task, Task::None);
  bool noted = false;
  for (const auto& n : ds.notes) noted |= n.find("features and labels missing") != std::string::npos;
  EXPECT_TRUE(noted);
  // Line 3 is "33824<TAB>paper:19127292<TAB>|<TAB>paper:17363749": 19127292 -> 17363749.
  EXPECT_TRUE(has_edge(ds.graph, node_of(ds, "17363749"), node_of(ds, "19127292")));
}

TEST(Pubmed, NodeFileGivesFeaturesAndLabels) {
  TempDir dir;
  dir.write("pm/Pubmed-Diabetes.DIRECTED.cites.tab",
            "DIRECTED\tcites\nNO_FEATURES\n1\tpaper:10\t|\tpaper:20\n2\tpaper:30\t|\tpaper:10\n3\tpaper:10\t|\tpaper:40\n");
  dir.write("pm/Pubmed-Diabetes.NODE.paper.tab",
            "NODE\tpaper\n"
            "cat=1,2,3:label\tnumeric:w-rat:0.0\tnumeric:w-insulin:0.0\tnumeric:w-cell:0.0\tstring:summary\n"
            "20\tlabel=2\tw-cell=0.25\tw-rat=0.5\tsummary=w-cell,w-rat\n"
            "10\tlabel=1\tw-insulin=0.125\tsummary=w-insulin\n"
            "30\tlabel=3\tsummary=\n");
  const Dataset ds = load_pubmed(dir / "pm", {});
  EXPECT_EQ(ds.task, Task::NodeClassification);
  EXPECT_EQ(ds.num_nodes(), 4);  // 40 only occurs as an edge endpoint
  EXPECT_EQ(ds.node_names, (std::vector<std::string>{"20", "10", "30", "40"}));
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"1", "2", "3"}));
  const int64_t* y = ds.labels.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(y, y + 4), (std::vector<int64_t>{1, 0, 2, -1}));
  ASSERT_EQ(ds.features.cols(), 3);
  const Tensor x = ds.features.to_dense();
  EXPECT_EQ(std::vector<float>(x.data<float>(), x.data<float>() + 6), (std::vector<float>{0.5f, 0, 0.25f, 0, 0.125f, 0}));
  // Edges run left -> right: 10 -> 20 is row 0 (paper 20), column 1 (paper 10).
  EXPECT_TRUE(has_edge(ds.graph, 0, 1));
  EXPECT_TRUE(has_edge(ds.graph, 1, 2));
}

TEST(PubmedErrorTest, MalformedLinesAndUnknownFeatures) {
  TempDir dir;
  dir.write("a/Pubmed-Diabetes.DIRECTED.cites.tab", "DIRECTED\tcites\nNO_FEATURES\n1\tpaper:10\tpaper:20\n");
  testing::expect_user_error([&] { load_pubmed(dir / "a", {}); },
                             {"DIRECTED.cites.tab:3", "expected '<edge_id> TAB paper:<pmid> TAB | TAB paper:<pmid>'"});
  dir.write("b/Pubmed-Diabetes.DIRECTED.cites.tab", "1\tpaper:10\t|\tpmid:20\n");
  testing::expect_user_error([&] { load_pubmed(dir / "b", {}); }, {"cites.tab:1", "'pmid:20'", "paper:<pmid>"});
  dir.write("c/Pubmed-Diabetes.DIRECTED.cites.tab", "1\tpaper:10\t|\tpaper:20\n");
  dir.write("c/Pubmed-Diabetes.NODE.paper.tab",
            "NODE\tpaper\ncat=1,2:label\tnumeric:w-a:0.0\tstring:summary\n10\tlabel=1\tw-b=0.5\n");
  testing::expect_user_error([&] { load_pubmed(dir / "c", {}); }, {"NODE.paper.tab:3", "feature 'w-b' is not declared"});
  dir.write("d/Pubmed-Diabetes.DIRECTED.cites.tab", "1\tpaper:10\t|\tpaper:20\n");
  dir.write("d/Pubmed-Diabetes.NODE.paper.tab",
            "NODE\tpaper\ncat=1,2:label\tnumeric:w-a:0.0\n10\tlabel=7\tw-a=0.5\n");
  testing::expect_user_error([&] { load_pubmed(dir / "d", {}); }, {"NODE.paper.tab:3", "label '7'"});
  testing::expect_user_error([&] { load_pubmed(dir / "none", {}); }, {"none", "is not a folder"});
}

}  // namespace
}  // namespace strata::data
