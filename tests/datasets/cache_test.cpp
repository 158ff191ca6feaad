// The binary dataset cache: exact round trips of every Dataset field, hits on the
// second load, and stale, truncated and corrupt entries detected and rebuilt.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/file_util.h"
#include "datasets/dataset_cache.h"
#include "datasets/edge_list.h"
#include "datasets/hgb.h"
#include "datasets/linqs.h"
#include "datasets/load.h"
#include "datasets/ogb.h"
#include "datasets/rdf.h"
#include "datasets/sbm.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

Dataset roundtrip(const Dataset& ds, const TempDir& dir) {
  const fs::path file = dir / "rt.sds";
  const Hash128 key = hash_string("key");
  const int64_t bytes = write_dataset_cache(file, ds, key);
  EXPECT_EQ(bytes, static_cast<int64_t>(fs::file_size(file)));
  CacheRead r = read_dataset_cache(file, key);
  EXPECT_EQ(r.status, CacheProbe::Hit) << r.reason;
  if (!r.dataset) return Dataset();
  return std::move(*r.dataset);
}

TEST(DatasetCache, RoundTripsHeterographsFeaturesLabelsAndNotes) {
  TempDir dir;
  // HGB-style: sparse float, sparse binary and dense per-type features, multi-label.
  std::string nodes, labels;
  for (int i = 0; i < 30; ++i) {
    nodes += fmt::format("{}\tn{}\t{}\t{}\n", i, i, i % 3, i % 3 == 0 ? "0,0.5,0,0,0,0,0,0,0,0,0,0" : i % 3 == 1 ? "1,0,0,0,0,0,0,0,0,0,0,0" : "1,2");
    if (i % 3 == 0) labels += fmt::format("{}\tn{}\t0\t{}\n", i, i, i % 2 ? "0,1" : "2");
  }
  dir.write("h/node.dat", nodes);
  dir.write("h/link.dat", "0\t1\t0\t1\n3\t4\t0\t1\n1\t0\t1\t2.5\n2\t5\t2\t1\n");
  dir.write("h/label.dat", labels);
  const Dataset h = load_hgb(dir / "h", {});
  ASSERT_TRUE(h.type_features[0].is_sparse() && !h.type_features[0].is_binary());
  ASSERT_TRUE(h.type_features[1].is_binary());
  ASSERT_FALSE(h.type_features[2].is_sparse());
  testing::expect_same_dataset(h, roundtrip(h, dir));

  // RDF: inverse relations are rebuilt on load.
  dir.write("r/r.nt", "<a:x> <p:q> <a:y> .\n<a:y> <p:r> \"lit\"@en .\n_:b <p:q> <a:x> .\n");
  dir.write("r/trainingSet.tsv", "person\tid\tlabel_x\na:x\t1.0\tc1\n");
  dir.write("r/testSet.tsv", "person\tid\tlabel_x\na:y\t2.0\tc2\n");
  const Dataset r = load_rdf(dir / "r", {});
  ASSERT_EQ(r.hetero->num_relations(), 4);
  testing::expect_same_dataset(r, roundtrip(r, dir));

  // OGB-style: dense features, edge features, splits; edge list with original ids.
  dir.write("o/raw/edge.csv", "0,1\n2,1\n");
  dir.write("o/raw/num-node-list.csv", "3\n");
  dir.write("o/raw/num-edge-list.csv", "2\n");
  dir.write("o/raw/node-feat.csv", "1,2\n3,4\n5,6\n");
  dir.write("o/raw/edge-feat.csv", "7\n8\n");
  dir.write("o/raw/node-label.csv", "0\n1\n1\n");
  dir.write("o/split/s/train.csv", "0\n");
  dir.write("o/split/s/valid.csv", "1\n");
  dir.write("o/split/s/test.csv", "2\n");
  const Dataset o = load_ogb(dir / "o", {});
  testing::expect_same_dataset(o, roundtrip(o, dir));
  // A folder OGB's table knows: its eval metric (master.csv) is kept too.
  fs::create_directories(dir / "ogbn_proteins");
  fs::copy(dir / "o", dir / "ogbn_proteins", fs::copy_options::recursive);
  const Dataset p = load_ogb(dir / "ogbn_proteins", {});
  ASSERT_EQ(p.eval_metric, "rocauc");
  testing::expect_same_dataset(p, roundtrip(p, dir));
  const Dataset e = load_edge_list(dir.write("e.txt", "7 9 0.5\n9 11 1.5\n"), EdgeListStyle::Blank, {});
  ASSERT_TRUE(e.original_ids.defined() && e.graph.has_values());
  testing::expect_same_dataset(e, roundtrip(e, dir));
  const Dataset s = generate_sbm(parse_sbm_params("nodes=200,classes=4,seed=2"));
  testing::expect_same_dataset(s, roundtrip(s, dir));
}

TEST(DatasetCache, ArraysAreAlignedViewsOfOneBuffer) {
  TempDir dir;
  const Dataset s = generate_sbm(parse_sbm_params("nodes=300,classes=3,seed=4"));
  const Dataset back = roundtrip(s, dir);
  const auto& storage = back.graph.indices().storage();
  EXPECT_EQ(back.graph.indptr().storage(), storage);
  EXPECT_EQ(back.features.dense_values().storage(), storage);
  for (const Tensor* t : {&back.graph.indptr(), &back.graph.indices(), &back.features.dense_values(), &back.labels})
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 64, 0u);
}

// A small text dataset and the options that cache it in `dir`.
struct CachedFixture {
  TempDir dir;
  fs::path mtx;
  LoadOptions opt;
  CachedFixture() {
    mtx = dir.write("data/g.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1.5\n2 3 2\n3 1 4\n");
    opt.data_root = dir / "data";
    opt.cache_dir = dir / "cache";
  }
};

TEST(DatasetCache, SecondLoadHitsTheCache) {
  CachedFixture f;
  LoadReport r1, r2;
  const Dataset a = load_dataset("mtx:g.mtx", f.opt, &r1);
  EXPECT_EQ(r1.cache, CacheStatus::Written);
  ASSERT_TRUE(fs::exists(r1.cache_file));
  EXPECT_EQ(r1.cache_file.parent_path(), f.dir / "cache");
  EXPECT_EQ(r1.cache_bytes, static_cast<int64_t>(fs::file_size(r1.cache_file)));
  const Dataset b = load_dataset("mtx:g.mtx", f.opt, &r2);
  EXPECT_EQ(r2.cache, CacheStatus::Hit);
  EXPECT_EQ(r2.cache_file, r1.cache_file);
  testing::expect_same_dataset(a, b);
  EXPECT_EQ(r1.resolved, "mtx:" + f.mtx.string());
}

CacheStatus load_capturing(const CachedFixture& f, std::string& log, Dataset* out = nullptr) {
  LoadReport r;
  ::testing::internal::CaptureStderr();
  Dataset ds = load_dataset("mtx:g.mtx", f.opt, &r);
  log = ::testing::internal::GetCapturedStderr();
  if (out) *out = std::move(ds);
  return r.cache;
}

TEST(DatasetCache, CorruptTruncatedAndForeignEntriesAreRebuiltWithALogLine) {
  CachedFixture f;
  LoadReport r;
  const Dataset want = load_dataset("mtx:g.mtx", f.opt, &r);
  const fs::path file = r.cache_file;
  std::string log;
  Dataset got;

  testing::corrupt_byte(file, fs::file_size(file) - 10);  // inside the payload
  EXPECT_EQ(load_capturing(f, log, &got), CacheStatus::Rebuilt);
  EXPECT_NE(log.find("is corrupt (payload checksum mismatch); rebuilding"), std::string::npos) << log;
  EXPECT_NE(log.find(file.string()), std::string::npos) << log;
  testing::expect_same_dataset(want, got);
  EXPECT_EQ(load_capturing(f, log), CacheStatus::Hit);

  testing::truncate_file(file, fs::file_size(file) - 100);
  EXPECT_EQ(load_capturing(f, log, &got), CacheStatus::Rebuilt);
  EXPECT_NE(log.find("is truncated"), std::string::npos) << log;
  testing::expect_same_dataset(want, got);

  testing::truncate_file(file, 10);
  EXPECT_EQ(load_capturing(f, log), CacheStatus::Rebuilt);
  EXPECT_NE(log.find("shorter than the header"), std::string::npos) << log;

  write_file_atomic(file, std::string(4096, 'x'));
  EXPECT_EQ(load_capturing(f, log), CacheStatus::Rebuilt);
  EXPECT_NE(log.find("bad magic"), std::string::npos) << log;

  testing::corrupt_byte(file, 8);  // the format version
  EXPECT_EQ(load_capturing(f, log), CacheStatus::Rebuilt);
  EXPECT_NE(log.find("is stale (cache format version"), std::string::npos) << log;
  EXPECT_EQ(load_capturing(f, log), CacheStatus::Hit);
  EXPECT_TRUE(log.empty()) << log;
}

TEST(DatasetCache, ChangedInputsMakeTheEntryStale) {
  CachedFixture f;
  Dataset first = load_dataset("mtx:g.mtx", f.opt);
  EXPECT_EQ(first.num_edges(), 3);
  // Same size, different content and a new modification time.
  f.dir.write("data/g.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1.5\n2 3 2\n3 3 4\n");
  fs::last_write_time(f.mtx, fs::last_write_time(f.mtx) + std::chrono::seconds(5));
  std::string log;
  Dataset second;
  EXPECT_EQ(load_capturing(f, log, &second), CacheStatus::Rebuilt);
  EXPECT_NE(log.find("is stale (the inputs or the loader changed"), std::string::npos) << log;
  EXPECT_EQ(testing::edge_pairs(second.graph), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {2, 2}}));
  EXPECT_EQ(load_capturing(f, log), CacheStatus::Hit);
}

TEST(DatasetCache, LabelFilesBesideAnRdfGraphFileArePartOfTheKey) {
  TempDir dir;
  const fs::path nt = dir.write("r/g.nt", "<a:x> <p:q> <a:y> .\n");
  dir.write("r/trainingSet.tsv", "person\tid\tlabel_x\na:x\t1.0\tc1\n");
  LoadOptions opt;
  opt.cache_dir = dir / "cache";
  LoadReport r;
  EXPECT_EQ(load_dataset("rdf:" + nt.string(), opt, &r).class_names, (std::vector<std::string>{"c1"}));
  EXPECT_EQ(r.cache, CacheStatus::Written);
  dir.write("r/trainingSet.tsv", "person\tid\tlabel_x\na:x\t1.0\tc2\n");
  const fs::path tsv = dir / "r/trainingSet.tsv";
  fs::last_write_time(tsv, fs::last_write_time(tsv) + std::chrono::seconds(5));
  ::testing::internal::CaptureStderr();
  const Dataset ds = load_dataset("rdf:" + nt.string(), opt, &r);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.cache, CacheStatus::Rebuilt);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"c2"}));
}

TEST(DatasetCache, DisabledByOptionOrEnvironmentAndGeneratorsAreNotCached) {
  CachedFixture f;
  LoadReport r;
  LoadOptions off = f.opt;
  off.use_cache = false;
  load_dataset("mtx:g.mtx", off, &r);
  EXPECT_EQ(r.cache, CacheStatus::Disabled);
  EXPECT_FALSE(fs::exists(f.dir / "cache"));
  ::setenv("STRATA_NO_DATASET_CACHE", "1", 1);
  load_dataset("mtx:g.mtx", f.opt, &r);
  ::unsetenv("STRATA_NO_DATASET_CACHE");
  EXPECT_EQ(r.cache, CacheStatus::Disabled);
  EXPECT_FALSE(fs::exists(f.dir / "cache"));
  const Dataset g = load_dataset("sbm:nodes=100,classes=2", f.opt, &r);
  EXPECT_EQ(r.cache, CacheStatus::Generated);
  EXPECT_FALSE(fs::exists(f.dir / "cache"));
  EXPECT_EQ(g.num_nodes(), 100);
}

TEST(DatasetCache, AnUnwritableCacheStillLoadsTheDataset) {
  CachedFixture f;
  f.dir.write("blocker", "a file where the cache folder should be");
  f.opt.cache_dir = f.dir / "blocker" / "datasets";
  LoadReport r;
  ::testing::internal::CaptureStderr();
  const Dataset ds = load_dataset("mtx:g.mtx", f.opt, &r);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.cache, CacheStatus::Unwritable);
  EXPECT_EQ(ds.num_edges(), 3);
  EXPECT_NE(log.find("dataset cache not written"), std::string::npos) << log;
}

TEST(CacheDataTest, CoraFromTheCacheEqualsCoraFromText) {
  STRATA_REQUIRE_DATA("citation/cora.tgz");
  TempDir dir;
  LoadOptions opt;
  opt.data_root = testing::data_root();
  opt.cache_dir = dir / "cache";
  LoadReport r1, r2;
  const Dataset a = load_dataset("cora", opt, &r1);
  const Dataset b = load_dataset("cora", opt, &r2);
  EXPECT_EQ(r1.cache, CacheStatus::Written);
  EXPECT_EQ(r2.cache, CacheStatus::Hit);
  testing::expect_same_dataset(a, b);
  opt.use_cache = false;
  testing::expect_same_dataset(a, load_dataset("cora", opt));
}

}  // namespace
}  // namespace strata::data
