// Host allocation for tensor storage: 64-byte aligned; large buffers (>= 4 MiB)
// aligned to 2 MiB and advised as transparent huge pages (madvise
// MADV_HUGEPAGE), which DESIGN.md measured at +4-10% for SpMM's gathered rows
// (fewer TLB misses). STRATA_HUGE_PAGES=0 turns the advice off; kernels see the
// same memory either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugePageThreshold = size_t{4} << 20;

// Allocations from this size up are checked against what the process may still
// allocate (memory_limits.h: the machine, its memory cgroup, STRATA_MEMORY_LIMIT)
// before they are made; reading those costs ~50 us, touching 64 MiB ~10 ms.
constexpr size_t kCheckedAllocationBytes = size_t{64} << 20;

// At least `bytes` (rounded up to the alignment), never null (throws
// OutOfMemoryError, also for a buffer of kCheckedAllocationBytes or more that
// exceeds available_host_bytes()).
void* allocate_host(size_t bytes, size_t alignment);
void free_host(void* p);

// What this process may still allocate, in bytes (memory_headroom(): the least of
// MemAvailable + SwapFree, the memory cgroup's limit less its use, and
// STRATA_MEMORY_LIMIT less this process's resident set); -1 where unknown.
int64_t available_host_bytes();

// Throws an OutOfMemoryError naming `what` when `bytes` (an estimate of what a step is
// about to allocate, possibly in many pieces) exceeds available_host_bytes(): a
// loader or generator given absurd sizes refuses them instead of swapping or
// being killed. Below kCheckedAllocationBytes nothing is checked.
void check_host_bytes(double bytes, const std::string& what);

// Whether large allocations are advised as huge pages in this process.
bool huge_pages_enabled();

}  // namespace strata
