// What the SDDMM experiments share besides vectors (experiment_arrays.h): a graph as
// `strata export --graph G --out DIR` writes it (indptr.npy, indices.npy), the
// generated kernels' horizontal sum, and the timing of one variant.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/experiments/experiment_arrays.h"
#include "benchmarks/peers/npy.h"

namespace strata::experiments {

// A 1-D .npy array of little-endian int32 or int64, widened to int64.
inline std::vector<int64_t> read_npy_ints(const std::string& path) {
  const peers::Npy n = peers::load_npy(path);
  std::vector<int64_t> out(n.numel());
  if (n.descr == "<i8")
    std::copy(n.as<int64_t>(), n.as<int64_t>() + n.numel(), out.begin());
  else if (n.descr == "<i4")
    std::copy(n.as<int32_t>(), n.as<int32_t>() + n.numel(), out.begin());
  else
    throw std::runtime_error(path + ": expected <i4 or <i8, got " + n.descr);
  return out;
}

struct ExportedCsr {
  int64_t rows = 0, cols = 0;  // cols: at least rows (a square adjacency)
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
};

inline ExportedCsr read_exported_csr(const std::string& dir) {
  ExportedCsr a;
  a.indptr = read_npy_ints(dir + "/indptr.npy");
  for (int64_t j : read_npy_ints(dir + "/indices.npy")) {
    a.indices.push_back(static_cast<int32_t>(j));
    a.cols = std::max(a.cols, j + 1);
  }
  a.rows = static_cast<int64_t>(a.indptr.size()) - 1;
  a.cols = std::max(a.cols, a.rows);
  return a;
}

typedef float f32x8 __attribute__((vector_size(32)));
typedef float f32x4 __attribute__((vector_size(16)));

// The generated kernels' horizontal sum (a shuffle tree: halves, quarters, pairs).
inline float lane_sum(f32x16 v) {
  const f32x8 h = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15) +
                  __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const f32x4 q = __builtin_shufflevector(h, h, 4, 5, 6, 7) + __builtin_shufflevector(h, h, 0, 1, 2, 3);
  const f32x4 p = q + __builtin_shufflevector(q, q, 2, 3, 0, 1);
  return p[0] + p[1];
}

// The median of `repeats` timed calls of fn, each right after an untimed one (so
// each starts from its own data in cache).
template <class Fn>
double median_ms(Fn fn, int repeats) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    fn();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace strata::experiments
