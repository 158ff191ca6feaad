// The front door: load_dataset("cora"), load_dataset("mtx:foo.mtx.gz"),
// load_dataset("sbm:nodes=2000,classes=5,seed=1").
//
// Text datasets go through the binary cache (dataset_cache.h) under
// $STRATA_CACHE_DIR/datasets/ (core/file_util.h cache_root()): the first load parses
// the files and writes the cache entry, later loads read it. A stale, truncated or
// corrupt entry is reported with a log line and rebuilt, never trusted. Generators
// are not cached: they are deterministic and generate faster than a large cache entry
// would be worth keeping around. Caching is off with LoadOptions::use_cache = false or
// STRATA_NO_DATASET_CACHE=1.
#pragma once

#include <optional>
#include <string>

#include "core/hash.h"
#include "datasets/dataset.h"
#include "datasets/registry.h"

namespace strata::data {

// Bump when any loader's output changes: every cache entry then becomes stale.
// 2: HGB ignores a label.dat.test_full that contradicts label.dat.test; 3: OGB takes the split scheme
// master.csv names when there are several; 4: OGB notes multi-label rows left unlabelled by some NaN columns;
// 5: OGB refuses a relation or node type listed twice (a relation was loaded twice), HGB and LINQS
// non-finite features and weights; 6: OGB reads node names from mapping/nodeidx2*.csv; 7: edge weights
// follow their edges through Graph::from_coo's row sort (they had stayed in input order); 8: HGB compares
// the two test label files' class lists as sets; 9: edge lists refuse a Matrix Market file (its size line
// loaded as an edge) and a CSV edge list's first line starting with an integer too large for int64 is a
// record (refused), not a header; 10: LINQS's no-split note says where Planetoid's public split comes from.
inline constexpr uint32_t kLoaderVersion = 10;

struct LoadOptions {
  std::optional<fs::path> data_root;  // default: default_data_root()
  bool use_cache = true;
  std::optional<fs::path> cache_dir;  // default: cache_root() / "datasets"
  uint64_t seed = 0;                  // for splits a loader draws itself (HGB train/val)
};

enum class CacheStatus : uint8_t {
  Disabled,   // caching off
  Generated,  // generator: not cached
  Hit,        // read from the cache
  Written,    // no entry yet: loaded from text and cached
  Rebuilt,    // entry stale, truncated or corrupt: loaded from text and rewritten
  Unwritable  // loaded from text; the cache could not be written (see the log)
};
std::string_view cache_status_name(CacheStatus s);

struct LoadReport {
  double seconds = 0;
  CacheStatus cache = CacheStatus::Disabled;
  fs::path cache_file;
  int64_t cache_bytes = 0;
  std::string cache_detail;  // why an entry was rebuilt or could not be written
  std::string resolved;      // ResolvedSource::describe()
};

Dataset load_dataset(const std::string& spec, const LoadOptions& options = {}, LoadReport* report = nullptr);

// Loads a resolved source directly from its files (or generator), no cache.
Dataset load_uncached(const ResolvedSource& src);

// The cache entry of a resolved source, and the key that validates it.
fs::path dataset_cache_file(const ResolvedSource& src, const fs::path& cache_dir);
Hash128 dataset_cache_key(const ResolvedSource& src);

}  // namespace strata::data
