#include "sparse_compiler/codegen/cache_entry.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/error.h"
#include "core/log.h"

namespace strata::sc {

EntryLock::EntryLock(const fs::path& path) : path_(path) {
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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

}  // namespace strata::sc
