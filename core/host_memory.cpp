#include "core/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
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

void* allocate_host(size_t bytes, size_t alignment) {
  const bool huge = bytes >= kHugePageThreshold && huge_pages_enabled();
  const size_t align = huge ? kHugePageBytes : alignment;
  const size_t rounded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  STRATA_CHECK(p != nullptr, "out of host memory allocating {} bytes", bytes);
  // Advice only: where the kernel has transparent huge pages off, this fails
  // harmlessly and the memory is ordinary pages.
  if (huge) madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void free_host(void* p) { std::free(p); }

}  // namespace strata
