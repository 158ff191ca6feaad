#include "sparse_compiler/codegen/cache_entry.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/log.h"

namespace strata::sc {

EntryLock::EntryLock(const fs::path& path) : path_(path) {
  bool cleared = false;
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EISDIR && !cleared) {
      // A folder where the lock file belongs (nothing of ours makes one): cleared once,
      // like any other folder in a cache file's place.
      std::error_code ec;
      fs::remove_all(path_, ec);
      log_debug("kernel cache: removed the folder standing at lock file '{}'", path_.string());
      cleared = true;
      continue;
    }
    STRATA_CHECK(fd_ >= 0, "cannot create lock file '{}': {}", path_.string(), std::strerror(errno));
    int rc;
    while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      log_debug("kernel cache: cannot lock '{}' ({}); building without the lock", path_.string(),
                std::strerror(errno));
      return;
    }
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      held_ = true;
      return;
    }
    ::close(fd_);  // the previous holder removed this file: lock the current one
  }
}

EntryLock::~EntryLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

void remove_stale_temporaries(const fs::path& dir, const std::string& key) {
  const std::string prefix = key + ".";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(".tmp.") != std::string::npos) {
      std::error_code rm;
      fs::remove(it->path(), rm);
      log_debug("kernel cache: removed stale temporary '{}'", it->path().string());
    }
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

VerifiedEntry read_verified_entry(const fs::path& manifest, const fs::path& file, const std::string& key, int format,
                                  const std::string& field, const std::string& what) {
  VerifiedEntry r;
  auto bad = [&](const fs::path& culprit, std::string problem) {
    r.culprit = culprit;
    r.problem = std::move(problem);
    return r;
  };
  std::error_code ec;
  const bool have_manifest = fs::exists(manifest, ec), have_file = fs::exists(file, ec);
  if (!have_manifest) {
    if (!have_file) return r;  // a plain miss
    return bad(file, fmt::format("incomplete entry ({} without manifest)", what));
  }
  uint64_t want_size = 0;
  std::string want_hash;
  try {
    const auto m = nlohmann::json::parse(read_file(manifest));
    if (m.at("format").get<int>() != format)
      return bad(manifest, fmt::format("manifest of cache format {} (expected {})", m.at("format").dump(), format));
    if (m.at("key").get<std::string>() != key) return bad(manifest, "manifest of another key");
    want_size = m.at(field).at("size").get<uint64_t>();
    want_hash = m.at(field).at("xxh3").get<std::string>();
  } catch (const std::exception& e) {  // unreadable, not JSON, or fields missing or mistyped
    return bad(manifest, fmt::format("corrupt manifest ({})", e.what()));
  }
  if (!have_file) return bad(file, fmt::format("missing {} (its manifest exists)", what));
  std::string bytes;
  try {
    bytes = read_file(file);
  } catch (const UserError& e) {
    return bad(file, fmt::format("unreadable {} ({})", what, e.what()));
  }
  if (bytes.size() != want_size)
    return bad(file, fmt::format("truncated or resized {} ({} bytes, manifest says {})", what, bytes.size(), want_size));
  if (const std::string got = hash_string(bytes).hex(); got != want_hash)
    return bad(file, fmt::format("corrupt {} (XXH3 {}, manifest says {})", what, got, want_hash));
  r.bytes = std::move(bytes);
  return r;
}

}  // namespace strata::sc
