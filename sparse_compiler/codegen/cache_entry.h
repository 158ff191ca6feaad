// Pieces shared by the on-disk caches of compiled kernels (KernelCache for CPU
// libraries, CudaBinaryCache for cubins): the per-entry build lock, the clean-up of
// temporaries a dead build left, manifest timestamps, and the verification of an
// entry against its manifest.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace strata::sc {

namespace fs = std::filesystem;

// An exclusive flock on <key>.lock, held while one process checks and builds an entry.
// The holder removes the file before unlocking; an acquirer that then finds the path
// gone or pointing at another inode retries, so two processes never both believe they
// hold the lock. Where flock is unsupported (some network file systems) the build goes
// ahead unlocked: renames and the manifest check still keep entries whole, at the cost
// of possibly compiling the same kernel twice.
class EntryLock {
 public:
  explicit EntryLock(const fs::path& path);
  ~EntryLock();
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;
  // False when the file system refused the lock and the build goes ahead unlocked.
  bool held() const { return held_; }

 private:
  fs::path path_;
  int fd_ = -1;
  bool held_ = false;
};

// Removes temporaries of `key` (<key>.<ext>.tmp.<pid>.<n>) in `dir`. Only call it under
// the entry's lock, when no other process is writing this entry, so any such file was
// left by a build that died (a crash, a kill, a full disk).
void remove_stale_temporaries(const fs::path& dir, const std::string& key);

// The current time as ISO 8601 UTC ("2026-11-30T04:18:00Z").
std::string utc_now();

// What read_verified_entry found.
struct VerifiedEntry {
  std::optional<std::string> bytes;  // the data file's contents, when the entry verifies
  std::string problem;               // why it does not ("" when the entry is simply absent)
  fs::path culprit;                  // the file the problem is about
};

// An entry is a data file plus a JSON manifest written last:
//   {"format": <format>, "key": <key>, <field>: {"size": <bytes>, "xxh3": <hex>}, ...}.
// Reads both and checks the manifest's format and key and the file's size and XXH3;
// `what` names the file in problems ("library", "binary").
VerifiedEntry read_verified_entry(const fs::path& manifest, const fs::path& file, const std::string& key, int format,
                                  const std::string& field, const std::string& what);

}  // namespace strata::sc
