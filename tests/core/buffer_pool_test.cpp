// The host buffer pool behind tensor storage (core/buffer_pool.h): size classes,
// best fit within a quarter, alignment, release, and use from many threads.
#include "core/buffer_pool.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <vector>

#include "core/host_memory.h"
#include "core/tensor.h"

namespace strata {
namespace {

TEST(HostBufferPool, SizeClassesAreAtMostAnEighthAboveTheRequest) {
  EXPECT_EQ(host_block_class(kPooledBytes), kPooledBytes);
  EXPECT_EQ(host_block_class(kPooledBytes + 1), kPooledBytes + kPooledBytes / 8);
  EXPECT_EQ(host_block_class(100000), 106496u);  // 2^16 .. 2^17 in steps of 8 KiB
  EXPECT_EQ(host_block_class(kHugePageThreshold), kHugePageThreshold);
  // From 4 MiB up, whole huge pages.
  EXPECT_EQ(host_block_class(kHugePageThreshold + 1), kHugePageThreshold + kHugePageBytes);
  // From 1 GiB up, only to whole huge pages.
  EXPECT_EQ(host_block_class(kUnclassedBlockBytes + 1), kUnclassedBlockBytes + kHugePageBytes);
  EXPECT_EQ(host_block_class(size_t{3} << 30), size_t{3} << 30);
  for (size_t b = kPooledBytes; b < (size_t{64} << 20); b = b * 9 / 8 + 4093) {
    const size_t c = host_block_class(b);
    EXPECT_GE(c, b);
    if (c < kHugePageThreshold) {
      EXPECT_LE(c, b + b / 8) << b;
    } else {
      EXPECT_EQ(c % kHugePageBytes, 0u) << b;
    }
  }
}

TEST(HostBufferPool, FreedBuffersServeRequestsUpToAQuarterSmaller) {
  release_host_pool();
  EXPECT_EQ(host_pool_stats().cached_bytes, 0);
  const void* first = nullptr;
  {
    Tensor t = Tensor::empty({1000, 70}, DType::F32);  // 280 kB
    first = t.raw_data();
    EXPECT_EQ(t.nbytes(), 280000);
  }
  HostPoolStats s = host_pool_stats();
  EXPECT_GE(s.cached_bytes, 280000);
  {
    // 248 kB: the kept 280 kB block (its class, 288 kB) is at most a quarter larger.
    Tensor t = Tensor::empty({1000, 62}, DType::F32);
    EXPECT_EQ(t.raw_data(), first);
    EXPECT_EQ(t.nbytes(), 248000) << "a tensor's size is what it asked for, not its block's";
    EXPECT_EQ(host_pool_stats().hits, s.hits + 1);
    // 160 kB: too small for that block (it would waste more than a quarter).
    Tensor u = Tensor::empty({1000, 40}, DType::F32);
    EXPECT_NE(u.raw_data(), first);
    EXPECT_EQ(host_pool_stats().misses, s.misses + 1);
    // 300 kB: larger than the block's class.
    Tensor v = Tensor::empty({1000, 75}, DType::F32);
    EXPECT_NE(v.raw_data(), first);
  }
  // Small tensors never enter the pool.
  s = host_pool_stats();
  { Tensor small = Tensor::empty({100}, DType::F32); }
  EXPECT_EQ(host_pool_stats().cached_bytes, s.cached_bytes);
  EXPECT_EQ(host_pool_stats().misses, s.misses);
  release_host_pool();
  EXPECT_EQ(host_pool_stats().cached_bytes, 0);
}

TEST(HostBufferPool, ARequestAlwaysFitsTheBlockOfItsOwnClass) {
  // Just past 4 MiB (and 6 MiB) the class rounds up to whole huge pages, more than a
  // quarter above the request: the request must still take back its own block.
  for (size_t bytes : {kHugePageThreshold + 64, (size_t{6} << 20) + 64, size_t{9} << 20}) {
    release_host_pool();
    const HostPoolStats before = host_pool_stats();
    for (int step = 0; step < 5; ++step) {
      Tensor t = Tensor::empty({static_cast<int64_t>(bytes / 4)}, DType::F32);
      t.data<float>()[0] = 1.0f;
    }
    const HostPoolStats after = host_pool_stats();
    EXPECT_EQ(after.misses - before.misses, 1) << bytes;
    EXPECT_EQ(after.hits - before.hits, 4) << bytes;
    EXPECT_EQ(static_cast<size_t>(after.cached_bytes), host_block_class(bytes)) << bytes;
  }
  release_host_pool();
}

TEST(HostBufferPool, BlocksAreAlignedAndHugePageBlocksWhole) {
  release_host_pool();
  for (int64_t n : {int64_t{16384}, int64_t{300000}, int64_t{1} << 20, (int64_t{5} << 20) / 4 + 7}) {
    Tensor t = Tensor::zeros({n}, DType::F32);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u) << n;
    if (huge_pages_enabled() && static_cast<size_t>(n) * 4 >= kHugePageThreshold) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kHugePageBytes, 0u) << n;
    }
    EXPECT_EQ(t.data<float>()[n - 1], 0.0f);
  }
  // Reused blocks hold what the last user left: zeros() must still clear them.
  {
    Tensor t = Tensor::empty({100000}, DType::F32);
    for (int64_t i = 0; i < 100000; ++i) t.data<float>()[i] = 7.0f;
  }
  Tensor z = Tensor::zeros({100000}, DType::F32);
  for (int64_t i = 0; i < 100000; i += 997) ASSERT_EQ(z.data<float>()[i], 0.0f) << i;
}

TEST(HostBufferPool, ManyThreadsTakeAndGiveBlocks) {
  // Each thread fills its own tensors with its id and checks them before freeing:
  // no block is handed to two owners at once.
  int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
  {
    const float id = static_cast<float>(omp_get_thread_num());
    for (int round = 0; round < 200; ++round) {
      std::vector<Tensor> held;
      for (int k = 0; k < 3; ++k) {
        Tensor t = Tensor::empty({16384 + 1024 * ((round * 7 + k) % 9)}, DType::F32);
        float* p = t.data<float>();
        for (int64_t i = 0; i < t.numel(); i += 512) p[i] = id;
        held.push_back(std::move(t));
      }
      for (const Tensor& t : held)
        for (int64_t i = 0; i < t.numel(); i += 512) bad += t.data<float>()[i] != id;
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(host_pool_stats().hits, 0);
}

}  // namespace
}  // namespace strata
