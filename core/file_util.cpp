#include "core/file_util.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace strata {

std::string read_file(const fs::path& path) {
  std::error_code ec;
  STRATA_CHECK(!fs::is_directory(path, ec), "cannot read '{}': it is a folder, expected a file", path.string());
  std::FILE* f = std::fopen(path.c_str(), "rb");
  STRATA_CHECK(f != nullptr, "cannot open '{}': {}", path.string(), std::strerror(errno));
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  STRATA_CHECK(!failed, "error reading '{}'", path.string());
  return data;
}

std::string create_directories_problem(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ec.message();
  return fs::is_directory(dir) ? "" : "a file of that name exists";
}

void ensure_directory(const fs::path& dir) {
  const std::string why = create_directories_problem(dir);
  STRATA_CHECK(why.empty(), "cannot create directory '{}': {}", dir.string(), why);
}

fs::path temporary_sibling(const fs::path& target) {
  static std::atomic<uint64_t> counter{0};
  return fs::path(target.string() + fmt::format(".tmp.{}.{}", ::getpid(), counter.fetch_add(1)));
}

bool is_temporary_sibling(const fs::path& path) {
  const std::string name = path.filename().string();
  const size_t tmp = name.rfind(".tmp.");
  if (tmp == std::string::npos || tmp == 0) return false;
  const std::string rest = name.substr(tmp + 5);  // <pid>.<n>
  const size_t dot = rest.find('.');
  const auto digits = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot != std::string::npos && digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
}

namespace {
const char* file_kind(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory:
      return "folder";
    case fs::file_type::fifo:
      return "named pipe";
    case fs::file_type::character:
      return "character device";
    case fs::file_type::block:
      return "block device";
    case fs::file_type::socket:
      return "socket";
    default:
      return "special file";
  }
}
}  // namespace

fs::path output_file_path(const fs::path& target) {
  fs::path p = target;
  std::error_code ec;
  // Through symbolic links to the file they name, as `cp` and shell redirections write.
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    STRATA_CHECK(hops < 40, "cannot write '{}': too many levels of symbolic links", target.string());
    const fs::path next = fs::read_symlink(p, ec);
    STRATA_CHECK(!ec, "cannot write '{}': {}", target.string(), ec.message());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  const fs::file_status st = fs::status(p, ec);
  STRATA_CHECK(!fs::exists(st) || fs::is_regular_file(st),
               "cannot write '{}': it is a {}, and Strata writes a regular file there (choose another path)",
               target.string(), file_kind(st.type()));
  return p;
}

AtomicFile::AtomicFile(fs::path target) : target_(output_file_path(target)), temp_(temporary_sibling(target_)) {
  if (target_.has_parent_path()) ensure_directory(target_.parent_path());
  file_ = std::fopen(temp_.c_str(), "wb");
  STRATA_CHECK(file_ != nullptr, "cannot write '{}' (through the temporary '{}' beside it): {}", target_.string(),
               temp_.string(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicFile::write(const void* data, size_t size) {
  STRATA_ASSERT(file_ && !committed_, "write to a closed AtomicFile for {}", target_.string());
  STRATA_CHECK(size == 0 || std::fwrite(data, 1, size, file_) == size, "error writing '{}': {}", temp_.string(),
               std::strerror(errno));
}

void AtomicFile::commit() {
  STRATA_ASSERT(file_ && !committed_, "commit of a closed AtomicFile for {}", target_.string());
  const bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  std::fclose(file_);
  file_ = nullptr;
  STRATA_CHECK(ok, "error flushing '{}': {}", temp_.string(), std::strerror(errno));
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  STRATA_CHECK(!ec, "cannot rename '{}' to '{}': {}", temp_.string(), target_.string(), ec.message());
  committed_ = true;
}

void write_file_atomic(const fs::path& path, std::string_view data) {
  AtomicFile f(path);
  f.write(data);
  f.commit();
}

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool env_flag(const char* name) {
  auto v = env_value(name);
  return v && (*v == "1" || *v == "true" || *v == "yes" || *v == "on");
}

std::optional<bool> parse_on_off(std::string_view s) {
  std::string v(s);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

fs::path cache_root() {
  fs::path root;
  std::string from;
  if (auto v = env_value("STRATA_CACHE_DIR")) {
    root = *v;
    from = "from STRATA_CACHE_DIR or runtime.cache_dir";
  } else if (auto home = env_value("HOME")) {
    root = fs::path(*home) / ".cache" / "strata";
    from = "the default under $HOME";
  } else {
    root = fs::temp_directory_path() / "strata-cache";
    from = "the default without $HOME";
  }
  const std::string why = create_directories_problem(root);
  STRATA_CHECK(why.empty(),
               "the cache folder '{}' ({}) cannot be created: {}; set STRATA_CACHE_DIR to a writable folder",
               root.string(), from, why);
  return root;
}

}  // namespace strata
