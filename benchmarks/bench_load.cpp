// strata_bench_load: how long a dataset takes to load from its text files and from
// the binary cache, and the cache read rate in GB/s of cache-file bytes.
//
//   strata_bench_load [--dataset ddi] [--data-root DIR] [--repeats 5] [--cache-repeats 30]
//
// The cache entry is written to a scratch folder (removed at exit), so the run never
// touches the user's cache; it is read back while still in the page cache, which is
// the "second load" case the cache exists for. Times are medians of the repeats.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/timer.h"
#include "datasets/dataset_cache.h"
#include "datasets/load.h"

using namespace strata;
using namespace strata::data;

int main(int argc, char** argv) {
  CLI::App app{"strata_bench_load: dataset load time from text and from the binary cache"};
  std::string dataset = "ddi", data_root;
  int repeats = 5, cache_repeats = 30;
  app.add_option("--dataset", dataset, "dataset name or spec (default ddi = ogbl_ddi)");
  app.add_option("--data-root", data_root, "data root (default: $STRATA_DATA_ROOT or ../shared/datasets)");
  app.add_option("--repeats", repeats, "timed loads from text")->check(CLI::PositiveNumber);
  app.add_option("--cache-repeats", cache_repeats, "timed loads from the cache")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    const fs::path root = data_root.empty() ? default_data_root() : fs::path(data_root);
    const ResolvedSource src = resolve_source(dataset, root);
    STRATA_CHECK(!src.is_generator(), "'{}' is a generator; the benchmark measures file loading", dataset);
    const fs::path scratch = fs::temp_directory_path() / fmt::format("strata-bench-load-{}", ::getpid());
    struct Cleanup {
      fs::path p;
      ~Cleanup() {
        std::error_code ec;
        fs::remove_all(p, ec);
      }
    } cleanup{scratch};

    // Text: parse the files every time.
    Dataset ds;
    const double text_ms = time_median_ms([&] { ds = load_uncached(src); }, 1, repeats);

    // Cache: write once, then read it back.
    LoadOptions opt;
    opt.data_root = root;
    opt.cache_dir = scratch;
    LoadReport first;
    load_dataset(dataset, opt, &first);
    STRATA_CHECK(first.cache == CacheStatus::Written, "expected a fresh cache entry, got '{}'",
                 cache_status_name(first.cache));
    const int64_t bytes = static_cast<int64_t>(fs::file_size(first.cache_file));
    const Hash128 key = dataset_cache_key(src);
    const double read_ms = time_median_ms(
        [&] {
          CacheRead r = read_dataset_cache(first.cache_file, key);
          STRATA_CHECK(r.status == CacheProbe::Hit, "cache read failed: {}", r.reason);
        },
        2, cache_repeats);
    LoadReport hit;
    const double hit_ms = time_median_ms(
        [&] {
          Dataset d = load_dataset(dataset, opt, &hit);
          STRATA_CHECK(hit.cache == CacheStatus::Hit, "expected a cache hit, got '{}'", cache_status_name(hit.cache));
        },
        2, cache_repeats);
    // The pieces of a cache read: the bytes off the page cache, and the checksum.
    const std::string raw = read_file(first.cache_file);
    const double raw_ms = time_median_ms([&] { (void)read_file(first.cache_file); }, 2, cache_repeats);
    const double hash_ms = time_median_ms([&] { (void)hash_bytes(raw.data(), raw.size()); }, 2, cache_repeats);

    const double gb = static_cast<double>(bytes) / 1e9;
    fmt::print("dataset          {} ({})\n", ds.name, src.describe());
    fmt::print("graph            {} nodes, {} edges\n", ds.num_nodes(), ds.num_edges());
    fmt::print("cache file       {} bytes ({:.1f} MB)\n", bytes, static_cast<double>(bytes) / 1e6);
    fmt::print("from text        {:9.2f} ms  (median of {})\n", text_ms, repeats);
    fmt::print("from cache       {:9.2f} ms  read_dataset_cache, median of {}: {:.2f} GB/s of cache-file bytes\n",
               read_ms, cache_repeats, gb / (read_ms / 1e3));
    fmt::print("load_dataset hit {:9.2f} ms  (name resolution, input stat and key included): {:.2f} GB/s\n", hit_ms,
               gb / (hit_ms / 1e3));
    fmt::print("speed-up         {:9.1f}x  text / cache\n", text_ms / hit_ms);
    fmt::print("  file read      {:9.2f} ms  ({:.2f} GB/s, read_file into a std::string)\n", raw_ms, gb / (raw_ms / 1e3));
    fmt::print("  xxh3 checksum  {:9.2f} ms  ({:.2f} GB/s)\n", hash_ms, gb / (hash_ms / 1e3));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_bench_load: error: %s\n", e.what());
    return 1;
  }
}
