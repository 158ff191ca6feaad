// A process-wide pool of host buffers for tensor storage (Storage::allocate).
//
// Training allocates buffers of the same or nearly the same sizes every step:
// activations, gradients, dropout outputs, and with mini-batches the gathered rows
// and blocks of each batch, whose sizes change a little from batch to batch.
// Without a pool each buffer above glibc's mmap threshold is mapped, zeroed page by
// page by the kernel on first touch and unmapped again every step (37% of a
// mini-batch epoch on Facebook pages went to clearing pages). Buffers of
// kPooledBytes and more are kept when freed and handed out again: a request takes
// the smallest kept buffer at least its size and at most a quarter larger (or up to
// its own size class); new buffers are made in size classes (eight per power of
// two, multiples of 2 MiB from 4 MiB up, exact to 2 MiB from 1 GiB up) so that a
// slightly larger request later still fits one. At most a quarter of memory (the
// machine's, or the container's cgroup limit where lower) is kept: a freed buffer
// that would pass it releases everything kept first (sizes an earlier phase asked
// for), and so does a request that does not fit in the memory left. Released
// memory goes back to the system (malloc_trim for blocks from the heap).
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata {

inline constexpr size_t kPooledBytes = size_t{64} << 10;
// From here up a block is rounded to whole huge pages only, not to a size class.
inline constexpr size_t kUnclassedBlockBytes = size_t{1} << 30;

struct HostBlock {
  void* data = nullptr;
  size_t bytes = 0;  // the block's size: at least what was asked for
};

// A block of at least `bytes` (>= kPooledBytes), aligned to `alignment` (2 MiB for
// huge-page blocks, see host_memory.h). Throws a UserError when memory runs out.
HostBlock take_host_block(size_t bytes, size_t alignment);
// Returns a block from take_host_block to the pool.
void give_host_block(HostBlock block);

struct HostPoolStats {
  int64_t hits = 0, misses = 0;  // requests served from kept blocks / by new ones
  int64_t cached_bytes = 0;      // kept, not in use
};
HostPoolStats host_pool_stats();
// Releases every kept block (tests; before a large allocation that needs the memory).
void release_host_pool();
// The size a new block for a request of `bytes` gets (its size class).
size_t host_block_class(size_t bytes);

}  // namespace strata
