// What the gather-ceiling experiments (spmm_gather_ceiling.cpp, sddmm_gather_ceiling.cpp)
// share: the read-only loops that sum rows of a matrix into independent register sets (what
// a kernel must read, and nothing else), the sums they must produce, the fold of ids into
// L1, a Tensor over an experiment's array, and interleaved timing of several variants.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"
#include "core/tensor.h"

namespace strata::experiments {

// Sets of F/16 vectors the read-only loops add into in turn: as many as fit 16 registers,
// at most four, so that no add waits on the one before.
template <int F>
inline constexpr int kReadSets = std::min(4, 16 / (F / 16));

// The sum of the rows of M (F floats a row) at ids[lo, hi); with Fold, each id is folded
// by `mask` first.
template <int F, bool Fold>
inline f32x16 sum_gathered_rows(const int32_t* ids, int64_t lo, int64_t hi, const float* M, int32_t mask) {
  constexpr int V = F / 16, K = kReadSets<F>;
  f32x16 acc[K][V] = {};
  const auto row_of = [&](int64_t e) { return M + static_cast<int64_t>(Fold ? ids[e] & mask : ids[e]) * F; };
  int64_t e = lo;
  for (; e + K <= hi; e += K)
    for (int k = 0; k < K; ++k) {
      const float* m = row_of(e + k);
      for (int v = 0; v < V; ++v) acc[k][v] += load(m + 16 * v);
    }
  for (; e < hi; ++e) {
    const float* m = row_of(e);
    for (int v = 0; v < V; ++v) acc[0][v] += load(m + 16 * v);
  }
  f32x16 s = {};
  for (int k = 0; k < K; ++k)
    for (int v = 0; v < V; ++v) s += acc[k][v];
  return s;
}

// The sum of rows [lo, hi) of M, read in order.
template <int F>
inline f32x16 sum_contiguous_rows(const float* M, int64_t lo, int64_t hi) {
  constexpr int V = F / 16, K = kReadSets<F>;
  f32x16 acc[K][V] = {};
  int64_t i = lo;
  for (; i + K <= hi; i += K)
    for (int k = 0; k < K; ++k)
      for (int v = 0; v < V; ++v) acc[k][v] += load(M + (i + k) * F + 16 * v);
  for (; i < hi; ++i)
    for (int v = 0; v < V; ++v) acc[0][v] += load(M + i * F + 16 * v);
  f32x16 s = {};
  for (int k = 0; k < K; ++k)
    for (int v = 0; v < V; ++v) s += acc[k][v];
  return s;
}

// The rows each task starts, for tasks whose non-zeros begin at positions nnz_starts
// (ascending, one per task): task t owns rows [bounds[t], bounds[t + 1]), the rows whose
// first non-zero lies at or after nnz_starts[t] and before nnz_starts[t + 1].
inline std::vector<int64_t> task_row_bounds(const ExportedCsr& a, const std::vector<int64_t>& nnz_starts) {
  std::vector<int64_t> b(nnz_starts.size() + 1, a.rows);
  b[0] = 0;
  for (size_t t = 1; t < nnz_starts.size(); ++t)
    b[t] = std::lower_bound(a.indptr.begin(), a.indptr.end(), nnz_starts[t]) - a.indptr.begin();
  return b;
}

// Row bounds of tasks of about `grain` non-zeros each, as the plain CSR plan hands out
// (at most one task per row): task t runs rows [bounds[t], bounds[t + 1]).
inline std::vector<int64_t> nnz_balanced_tasks(const ExportedCsr& a, int64_t grain) {
  const int64_t nnz = a.indptr.back();
  const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(a.rows, (nnz + grain - 1) / grain));
  std::vector<int64_t> starts(tasks);
  for (int64_t t = 0; t < tasks; ++t) starts[t] = t * nnz / tasks;
  return task_row_bounds(a, starts);
}

// acc[0 .. F/16) = the sum of X's rows at row i's non-zeros.
template <int F>
__attribute__((always_inline)) inline void sum_csr_row(const ExportedCsr& a, int64_t i, const float* X, f32x16* acc) {
  constexpr int V = F / 16;
  for (int v = 0; v < V; ++v) acc[v] = f32x16{};
  for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
    const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
    for (int v = 0; v < V; ++v) acc[v] += load(x + 16 * v);
  }
}

// Y[i] = the sum of X's rows at row i's non-zeros, held in F/16 vector registers and
// stored once: the form of the generated plain CSR kernel, written by hand.
template <int F>
__attribute__((always_inline)) inline void plain_csr_row(const ExportedCsr& a, int64_t i, const float* X, float* Y) {
  f32x16 acc[F / 16];
  sum_csr_row<F>(a, i, X, acc);
  for (int v = 0; v < F / 16; ++v) store(Y + i * F + 16 * v, acc[v]);
}

// Plain CSR SpMM by hand over the tasks `tb` (nnz_balanced_tasks): handed out dynamically,
// as the plain CSR plan does, or with Static in fixed blocks, so that each thread writes the
// same rows of Y on every call.
template <int F, bool Static = false>
void plain_csr(const ExportedCsr& a, const std::vector<int64_t>& tb, const float* X, float* Y) {
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
  if (Static) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; ++t)
      for (int64_t i = tb[t]; i < tb[t + 1]; ++i) plain_csr_row<F>(a, i, X, Y);
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t)
      for (int64_t i = tb[t]; i < tb[t + 1]; ++i) plain_csr_row<F>(a, i, X, Y);
  }
}

// The largest all-ones mask that folds ids into rows of F floats filling at most 32 KiB
// (and fewer than `rows` rows).
inline int32_t l1_fold_mask(int64_t rows, int F) {
  int32_t mask = 0;
  while (static_cast<int64_t>(mask + 1) * 2 * F * 4 <= (32 << 10) && mask + 1 < rows) mask = 2 * mask + 1;
  return mask;
}

// The lane sums a read-only loop must produce (lane f % 16 of every value it reads), in
// double, with the sums of magnitudes that scale float rounding.
class LaneSums {
 public:
  void add(double value, int64_t feature) {
    sum_[feature % 16] += value;
    magnitude_[feature % 16] += std::fabs(value);
  }
  // Whether the per-task vectors sums[16 t .. 16 t + 15], t < tasks, add up to these sums.
  bool matches(const Floats& sums, int64_t tasks) const {
    for (int l = 0; l < 16; ++l) {
      double got = 0;
      for (int64_t t = 0; t < tasks; ++t) got += sums[16 * t + l];
      if (std::fabs(got - sum_[l]) > 1e-5 * std::max(1.0, magnitude_[l])) return false;
    }
    return true;
  }

 private:
  double sum_[16] = {}, magnitude_[16] = {};
};

// A float32 tensor over an experiment's array, not a copy: kernels then read and write the
// same memory as the hand-written variants, as warm in the caches.
inline Tensor wrap_tensor(Floats& v, Shape shape) {
  return Tensor::from_storage(
      Storage::wrap(v.data(), static_cast<int64_t>(v.size() * sizeof(float)), Device::cpu(), {}), std::move(shape),
      DType::F32);
}

// The median time of each variant over `repeats` rounds, each round timing every variant
// once (interleaved, so drift on a shared machine hits all alike), each call right after an
// untimed call of its own.
inline std::vector<double> interleaved_medians(const std::vector<std::function<void()>>& variants, int repeats) {
  std::vector<std::vector<double>> ms(variants.size());
  for (int r = 0; r < repeats; ++r)
    for (size_t v = 0; v < variants.size(); ++v) ms[v].push_back(median_ms(variants[v], 1));
  std::vector<double> med;
  for (auto& m : ms) {
    std::sort(m.begin(), m.end());
    med.push_back(m[m.size() / 2]);
  }
  return med;
}

// A graph named on the command line: a folder written by `strata export --graph G --out
// DIR`, or regular:N:D (N rows of D uniform random columns) or irregular:N:D (1..D columns,
// uniform). Throws with what was expected.
inline ExportedCsr load_ceiling_graph(const std::string& arg) {
  if (arg.rfind("regular:", 0) != 0 && arg.rfind("irregular:", 0) != 0) return read_exported_csr(arg);
  const bool irregular = arg[0] == 'i';
  long long n = 0, d = 0;
  char tail = 0;
  if (std::sscanf(arg.c_str() + arg.find(':') + 1, "%lld:%lld%c", &n, &d, &tail) != 2 || n < 1 || d < 1)
    throw std::runtime_error("expected regular:N:D or irregular:N:D with N, D positive integers");
  ExportedCsr a;
  a.rows = a.cols = n;
  std::mt19937_64 g(3);
  a.indptr.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t di = irregular ? std::uniform_int_distribution<int64_t>(1, d)(g) : d;
    for (int64_t k = 0; k < di; ++k)
      a.indices.push_back(static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, n - 1)(g)));
    std::sort(a.indices.begin() + a.indptr.back(), a.indices.end());  // sorted within the row, as loaded graphs are
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  return a;
}

// main() of a ceiling experiment: prints `header`, then calls `run(name, graph)` for each
// graph named on the command line. Exit status 2 for bad arguments, 1 if a run fails its
// checks or throws (reported with the graph's name), else 0.
inline int run_on_graphs(int argc, char** argv, const std::string& header,
                         const std::function<bool(const std::string&, const ExportedCsr&)>& run) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s GRAPH... (each a folder written by `strata export --graph G --out DIR`, or "
                 "regular:N:D or irregular:N:D)\n",
                 argv[0]);
    return 2;
  }
  std::fputs(header.c_str(), stdout);
  bool ok = true;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    ExportedCsr a;
    try {
      a = load_ceiling_graph(arg);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", arg.c_str(), e.what());
      return 2;
    }
    const std::string name = arg.substr(arg.find_last_of('/') + 1);
    try {
      ok = run(name, a) && ok;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
}  // namespace strata::experiments
