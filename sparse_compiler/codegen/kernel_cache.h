// The persistent, content-addressed kernel cache: the front door for turning generated
// source into a loaded library.
//
// Key: kernel_key() = XXH3-128 of (cache format, source, flags, compiler identity).
// Lookup order:
//   1. memory: key -> weak_ptr<SharedLibrary>; a hit while some kernel still holds the
//      library costs a hash and a map lookup;
//   2. disk, under <root>/kernels/ (root = cache_root(): STRATA_CACHE_DIR, default
//      ~/.cache/strata), one entry per key:
//        <key>.cc    the source, kept beside the binary for debugging
//        <key>.so    the library
//        <key>.json  manifest: size and XXH3 of the .so, compiler command and identity,
//                    compile time; written last, so an entry without one is incomplete
//      The .so is checked against its manifest (size, then checksum) before dlopen; a
//      missing, truncated or corrupt entry is logged (log_warn, naming the file) and
//      rebuilt, never loaded;
//   3. compile: under an exclusive flock on <key>.lock (removed afterwards), so of several
//      processes wanting the same kernel one compiles and the others then load its
//      result. The .so is compiled to <key>.so.tmp.<pid>.<n> and renamed into place, the
//      .cc and .json are written with AtomicFile, so a crash at any point leaves either
//      no entry, an incomplete one (detected) or a complete one, never a torn file.
//      Temporaries a dead build left behind are removed by the next build of that key.
//
// Kernel-granular hits. A compiled unit holds several kernels (compile_cpu batches
// them), and the same kernel comes again in other batches: `strata eval` builds a
// subset of the kernels `strata train` built, a tuner's next search a different mix
// of candidates. So every kernel of a unit is also indexed by its member key (the key
// its own source would have as a unit of one), in <root>/kernels/members/<member key>,
// a file naming the unit; find_member() loads that unit instead of compiling the
// kernel again. An index entry whose unit is gone or fails verification is a miss.
//
// Thread-safe: one compile per key is in flight in a process; other threads asking for
// that key wait for it and share the result (or its CompileError).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sparse_compiler/codegen/jit_compiler.h"

namespace strata::sc {

enum class CacheOutcome {
  MemoryHit,  // already loaded in this process (or loaded by a concurrent caller we waited for)
  DiskHit,    // a verified entry on disk was loaded; no compiler run
  Compiled,   // the compiler ran (first use, or the entry on disk was missing or corrupt)
};
const char* to_string(CacheOutcome outcome);

struct CacheResult {
  std::shared_ptr<SharedLibrary> library;
  CacheOutcome outcome = CacheOutcome::MemoryHit;
  double compile_ms = 0;  // the compiler's wall time; 0 unless outcome == Compiled
  double total_ms = 0;    // the whole get_or_compile call
  std::string key;
};

// Counters since construction.
struct CacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;
  uint64_t rebuilt_entries = 0;  // entries on disk found incomplete or corrupt and rebuilt
};

// The live counters behind CacheStats, bumped from any thread (the host and the CUDA
// binary caches keep one each).
struct CacheCounters {
  std::atomic<uint64_t> memory_hits{0}, disk_hits{0}, compiles{0}, rebuilt{0};
  CacheStats snapshot() const {
    return {memory_hits.load(), disk_hits.load(), compiles.load(), rebuilt.load()};
  }
};

// Paths of one entry.
struct CacheEntryPaths {
  fs::path source;    // <dir>/<key>.cc
  fs::path library;   // <dir>/<key>.so
  fs::path manifest;  // <dir>/<key>.json
  fs::path lock;      // <dir>/<key>.lock (exists only while a process builds the entry)
};

class KernelCache {
 public:
  // The process-wide cache under cache_root() (created on first use; never destroyed).
  static KernelCache& global();
  // A cache whose entries live in <root>/kernels/ (tests pass a fresh temporary root).
  // `recent_units`: how many of the units used last stay loaded while no kernel holds them.
  explicit KernelCache(const fs::path& root, size_t recent_units = 32);
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // Returns the library for `source` compiled with `options` (options.work_dir is
  // ignored), from memory, from disk or by compiling it. Throws CompileError when the
  // source does not compile (the .cc stays in the cache directory for inspection), and
  // UserError when the cache directory cannot be written or the library not loaded.
  CacheResult get_or_compile(std::string_view source, const CompileOptions& options = {});

  // The key get_or_compile would use (probes the compiler once per process).
  std::string key_for(std::string_view source, const CompileOptions& options = {}) const;

  // The loaded unit that holds the kernel with this member key (see above), from
  // memory or from a verified entry on disk; `library` is null when there is none.
  // Never compiles.
  CacheResult find_member(const std::string& member_key);
  // Indexes the kernels with these member keys as members of the unit `unit_key`
  // (an entry of this cache).
  void record_members(const std::vector<std::string>& member_keys, const std::string& unit_key);
  CacheEntryPaths paths(const std::string& key) const;
  // <root>/kernels
  const fs::path& directory() const { return dir_; }

  // Forgets the in-memory map and the recently used units (libraries stay loaded
  // while someone holds them).
  void clear_memory();
  CacheStats stats() const;

 private:
  struct Loaded {
    std::shared_ptr<SharedLibrary> library;
    CacheOutcome outcome;
    double compile_ms;
  };
  using Future = std::shared_future<std::shared_ptr<SharedLibrary>>;

  // Creates the cache folder, then load_or_build_in_place(); built once more when the
  // folder vanished during the build.
  Loaded load_or_build(const std::string& key, std::string_view source, const Toolchain& toolchain);
  Loaded load_or_build_in_place(const std::string& key, std::string_view source, const Toolchain& toolchain);
  // Loads the entry if its manifest verifies; nullptr otherwise. With `report`, a bad
  // entry is logged with the reason and the file, and counted as rebuilt.
  std::shared_ptr<SharedLibrary> load_verified(const std::string& key, bool report);

  fs::path dir_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::weak_ptr<SharedLibrary>> memory_;
  // The units used last stay loaded while no kernel holds them: a run that binds
  // the same programs to new graphs again and again (every mini-batch's blocks)
  // finds them in memory instead of verifying and loading them from disk each time.
  size_t recent_units_;
  std::deque<std::shared_ptr<SharedLibrary>> recent_;
  // With mu_ held; returns the unit pushed out, for the caller to drop after unlocking
  // (unloading runs dlclose, which must not hold up other lookups).
  std::shared_ptr<SharedLibrary> keep_recent(const std::shared_ptr<SharedLibrary>& lib);
  std::unordered_map<std::string, std::string> members_;  // member key -> unit key
  std::unordered_map<std::string, Future> in_flight_;
  size_t inserts_since_prune_ = 0;
  CacheCounters counters_;
};

}  // namespace strata::sc
