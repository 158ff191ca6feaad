#include "core/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace strata {

bool huge_pages_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("STRATA_HUGE_PAGES");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

int64_t available_host_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return -1;
  int64_t available = -1, swap_free = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long kib = 0;
    if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) available = kib * 1024;
    else if (std::sscanf(line, "SwapFree: %lld kB", &kib) == 1) swap_free = kib * 1024;
  }
  std::fclose(f);
  return available < 0 ? -1 : available + swap_free;
}

void check_host_bytes(double bytes, const std::string& what) {
  if (bytes < static_cast<double>(kCheckedAllocationBytes)) return;
  const int64_t available = available_host_bytes();
  if (available >= 0 && bytes > static_cast<double>(available))
    throw_out_of_memory(
        fmt::format("out of host memory: {} needs about {:.1f} GiB, more than the {:.1f} GiB this machine has "
                    "available (MemAvailable + SwapFree in /proc/meminfo)",
                    what, bytes / (1 << 30), static_cast<double>(available) / (1 << 30)));
}

void* allocate_host(size_t bytes, size_t alignment) {
  // Linux grants a large allocation it cannot back and kills the process when the
  // pages are touched; refuse it here instead, with a message.
  if (bytes >= kCheckedAllocationBytes) {
    const int64_t available = available_host_bytes();
    if (available >= 0 && static_cast<int64_t>(bytes) > available)
      throw_out_of_memory(
          fmt::format("out of host memory: a buffer of {:.1f} GiB does not fit in the {:.1f} GiB this machine has "
                      "available (MemAvailable + SwapFree in /proc/meminfo); use a smaller graph or feature size",
                      static_cast<double>(bytes) / (1 << 30), static_cast<double>(available) / (1 << 30)));
  }
  const bool huge = bytes >= kHugePageThreshold && huge_pages_enabled();
  const size_t align = huge ? kHugePageBytes : alignment;
  const size_t rounded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw_out_of_memory(fmt::format("out of host memory allocating {} bytes", bytes));
  // Advice only: where the kernel has transparent huge pages off, this fails
  // harmlessly and the memory is ordinary pages.
  if (huge) madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void free_host(void* p) { std::free(p); }

}  // namespace strata
