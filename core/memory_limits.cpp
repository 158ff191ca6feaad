#include "core/memory_limits.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace strata {
namespace fs = std::filesystem;
namespace {

// cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712).
constexpr int64_t kNoLimit = int64_t{1} << 62;

std::optional<std::string> read_small_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A file holding one integer ("max" and other words: nullopt).
std::optional<int64_t> read_int_file(const fs::path& p) {
  const auto text = read_small_file(p);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text->c_str(), &end, 10);
  if (end == text->c_str()) return std::nullopt;
  return static_cast<int64_t>(v);
}

// The value of `key` in a memory.stat file ("key value" lines); 0 when absent.
int64_t stat_value(const fs::path& p, const std::string& key) {
  const auto text = read_small_file(p);
  if (!text) return 0;
  std::istringstream in(*text);
  std::string k;
  long long v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

struct Hierarchy {
  fs::path mount;          // root/memory (v1) or root (v2)
  std::string path;        // the process's cgroup under it, "/" at the top
  const char* limit_file;  // memory.limit_in_bytes or memory.max
  const char* usage_file;
  const char* inactive_key;  // of memory.stat: page cache the kernel drops before it refuses memory
};

// The memory controller's hierarchy in /proc/self/cgroup: a v1 line whose
// controllers include "memory" ("4:memory:/docker/ab12"), else the v2 line
// ("0::/user.slice/...").
std::optional<Hierarchy> find_hierarchy(const std::string& proc_self_cgroup, const fs::path& root) {
  std::istringstream in(proc_self_cgroup);
  std::string line;
  std::optional<Hierarchy> v2;
  while (std::getline(in, line)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty() && line.compare(0, a, "0") == 0) {
      v2 = Hierarchy{root, path, "memory.max", "memory.current", "inactive_file"};
      continue;
    }
    std::istringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ','))
      if (c == "memory")
        return Hierarchy{root / "memory", path, "memory.limit_in_bytes", "memory.usage_in_bytes",
                         "total_inactive_file"};
  }
  return v2;
}

}  // namespace

std::optional<CgroupMemory> cgroup_memory(const std::string& proc_self_cgroup, const fs::path& root) {
  const std::optional<Hierarchy> h = find_hierarchy(proc_self_cgroup, root);
  if (!h) return std::nullopt;
  // The process's cgroup and each level above it up to the mount: a parent's limit
  // binds its children too. A level the mount lacks is skipped (a container's
  // namespace shows its own cgroup as the mount's root).
  std::vector<fs::path> levels;
  fs::path rel = fs::path(h->path).relative_path();
  for (;;) {
    levels.push_back(h->mount / rel);
    if (rel.empty()) break;
    rel = rel.parent_path();
  }
  std::optional<CgroupMemory> tightest;
  for (const fs::path& dir : levels) {
    const std::optional<int64_t> limit = read_int_file(dir / h->limit_file);
    if (!limit || *limit <= 0 || *limit >= kNoLimit) continue;
    const std::optional<int64_t> usage = read_int_file(dir / h->usage_file);
    if (!usage) continue;
    CgroupMemory m;
    m.limit = *limit;
    m.usage = std::max<int64_t>(0, *usage - stat_value(dir / "memory.stat", h->inactive_key));
    m.limit_file = dir / h->limit_file;
    if (!tightest || m.headroom() < tightest->headroom()) tightest = m;
  }
  return tightest;
}

std::string memory_size_text(double bytes) {
  return bytes >= double(1 << 30) ? fmt::format("{:.1f} GiB", bytes / double(1 << 30))
                                  : fmt::format("{:.1f} MiB", bytes / double(1 << 20));
}

int64_t parse_byte_size(const std::string& text, const std::string& what) {
  const auto bad = [&] {
    STRATA_FAIL("{}='{}': expected a size in bytes, or a number with K, M, G or T (powers of 1024), e.g. 8G", what,
                text);
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) bad();
  char* end = nullptr;
  const std::string number = text.substr(0, i);
  const double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) bad();
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit == "" || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    bad();
  const double bytes = v * scale;
  if (!(bytes >= 1) || bytes >= 9.2e18) bad();
  return static_cast<int64_t>(bytes);
}

std::optional<CgroupMemory> process_cgroup_memory() {
  static const std::string self_cgroup = read_small_file("/proc/self/cgroup").value_or("");
  return cgroup_memory(self_cgroup, "/sys/fs/cgroup");
}

MemoryHeadroom memory_headroom() {
  MemoryHeadroom h;
  const auto consider = [&h](int64_t bytes, std::string bound, bool limit) {
    if (limit) h.limited = true;
    if (h.bytes < 0 || bytes < h.bytes) {
      h.bytes = std::max<int64_t>(0, bytes);
      h.bound = std::move(bound);
    }
  };
  // The machine.
  if (const auto meminfo = read_small_file("/proc/meminfo")) {
    std::istringstream in(*meminfo);
    std::string line;
    int64_t available = -1, swap_free = 0;
    while (std::getline(in, line)) {
      long long kib = 0;
      if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kib) == 1)
        available = kib * 1024;
      else if (std::sscanf(line.c_str(), "SwapFree: %lld kB", &kib) == 1)
        swap_free = kib * 1024;
    }
    if (available >= 0)
      consider(available + swap_free, "this machine has available (MemAvailable + SwapFree in /proc/meminfo)", false);
  }
  // The cgroup: where it sits is read once, what it holds every time.
  if (const auto cg = process_cgroup_memory())
    consider(cg->headroom(),
             fmt::format("left under this process's memory cgroup limit ({} in {}, {} in use)",
                         memory_size_text(cg->limit), cg->limit_file.string(), memory_size_text(cg->usage)),
             true);
  // The user's cap, less what this process holds now.
  if (const char* env = std::getenv("STRATA_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
    const int64_t limit = parse_byte_size(env, "STRATA_MEMORY_LIMIT");
    long long pages_total = 0, pages_resident = 0;
    int64_t resident = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%lld %lld", &pages_total, &pages_resident) == 2)
        resident = static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
      std::fclose(f);
    }
    consider(
        limit - resident,
        fmt::format("left under STRATA_MEMORY_LIMIT={} ({} resident in this process)", env, memory_size_text(resident)),
        true);
  }
  return h;
}

}  // namespace strata
