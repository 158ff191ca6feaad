// An experiment, hand-written (not generated code): does SDDMM's dot product per edge wait on
// its FMA chain? The generated CSR kernel sums an edge's F/16 vector products into one
// accumulator, a chain of F/16 dependent FMAs (16 at F = 256). This program times that form
// against 2 and 4 partial accumulators on random CSR graphs (2 threads, median of the repeats,
// each after an untimed call), after checking that the three agree.
//
//   cmake --build build --target strata_experiment_sddmm_accumulators
//   chrt -f 50 build/benchmarks/strata_experiment_sddmm_accumulators
//
// Measured on the Intel Xeon VM, 2026-12-04 (docs/BENCHMARKS.md, "Measured and rejected for
// SDDMM"): 0.84-1.02x, so the chain is not what SDDMM waits for; its gathers are.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "benchmarks/experiments/experiment_arrays.h"

namespace {

using strata::experiments::f32x16;
using strata::experiments::Floats;
using strata::experiments::load;

float lane_sum(f32x16 v) {
  float s = 0;
  for (int l = 0; l < 16; ++l) s += v[l];
  return s;
}

struct Csr {
  int64_t rows = 0;
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
};

// Rows of 0..2·degree uniform random columns, sorted.
Csr random_csr(int64_t n, int degree, std::mt19937_64& rng) {
  Csr a;
  a.rows = n;
  a.indptr.assign(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    const int d = std::uniform_int_distribution<int>(0, 2 * degree)(rng);
    for (int k = 0; k < d; ++k)
      a.indices.push_back(static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, n - 1)(rng)));
    std::sort(a.indices.begin() + a.indptr[i], a.indices.end());
    a.indptr[i + 1] = static_cast<int64_t>(a.indices.size());
  }
  return a;
}

// O[e] = X[i] · Y[j] for every non-zero e = (i, j), the products summed into K accumulators.
template <int F, int K>
void sddmm(const Csr& a, const float* X, const float* Y, float* O) {
  constexpr int V = F / 16;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < a.rows; ++i) {
    f32x16 x[V];
    for (int v = 0; v < V; ++v) x[v] = load(X + i * F + 16 * v);
    for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
      const float* y = Y + static_cast<int64_t>(a.indices[e]) * F;
      f32x16 acc[K] = {};
      for (int v = 0; v < V; ++v) acc[v % K] += x[v] * load(y + 16 * v);
      for (int k = 1; k < K; ++k) acc[0] += acc[k];
      O[e] = lane_sum(acc[0]);
    }
  }
}

template <int F, int K>
double time_ms(const Csr& a, const Floats& X, const Floats& Y, Floats& O) {
  sddmm<F, K>(a, X.data(), Y.data(), O.data());  // untimed: the same data in cache as the timed call
  const auto t0 = std::chrono::steady_clock::now();
  sddmm<F, K>(a, X.data(), Y.data(), O.data());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <int F>
bool run(int64_t n, int degree, int repeats) {
  constexpr int K2 = F / 16 >= 2 ? 2 : 1, K4 = F / 16 >= 4 ? 4 : F / 16;
  std::mt19937_64 rng(1);
  const Csr a = random_csr(n, degree, rng);
  Floats X(n * F), Y(n * F), O1(a.indices.size()), O2(O1.size()), O4(O1.size());
  for (float& v : X) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (float& v : Y) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  sddmm<F, 1>(a, X.data(), Y.data(), O1.data());
  sddmm<F, K2>(a, X.data(), Y.data(), O2.data());
  sddmm<F, K4>(a, X.data(), Y.data(), O4.data());
  for (size_t e = 0; e < O1.size(); ++e)
    if (std::fabs(O1[e] - O2[e]) > 1e-4f * (1 + std::fabs(O1[e])) ||
        std::fabs(O1[e] - O4[e]) > 1e-4f * (1 + std::fabs(O1[e]))) {
      std::printf("MISMATCH at edge %zu: %g %g %g\n", e, O1[e], O2[e], O4[e]);
      return false;
    }
  std::vector<double> t1, t2, t4;
  for (int r = 0; r < repeats; ++r) {  // interleaved, so drift on a shared machine hits all three
    t1.push_back(time_ms<F, 1>(a, X, Y, O1));
    t2.push_back(time_ms<F, K2>(a, X, Y, O2));
    t4.push_back(time_ms<F, K4>(a, X, Y, O4));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double m1 = median(t1), m2 = median(t2), m4 = median(t4);
  std::printf("| %ld | %d | %zu | %d | %.3f | %.3f (%.2fx) | %.3f (%.2fx) |\n", static_cast<long>(n), degree,
              a.indices.size(), F, m1, m2, m1 / m2, m4, m1 / m4);
  return true;
}

}  // namespace

int main() {
  std::printf("threads %d\n| nodes | mean degree | edges | F | 1 chain ms | 2 accumulators | 4 accumulators |\n",
              omp_get_max_threads());
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  bool ok = true;
  for (const auto& [n, degree] : std::vector<std::pair<int64_t, int>>{{3000, 4}, {20000, 16}, {130000, 16}}) {
    ok = run<32>(n, degree, 31) && ok;
    ok = run<64>(n, degree, 31) && ok;
    ok = run<128>(n, degree, 31) && ok;
    ok = run<256>(n, degree, 21) && ok;
  }
  return ok ? 0 : 1;
}
