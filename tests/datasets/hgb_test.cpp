// HGB heterographs (ACM, DBLP, IMDB) streamed from their zips, and fixtures for the
// layout rules, multi-label files, the seeded train/val split and the errors.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>

#include "datasets/hgb.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

struct TypeWant {
  std::string name;
  int64_t count;
  int64_t dim;  // 0 = featureless
};

void expect_types(const Dataset& ds, const std::vector<TypeWant>& want) {
  ASSERT_TRUE(ds.hetero.has_value());
  ASSERT_EQ(ds.hetero->num_node_types(), static_cast<int>(want.size()));
  for (size_t t = 0; t < want.size(); ++t) {
    EXPECT_EQ(ds.hetero->node_types()[t].name, want[t].name);
    EXPECT_EQ(ds.hetero->node_types()[t].count, want[t].count) << want[t].name;
    EXPECT_EQ(ds.type_features[t].defined(), want[t].dim > 0) << want[t].name;
    if (want[t].dim > 0) {
      EXPECT_EQ(ds.type_features[t].cols(), want[t].dim) << want[t].name;
      EXPECT_EQ(ds.type_features[t].rows(), want[t].count) << want[t].name;
    }
  }
}

std::vector<int64_t> relation_sizes(const Dataset& ds) {
  std::vector<int64_t> out;
  for (const auto& r : ds.hetero->relations()) out.push_back(r.adj.nnz());
  return out;
}

TEST(HgbDataTest, AcmCounts) {
  STRATA_REQUIRE_DATA("hgb/ACM.zip");
  const Dataset ds = load_hgb(testing::data_root() / "hgb/ACM.zip", {});
  expect_types(ds, {{"paper", 3025, 1902}, {"author", 5959, 1902}, {"subject", 56, 1902}, {"term", 1902, 0}});
  EXPECT_EQ(ds.num_nodes(), 10942);
  EXPECT_EQ(ds.num_edges(), 547872);
  EXPECT_EQ(relation_sizes(ds), (std::vector<int64_t>{5343, 5343, 9949, 9949, 3025, 3025, 255619, 255619}));
  EXPECT_EQ(ds.hetero->relation(2).str(), "paper-paper-author->author");
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"database", "wireless communication", "data mining"}));
  EXPECT_EQ(ds.task, Task::NodeClassification);
  EXPECT_EQ(ds.target_node_type, 0);
  EXPECT_EQ(ds.splits.train_size() + ds.splits.val_size(), 907);
  EXPECT_EQ(ds.splits.val_size(), 181);  // floor(20% of 907)
  // This copy's label.dat.test_full (2118) contradicts label.dat.test (1059) at chance
  // level on the nodes both list, so the test set is label.dat.test.
  EXPECT_EQ(ds.splits.test_size(), 1059);
  EXPECT_EQ(ds.num_labelled(), 907 + 1059);
  EXPECT_NE(std::find_if(ds.notes.begin(), ds.notes.end(),
                         [](const std::string& n) {
                           return n.find("label.dat.test_full disagrees with label.dat.test on 708 of the 1059") == 0;
                         }),
            ds.notes.end());
  // Paper features are 0/1 bag-of-words, 4.4% non-zero: kept sparse and binary.
  EXPECT_TRUE(ds.type_features[0].is_binary());
  EXPECT_EQ(ds.type_features[0].stored(), 255619);
}

TEST(HgbDataTest, DblpCountsWithCrlfLinks) {
  STRATA_REQUIRE_DATA("hgb/DBLP.zip");
  const Dataset ds = load_hgb(testing::data_root() / "hgb/DBLP.zip", {});
  expect_types(ds, {{"author", 4057, 334}, {"paper", 14328, 4231}, {"term", 7723, 50}, {"venue", 20, 0}});
  EXPECT_EQ(ds.num_nodes(), 26128);
  EXPECT_EQ(ds.num_edges(), 239566);
  EXPECT_EQ(relation_sizes(ds), (std::vector<int64_t>{19645, 85810, 14328, 19645, 85810, 14328}));
  EXPECT_EQ(ds.num_classes, 4);
  EXPECT_EQ(ds.splits.train_size() + ds.splits.val_size(), 1217);
  EXPECT_EQ(ds.splits.test_size(), 1420);  // label.dat.test: test_full contradicts it (see AcmCounts)
  EXPECT_TRUE(ds.type_features[1].is_sparse());
  EXPECT_FALSE(ds.type_features[1].is_binary());  // counts up to 5 in the paper vectors
  EXPECT_EQ(ds.type_features[1].stored(), 95030);
  EXPECT_FALSE(ds.type_features[2].is_sparse());  // term embeddings are dense
}

TEST(HgbDataTest, ImdbMultiLabel) {
  STRATA_REQUIRE_DATA("hgb/IMDB.zip");
  const Dataset ds = load_hgb(testing::data_root() / "hgb/IMDB.zip", {});
  expect_types(ds, {{"movie", 4932, 3489}, {"director", 2393, 3341}, {"actor", 6124, 3341}, {"keyword", 7971, 0}});
  EXPECT_EQ(ds.num_nodes(), 21420);
  EXPECT_EQ(ds.num_edges(), 86642);
  EXPECT_EQ(relation_sizes(ds), (std::vector<int64_t>{4932, 4932, 14779, 14779, 23610, 23610}));
  EXPECT_EQ(ds.task, Task::MultiLabelNodeClassification);
  EXPECT_TRUE(ds.multilabel());
  EXPECT_EQ(ds.num_classes, 5);
  EXPECT_EQ(ds.labels.shape(), (Shape{4932, 5}));
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"Romance", "Thriller", "Comedy", "Action", "Drama"}));
  EXPECT_EQ(ds.splits.train_size() + ds.splits.val_size(), 1371);
  EXPECT_EQ(ds.splits.test_size(), 1601);  // label.dat.test: test_full contradicts it (see AcmCounts)
  // 830 of the 1371 training rows carry more than one genre.
  int64_t multi = 0;
  for (const Tensor* part : {&ds.splits.train, &ds.splits.val})
    for (int64_t i = 0; i < part->numel(); ++i) {
      const int64_t r = part->data<int64_t>()[i];
      int64_t k = 0;
      for (int64_t c = 0; c < 5; ++c) k += ds.labels.data<int64_t>()[r * 5 + c];
      multi += k > 1;
    }
  EXPECT_EQ(multi, 830);
}

// Types not in id order (a venue between authors), a featureless type, CRLF links,
// and an info.dat written by Python (bare NaN).
const char* kNodes =
    "0\tann\t0\t1,0,0,2\n"
    "2\tbob\t0\t0,0,0.5,0\n"
    "1\tvenue x\t1\n"
    "3\tcid\t0\t0,1,0,0\n";
const char* kLinks = "0\t1\t0\t1.0\r\n2\t1\t0\t1.0\r\n1\t0\t1\t1.0\r\n1\t2\t1\t1.0\r\n3\t1\t0\t1.0\r\n1\t3\t1\t1.0\r\n";
const char* kInfo =
    R"({"node.dat": {"node type": {"0": "author", "1": "venue"}, "color": {"0": NaN}},
        "link.dat": {"link type": {"0": {"start": 0, "end": 1, "meaning": "author-venue"},
                                   "1": {"start": "1", "end": "0", "meaning": "venue-author"}}},
        "label.dat": {"node type": {"0": {"0": "x", "1": "y", "2": "z"}}}})";

void write_tiny(const TempDir& dir, const std::string& folder, const std::string& train, const std::string& test) {
  dir.write(folder + "/node.dat", kNodes);
  dir.write(folder + "/link.dat", kLinks);
  dir.write(folder + "/info.dat", kInfo);
  dir.write(folder + "/label.dat", train);
  dir.write(folder + "/label.dat.test_full", test);
}

TEST(Hgb, LocalIdsRelationsFeaturesAndLabels) {
  TempDir dir;
  write_tiny(dir, "tiny", "0\tann\t0\t2\n2\tbob\t0\t0\n", "3\tcid\t0\t1\n");
  const Dataset ds = load_hgb(dir / "tiny", {});
  expect_types(ds, {{"author", 3, 4}, {"venue", 1, 0}});
  ASSERT_EQ(ds.hetero->num_relations(), 2);
  EXPECT_EQ(ds.hetero->relation(0).str(), "author-author-venue->venue");
  // Global ids 0, 2, 3 are authors 0, 1, 2 (local ids in global-id order).
  EXPECT_EQ(testing::edge_pairs(ds.hetero->relation(0).adj),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 1}, {0, 2}}));
  EXPECT_EQ(testing::edge_pairs(ds.hetero->relation(1).adj),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 0}, {2, 0}}));
  const Tensor x = ds.type_features[0].to_dense();
  EXPECT_EQ(std::vector<float>(x.data<float>(), x.data<float>() + 12),
            (std::vector<float>{1, 0, 0, 2, 0, 0, 0.5f, 0, 0, 1, 0, 0}));
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(std::vector<int64_t>(ds.labels.data<int64_t>(), ds.labels.data<int64_t>() + 3),
            (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(ds.splits.train_size(), 2);  // floor(0.2 * 2) = 0 go to validation
  EXPECT_EQ(ds.splits.test.data<int64_t>()[0], 2);
  // The zip holds the same files under a folder.
  testing::write_archive(dir / "tiny.zip", "zip",
                         {{"tiny/label.dat", "0\tann\t0\t2\n2\tbob\t0\t0\n"}, {"tiny/link.dat", kLinks},
                          {"tiny/node.dat", kNodes}, {"tiny/info.dat", kInfo}, {"tiny/label.dat.test_full", "3\tcid\t0\t1\n"}});
  Dataset z = load_hgb(dir / "tiny.zip", {});
  z.source = ds.source;
  z.name = ds.name;
  testing::expect_same_dataset(ds, z);
}

TEST(Hgb, MultiLabelAndSeededValidationSplit) {
  TempDir dir;
  std::string nodes, labels;
  for (int i = 0; i < 50; ++i) {
    nodes += fmt::format("{}\tn{}\t0\t{}\n", i, i, i % 3 == 0 ? "1,0" : "0,1");
    if (i < 40) labels += fmt::format("{}\tn{}\t0\t{}\n", i, i, i % 2 ? "0,2" : "1");
  }
  dir.write("m/node.dat", nodes);
  dir.write("m/link.dat", "0\t1\t0\t1\n");
  dir.write("m/label.dat", labels);
  SourceOptions a, b;
  a.seed = 1;
  b.seed = 2;
  const Dataset da = load_hgb(dir / "m", a), db = load_hgb(dir / "m", b), da2 = load_hgb(dir / "m", a);
  EXPECT_EQ(da.task, Task::MultiLabelNodeClassification);
  EXPECT_EQ(da.labels.shape(), (Shape{50, 3}));
  EXPECT_EQ(std::vector<int64_t>(da.labels.data<int64_t>() + 3, da.labels.data<int64_t>() + 6),
            (std::vector<int64_t>{1, 0, 1}));                      // node 1: "0,2"
  EXPECT_EQ(da.labels.data<int64_t>()[45 * 3], -1);                  // unlabelled row
  EXPECT_EQ(da.splits.val_size(), 8);                                 // floor(0.2 * 40)
  EXPECT_EQ(da.splits.train_size(), 32);
  testing::expect_same_tensor(da.splits.val, da2.splits.val, "same seed, same split");
  // Another seed draws another validation set (deterministically so).
  ASSERT_EQ(db.splits.val_size(), 8);
  EXPECT_NE(std::vector<int64_t>(da.splits.val.data<int64_t>(), da.splits.val.data<int64_t>() + 8),
            std::vector<int64_t>(db.splits.val.data<int64_t>(), db.splits.val.data<int64_t>() + 8));

  // label.dat.test_full and label.dat.test listing one node's classes in other orders
  // ("2,0" and "0,2") agree: the full test set is kept.
  std::string full, half;
  for (int i = 40; i < 50; ++i) {
    full += fmt::format("{}\tn{}\t0\t{}\n", i, i, i % 2 ? "2,0" : "1");
    if (i % 2) half += fmt::format("{}\tn{}\t0\t{}\n", i, i, "0,2");
  }
  dir.write("m/label.dat.test_full", full);
  dir.write("m/label.dat.test", half);
  const Dataset dt = load_hgb(dir / "m", a);
  EXPECT_EQ(dt.splits.test_size(), 10) << "the full test set";
  for (const std::string& note : dt.notes) EXPECT_EQ(note.find("disagrees"), std::string::npos) << note;
  EXPECT_EQ(std::vector<int64_t>(dt.labels.data<int64_t>() + 41 * 3, dt.labels.data<int64_t>() + 42 * 3),
            (std::vector<int64_t>{1, 0, 1}));  // node 41: "2,0"
}

TEST(HgbErrorTest, BadIdsFeaturesTypesAndArchives) {
  TempDir dir;
  write_tiny(dir, "a", "0\tann\t0\t2\n", "");
  dir.write("a/link.dat", "0\t1\t0\t1.0\n0\t7\t0\t1.0\n");
  testing::expect_user_error([&] { load_hgb(dir / "a", {}); }, {"link.dat:2", "(0, 7)", "outside 0..3"});
  write_tiny(dir, "b", "0\tann\t0\t2\n", "");
  dir.write("b/node.dat", "0\tann\t0\t1,0\n1\tv\t1\n2\tbob\t0\t1,0,0\n");
  testing::expect_user_error([&] { load_hgb(dir / "b", {}); }, {"node.dat:3", "3 feature values", "have 2"});
  write_tiny(dir, "c", "0\tann\t0\t2\n", "");
  dir.write("c/node.dat", "0\tann\t0\t1,0\n1\tv\t1\n3\tbob\t0\t1,0\n");
  testing::expect_user_error([&] { load_hgb(dir / "c", {}); }, {"node.dat:3", "node id 3 outside 0..2"});
  dir.write("c/node.dat", "0\tann\t0\t1,0\n1\tv\t1\n0\tbob\t0\t1,0\n");
  testing::expect_user_error([&] { load_hgb(dir / "c", {}); }, {"node.dat:3", "node id 0 already defined at line 1"});
  write_tiny(dir, "d", "0\tann\t0\t2\n1\tvenue x\t1\t0\n", "");
  testing::expect_user_error([&] { load_hgb(dir / "d", {}); }, {"label.dat:2", "labels are for type 0"});
  write_tiny(dir, "e", "0\tann\t0\t2\n", "");
  dir.write("e/link.dat", "0\t1\t0\t1.0\n0\t2\t0\t1.0\n");
  testing::expect_user_error([&] { load_hgb(dir / "e", {}); }, {"link.dat:2", "link type 0 joins node types 0 -> 0"});
  write_tiny(dir, "f", "0\tann\t0\t2\n", "");
  dir.write("f/node.dat", "0\tann\t0\t1,0\n1\tv\t1\n2\tbob\t0\n");
  dir.write("f/link.dat", "0\t1\t0\t1.0\n");
  testing::expect_user_error([&] { load_hgb(dir / "f", {}); }, {"node.dat", "have features and 1 have none"});
  write_tiny(dir, "g", "0\tann\t0\tnot-a-class\n", "");
  testing::expect_user_error([&] { load_hgb(dir / "g", {}); }, {"label.dat:1", "label is 'not-a-class'"});
  // A zip cut in half fails naming the archive.
  std::string big;
  for (int i = 0; i < 40000; ++i) big += fmt::format("{}\tn\t0\t{},{}\n", i, i % 7, i % 5);
  testing::write_archive(dir / "cut.zip", "zip", {{"cut/node.dat", big}, {"cut/link.dat", kLinks}});
  testing::truncate_file(dir / "cut.zip", fs::file_size(dir / "cut.zip") / 2);
  testing::expect_user_error([&] { load_hgb(dir / "cut.zip", {}); }, {"cut.zip", "truncated or corrupt"});
  dir.write("nolinks/node.dat", kNodes);
  testing::expect_user_error([&] { load_hgb(dir / "nolinks", {}); }, {"link.dat is missing"});
  // Found by fuzzing: a huge class key in info.dat (was a loop over 10^8 class names),
  // two types of one name (was an error naming no file), empty files (was map::at).
  write_tiny(dir, "h", "0\tann\t0\t2\n", "");
  dir.write("h/info.dat", R"({"label.dat": {"node type": {"0": {"0": "x", "100000000": "y"}}}})");
  testing::expect_user_error(
      [&] { load_hgb(dir / "h", {}); },
      {"info.dat", "label.dat class '100000000' is not a class id (an integer in [0, 1048576))"});
  write_tiny(dir, "i", "0\tann\t0\t2\n", "");
  dir.write("i/info.dat", R"({"node.dat": {"node type": {"0": "a", "1": "a"}}})");
  testing::expect_user_error([&] { load_hgb(dir / "i", {}); }, {"info.dat names two node types 'a'"});
  // Non-finite link weights and features are refused, as every other loader does.
  write_tiny(dir, "j", "0\tann\t0\t2\n", "");
  dir.write("j/link.dat", "0\t1\t0\tinf\n");
  testing::expect_user_error([&] { load_hgb(dir / "j", {}); }, {"link.dat:1", "weight is 'inf'"});
  write_tiny(dir, "k", "0\tann\t0\t2\n", "");
  dir.write("k/node.dat", "0\tann\t0\t1,nan\n1\tv\t1\n2\tbob\t0\t1,0\n");
  testing::expect_user_error([&] { load_hgb(dir / "k", {}); },
                             {"node.dat:1", "feature 2 is 'nan', expected a finite number"});
  // Type ids past int32 were wrapped (4294967296 -> type 0).
  write_tiny(dir, "l", "0\tann\t4294967296\t2\n", "");
  testing::expect_user_error([&] { load_hgb(dir / "l", {}); },
                             {"label.dat:1", "node type 4294967296 outside [0, 1024)"});
  write_tiny(dir, "m", "0\tann\t0\t2\n", "");
  dir.write("m/info.dat", R"({"node.dat": {"node type": {"4294967296": "a"}}})");
  testing::expect_user_error([&] { load_hgb(dir / "m", {}); },
                             {"info.dat", "node.dat node type '4294967296' outside [0, 1024)"});
  // An id given twice in info.dat under two spellings ("0" and "00"), and literally twice.
  write_tiny(dir, "n", "0\tann\t0\t2\n", "");
  dir.write("n/info.dat", R"({"node.dat": {"node type": {"0": "a", "00": "b"}}})");
  testing::expect_user_error([&] { load_hgb(dir / "n", {}); },
                             {"info.dat", "node.dat node type 0 appears twice (key '00' is another spelling"});
  dir.write("n/info.dat", R"({"link.dat": {"link type": {"1": {"start": 0}, "+1": {"start": 1}}}})");
  testing::expect_user_error([&] { load_hgb(dir / "n", {}); }, {"info.dat", "link.dat link type 1 appears twice"});
  dir.write("n/info.dat", R"({"label.dat": {"node type": {"0": {"2": "x", "02": "y"}}}})");
  testing::expect_user_error([&] { load_hgb(dir / "n", {}); },
                             {"info.dat", "label.dat class 2 of node type 0 appears twice"});
  dir.write("n/info.dat", R"({"node.dat": {"node type": {"0": "a", "0": "b"}}})");
  testing::expect_user_error([&] { load_hgb(dir / "n", {}); },
                             {"info.dat': the key \"0\" appears twice in \"node.dat.node type\""});
  dir.write("empty/node.dat", "");
  dir.write("empty/link.dat", "");
  dir.write("empty/label.dat", "");
  EXPECT_THROW(load_hgb(dir / "empty", {}), UserError);
}

}  // namespace
}  // namespace strata::data
