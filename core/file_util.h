// Files and environment: whole-file reads, atomic writes, the cache directory.
//
// Every file Strata writes (caches, checkpoints, run outputs, kernels) goes through
// AtomicFile: data is written under a temporary name in the same directory and
// renamed into place on commit(), so a crash or a concurrent writer never leaves a
// torn file behind; an uncommitted temporary is removed. A symbolic link is written
// through (its target replaced, the link kept); a folder, pipe or device is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

namespace fs = std::filesystem;

// Reads a whole file; throws UserError naming the path and the OS reason.
std::string read_file(const fs::path& path);
// Writes a whole file atomically (temporary name, then rename).
void write_file_atomic(const fs::path& path, std::string_view data);
// Creates the directory and its parents; throws UserError naming it on failure.
void ensure_directory(const fs::path& dir);
// The same without throwing: why `dir` is not a folder now ("" when it is), for
// callers whose message names the setting the path came from.
std::string create_directories_problem(const fs::path& dir);

// Where a file written to `target` lands: through symbolic links to the file they name.
// Throws UserError naming `target` when that is a folder, pipe, device or socket.
fs::path output_file_path(const fs::path& target);

class AtomicFile {
 public:
  explicit AtomicFile(fs::path target);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Flushes, closes and renames the temporary onto the target.
  void commit();
  const fs::path& temp_path() const { return temp_; }

 private:
  fs::path target_, temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// A fresh temporary name next to `target` (unique per process and call).
fs::path temporary_sibling(const fs::path& target);
// Whether `path` is named as temporary_sibling names them (<file>.tmp.<pid>.<n>): what a
// process killed mid-write leaves behind.
bool is_temporary_sibling(const fs::path& path);

// The value of an environment variable, or nullopt when unset or empty.
std::optional<std::string> env_value(const char* name);
// True when the variable is set to 1, true, yes or on.
bool env_flag(const char* name);
// 1, true, yes, on -> true; 0, false, no, off -> false (any case); anything else -> nullopt.
std::optional<bool> parse_on_off(std::string_view s);

// STRATA_CACHE_DIR, default ~/.cache/strata; created on first use.
fs::path cache_root();

}  // namespace strata
