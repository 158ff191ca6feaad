// Host allocation for tensor storage: 64-byte aligned; large buffers (>= 4 MiB)
// aligned to 2 MiB and advised as transparent huge pages (madvise
// MADV_HUGEPAGE), which DESIGN.md measured at +4-10% for SpMM's gathered rows
// (fewer TLB misses) and a training epoch gains ~8% from on a 500k-node graph. A
// fresh huge page costs more to fault in than the 4 KiB pages it replaces on VMs
// that hand free memory back to the host (1.6 against 0.4 ms per MiB on the
// project's VM), so one-pass commands (eval, infer), whose buffers are written
// once, turn the advice off: a 500k-node forward took 1.5 s with it, 0.45 s
// without. STRATA_HUGE_PAGES=0/1 overrides either default; kernels see the same
// memory either way.
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

// Whether large allocations are advised as huge pages in this process:
// STRATA_HUGE_PAGES (0 or 1) where set, else the command's default (on unless
// set_huge_pages_default(false)).
bool huge_pages_enabled();
void set_huge_pages_default(bool on);

}  // namespace strata
