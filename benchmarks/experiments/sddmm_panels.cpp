// An experiment, hand-written (not generated code): does SDDMM gain from reading X and Y in
// feature panels, as SpMM does? SpMM's tuned plans on graphs whose X outgrows a core's L2
// (Facebook, GitHub, Deezer, R-MAT 17) read X panel by panel ([F/W][rows][W]), so each pass
// gathers from a W-wide slice of X that the caches hold. SDDMM gathers Y's rows the same way,
// but its output is one sum per edge: a panel pass adds a partial dot product into O[e], so
// every pass after the first reads and writes O again. With the rows of each thread fixed
// across passes (static hand-out), a thread's share of O stays in its own L2.
//
// Reads a graph written by `strata export --graph G --out DIR` (indptr.npy, indices.npy) and
// times, for F = 64, 128, 256, the row-major form of the generated CSR kernel (X's row in
// registers, one vector accumulator per edge) against panels of 32 and 64, after checking
// that they agree; 2 threads, median of the repeats, each after an untimed call.
//
//   cmake --build build --target strata_experiment_sddmm_panels
//   build/apps/strata export --graph github --feat 32 --out /tmp/exp/github
//   chrt -f 50 build/benchmarks/strata_experiment_sddmm_panels /tmp/exp/github [repeats]
//
// Measured on the Intel Xeon VM, 2026-12-05 (row-major time over panel time, 2 threads):
// panels of 64 at F = 128 / 256 ran 1.70x / 1.91x on MUSAE Facebook, 1.46x / 1.31x on
// GitHub, 1.52x / 1.18x on Deezer, but 0.96-1.20x on R-MAT 17 and the uniform graph, whose
// panels still outgrow the L2; panels of 32 lost on most (their passes repeat the walk over
// the structure and O). The horizontal sum matters: with a plain loop of 16 scalar adds
// per edge and pass, panels lost everywhere (0.43-0.93x). What this found is now a plan
// choice of the compiler (x_layout panel:W for SDDMM; docs/BENCHMARKS.md).
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
using strata::experiments::Floats;
using strata::experiments::lane_sum;
using strata::experiments::load;
using strata::experiments::median_ms;

struct Csr : strata::experiments::ExportedCsr {
  std::vector<int64_t> task_rows;  // row boundaries of each thread's block, balanced by non-zeros
};

Csr read_csr(const std::string& dir, int threads) {
  Csr a;
  static_cast<strata::experiments::ExportedCsr&>(a) = strata::experiments::read_exported_csr(dir);
  const int64_t nnz = a.indptr.back();
  for (int t = 0; t <= threads; ++t)
    a.task_rows.push_back(std::lower_bound(a.indptr.begin(), a.indptr.end(), nnz * t / threads) - a.indptr.begin());
  a.task_rows.back() = a.rows;
  return a;
}

// Panels of W features: X and Y as [F/W][rows][W]; pass p adds its partial dot into O.
// W = F is the generated CSR kernel's form: X[i] in registers, one accumulator per edge.
template <int F, int W>
void sddmm_panels(const Csr& a, const float* X, const float* Y, float* O) {
  constexpr int V = W / 16;
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    for (int p = 0; p < F / W; ++p) {
      const float* Xp = X + p * a.rows * W;
      const float* Yp = Y + p * a.cols * W;
      for (int64_t i = a.task_rows[t]; i < a.task_rows[t + 1]; ++i) {
        f32x16 x[V];
        for (int v = 0; v < V; ++v) x[v] = load(Xp + i * W + 16 * v);
        for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
          const float* y = Yp + static_cast<int64_t>(a.indices[e]) * W;
          f32x16 acc = x[0] * load(y);
          for (int v = 1; v < V; ++v) acc += x[v] * load(y + 16 * v);
          O[e] = p == 0 ? lane_sum(acc) : O[e] + lane_sum(acc);
        }
      }
    }
  }
}

Floats to_panels(const Floats& M, int64_t rows, int F, int W) {
  Floats out(M.size());
  for (int p = 0; p < F / W; ++p)
    for (int64_t r = 0; r < rows; ++r) std::memcpy(&out[(p * rows + r) * W], &M[r * F + p * W], W * sizeof(float));
  return out;
}

template <int F, int W>
double time_panels(const Csr& a, const Floats& X, const Floats& Y, const Floats& O0, int repeats) {
  if (W > F) return 0;
  const Floats Xp = to_panels(X, a.rows, F, W), Yp = to_panels(Y, a.cols, F, W);
  Floats O(O0.size());
  sddmm_panels<F, W>(a, Xp.data(), Yp.data(), O.data());
  for (size_t e = 0; e < O.size(); ++e)
    if (std::fabs(O0[e] - O[e]) > 1e-3f * (1 + std::fabs(O0[e]))) {
      std::printf("F=%d W=%d: mismatch at edge %zu\n", F, W, e);
      std::exit(1);
    }
  return median_ms([&] { sddmm_panels<F, W>(a, Xp.data(), Yp.data(), O.data()); }, repeats);
}

template <int F>
void run(const Csr& a, const std::string& name, int repeats) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Floats X(a.rows * F), Y(a.cols * F);
  for (float& v : X) v = u(rng);
  for (float& v : Y) v = u(rng);
  Floats O0(a.indptr.back());
  sddmm_panels<F, F>(a, X.data(), Y.data(), O0.data());
  // Alternating rounds, so that drift on the host falls on every variant alike.
  std::vector<double> t[4];
  for (int round = 0; round < 3; ++round) {
    t[0].push_back(median_ms([&] { sddmm_panels<F, F>(a, X.data(), Y.data(), O0.data()); }, repeats));
    t[1].push_back(time_panels<F, 32>(a, X, Y, O0, repeats));
    t[2].push_back(time_panels<F, 64>(a, X, Y, O0, repeats));
    t[3].push_back(time_panels<F, 128>(a, X, Y, O0, repeats));
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  std::printf("%-10s F=%3d  rows %8.3f ms", name.c_str(), F, t[0][1]);
  const int widths[] = {0, 32, 64, 128};
  for (int k = 1; k < 4; ++k)
    if (widths[k] < F) std::printf("  panel%-3d %8.3f ms (%.2fx)", widths[k], t[k][1], t[0][1] / t[k][1]);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXPORT_DIR [repeats]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  const int threads = omp_get_max_threads();
  try {
    const Csr a = read_csr(dir, threads);
    const std::string name = dir.substr(dir.find_last_of('/') + 1);
    run<64>(a, name, repeats);
    run<128>(a, name, repeats);
    run<256>(a, name, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
