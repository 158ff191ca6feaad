// What the hand-written experiments share: 16-float vectors (GCC vector extensions, as
// the generated kernels use) and float arrays allocated as Strata's tensors are
// (core/host_memory.h: 64-byte aligned, huge pages from 4 MiB). With std::vector's
// 16-byte alignment a 64-byte vector load of a row straddles two cache lines: the
// SpMM loops of spmm_accumulators.cpp ran 1.4-2x slower that way on ACM and Facebook.
#pragma once

#include <cstddef>
#include <vector>

#include "core/host_memory.h"

namespace strata::experiments {

typedef float f32x16 __attribute__((vector_size(64)));

inline f32x16 load(const float* p) {
  f32x16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, f32x16 v) { __builtin_memcpy(p, &v, sizeof v); }

template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_host(n * sizeof(T), 64)); }
  void deallocate(T* p, size_t) { free_host(p); }
  bool operator==(const HostAllocator&) const { return true; }
  bool operator!=(const HostAllocator&) const { return false; }
};
using Floats = std::vector<float, HostAllocator<float>>;

}  // namespace strata::experiments
