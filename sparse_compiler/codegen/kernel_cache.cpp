#include "sparse_compiler/codegen/kernel_cache.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/cache_entry.h"

namespace strata::sc {
namespace {

// Removes a temporary file unless released.
class TempFile {
 public:
  explicit TempFile(fs::path p) : path_(std::move(p)) {}
  ~TempFile() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove(path_, ec);
    }
  }
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

}  // namespace

const char* to_string(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::MemoryHit: return "memory-hit";
    case CacheOutcome::DiskHit: return "disk-hit";
    case CacheOutcome::Compiled: return "compiled";
  }
  return "?";
}

KernelCache& KernelCache::global() {
  // Never destroyed: kernels may still run from static destructors, and the map holds
  // only weak references anyway.
  static KernelCache* cache = new KernelCache(cache_root());
  return *cache;
}

KernelCache::KernelCache(const fs::path& root, size_t recent_units)
    : dir_(root / "kernels"), recent_units_(recent_units) {}

CacheEntryPaths KernelCache::paths(const std::string& key) const {
  return {dir_ / (key + ".cc"), dir_ / (key + ".so"), dir_ / (key + ".json"), dir_ / (key + ".lock")};
}

std::string KernelCache::key_for(std::string_view source, const CompileOptions& options) const {
  return kernel_key(source, resolve_toolchain(options));
}

void KernelCache::clear_memory() {
  std::deque<std::shared_ptr<SharedLibrary>> released;  // unloaded after the lock is let go
  std::lock_guard<std::mutex> lock(mu_);
  memory_.clear();
  released.swap(recent_);
}

std::shared_ptr<SharedLibrary> KernelCache::keep_recent(const std::shared_ptr<SharedLibrary>& lib) {
  if (recent_units_ == 0) return nullptr;
  if (!recent_.empty() && recent_.back() == lib) return nullptr;
  if (auto it = std::find(recent_.begin(), recent_.end(), lib); it != recent_.end()) recent_.erase(it);
  recent_.push_back(lib);
  if (recent_.size() <= recent_units_) return nullptr;
  std::shared_ptr<SharedLibrary> evicted = std::move(recent_.front());
  recent_.pop_front();
  return evicted;
}

CacheStats KernelCache::stats() const {
  return counters_.snapshot();
}

CacheResult KernelCache::get_or_compile(std::string_view source, const CompileOptions& options) {
  Timer timer;
  const Toolchain toolchain = resolve_toolchain(options);
  CacheResult res;
  res.key = kernel_key(source, toolchain);

  std::promise<std::shared_ptr<SharedLibrary>> promise;
  Future waiting;
  std::shared_ptr<SharedLibrary> evicted;  // declared before the locks: unloaded after them
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memory_.find(res.key);
    if (it != memory_.end()) {
      if (auto lib = it->second.lock()) {
        evicted = keep_recent(lib);
        counters_.memory_hits.fetch_add(1);
        res.library = std::move(lib);
        res.outcome = CacheOutcome::MemoryHit;
        res.total_ms = timer.ms();
        return res;
      }
    }
    auto f = in_flight_.find(res.key);
    if (f != in_flight_.end()) {
      waiting = f->second;
    } else {
      in_flight_.emplace(res.key, promise.get_future().share());
    }
  }
  if (waiting.valid()) {
    // Another thread is loading or compiling this key: share its result or its error.
    res.library = waiting.get();
    counters_.memory_hits.fetch_add(1);
    res.outcome = CacheOutcome::MemoryHit;
    res.total_ms = timer.ms();
    return res;
  }

  try {
    Loaded loaded = load_or_build(res.key, source, toolchain);
    {
      std::lock_guard<std::mutex> lock(mu_);
      memory_[res.key] = loaded.library;
      evicted = keep_recent(loaded.library);
      in_flight_.erase(res.key);
      if (++inserts_since_prune_ >= 64) {  // drop entries whose libraries were unloaded
        inserts_since_prune_ = 0;
        std::erase_if(memory_, [](const auto& kv) { return kv.second.expired(); });
      }
    }
    promise.set_value(loaded.library);
    (loaded.outcome == CacheOutcome::Compiled ? counters_.compiles : counters_.disk_hits).fetch_add(1);
    res.library = std::move(loaded.library);
    res.outcome = loaded.outcome;
    res.compile_ms = loaded.compile_ms;
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      in_flight_.erase(res.key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
  res.total_ms = timer.ms();
  log_debug("kernel cache: {} {} in {:.2f} ms", res.key, to_string(res.outcome), res.total_ms);
  return res;
}

namespace {
bool is_key(std::string_view s) {
  return s.size() == 32 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// The unit key a member index entry names; empty when there is no readable entry
// holding a key.
std::string read_member_entry(const fs::path& entry) {
  std::error_code ec;
  if (!fs::exists(entry, ec)) return {};
  std::string unit;
  try {
    unit = read_file(entry);
  } catch (const std::exception&) {
    return {};  // unreadable: a miss, rewritten by the compile that follows
  }
  while (!unit.empty() && (unit.back() == '\n' || unit.back() == ' ')) unit.pop_back();
  return is_key(unit) ? unit : std::string();
}
}  // namespace

CacheResult KernelCache::find_member(const std::string& member_key) {
  Timer timer;
  CacheResult res;
  std::string unit;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto m = members_.find(member_key); m != members_.end()) unit = m->second;
  }
  if (unit.empty()) unit = read_member_entry(dir_ / "members" / member_key);
  if (unit.empty()) return res;
  // The unit from memory, else its entry on disk, verified; never built here.
  std::shared_ptr<SharedLibrary> lib;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_.find(unit); it != memory_.end()) lib = it->second.lock();
  }
  const bool loaded_now = !lib;
  if (!lib) lib = load_verified(unit, /*report=*/false);
  if (!lib) return res;
  std::shared_ptr<SharedLibrary> evicted;  // unloaded after the lock is let go
  {
    std::lock_guard<std::mutex> lock(mu_);
    memory_[unit] = lib;
    members_[member_key] = unit;
    evicted = keep_recent(lib);
  }
  (loaded_now ? counters_.disk_hits : counters_.memory_hits).fetch_add(1);
  res.library = std::move(lib);
  res.outcome = loaded_now ? CacheOutcome::DiskHit : CacheOutcome::MemoryHit;
  res.key = unit;
  res.total_ms = timer.ms();
  return res;
}

void KernelCache::record_members(const std::vector<std::string>& member_keys, const std::string& unit_key) {
  STRATA_ASSERT(is_key(unit_key), "kernel cache: '{}' is not a unit key", unit_key);
  std::vector<std::string> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& m : member_keys) {
      STRATA_ASSERT(is_key(m), "kernel cache: '{}' is not a member key", m);
      auto [it, inserted] = members_.emplace(m, unit_key);
      if (inserted || it->second != unit_key) {
        it->second = unit_key;
        fresh.push_back(m);
      }
    }
  }
  if (fresh.empty()) return;
  const fs::path dir = dir_ / "members";
  // Each file is written whole (temporary name, then rename): a reader sees the old
  // unit or the new one, never a torn key. The index only saves later batches a
  // compile, so a failure to write it is a warning, not the end of the command.
  try {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) fs::remove(dir, ec);  // a file in its place
    ensure_directory(dir);
    for (const std::string& m : fresh) {
      if (fs::is_directory(dir / m, ec)) fs::remove_all(dir / m, ec);
      write_file_atomic(dir / m, unit_key + "\n");
    }
  } catch (const UserError& e) {
    log_warn("kernel cache: member index not written ({}); later batches compile these kernels again", e.what());
  }
}

std::shared_ptr<SharedLibrary> KernelCache::load_verified(const std::string& key, bool report) {
  const CacheEntryPaths p = paths(key);
  const VerifiedEntry v = read_verified_entry(p.manifest, p.library, key, kKernelCacheFormat, "library", "library");
  if (!v.bytes) {
    if (report && !v.problem.empty()) {
      counters_.rebuilt.fetch_add(1);
      log_warn("kernel cache: {}: '{}'; rebuilding the entry", v.problem, v.culprit.string());
    }
    return nullptr;
  }
  // Verified: load it. (Replacing the file between the check and dlopen needs another
  // writer that bypasses the lock; entries are only ever replaced whole, by rename.)
  return SharedLibrary::open(p.library);
}

KernelCache::Loaded KernelCache::load_or_build(const std::string& key, std::string_view source,
                                               const Toolchain& toolchain) {
  for (int attempt = 1;; ++attempt) {
    const std::string why = create_directories_problem(dir_);
    STRATA_CHECK(why.empty(),
                 "the kernel cache folder '{}' cannot be created: {}; set STRATA_CACHE_DIR to a writable folder",
                 dir_.string(), why);
    try {
      return load_or_build_in_place(key, source, toolchain);
    } catch (const UserError& e) {
      // The folder removed while this entry was built (a user clearing the cache
      // under a running command): the build's files went with it. Once more in a
      // new folder; a second failure, or any failure with the folder in place, is
      // the build's own and is reported as it is.
      std::error_code ec;
      if (attempt > 1 || fs::is_directory(dir_, ec)) throw;
      log_warn("kernel cache: the folder '{}' disappeared while a kernel was being built; building it again",
               dir_.string());
    }
  }
}

KernelCache::Loaded KernelCache::load_or_build_in_place(const std::string& key, std::string_view source,
                                                        const Toolchain& toolchain) {
  const CacheEntryPaths p = paths(key);
  // Without the lock first: a complete entry verifies on its own, and a hit should not
  // wait behind another process's unrelated compile. Anything else is decided (and
  // reported) under the lock, where no other process is writing this entry.
  if (auto lib = load_verified(key, /*report=*/false)) return {std::move(lib), CacheOutcome::DiskHit, 0};
  EntryLock lock(p.lock);
  if (auto lib = load_verified(key, /*report=*/true)) return {std::move(lib), CacheOutcome::DiskHit, 0};

  if (lock.held()) remove_stale_temporaries(dir_, key);
  // Build. The old manifest goes first, so a crash below leaves an entry that reads as
  // incomplete rather than a manifest describing other bytes; whatever else is in the
  // entry's place (a folder where a file belongs) goes too.
  std::error_code ec;
  for (const fs::path& f : {p.manifest, p.source, p.library}) {
    if (fs::is_directory(fs::symlink_status(f, ec))) fs::remove_all(f, ec);
  }
  fs::remove(p.manifest, ec);
  write_file_atomic(p.source, source);
  TempFile tmp(temporary_sibling(p.library));
  const CompileResult r = compile_file(p.source, tmp.path(), toolchain);
  const std::string bytes = read_file(tmp.path());
  fs::rename(tmp.path(), p.library, ec);
  STRATA_CHECK(!ec, "cannot rename '{}' to '{}': {}", tmp.path().string(), p.library.string(), ec.message());
  tmp.release();

  const nlohmann::json manifest = {
      {"format", kKernelCacheFormat},
      {"key", key},
      {"library", {{"file", p.library.filename().string()}, {"size", bytes.size()}, {"xxh3", hash_string(bytes).hex()}}},
      {"source", {{"file", p.source.filename().string()}, {"xxh3", hash_string(source).hex()}}},
      {"compiler",
       {{"command", r.command},
        {"version", toolchain.identity->version},
        {"machine", toolchain.identity->machine},
        {"native_target", toolchain.identity->native_target},
        {"identity", toolchain.identity->digest}}},
      {"compile_ms", r.compile_ms},
      {"created", utc_now()},
  };
  write_file_atomic(p.manifest, manifest.dump(2) + "\n");
  log_debug("kernel cache: compiled {} in {:.0f} ms", p.library.string(), r.compile_ms);
  return {SharedLibrary::open(p.library), CacheOutcome::Compiled, r.compile_ms};
}

}  // namespace strata::sc
