// An experiment, hand-written (not generated code): does CSR SpMM on graphs with short rows
// lose time at each row's end, where the inner loop's exit branch is hard to predict? SDDMM
// gained from walking COO slots instead of CSR rows (docs/BENCHMARKS.md, "SDDMM edge groups
// over COO slots"). Here the slots of a thread's rows are walked in one loop without a branch
// per row: the row accumulator is reset by a select where the slot's row id differs from the
// previous slot's, and stored to its row at every slot, so the row's last slot leaves its sum
// (empty rows are zeroed first). It is timed against the CSR form (one accumulator per row,
// stored once) on graphs written by `strata export`, F = 16, 32, 64, 2 threads, rows handed
// out in blocks of equal non-zeros, after checking that the two agree; medians of the repeats,
// the two forms alternating over 5 rounds.
//
//   cmake --build build --target strata_experiment_spmm_segmented_slots
//   for g in cora pubmed dblp facebook; do build/apps/strata export --graph $g --feat 32 --out /tmp/exp/$g; done
//   chrt -f 50 build/benchmarks/strata_experiment_spmm_segmented_slots /tmp/exp/cora /tmp/exp/pubmed ...
//
// Measured on the Intel Xeon VM, 2026-12-05: the slots lose on every graph tried (Cora,
// Pubmed, DBLP, Facebook, AIFB: 0.51-0.73x at F = 16, 0.64-0.87x at F = 32, 0.77-0.88x at
// F = 64; a first version on ten graphs, 0.62-1.05x). A row's end costs less than a store of
// the row at every slot; not built into the compiler.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"

namespace {

using strata::experiments::ExportedCsr;
using strata::experiments::f32x16;
using strata::experiments::Floats;
using strata::experiments::load;
using strata::experiments::median_ms;
using strata::experiments::store;

// This thread's rows: a block of about equal non-zeros.
std::pair<int64_t, int64_t> thread_rows(const ExportedCsr& a) {
  const int t = omp_get_thread_num(), T = omp_get_num_threads();
  const int64_t nnz = a.indptr.back();
  auto row_at = [&](int64_t share) {
    return std::lower_bound(a.indptr.begin(), a.indptr.end(), share) - a.indptr.begin();
  };
  return {t == 0 ? 0 : row_at(nnz * t / T), t + 1 == T ? a.rows : row_at(nnz * (t + 1) / T)};
}

template <int F>
void spmm_rows(const ExportedCsr& a, const float* X, float* Y) {
#pragma omp parallel
  {
    const auto [r0, r1] = thread_rows(a);
    for (int64_t i = r0; i < r1; ++i) {
      f32x16 acc[F / 16] = {};
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int v = 0; v < F / 16; ++v) acc[v] += load(x + 16 * v);
      }
      for (int v = 0; v < F / 16; ++v) store(Y + i * F + 16 * v, acc[v]);
    }
  }
}

template <int F>
void spmm_slots(const ExportedCsr& a, const std::vector<int32_t>& row, const float* X, float* Y) {
#pragma omp parallel
  {
    const auto [r0, r1] = thread_rows(a);
    for (int64_t i = r0; i < r1; ++i)
      if (a.indptr[i] == a.indptr[i + 1])
        for (int v = 0; v < F / 16; ++v) store(Y + i * F + 16 * v, f32x16{});
    f32x16 acc[F / 16] = {};
    int32_t prev = -1;
    const f32x16 zero = {};
    for (int64_t e = a.indptr[r0]; e < a.indptr[r1]; ++e) {
      const int32_t i = row[e];
      const bool same = i == prev;
      prev = i;
      const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
      for (int v = 0; v < F / 16; ++v) {
        acc[v] = (same ? acc[v] : zero) + load(x + 16 * v);
        store(Y + static_cast<int64_t>(i) * F + 16 * v, acc[v]);
      }
    }
  }
}

template <int F>
void run(const ExportedCsr& a, const std::vector<int32_t>& row, const std::string& name, int repeats) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Floats X(a.cols * F), Y0(a.rows * F), Y1(a.rows * F);
  for (float& v : X) v = u(rng);
  spmm_rows<F>(a, X.data(), Y0.data());
  spmm_slots<F>(a, row, X.data(), Y1.data());
  for (size_t k = 0; k < Y0.size(); ++k)
    if (std::fabs(Y0[k] - Y1[k]) > 1e-3f * (1 + std::fabs(Y0[k]))) {
      std::printf("%s F=%d: mismatch at %zu: %g %g\n", name.c_str(), F, k, Y0[k], Y1[k]);
      std::exit(1);
    }
  std::vector<double> t[2];
  for (int round = 0; round < 5; ++round) {
    t[0].push_back(median_ms([&] { spmm_rows<F>(a, X.data(), Y0.data()); }, repeats));
    t[1].push_back(median_ms([&] { spmm_slots<F>(a, row, X.data(), Y1.data()); }, repeats));
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  std::printf("%-10s F=%3d  rows %7.4f ms  slots %7.4f ms (%.2fx)\n", name.c_str(), F, t[0][2], t[1][2],
              t[0][2] / t[1][2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXPORT_DIR... (written by strata export)\n", argv[0]);
    return 2;
  }
  try {
    for (int k = 1; k < argc; ++k) {
      const std::string dir = argv[k];
      const ExportedCsr a = strata::experiments::read_exported_csr(dir);
      std::vector<int32_t> row(a.indptr.back());
      for (int64_t i = 0; i < a.rows; ++i)
        for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) row[e] = static_cast<int32_t>(i);
      const std::string name = dir.substr(dir.find_last_of('/') + 1);
      run<16>(a, row, name, 20);
      run<32>(a, row, name, 20);
      run<64>(a, row, name, 20);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
