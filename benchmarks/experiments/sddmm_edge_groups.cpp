// An experiment, hand-written (not generated code): is SDDMM at small feature sizes bound by
// its horizontal sums? The generated CSR kernel keeps X's row in registers and, per edge,
// multiplies it with Y's row into one 16-lane accumulator, then sums the 16 lanes with a
// shuffle tree (four shuffles and four adds) and stores one float. At F = 32 that is as many
// shuffle-port operations as multiply-adds. Here, a row's edges are taken 16 at a time: 16
// accumulators, then one transposing sum (15 two-source shuffle pairs and 15 adds for all 16)
// that leaves edge k's sum in lane k, stored as one vector. The rest of a row (fewer than 16
// edges) goes 8 at a time, then edge by edge, as before.
//
// Reads a graph written by `strata export --graph G --out DIR` (indptr.npy, indices.npy) and
// times, for F = 32, 64, 128, the generated kernel's form against the grouped one, after
// checking that they agree; 2 threads, median of the repeats, each after an untimed call,
// the variants alternating over 3 rounds.
//
//   cmake --build build --target strata_experiment_sddmm_edge_groups
//   build/apps/strata export --graph github --feat 32 --out /tmp/exp/github
//   chrt -f 50 build/benchmarks/strata_experiment_sddmm_edge_groups /tmp/exp/github [repeats]
//
// Measured on the Intel Xeon VM, 2026-12-05 (per-edge time over grouped time, 2 threads,
// groups of 16 then 8): ACM (50 edges per row) 1.37-1.47x at F = 32, 0.97-1.01x at 64 and
// 128; ogbl-ddi 1.38x / 0.96x / 1.03x; Squirrel 1.42x / 0.95x / 0.98x; GitHub 1.16x / 1.13x /
// 1.01x; Facebook, DBLP, Deezer 1.09-1.14x at F = 32; Pubmed (4.5 per row) 0.93-1.00x.
// Groups that cross rows (X's row loaded per edge) lost on most graphs (0.77-1.00x) when
// each edge found its row by stepping a row cursor (a branch per edge). With a row id per
// edge (COO) they gain where rows are short (2026-12-05, against per edge, F = 32: IMDB
// 1.58x, Pubmed 1.21x, DBLP 1.14x, Cora 1.09x; F = 64 0.89-1.75x; F = 128 0.73-1.34x) and
// not on ACM's long rows (0.80-0.99x), where groups within a row keep X's row in registers. The
// compiler now generates the grouped form over CSR rows and over COO slots
// (CpuKnobs::edge_groups, Schedule::transpose_sums, Schedule::inline_lets), and its kernels
// gain more than this program's at F = 64 (docs/BENCHMARKS.md, "SDDMM edge groups" and
// "SDDMM edge groups over COO slots").
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"

namespace {

using strata::experiments::f32x16;
using strata::experiments::f32x8;
using strata::experiments::Floats;
using strata::experiments::lane_sum;
using strata::experiments::load;
using strata::experiments::median_ms;
using strata::experiments::store;

// Halves the lanes per vector and doubles the vectors per register: a and b hold 2G partials
// each of G sums; the result holds G partials of each, a's sums before b's in every block.
inline f32x16 fold8(f32x16 a, f32x16 b) {  // blocks of 8 lanes
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
         __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
}
inline f32x16 fold4(f32x16 a, f32x16 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27) +
         __builtin_shufflevector(a, b, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
}
inline f32x16 fold2(f32x16 a, f32x16 b) {
  return __builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29) +
         __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
}
inline f32x16 fold1(f32x16 a, f32x16 b) {
  return __builtin_shufflevector(a, b, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30) +
         __builtin_shufflevector(a, b, 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
}

// Lane k of the result: the sum of acc[k]'s 16 lanes.
inline f32x16 transposed_sum16(const f32x16* acc) {
  f32x16 t[8], u[4], v[2];
  for (int k = 0; k < 8; ++k) t[k] = fold8(acc[k], acc[k + 8]);
  for (int k = 0; k < 4; ++k) u[k] = fold4(t[k], t[k + 4]);
  for (int k = 0; k < 2; ++k) v[k] = fold2(u[k], u[k + 2]);
  return fold1(v[0], v[1]);
}

// Lanes 0..7 of the result: the sums of acc[0..7].
inline f32x8 transposed_sum8(const f32x16* acc) {
  f32x16 t[4], u[2];
  for (int k = 0; k < 4; ++k) t[k] = fold8(acc[k], acc[k + 4]);  // lanes 0-7: acc[k], 8-15: acc[k+4]
  for (int k = 0; k < 2; ++k) u[k] = fold4(t[k], t[k + 2]);      // blocks of 4: k, k+2, k+4, k+6
  const f32x16 v = fold2(u[0], u[1]);                            // pairs: 0, 1, 2, 3, 4, 5, 6, 7
  const f32x16 w = v + __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  return __builtin_shufflevector(w, w, 0, 2, 4, 6, 8, 10, 12, 14);
}

using Csr = strata::experiments::ExportedCsr;

template <int F>
inline f32x16 edge_product(const f32x16* x, const float* y) {
  f32x16 acc = x[0] * load(y);
  for (int v = 1; v < F / 16; ++v) acc += x[v] * load(y + 16 * v);
  return acc;
}

// The generated kernel's form: one horizontal sum and one scalar store per edge.
template <int F>
void sddmm_per_edge(const Csr& a, const float* X, const float* Y, float* O) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < a.rows; ++i) {
    f32x16 x[F / 16];
    for (int v = 0; v < F / 16; ++v) x[v] = load(X + i * F + 16 * v);
    for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e)
      O[e] = lane_sum(edge_product<F>(x, Y + static_cast<int64_t>(a.indices[e]) * F));
  }
}

// Edges 16 at a time (then 8, then one), one transposing sum and one vector store per group.
template <int F, bool Eights>
void sddmm_grouped(const Csr& a, const float* X, const float* Y, float* O) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < a.rows; ++i) {
    f32x16 x[F / 16];
    for (int v = 0; v < F / 16; ++v) x[v] = load(X + i * F + 16 * v);
    int64_t e = a.indptr[i];
    const int64_t end = a.indptr[i + 1];
    for (; e + 16 <= end; e += 16) {
      f32x16 acc[16];
      for (int k = 0; k < 16; ++k) acc[k] = edge_product<F>(x, Y + static_cast<int64_t>(a.indices[e + k]) * F);
      store(O + e, transposed_sum16(acc));
    }
    if (Eights && e + 8 <= end) {
      f32x16 acc[8];
      for (int k = 0; k < 8; ++k) acc[k] = edge_product<F>(x, Y + static_cast<int64_t>(a.indices[e + k]) * F);
      const f32x8 s = transposed_sum8(acc);
      std::memcpy(O + e, &s, sizeof s);
      e += 8;
    }
    for (; e < end; ++e) O[e] = lane_sum(edge_product<F>(x, Y + static_cast<int64_t>(a.indices[e]) * F));
  }
}

// Edges 16 at a time whatever rows they belong to (each thread walks a contiguous range of
// rows, balanced by non-zeros): X's row is loaded per edge, from L1 while a row lasts.
template <int F>
void sddmm_across_rows(const Csr& a, const float* X, const float* Y, float* O) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    const int64_t nnz = a.indptr.back();
    const int64_t r0 = std::upper_bound(a.indptr.begin(), a.indptr.end(), nnz * t / T) - a.indptr.begin() - 1;
    const int64_t r1 =
        t + 1 == T ? a.rows
                   : std::upper_bound(a.indptr.begin(), a.indptr.end(), nnz * (t + 1) / T) - a.indptr.begin() - 1;
    const int64_t e0 = a.indptr[r0], e1 = a.indptr[r1];
    int64_t i = r0;
    int64_t e = e0;
    for (; e + 16 <= e1; e += 16) {
      f32x16 acc[16];
      for (int k = 0; k < 16; ++k) {
        while (a.indptr[i + 1] <= e + k) ++i;
        const float* x = X + i * F;
        const float* y = Y + static_cast<int64_t>(a.indices[e + k]) * F;
        f32x16 s = load(x) * load(y);
        for (int v = 1; v < F / 16; ++v) s += load(x + 16 * v) * load(y + 16 * v);
        acc[k] = s;
      }
      store(O + e, transposed_sum16(acc));
    }
    for (; e < e1; ++e) {
      while (a.indptr[i + 1] <= e) ++i;
      f32x16 x[F / 16];
      for (int v = 0; v < F / 16; ++v) x[v] = load(X + i * F + 16 * v);
      O[e] = lane_sum(edge_product<F>(x, Y + static_cast<int64_t>(a.indices[e]) * F));
    }
  }
}

// Edges 16 at a time whatever rows they belong to, each finding its row through a row id
// per edge (COO); the rest of a thread's range one by one.
template <int F>
void sddmm_across_rows_coo(const Csr& a, const std::vector<int32_t>& row, const float* X, const float* Y, float* O) {
  const int64_t nnz = a.indptr.back(), groups = nnz / 16;
  auto dot = [&](int64_t e) {
    const float* x = X + static_cast<int64_t>(row[e]) * F;
    const float* y = Y + static_cast<int64_t>(a.indices[e]) * F;
    f32x16 s = load(x) * load(y);
    for (int v = 1; v < F / 16; ++v) s += load(x + 16 * v) * load(y + 16 * v);
    return s;
  };
#pragma omp parallel for schedule(static)
  for (int64_t g = 0; g < groups; ++g) {
    f32x16 acc[16];
    for (int k = 0; k < 16; ++k) acc[k] = dot(g * 16 + k);
    store(O + g * 16, transposed_sum16(acc));
  }
  for (int64_t e = groups * 16; e < nnz; ++e) O[e] = lane_sum(dot(e));
}

template <int F>
void run(const Csr& a, const std::string& name, int repeats) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Floats X(a.rows * F), Y(a.cols * F);
  for (float& v : X) v = u(rng);
  for (float& v : Y) v = u(rng);
  Floats O0(a.indptr.back()), O1(O0.size()), O2(O0.size()), O3(O0.size()), O4(O0.size());
  std::vector<int32_t> row(O0.size());
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) row[e] = static_cast<int32_t>(i);
  sddmm_across_rows<F>(a, X.data(), Y.data(), O3.data());
  sddmm_across_rows_coo<F>(a, row, X.data(), Y.data(), O4.data());
  sddmm_per_edge<F>(a, X.data(), Y.data(), O0.data());
  sddmm_grouped<F, false>(a, X.data(), Y.data(), O1.data());
  sddmm_grouped<F, true>(a, X.data(), Y.data(), O2.data());
  for (size_t e = 0; e < O0.size(); ++e)
    if (std::fabs(O0[e] - O1[e]) > 1e-3f * (1 + std::fabs(O0[e])) ||
        std::fabs(O0[e] - O2[e]) > 1e-3f * (1 + std::fabs(O0[e])) ||
        std::fabs(O0[e] - O3[e]) > 1e-3f * (1 + std::fabs(O0[e])) ||
        std::fabs(O0[e] - O4[e]) > 1e-3f * (1 + std::fabs(O0[e]))) {
      std::printf("F=%d: mismatch at edge %zu: %g %g %g\n", F, e, O0[e], O1[e], O2[e]);
      std::exit(1);
    }
  std::vector<double> t[5];
  for (int round = 0; round < 3; ++round) {
    t[0].push_back(median_ms([&] { sddmm_per_edge<F>(a, X.data(), Y.data(), O0.data()); }, repeats));
    t[1].push_back(median_ms([&] { sddmm_grouped<F, false>(a, X.data(), Y.data(), O1.data()); }, repeats));
    t[2].push_back(median_ms([&] { sddmm_grouped<F, true>(a, X.data(), Y.data(), O2.data()); }, repeats));
    t[3].push_back(median_ms([&] { sddmm_across_rows<F>(a, X.data(), Y.data(), O3.data()); }, repeats));
    t[4].push_back(median_ms([&] { sddmm_across_rows_coo<F>(a, row, X.data(), Y.data(), O4.data()); }, repeats));
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  std::printf(
      "%-10s F=%3d  per edge %7.3f ms  16s %7.3f ms (%.2fx)  16s then 8 %7.3f ms (%.2fx)  across rows %7.3f ms "
      "(%.2fx)  across rows by row id %7.3f ms (%.2fx)\n",
      name.c_str(), F, t[0][1], t[1][1], t[0][1] / t[1][1], t[2][1], t[0][1] / t[2][1], t[3][1], t[0][1] / t[3][1],
      t[4][1], t[0][1] / t[4][1]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXPORT_DIR [repeats]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  try {
    const Csr a = strata::experiments::read_exported_csr(dir);
    const std::string name = dir.substr(dir.find_last_of('/') + 1);
    run<32>(a, name, repeats);
    run<64>(a, name, repeats);
    run<128>(a, name, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
