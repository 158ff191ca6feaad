// Plain graph files: Matrix Market, SNAP and CSV edge lists, MUSAE folders. Real
// files are checked against the counts in graphs/README.md and the suitesparse table.
#include <gtest/gtest.h>

#include <map>

#include "datasets/edge_list.h"
#include "datasets/matrix_market.h"
#include "datasets/musae.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

// The README's counting rules: records, loops, distinct unordered pairs, and the
// largest degree of the simple undirected graph.
struct Shape4 {
  int64_t records, loops, pairs, max_degree;
};
Shape4 shape_of(const Graph& g) {
  Shape4 s{g.nnz(), 0, 0, 0};
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) s.loops += g.column(p) == r;
  const Graph u = g.symmetrized();
  for (int64_t r = 0; r < u.num_rows(); ++r) {
    int64_t d = 0;
    for (int64_t p = u.row_begin(r); p < u.row_end(r); ++p) d += u.column(p) != r;
    s.pairs += d;
    s.max_degree = std::max(s.max_degree, d);
  }
  s.pairs /= 2;
  return s;
}

void expect_shape(const Dataset& ds, int64_t nodes, Shape4 want) {
  EXPECT_EQ(ds.num_nodes(), nodes) << ds.name;
  const Shape4 got = shape_of(ds.graph);
  EXPECT_EQ(got.records, want.records) << ds.name;
  EXPECT_EQ(got.loops, want.loops) << ds.name;
  EXPECT_EQ(got.pairs, want.pairs) << ds.name;
  EXPECT_EQ(got.max_degree, want.max_degree) << ds.name;
}

TEST(MatrixMarketDataTest, SuiteSparseNonZeros) {
  STRATA_REQUIRE_DATA("suitesparse/karate.mtx");
  const fs::path root = testing::data_root() / "suitesparse";
  struct Want {
    const char* file;
    int64_t n, nnz;
    bool values;
  };
  for (const Want& w : {Want{"karate.mtx", 34, 156, false}, Want{"bcsstk13.mtx", 2003, 83883, true},
                        Want{"ca-GrQc.mtx", 5242, 28980, false}, Want{"luxembourg_osm.mtx", 114599, 239332, false}}) {
    const Dataset ds = load_matrix_market(root / w.file, {});
    EXPECT_EQ(ds.num_nodes(), w.n) << w.file;
    EXPECT_EQ(ds.num_edges(), w.nnz) << w.file;
    EXPECT_EQ(ds.graph.has_values(), w.values) << w.file;
    EXPECT_TRUE(ds.undirected) << w.file;
    // Symmetric files expand to a symmetric matrix.
    EXPECT_TRUE(ds.graph.same_structure(ds.graph.transpose())) << w.file;
  }
}

TEST(MatrixMarket, FieldsSymmetriesCommentsAndGzip) {
  TempDir dir;
  const auto general = dir.write("g.mtx",
                                 "%%MatrixMarket matrix coordinate real general\n% comment\n%\n3 4 3\n"
                                 "1 1 2.5\n3 4 -1e2\n2 1 0.5\n");
  Dataset g = load_matrix_market(general, {});
  EXPECT_EQ(g.graph.num_rows(), 3);
  EXPECT_EQ(g.graph.num_cols(), 4);
  EXPECT_FALSE(g.undirected);
  EXPECT_EQ(testing::edge_pairs(g.graph), (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 0}, {2, 3}}));
  EXPECT_FLOAT_EQ(g.graph.values().data<float>()[2], -100.0f);
  const auto skew = dir.write_gz("s.mtx.gz",
                                 "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 2 7\n");
  Dataset s = load_matrix_market(skew, {});
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.num_edges(), 4);
  EXPECT_EQ(testing::edge_pairs(s.graph), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}, {1, 2}, {2, 1}}));
  // Row 0 holds (0, 1) = -5, mirrored from (1, 0) = 5.
  EXPECT_FLOAT_EQ(s.graph.values().data<float>()[0], -5.0f);
  const auto sym = dir.write("p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\r\n2 2 2\r\n1 1\r\n2 1");
  Dataset p = load_matrix_market(sym, {});
  EXPECT_EQ(p.num_edges(), 3);  // the diagonal entry is not mirrored
  EXPECT_FALSE(p.graph.has_values());
}

TEST(MatrixMarketErrorTest, BannerSizeLineCountsAndIndices) {
  TempDir dir;
  auto load = [&](const std::string& name, const std::string& text) {
    return [&dir, name, text] { load_matrix_market(dir.write(name, text), {}); };
  };
  testing::expect_user_error(load("a.mtx", "3 3 1\n1 1\n"), {"a.mtx:1", "expected the banner"});
  testing::expect_user_error(load("b.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"),
                             {"b.mtx:1", "layout 'array'"});
  testing::expect_user_error(load("c.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"),
                             {"c.mtx:1", "field 'complex'"});
  testing::expect_user_error(load("d.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n"),
                             {"d.mtx", "2 entries, but the size line declares 3", "truncated"});
  testing::expect_user_error(load("e.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 3\n"),
                             {"e.mtx:4", "more entries than the 1 declared"});
  testing::expect_user_error(load("f.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n4 1\n"),
                             {"f.mtx:3", "(4, 1) is outside the 3 x 3 matrix", "1-based"});
  testing::expect_user_error(load("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n0 1\n"),
                             {"g.mtx:3", "(0, 1)"});
  testing::expect_user_error(load("h.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 x\n"),
                             {"h.mtx:3", "value is 'x'"});
  testing::expect_user_error(load("i.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n"),
                             {"i.mtx:3", "expected '<row> <col> <value>'"});
  testing::expect_user_error(load("j.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n"),
                             {"j.mtx:2", "must be square"});
  testing::expect_user_error(load("k.mtx", "%%MatrixMarket matrix coordinate real general\n3 x 1\n"),
                             {"k.mtx:2", "column count is 'x'"});
  testing::expect_user_error(load("m.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n2 2 nan\n"),
                             {"m.mtx:4", "value is 'nan', expected a finite number"});
  testing::expect_user_error(
      load("n.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e60\n"),
      {"n.mtx:3", "value is '1e60', a number float32 cannot hold (non-zero magnitudes from 1.175e-38 to 3.403e+38)"});
  // A size line no machine can hold is refused before anything of that size is allocated.
  testing::expect_user_error(
      load("l.mtx", "%%MatrixMarket matrix coordinate pattern general\n1000000000000000 1000000000000000 1\n1 2\n"),
      {"out of host memory", "l.mtx: a graph of 1000000000000000 rows and 1 entries needs about", "available"});
}

TEST(EdgeListDataTest, SnapGraphs) {
  STRATA_REQUIRE_DATA("graphs/snap-email-Enron/email-Enron.txt.gz");
  const fs::path g = testing::data_root() / "graphs";
  const Dataset enron = load_edge_list(g / "snap-email-Enron/email-Enron.txt.gz", EdgeListStyle::Blank, {});
  expect_shape(enron, 36692, {367662, 0, 183831, 1383});
  EXPECT_FALSE(enron.original_ids.defined());
  const Dataset cm = load_edge_list(g / "snap-ca-CondMat/CA-CondMat.txt", EdgeListStyle::Blank, {});
  expect_shape(cm, 23133, {186936, 58, 93439, 279});
  ASSERT_TRUE(cm.original_ids.defined());
  EXPECT_EQ(cm.original_ids.data<int64_t>()[0], 1);
  EXPECT_EQ(cm.original_ids.data<int64_t>()[23132], 108299);
  const Dataset gn = load_edge_list(g / "snap-p2p-Gnutella31/p2p-Gnutella31.txt", EdgeListStyle::Blank, {});
  expect_shape(gn, 62586, {147892, 0, 147892, 95});
  EXPECT_EQ(gn.graph.transpose().degree_stats().max, 78);  // out-degree (rows of Aᵀ)
  EXPECT_EQ(gn.graph.degree_stats().max, 68);              // in-degree
}

TEST(EdgeListDataTest, CsvAndMusaeGraphs) {
  STRATA_REQUIRE_DATA("graphs/musae-facebook/facebook_edges.csv");
  const fs::path g = testing::data_root() / "graphs";
  const Dataset hu = load_edge_list(g / "deezer-HU/HU_edges.csv", EdgeListStyle::Csv, {});
  expect_shape(hu, 47538, {222887, 0, 222887, 112});

  const Dataset fb = load_musae(g / "musae-facebook", {});
  expect_shape(fb, 22470, {171002, 179, 170823, 709});
  EXPECT_TRUE(fb.undirected);
  EXPECT_EQ(fb.task, Task::NodeClassification);
  std::map<std::string, int64_t> counts;
  const auto c = fb.class_counts();
  for (int64_t k = 0; k < fb.num_classes; ++k) counts[fb.class_names[k]] = c[k];
  EXPECT_EQ(counts, (std::map<std::string, int64_t>{
                        {"government", 6880}, {"company", 6495}, {"politician", 5768}, {"tvshow", 3327}}));
  ASSERT_TRUE(fb.features.is_sparse());
  EXPECT_TRUE(fb.features.is_binary());
  EXPECT_EQ(fb.features.cols(), 4714);
  EXPECT_EQ(fb.features.stored(), 314583);
  EXPECT_EQ(fb.features.to_dense().numel(), 22470 * 4714);

  const Dataset gh = load_musae(g / "musae-github", {});
  expect_shape(gh, 37700, {289003, 0, 289003, 9458});
  EXPECT_EQ(gh.class_names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(gh.class_counts(), (std::vector<int64_t>{27961, 9739}));
  EXPECT_FALSE(gh.features.defined());

  const Dataset sq = load_musae(g / "wikipedia-squirrel", {});
  expect_shape(sq, 5201, {217073, 140, 198353, 1903});
  EXPECT_EQ(sq.task, Task::NodeRegression);
  EXPECT_FALSE(sq.labels.defined());
  float lo = 1e30f, hi = 0;
  for (int64_t i = 0; i < 5201; ++i) {
    lo = std::min(lo, sq.targets.data<float>()[i]);
    hi = std::max(hi, sq.targets.data<float>()[i]);
  }
  EXPECT_EQ(lo, 16.0f);
  EXPECT_EQ(hi, 849131.0f);
  EXPECT_EQ(sq.features.cols(), 3148);
  EXPECT_EQ(sq.features.stored(), 137689);
}

TEST(EdgeList, LineEndingsCommentsWeightsAndRenumbering) {
  TempDir dir;
  const std::string body = "# Nodes: 3 Edges: 3\n%c\n10 20\r\n20\t30\r30   10";
  const auto a = dir.write("a.txt", body);
  const Dataset da = load_edge_list(a, EdgeListStyle::Blank, {});
  EXPECT_EQ(da.num_nodes(), 3);
  // 10 -> 20 becomes 0 -> 1: row 1, column 0.
  EXPECT_EQ(testing::edge_pairs(da.graph), (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 0}, {2, 1}}));
  EXPECT_EQ(std::vector<int64_t>(da.original_ids.data<int64_t>(), da.original_ids.data<int64_t>() + 3),
            (std::vector<int64_t>{10, 20, 30}));
  const Dataset dz = load_edge_list(dir.write_gz("a.txt.gz", body), EdgeListStyle::Blank, {});
  testing::expect_same_graph(da.graph, dz.graph, "gzip and plain");
  const Dataset w = load_edge_list(dir.write("w.csv", "src,dst,w\n0,1,0.5\n1,2,2\n"), EdgeListStyle::Csv, {});
  ASSERT_TRUE(w.graph.has_values());
  EXPECT_FALSE(w.original_ids.defined());  // ids are already 0..N-1
  // Row 1 holds 0 -> 1 (0.5), row 2 holds 1 -> 2 (2).
  EXPECT_FLOAT_EQ(w.graph.values().data<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ(w.graph.values().data<float>()[1], 2.0f);
  const Dataset big = load_edge_list(dir.write("big.txt", "0 1\n5000000000 0\n"), EdgeListStyle::Blank, {});
  EXPECT_EQ(big.num_nodes(), 3);
  EXPECT_EQ(big.original_ids.data<int64_t>()[2], 5000000000);
}

TEST(Musae, TargetsWithQuotesJsonFeaturesAndMissingFiles) {
  TempDir dir;
  dir.write("m/m_edges.csv", "id_1,id_2\n0,1\n1,2\n");
  dir.write("m/m_target.csv", "id,page_name,page_type\n2,\"Zed, Inc.\",company\n0,\"A \"\"quoted\"\" name\",tvshow\n1,B,company\n");
  dir.write("m/m_features.json", R"({"0": [3, 1, 3], "2": [0]})");
  const Dataset ds = load_musae(dir / "m", {});
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"company", "tvshow"}));
  EXPECT_EQ(std::vector<int64_t>(ds.labels.data<int64_t>(), ds.labels.data<int64_t>() + 3),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(ds.features.cols(), 4);
  EXPECT_EQ(ds.features.stored(), 3);  // duplicates in a list count once
  EXPECT_EQ(ds.features.row_nnz(1), 0);
  const Tensor x = ds.features.to_dense();
  EXPECT_EQ(std::vector<float>(x.data<float>(), x.data<float>() + 4), (std::vector<float>{0, 1, 0, 1}));
  dir.write("n/n_edges.csv", "id_1,id_2\n0,4\n");
  const Dataset bare = load_musae(dir / "n", {});
  EXPECT_EQ(bare.num_nodes(), 5);
  EXPECT_EQ(bare.task, Task::None);
}

TEST(EdgeListErrorTest, MalformedLinesAndHeaderCounts) {
  TempDir dir;
  testing::expect_user_error([&] { load_edge_list(dir.write("a.txt", "0 1\n1 2 3 4\n"), EdgeListStyle::Blank, {}); },
                             {"a.txt:2", "found 4"});
  testing::expect_user_error([&] { load_edge_list(dir.write("b.txt", "0 1\n1 x\n"), EdgeListStyle::Blank, {}); },
                             {"b.txt:2", "destination id is 'x'", "expected an integer"});
  testing::expect_user_error(
      [&] { load_edge_list(dir.write("c.txt", "# Nodes: 3 Edges: 5\n0 1\n1 2\n"), EdgeListStyle::Blank, {}); },
      {"c.txt", "2 edge records, but the header line says Edges: 5", "truncated"});
  testing::expect_user_error([&] { load_edge_list(dir.write("d.csv", "a,b\n"), EdgeListStyle::Csv, {}); },
                             {"d.csv", "no edges"});
  testing::expect_user_error([&] { load_edge_list(dir.write("e.csv", "a,b\n0,1\n1,2,0.5\n"), EdgeListStyle::Csv, {}); },
                             {"e.csv:3", "found 3"});
  testing::expect_user_error([&] { load_edge_list(dir / "none.txt", EdgeListStyle::Blank, {}); }, {"none.txt", "cannot open"});
  testing::expect_user_error([&] { load_edge_list(dir.write("n.txt", "0 1\n-3 2\n"), EdgeListStyle::Blank, {}); },
                             {"n.txt:2", "source id is '-3', expected a non-negative integer"});
  testing::expect_user_error([&] { load_edge_list(dir.write("n.csv", "a,b\n0,1\n1,-2\n"), EdgeListStyle::Csv, {}); },
                             {"n.csv:3", "destination id is '-2', expected a non-negative integer"});
  testing::expect_user_error(
      [&] { load_edge_list(dir.write("g.txt", "0 1 0.5\n1 2 inf\n"), EdgeListStyle::Blank, {}); },
      {"g.txt:2", "weight is 'inf', expected a finite number"});
  testing::expect_user_error(
      [&] {
        load_edge_list(dir.write("f.txt", "# Nodes: 99999999999999999999999 Edges: 2\n0 1\n1 2\n"),
                       EdgeListStyle::Blank, {});
      },
      {"f.txt:1", "node count of the '# Nodes: … Edges: …' header '99999999999999999999999' is out of range"});
  // Found by fuzzing: a 100,000-character header overflowed std::regex's recursion.
  testing::expect_user_error(
      [&] {
        load_edge_list(dir.write("h.txt", "# Nodes: " + std::string(100000, '1') + " Edges: 2\n0 1\n1 2\n"),
                       EdgeListStyle::Blank, {});
      },
      {"h.txt:1", "node count of the '# Nodes: … Edges: …' header"});
  const Dataset spaced =
      load_edge_list(dir.write("i.txt", "# Nodes:" + std::string(100000, ' ') + "\n# Nodes:\t3   Edges: 2\n0 1\n1 2\n"),
                     EdgeListStyle::Blank, {});
  EXPECT_EQ(spaced.num_nodes(), 3);
}

TEST(EdgeList, Utf8ByteOrderMarkAtTheStartIsSkipped) {
  TempDir dir;
  const Dataset blank = load_edge_list(dir.write("b.txt",
                                                 "\xEF\xBB\xBF"
                                                 "0 1\n1 2\n"),
                                       EdgeListStyle::Blank, {});
  EXPECT_EQ(blank.num_nodes(), 3);
  EXPECT_EQ(blank.num_edges(), 2);
  const Dataset commented =
      load_edge_list(dir.write("c.txt", "\xEF\xBB\xBF# Nodes: 3 Edges: 2\n0 1\n1 2\n"), EdgeListStyle::Blank, {});
  EXPECT_EQ(commented.num_edges(), 2);
  const EdgeRecords csv = read_edge_records(dir.write("h.csv", "\xEF\xBB\xBFsrc,dst\n0,1\n"), EdgeListStyle::Csv);
  EXPECT_EQ(csv.header, (std::vector<std::string>{"src", "dst"}));
}

TEST(MatrixMarket, Utf8ByteOrderMarkAtTheStartIsSkipped) {
  TempDir dir;
  const Dataset ds = load_matrix_market(
      dir.write("bom.mtx", "\xEF\xBB\xBF%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n"), {});
  EXPECT_EQ(ds.num_nodes(), 3);
  EXPECT_EQ(ds.graph.nnz(), 2);
}

TEST(EdgeListErrorTest, MatrixMarketFileIsRefusedNamingTheMtxPrefix) {
  TempDir dir;
  const std::string mtx = "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 2 1\n2 3 1\n3 4 1\n";
  for (auto style : {EdgeListStyle::Blank, EdgeListStyle::Csv})
    testing::expect_user_error([&] { load_edge_list(dir.write("m.mtx", mtx), style, {}); },
                               {"m.mtx:1: this is a Matrix Market file", "'%%MatrixMarket' banner", "not an edge list",
                                "'mtx:' prefix", "mtx:" + (dir / "m.mtx").string()});
  // Also with a byte-order mark, in lower case, after blank lines.
  testing::expect_user_error(
      [&] {
        load_edge_list(
            dir.write("l.txt", "\xEF\xBB\xBF\n%%matrixmarket matrix coordinate pattern general\n2 2 1\n1 2\n"),
            EdgeListStyle::Blank, {});
      },
      {"l.txt:2: this is a Matrix Market file"});
  // A '%' comment that is not the banner stays a comment.
  EXPECT_EQ(
      load_edge_list(dir.write("p.txt", "% MatrixMarket-like comment\n0 1\n"), EdgeListStyle::Blank, {}).num_edges(),
      1);
}

TEST(EdgeListErrorTest, ControlBytesAndHugeIdsAreQuotedVisibly) {
  TempDir dir;
  // A NUL used to end the message there: "e/nul.txt:2: destination id is '2".
  testing::expect_user_error(
      [&] { load_edge_list(dir.write("nul.txt", std::string("0 1\n1 2") + '\0' + "\n"), EdgeListStyle::Blank, {}); },
      {"nul.txt:2: destination id is '2\\x00', expected an integer"});
  testing::expect_user_error(
      [&] { load_edge_list(dir.write("esc.txt", "0 1\n1 2 3 \x1b[31m\n"), EdgeListStyle::Blank, {}); },
      {"esc.txt:2", "found 4: '1 2 3 \\x1b[31m'"});
  testing::expect_user_error(
      [&] {
        load_edge_list(dir.write("long.txt", "0 1\n1 " + std::string(200, '7') + "x\n"), EdgeListStyle::Blank, {});
      },
      {"long.txt:2: destination id is '" + std::string(60, '7') + "...', expected an integer"});
  testing::expect_user_error(
      [&] { load_edge_list(dir.write("big.txt", "0 1\n99999999999999999999 2\n"), EdgeListStyle::Blank, {}); },
      {"big.txt:2: source id '99999999999999999999' is out of range (at most 9223372036854775807)"});
  // In a CSV the first line is a header unless it starts with an integer, however large.
  testing::expect_user_error(
      [&] { load_edge_list(dir.write("big.csv", "99999999999999999999,2\n"), EdgeListStyle::Csv, {}); },
      {"big.csv:1: source id '99999999999999999999' is out of range"});
}

TEST(MatrixMarketErrorTest, ControlBytesAndHugeSizesAreQuotedVisibly) {
  TempDir dir;
  testing::expect_user_error(
      [&] {
        load_matrix_market(dir.write("n.mtx", std::string("%%MatrixMarket matrix coordinate real gene") + '\0' +
                                                  "ral\n1 1 1\n1 1 1\n"),
                           {});
      },
      {"n.mtx:1: symmetry 'gene\\x00ral' is not supported", "expected general"});
  testing::expect_user_error(
      [&] {
        load_matrix_market(
            dir.write("s.mtx", "%%MatrixMarket matrix coordinate real general\n3 99999999999999999999 1\n"), {});
      },
      {"s.mtx:2: column count '99999999999999999999' is out of range (at most 9223372036854775807)"});
}

TEST(MusaeErrorTest, IdsOutsideTheTargetJsonAndCsvProblems) {
  TempDir dir;
  dir.write("a/a_edges.csv", "id_1,id_2\n0,1\n1,3\n");
  dir.write("a/a_target.csv", "id,page_type\n0,x\n1,y\n2,x\n");
  testing::expect_user_error([&] { load_musae(dir / "a", {}); }, {"a_edges.csv:3", "(1, 3)", "outside 0..2"});
  dir.write("b/b_edges.csv", "id_1,id_2\n0,1\n");
  dir.write("b/b_target.csv", "id,page_type\n0,x\n1,y\n");
  dir.write("b/b_features.json", R"({"0": [1, 2], "7": [1]})");
  testing::expect_user_error([&] { load_musae(dir / "b", {}); }, {"b_features.json", "key \"7\"", "[0, 2)"});
  dir.write("b/b_features.json", R"({"0": [1, -2]})");
  testing::expect_user_error([&] { load_musae(dir / "b", {}); }, {"b_features.json", "node \"0\"", "-2"});
  dir.write("b/b_features.json", R"({"0": [1, 2)");
  testing::expect_user_error([&] { load_musae(dir / "b", {}); }, {"b_features.json", "not valid JSON"});
  dir.write("b/b_features.json", R"({"0": [1], "1": [0], "0": [0]})");  // node 0's words given twice
  testing::expect_user_error([&] { load_musae(dir / "b", {}); },
                             {"b_features.json': the key \"0\" appears twice in the top-level object"});
  dir.write("b/b_features.json", R"({"0": [1], "1": [0], "00": [0]})");  // node 0 again, spelled otherwise
  testing::expect_user_error([&] { load_musae(dir / "b", {}); },
                             {"b_features.json': node 0 is given twice (key \"00\" is another spelling"});
  dir.write("c/c_edges.csv", "id_1,id_2\n0,1\n");
  dir.write("c/c_target.csv", "id,page_type\n0,x\n1,\"y\n");
  testing::expect_user_error([&] { load_musae(dir / "c", {}); }, {"c_target.csv:3", "never closed"});
  dir.write("d/d_edges.csv", "id_1,id_2\n0,1\n");
  dir.write("d/d_target.csv", "key,page_type\n0,x\n");
  testing::expect_user_error([&] { load_musae(dir / "d", {}); }, {"d_target.csv:1", "no 'id' column"});
  dir.write("e/e_edges.csv", "id_1,id_2\n0,1\n");
  dir.write("e/e_target.csv", "id,page_type\n0,x\n0,y\n");
  testing::expect_user_error([&] { load_musae(dir / "e", {}); }, {"e_target.csv", "id 0 appears twice"});
}

}  // namespace
}  // namespace strata::data
