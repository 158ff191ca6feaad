// Host allocation for tensor storage: 64-byte aligned; large buffers (>= 4 MiB)
// aligned to 2 MiB and advised as transparent huge pages (madvise
// MADV_HUGEPAGE), which DESIGN.md measured at +4-10% for SpMM's gathered rows
// (fewer TLB misses). STRATA_HUGE_PAGES=0 turns the advice off; kernels see the
// same memory either way.
#pragma once

#include <cstddef>

namespace strata {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugePageThreshold = size_t{4} << 20;

// At least `bytes` (rounded up to the alignment), never null (throws UserError).
void* allocate_host(size_t bytes, size_t alignment);
void free_host(void* p);

// Whether large allocations are advised as huge pages in this process.
bool huge_pages_enabled();

}  // namespace strata
