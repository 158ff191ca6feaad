#include "core/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/file_util.h"
#include "core/memory_limits.h"

namespace strata {

namespace {
std::atomic<bool> huge_pages_default{true};
}  // namespace

bool huge_pages_enabled() {
  static const int env = [] {
    const char* v = std::getenv("STRATA_HUGE_PAGES");
    if (v == nullptr || *v == '\0') return -1;
    const std::optional<bool> on = parse_on_off(v);
    // A typo should not stop a run, nor go unnoticed (as STRATA_LOG).
    if (!on)
      std::fprintf(stderr,
                   "strata: warning: STRATA_HUGE_PAGES is '%s', expected 1 or 0 (on/off, true/false, yes/no); using "
                   "the command's default\n",
                   v);
    return on ? static_cast<int>(*on) : -1;
  }();
  return env >= 0 ? env == 1 : huge_pages_default.load(std::memory_order_relaxed);
}

void set_huge_pages_default(bool on) { huge_pages_default.store(on, std::memory_order_relaxed); }

int64_t available_host_bytes() { return memory_headroom().bytes; }

void check_host_bytes(double bytes, const std::string& what) {
  if (bytes < static_cast<double>(kCheckedAllocationBytes)) return;
  const MemoryHeadroom h = memory_headroom();
  if (h.bytes >= 0 && bytes > static_cast<double>(h.bytes))
    throw_out_of_memory(fmt::format("out of host memory: {} needs about {}, more than the {} {}", what,
                                    memory_size_text(bytes), memory_size_text(static_cast<double>(h.bytes)), h.bound));
}

void* allocate_host(size_t bytes, size_t alignment) {
  // Linux grants a large allocation it cannot back and kills the process when the
  // pages are touched (a cgroup's OOM killer likewise); refuse it here instead, with
  // a message.
  if (bytes >= kCheckedAllocationBytes) {
    const MemoryHeadroom h = memory_headroom();
    if (h.bytes >= 0 && static_cast<int64_t>(bytes) > h.bytes)
      throw_out_of_memory(fmt::format("out of host memory: a buffer of {} does not fit in the {} {}",
                                      memory_size_text(static_cast<double>(bytes)),
                                      memory_size_text(static_cast<double>(h.bytes)), h.bound),
                          "use a smaller graph or feature size");
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
