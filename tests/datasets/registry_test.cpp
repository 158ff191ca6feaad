// Dataset-name resolution: short names, aliases, prefixed and bare paths,
// generators, the data root, and the messages for names that resolve to nothing.
#include <gtest/gtest.h>

#include <cstdlib>

#include "datasets/load.h"
#include "datasets/registry.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/test_support.h"

namespace strata::data {
namespace {

using testing::TempDir;

// A data root holding an empty stand-in for every known dataset.
void populate(const TempDir& root) {
  for (const auto& k : known_datasets()) {
    const fs::path p = root / k.relative;
    if (p.has_extension() && p.extension() != ".ddi") {
      root.write(k.relative, "");
    } else {
      fs::create_directories(p);
    }
  }
}

TEST(Registry, EveryShortNameAndAliasResolvesUnderTheDataRoot) {
  TempDir root;
  populate(root);
  const std::vector<std::string> expected = {"cora", "citeseer", "pubmed", "aifb", "mutag", "bgs", "am", "acm",
                                             "dblp", "imdb", "ddi", "karate", "bcsstk13", "ca-grqc", "luxembourg",
                                             "facebook", "github", "squirrel", "deezer-hu", "enron", "condmat",
                                             "gnutella"};
  std::vector<std::string> names;
  for (const auto& k : known_datasets()) names.push_back(k.name);
  EXPECT_EQ(names, expected);
  for (const auto& k : known_datasets()) {
    const ResolvedSource r = resolve_source(k.name, root.path());
    EXPECT_EQ(r.format, k.format) << k.name;
    EXPECT_EQ(r.path, root / k.relative) << k.name;
    EXPECT_EQ(r.options.name, k.name);
    EXPECT_FALSE(r.is_generator());
    for (const auto& a : k.aliases) EXPECT_EQ(resolve_source(a, root.path()).options.name, k.name) << a;
  }
  const ResolvedSource ddi = resolve_source("OGBL-DDI", root.path());
  EXPECT_EQ(ddi.options.name, "ddi");
  EXPECT_EQ(ddi.format, "ogb");
  EXPECT_TRUE(ddi.options.undirected.value_or(false));
  EXPECT_EQ(resolve_source("  Cora ", root.path()).format, "linqs");
  EXPECT_FALSE(resolve_source("gnutella", root.path()).options.undirected.value_or(true));
}

TEST(Registry, PrefixedBareAndGeneratorSpecs) {
  TempDir root;
  root.write("m/x.mtx", "");
  root.write("o/raw/edge.csv.gz", "");
  const ResolvedSource a = resolve_source("mtx:m/x.mtx", root.path());
  EXPECT_EQ(a.format, "mtx");
  EXPECT_EQ(a.path, root / "m/x.mtx");
  const ResolvedSource b = resolve_source("edgelist:" + (root / "m/x.mtx").string(), root.path());
  EXPECT_EQ(b.format, "edgelist");
  EXPECT_EQ(b.describe(), "edgelist:" + (root / "m/x.mtx").string());
  EXPECT_EQ(resolve_source((root / "m/x.mtx").string(), root.path()).format, "mtx");
  EXPECT_EQ(resolve_source((root / "o").string(), root.path()).format, "ogb");
  const ResolvedSource g = resolve_source("rmat:scale=16,edge_factor=16,seed=1", root.path());
  EXPECT_TRUE(g.is_generator());
  EXPECT_EQ(g.format, "rmat");
  EXPECT_EQ(g.params, "scale=16,edge_factor=16,seed=1");
  EXPECT_EQ(g.describe(), "rmat:scale=16,edge_factor=16,seed=1");
  EXPECT_TRUE(resolve_source("sbm:", root.path()).is_generator());
}

TEST(Registry, DataRootComesFromTheEnvironmentFirst) {
  TempDir root;
  ::setenv("STRATA_DATA_ROOT", root.path().c_str(), 1);
  EXPECT_EQ(default_data_root(), root.path());
  ::unsetenv("STRATA_DATA_ROOT");
  EXPECT_NE(default_data_root(), root.path());
}

TEST(RegistryErrorTest, UnknownNamesPrefixesAndMissingFiles) {
  TempDir root;
  testing::expect_user_error([&] { resolve_source("corra", root.path()); },
                             {"unknown dataset 'corra'", "did you mean 'cora'?", "known datasets: cora, citeseer, pubmed",
                              "gnutella", "FORMAT:PATH with FORMAT one of linqs, pubmed", "KIND:key=value,... with KIND one of rmat, er, sbm"});
  testing::expect_user_error([&] { resolve_source("nothing-like-it", root.path()); },
                             {"unknown dataset 'nothing-like-it'", "known datasets:"});
  testing::expect_user_error([&] { resolve_source("mtxx:a.mtx", root.path()); },
                             {"unknown dataset prefix 'mtxx:'", "did you mean 'mtx:'?"});
  testing::expect_user_error([&] { resolve_source("cora", root.path()); },
                             {"dataset 'cora'", "citation/cora.tgz", "not found under the data root", root.path().string()});
  testing::expect_user_error([&] { resolve_source("mtx:none.mtx", root.path()); },
                             {"mtx: 'none.mtx' not found", "under the data root"});
  testing::expect_user_error([&] { resolve_source("mtx:", root.path()); }, {"missing path after 'mtx:'"});
  testing::expect_user_error([&] { resolve_source("", root.path()); }, {"empty dataset name", "known datasets"});
  root.write("odd.bin", "");
  testing::expect_user_error([&] { resolve_source((root / "odd.bin").string(), root.path()); },
                             {"odd.bin", "cannot tell the format", "FORMAT one of linqs"});
  // Planetoid's pickles: named as a folder, one of its files or planetoid:, the error says how to convert them.
  for (const char* f : {"ind.citeseer.x", "ind.citeseer.graph", "ind.citeseer.test.index"})
    root.write(fs::path("raw") / f, "");
  const std::string convert = "python3 scripts/planetoid_convert.py " + (root / "raw").string() + " citeseer OUT";
  for (const std::string& spec : {(root / "raw").string(), (root / "raw" / "ind.citeseer.x").string(),
                                  (root / "raw" / "ind.citeseer.test.index").string(), std::string("planetoid:raw")})
    testing::expect_user_error([&] { resolve_source(spec, root.path()); },
                               {"holds Planetoid's pickled files (ind.citeseer.x, ind.citeseer.graph, ...)",
                                "which Strata does not read", convert, "then name the dataset dglcsv:OUT"});
  testing::expect_user_error([&] { resolve_source("planetoid:", root.path()); },
                             {"planetoid:: missing path after 'planetoid:'"});
  testing::expect_user_error([&] { resolve_source("planetoid:nowhere", root.path()); },
                             {"planetoid: 'nowhere' not found"});
  LoadOptions opt;
  opt.data_root = root.path();
  testing::expect_user_error([&] { load_dataset("rmat:scale=2,bogus=1", opt); },
                             {"rmat: unknown parameter 'bogus'", "valid keys"});
}

// Every short name reaches the right loader on the real data root.
TEST(RegistryDataTest, EveryKnownDatasetLoadsByName) {
  STRATA_REQUIRE_DATA("citation/cora.tgz");
  LoadOptions opt;
  opt.data_root = testing::data_root();
  opt.use_cache = false;
  const std::vector<std::pair<std::string, int64_t>> nodes = {
      {"cora", 2708},        {"citeseer", 3327},      {"pubmed", 19717},   {"aifb", 8285},
      {"mutag", 23644},      {"acm", 10942},          {"dblp", 26128},     {"imdb", 21420},
      {"ddi", 4267},         {"karate", 34},          {"bcsstk13", 2003},  {"ca-grqc", 5242},
      {"luxembourg", 114599}, {"facebook", 22470},    {"github", 37700},   {"squirrel", 5201},
      {"deezer-hu", 47538},  {"enron", 36692},        {"condmat", 23133},  {"gnutella", 62586}};
  for (const auto& [name, n] : nodes) {
    LoadReport r;
    const Dataset ds = load_dataset(name, opt, &r);
    EXPECT_EQ(ds.name, name);
    EXPECT_EQ(ds.num_nodes(), n) << name;
    EXPECT_EQ(r.cache, CacheStatus::Disabled);
  }
  testing::expect_user_error([&] { load_dataset("bgs", opt); }, {"RDF graph file missing", "bgs_stripped.nt.gz"});
  testing::expect_user_error([&] { load_dataset("am", opt); }, {"RDF graph file missing", "am_stripped.nt.gz"});
}

}  // namespace
}  // namespace strata::data
