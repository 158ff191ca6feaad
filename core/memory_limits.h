// What this process may still allocate on the host, and which bound says so. Three
// bounds, the tightest wins:
//   - the machine: MemAvailable + SwapFree in /proc/meminfo;
//   - the process's memory cgroup (containers, systemd slices, batch schedulers):
//     its limit less what the cgroup holds, page cache that can be dropped aside,
//     at every level from the process's cgroup up to the hierarchy's root (cgroup v2
//     memory.max / memory.current, v1 memory.limit_in_bytes / memory.usage_in_bytes);
//     /proc/meminfo shows the host's memory there, and a process that trusts it is
//     killed by the cgroup's OOM killer instead of getting an error;
//   - STRATA_MEMORY_LIMIT (bytes, or a number with K, M, G or T: powers of 1024) less
//     this process's resident set: a cap a user sets on a shared machine.
// host_memory.cpp checks large allocations against the result.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace strata {

struct MemoryHeadroom {
  int64_t bytes = -1;    // -1: no bound is known
  std::string bound;     // which bound gave `bytes`, e.g. "this machine has available (MemAvailable + ...)"
  bool limited = false;  // a cgroup limit or STRATA_MEMORY_LIMIT is in force (not only the machine's)
};

// The three bounds, read now (the cgroup's location is found once per process).
MemoryHeadroom memory_headroom();

// A cgroup's limit and what it holds, at the level whose headroom is the least.
struct CgroupMemory {
  int64_t limit = 0;
  int64_t usage = 0;  // less the inactive page cache (memory.stat), which the kernel reclaims before it fails
  std::filesystem::path limit_file;  // the level's memory.max or memory.limit_in_bytes
  int64_t headroom() const { return limit > usage ? limit - usage : 0; }
};

// The tightest limited level of the memory cgroup that `proc_self_cgroup` (the text
// of /proc/self/cgroup) names, under the cgroup filesystem at `root` (normally
// /sys/fs/cgroup; v1 mounts the controller at root/memory). Levels without a limit,
// or missing from the mount (a container sees its own cgroup as the mount's root),
// are skipped; nullopt when no level has a limit.
std::optional<CgroupMemory> cgroup_memory(const std::string& proc_self_cgroup, const std::filesystem::path& root);

// cgroup_memory() for this process, under /sys/fs/cgroup.
std::optional<CgroupMemory> process_cgroup_memory();

// "96.0 MiB", "1.5 GiB": a size for messages.
std::string memory_size_text(double bytes);

// "8G", "512M", "100k", "1073741824" (K, M, G, T: powers of 1024, either case, an
// optional trailing B or iB). A UserError naming `what` and the text otherwise.
int64_t parse_byte_size(const std::string& text, const std::string& what);

}  // namespace strata
