#include "core/buffer_pool.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <map>
#include <mutex>

#include "core/error.h"
#include "core/host_memory.h"
#include "core/memory_limits.h"

namespace strata {
namespace {

class HostPool {
 public:
  static HostPool& get() {
    static HostPool* pool = new HostPool();  // never destroyed: tensors may outlive static destructors
    return *pool;
  }

  HostBlock take(size_t bytes, size_t alignment) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The smallest kept block that fits, if it wastes at most a quarter of the request or
      // is the block a miss would make (classes of whole huge pages can be larger).
      const size_t largest = std::max(bytes + bytes / 4, host_block_class(bytes));
      for (auto it = free_.lower_bound(bytes); it != free_.end() && it->first <= largest; ++it) {
        if (it->second % alignment != 0) continue;
        const HostBlock b{reinterpret_cast<void*>(it->second), it->first};
        cached_ -= b.bytes;
        free_.erase(it);
        ++hits_;
        return b;
      }
      ++misses_;
    }
    const size_t size = host_block_class(bytes);
    try {
      return {allocate_host(size, alignment), size};
    } catch (const UserError&) {
      // Refused for want of memory: what the pool keeps may be what is missing.
      if (host_pool_stats().cached_bytes == 0) throw;
      release_host_pool();
      return {allocate_host(size, alignment), size};
    }
  }

  void give(HostBlock b) {
    if (b.bytes > limit_) {
      free_host(b.data);
      return;
    }
    bool full = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      full = cached_ + b.bytes > limit_;
    }
    // Full: what is kept was asked for by an earlier phase (other sizes); start over
    // rather than keep it forever and miss on every new size.
    if (full) release();
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace(b.bytes, reinterpret_cast<uintptr_t>(b.data));
    cached_ += b.bytes;
  }

  void release() {
    std::multimap<size_t, uintptr_t> kept;
    {
      std::lock_guard<std::mutex> lock(mu_);
      kept.swap(free_);
      cached_ = 0;
    }
    for (const auto& [bytes, p] : kept) free_host(reinterpret_cast<void*>(p));
    // Blocks under glibc's mmap threshold came from the heap: hand its free pages back.
    if (!kept.empty()) ::malloc_trim(0);
  }

  HostPoolStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {hits_, misses_, static_cast<int64_t>(cached_)};
  }

 private:
  HostPool() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    size_t memory = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : size_t{16} << 30;
    // A container's (or job's) memory limit, where it is lower than the machine's.
    if (const auto cg = process_cgroup_memory()) memory = std::min<size_t>(memory, static_cast<size_t>(cg->limit));
    limit_ = memory / 4;
  }
  std::mutex mu_;
  std::multimap<size_t, uintptr_t> free_;  // size -> address: best fit is lower_bound
  size_t cached_ = 0, limit_ = 0;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace

size_t host_block_class(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  // Buffers of a gigabyte and more are not rounded up to a class: an eighth more of
  // them may be what the machine does not have.
  if (bytes >= kUnclassedBlockBytes) return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  // Eight classes per power of two: at most 12.5% above the request.
  const int top = std::bit_width(bytes) - 1;
  const size_t step = top >= 3 ? size_t{1} << (top - 3) : 1;
  size_t size = (bytes + step - 1) / step * step;
  if (size >= kHugePageThreshold) size = (size + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  return size;
}

HostBlock take_host_block(size_t bytes, size_t alignment) {
  STRATA_ASSERT(bytes >= kPooledBytes, "a pooled block of {} bytes (pooling starts at {})", bytes, kPooledBytes);
  return HostPool::get().take(bytes, alignment);
}

void give_host_block(HostBlock block) { HostPool::get().give(block); }

HostPoolStats host_pool_stats() { return HostPool::get().stats(); }

void release_host_pool() { HostPool::get().release(); }

}  // namespace strata
