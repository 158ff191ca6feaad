// An experiment, hand-written (not generated code): where does plain CSR SpMM's time go,
// and how much of it could any schedule that keeps CSR order win back? For each graph and F
// it times, on the same nnz-balanced tasks (4096 non-zeros, handed out dynamically, as the
// plain CSR plan does):
//
//   plain  Y[i] = sum of X[j] over row i's non-zeros, the row held in F/16 vector
//          registers and stored once: the form of the generated plain-CSR kernel;
//   loads  the same loads of X in the same order, added into up to four independent sets
//          of registers (as many as fit 16 vectors): no chain per row, no row bookkeeping
//          and no stores of Y, which every SpMM must still do, so plain/loads bounds from
//          above what a schedule in CSR order with row-major X can gain (accumulator sets,
//          prefetch, unrolling, task hand-out, store kinds);
//   l1     `loads` with every id folded into the first 32 KiB of X, so that every gather
//          hits L1: loads/l1 is what the caches cost, left to schedules that change which
//          cache serves the gathers (column tiles, panels, row order, shared pairs);
//
// and, each as plain's time over its own, where a row's time might go: no stores (each row
// summed into registers only), static tasks (each thread writes the same rows of Y every
// call), streaming stores, Y prefetched for writing 8 rows ahead, each row of Y demoted to
// the shared L3 after its stores (CLDEMOTE; with dynamic and static tasks), Y offset by 1088 bytes
// from X's alignment (4K aliasing), rows sorted by degree within each task (runs of equal
// trip counts), non-zeros walked 8 at a time with padded groups (one trip for most rows),
// ELL buckets of widths 1-32 (rows of a width run branch-free; each row stored once), and
// each row's stores issued 3 rows later (4 register sets in rotation). Two diagnostics change
// the matrix, not the schedule: the same ids in the same order cut into rows of equal degree
// (every row's loop exit predictable), with and without the stores of Y.
// Every variant that writes Y is checked against plain, plain against a scalar reference
// (every 7th feature), and loads and l1 against the sums they must equal.
//
//   cmake --build build --target strata_experiment_spmm_gather_ceiling
//   for g in cora dblp imdb; do build/apps/strata export --graph $g --feat 32 --out /tmp/exp/$g; done
//   chrt -f 50 build/benchmarks/strata_experiment_spmm_gather_ceiling /tmp/exp/{cora,dblp,imdb} regular:20000:4
//
// (regular:N:D and irregular:N:D make a graph of N rows of D, or 1..D, uniform random
// columns.) Measured on the Intel Xeon VM, 2026-12-05 and 2026-12-06 (docs/BENCHMARKS.md,
// "Where plain CSR SpMM's time goes"): on 10 of 19 graphs the plain kernel runs within
// 1.10-1.28x (geomean over F) of its gathers alone. On the other nine, two costs hide each
// other: the rows' unpredictable loop exits and the stores of Y. Rows of equal degree
// without stores run 1.28-3.62x plain there; either change alone far less (equal degree
// 1.01-1.58x, no stores 1.21-2.07x), and none of the schedules above wins it back (0.38-1.40x,
// streaming stores aside at F >= 128).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"
#include "benchmarks/experiments/gather_ceiling.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "sparse_compiler/ops/spmm.h"

namespace {

using strata::experiments::ExportedCsr;
using strata::experiments::f32x16;
using strata::experiments::Floats;
using strata::experiments::interleaved_medians;
using strata::experiments::l1_fold_mask;
using strata::experiments::LaneSums;
using strata::experiments::load;
using strata::experiments::plain_csr;
using strata::experiments::store;
using strata::experiments::sum_csr_row;
using strata::experiments::sum_gathered_rows;
using strata::experiments::wrap_tensor;

constexpr int64_t kGrain = 4096;  // non-zeros per task, as the plain CSR plan

std::vector<int64_t> task_bounds(const ExportedCsr& a) { return strata::experiments::nnz_balanced_tasks(a, kGrain); }

// plain with Y's stores non-temporal (Stream), Y's rows prefetched for writing Ahead rows
// before their stores (Ahead > 0), or each row's lines demoted to the shared L3 right after
// its stores (Demote: CLDEMOTE, so that Y's lines leave the core's L2 to X's gathered rows;
// with Static, each thread writes the same rows every call).
template <int F, bool Stream, int Ahead, bool Demote = false, bool Static = false>
void plain_store_kind(const ExportedCsr& a, const std::vector<int64_t>& tb, const float* X, float* Y) {
  constexpr int V = F / 16;
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
  auto task = [&](int64_t t) {
    for (int64_t i = tb[t]; i < tb[t + 1]; ++i) {
      if (Ahead > 0)
        for (int v = 0; v < V; v += 1) __builtin_prefetch(Y + std::min(i + Ahead, a.rows - 1) * F + 16 * v, 1, 3);
      f32x16 acc[V] = {};
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int v = 0; v < V; ++v) acc[v] += load(x + 16 * v);
      }
      for (int v = 0; v < V; ++v) {
        if (Stream)
          __builtin_ia32_movntps512(Y + i * F + 16 * v, acc[v]);
        else
          store(Y + i * F + 16 * v, acc[v]);
      }
      if (Demote)
        for (int v = 0; v < V; ++v) __builtin_ia32_cldemote(Y + i * F + 16 * v);
    }
    if (Stream) __builtin_ia32_sfence();
  };
  if (Static) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t) task(t);
  }
}

// plain with each row's non-zeros walked G at a time, the last group padded: a padding slot
// reloads the row's last column with weight 0, so the loop runs ceil(d / G) times and a row
// of up to G non-zeros runs the same straight-line code.
template <int F, int G>
void plain_groups(const ExportedCsr& a, const std::vector<int64_t>& tb, const float* X, float* Y) {
  constexpr int V = F / 16;
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t i = tb[t]; i < tb[t + 1]; ++i) {
      f32x16 acc[V] = {};
      const int64_t lo = a.indptr[i], hi = a.indptr[i + 1];
      for (int64_t e = lo; e < hi; e += G)
        for (int k = 0; k < G; ++k) {
          const int64_t s = std::min(e + k, hi - 1);
          const float m = e + k < hi ? 1.0f : 0.0f;
          const float* x = X + static_cast<int64_t>(a.indices[s]) * F;
          for (int v = 0; v < V; ++v) acc[v] += m * load(x + 16 * v);
        }
      for (int v = 0; v < V; ++v) store(Y + i * F + 16 * v, acc[v]);
    }
}

// plain over the rows in the order `perm` (a permutation of each task's rows).
template <int F>
void plain_perm(const ExportedCsr& a, const std::vector<int64_t>& tb, const std::vector<int64_t>& perm, const float* X,
                float* Y) {
  constexpr int V = F / 16;
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t k = tb[t]; k < tb[t + 1]; ++k) {
      const int64_t i = perm[k];
      f32x16 acc[V] = {};
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int v = 0; v < V; ++v) acc[v] += load(x + 16 * v);
      }
      for (int v = 0; v < V; ++v) store(Y + i * F + 16 * v, acc[v]);
    }
}

// plain without the row stores: each row's sum added into one vector per task.
template <int F>
void plain_nostore(const ExportedCsr& a, const std::vector<int64_t>& tb, const float* X, float* sums) {
  constexpr int V = F / 16;
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t) {
    f32x16 s[4] = {};  // four sinks, so that the rows' sums do not form one chain
    for (int64_t i = tb[t]; i < tb[t + 1]; ++i) {
      f32x16 acc[V] = {};
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int v = 0; v < V; ++v) acc[v] += load(x + 16 * v);
      }
      for (int v = 0; v < V; ++v) s[i & 3] += acc[v];
    }
    store(sums + 16 * t, s[0] + s[1] + s[2] + s[3]);
  }
}

// plain with each row's stores issued D rows later in program order, from D + 1 sets of
// registers in rotation, so that the loads of the rows between cannot queue behind stores
// whose data (the row's sum) is not ready yet. (It does not pay: writing Y's lines costs by
// itself, docs/BENCHMARKS.md.)
template <int F, int D>
void plain_delayed_stores(const ExportedCsr& a, const std::vector<int64_t>& tb, const float* X, float* Y) {
  constexpr int V = F / 16, K = D + 1;
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t r1 = tb[t + 1];
    int64_t i = tb[t];
    f32x16 acc[K][V];
    for (int k = 0; k < D && i + k < r1; ++k) sum_csr_row<F>(a, i + k, X, acc[k]);
    for (; i + K <= r1; i += K) {
#pragma GCC unroll 8  // unrolled by K, so that each set stays in fixed registers
      for (int k = 0; k < K; ++k) {
        if (i + k + D < r1) sum_csr_row<F>(a, i + k + D, X, acc[(k + D) % K]);
        for (int v = 0; v < V; ++v) store(Y + (i + k) * F + 16 * v, acc[k][v]);
      }
    }
    for (; i < r1; ++i) {  // the task's last rows (fewer than K), summed again: simpler, and rare
      f32x16 last[V];
      sum_csr_row<F>(a, i, X, last);
      for (int v = 0; v < V; ++v) store(Y + i * F + 16 * v, last[v]);
    }
  }
}

// The same column ids in the same order, cut into rows of equal degree (the degrees
// nnz / rows rounded down or up, in a fixed pattern): not the same matrix, a diagnostic of
// what the row ends cost, since every row's loop then runs a trip count the branch
// predictor learns.
ExportedCsr equal_degree_rows(const ExportedCsr& a) {
  ExportedCsr e = a;
  const int64_t nnz = a.indptr.back();
  for (int64_t i = 0; i <= a.rows; ++i) e.indptr[i] = i * nnz / a.rows;
  return e;
}

// Rows bucketed by degree into ELL parts of widths 1, 2, 4, ..., 32 (rows longer than 32
// stay CSR); each part's padding slots repeat the row's last column and carry weight 0, so
// that every load is of a valid row and no slot branches. Each row is in one part, so its
// sum is stored once, with no zeroing pass and no read of Y.
struct Buckets {
  static constexpr int kParts = 6;
  std::vector<int64_t> rows[kParts];
  std::vector<int32_t> cols[kParts];
  std::vector<float> weight[kParts];
  std::vector<int64_t> long_rows, empty_rows;
};

Buckets make_buckets(const ExportedCsr& a) {
  Buckets b;
  for (int64_t i = 0; i < a.rows; ++i) {
    const int64_t lo = a.indptr[i], d = a.indptr[i + 1] - lo;
    if (d == 0) {
      b.empty_rows.push_back(i);
      continue;
    }
    if (d > 32) {
      b.long_rows.push_back(i);
      continue;
    }
    int p = 0;
    while ((int64_t{1} << p) < d) ++p;
    const int64_t w = int64_t{1} << p;
    b.rows[p].push_back(i);
    for (int64_t k = 0; k < w; ++k) {
      b.cols[p].push_back(a.indices[lo + std::min(k, d - 1)]);
      b.weight[p].push_back(k < d ? 1.0f : 0.0f);
    }
  }
  return b;
}

template <int F, int W>
void ell_part(const Buckets& b, int p, const float* X, float* Y) {
  constexpr int V = F / 16;
  const std::vector<int64_t>& rows = b.rows[p];
  const int32_t* cols = b.cols[p].data();
  const float* wt = b.weight[p].data();
  const int64_t n = static_cast<int64_t>(rows.size());
#pragma omp for schedule(static) nowait
  for (int64_t r = 0; r < n; ++r) {
    f32x16 acc[V] = {};
    for (int k = 0; k < W; ++k) {
      const float* x = X + static_cast<int64_t>(cols[r * W + k]) * F;
      const float m = wt[r * W + k];
      for (int v = 0; v < V; ++v) acc[v] += m * load(x + 16 * v);
    }
    for (int v = 0; v < V; ++v) store(Y + rows[r] * F + 16 * v, acc[v]);
  }
}

template <int F>
void buckets(const ExportedCsr& a, const Buckets& b, const float* X, float* Y) {
  constexpr int V = F / 16;
#pragma omp parallel
  {
    ell_part<F, 1>(b, 0, X, Y);
    ell_part<F, 2>(b, 1, X, Y);
    ell_part<F, 4>(b, 2, X, Y);
    ell_part<F, 8>(b, 3, X, Y);
    ell_part<F, 16>(b, 4, X, Y);
    ell_part<F, 32>(b, 5, X, Y);
    const int64_t nl = static_cast<int64_t>(b.long_rows.size()), ne = static_cast<int64_t>(b.empty_rows.size());
#pragma omp for schedule(dynamic, 16) nowait
    for (int64_t r = 0; r < nl; ++r) {
      const int64_t i = b.long_rows[r];
      f32x16 acc[V] = {};
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int v = 0; v < V; ++v) acc[v] += load(x + 16 * v);
      }
      for (int v = 0; v < V; ++v) store(Y + i * F + 16 * v, acc[v]);
    }
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < ne; ++r)
      for (int v = 0; v < V; ++v) store(Y + b.empty_rows[r] * F + 16 * v, f32x16{});
  }
}

// The loads of `plain` alone, in the same order; with Fold, each id is folded by `mask`.
// Each task writes one vector, the sum of what it read, to sums[t].
template <int F, bool Fold>
void loads(const ExportedCsr& a, const std::vector<int64_t>& tb, const float* X, int32_t mask, float* sums) {
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t)
    store(sums + 16 * t, sum_gathered_rows<F, Fold>(a.indices.data(), a.indptr[tb[t]], a.indptr[tb[t + 1]], X, mask));
}

double relative_error(double got, double want) { return std::fabs(got - want) / std::max(1.0, std::fabs(want)); }

// What `loads` must sum: X's row at each non-zero's (masked) id.
LaneSums expected_sums(const ExportedCsr& a, const Floats& X, int F, int32_t mask) {
  LaneSums s;
  for (int64_t e = 0; e < a.indptr.back(); ++e)
    for (int f = 0; f < F; ++f) s.add(X[static_cast<int64_t>(a.indices[e] & mask) * F + f], f);
  return s;
}

template <int F>
bool run(const std::string& name, const ExportedCsr& a, int repeats) {
  const std::vector<int64_t> tb = task_bounds(a);
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
  const ExportedCsr eq = equal_degree_rows(a);
  const std::vector<int64_t> tb_eq = task_bounds(eq);
  std::mt19937_64 rng(7);
  Floats X(a.cols * F), Y(a.rows * F), sums(16 * std::max<int64_t>(tasks, static_cast<int64_t>(tb_eq.size()) - 1));
  for (float& v : X) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  const int32_t l1_mask = l1_fold_mask(a.cols, F);

  plain_csr<F>(a, tb, X.data(), Y.data());
  for (int64_t i = 0; i < a.rows; ++i)
    for (int f = 0; f < F; f += 7) {
      double want = 0;
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) want += X[static_cast<int64_t>(a.indices[e]) * F + f];
      if (relative_error(Y[i * F + f], want) > 1e-4) {
        std::printf("%s F=%d: plain row %ld feature %d is %g, expected %g\n", name.c_str(), F, static_cast<long>(i), f,
                    Y[i * F + f], want);
        return false;
      }
    }
  for (int32_t mask : {int32_t{-1}, l1_mask}) {
    if (mask == -1)
      loads<F, false>(a, tb, X.data(), mask, sums.data());
    else
      loads<F, true>(a, tb, X.data(), mask, sums.data());
    if (!expected_sums(a, X, F, mask).matches(sums, tasks)) {
      std::printf("%s F=%d: the loads variant (mask %d) did not read every non-zero\n", name.c_str(), F, mask);
      return false;
    }
  }

  // Each task's rows sorted by degree (stable), so that runs of rows share a trip count.
  std::vector<int64_t> perm(a.rows);
  for (int64_t i = 0; i < a.rows; ++i) perm[i] = i;
  for (int64_t t = 0; t < tasks; ++t)
    std::stable_sort(perm.begin() + tb[t], perm.begin() + tb[t + 1], [&](int64_t x, int64_t y) {
      return a.indptr[x + 1] - a.indptr[x] < a.indptr[y + 1] - a.indptr[y];
    });
  const Buckets bk = make_buckets(a);
  Floats Yoff(a.rows * F + 1024);
  // The compiler's plain CSR kernel (the [formats] goals' baseline), on copies of X and Y.
  const strata::Graph A = strata::Graph::from_csr(a.rows, a.cols, strata::Tensor::from_vector(a.indptr),
                                                  strata::Tensor::from_vector(a.indices));
  strata::sc::SpmmOptions so;
  so.feat = F;
  so.plan = strata::sc::SpmmKernel::default_plan(strata::sc::SpmmKernel::spec(A, so));
  const strata::sc::SpmmKernel generated(A, so);
  // X and Y wrapped, not copied: every variant reads the same X and writes the same Y.
  const strata::Tensor Xt = wrap_tensor(X, {a.cols, F});
  Floats Ygen(a.rows * F);
  strata::Tensor Ycheck = wrap_tensor(Ygen, {a.rows, F}), Yt = wrap_tensor(Y, {a.rows, F});
  generated.run_into(Xt, Ycheck);
  for (int64_t k = 0; k < a.rows * F; ++k)
    if (!(relative_error(Ygen[k], Y[k]) <= 1e-4)) {
      std::printf("%s F=%d: the generated kernel differs from plain at %ld\n", name.c_str(), F, static_cast<long>(k));
      return false;
    }
  // Every variant that writes Y must write plain's Y (summed in the same order, so to rounding).
  const std::vector<std::pair<const char*, std::function<void(float*)>>> writers = {
      {"static tasks", [&](float* y) { plain_csr<F, true>(a, tb, X.data(), y); }},
      {"streaming stores", [&](float* y) { plain_store_kind<F, true, 0>(a, tb, X.data(), y); }},
      {"Y prefetched for writing", [&](float* y) { plain_store_kind<F, false, 8>(a, tb, X.data(), y); }},
      {"Y demoted", [&](float* y) { plain_store_kind<F, false, 0, true>(a, tb, X.data(), y); }},
      {"Y demoted, static tasks", [&](float* y) { plain_store_kind<F, false, 0, true, true>(a, tb, X.data(), y); }},
      {"rows sorted by degree", [&](float* y) { plain_perm<F>(a, tb, perm, X.data(), y); }},
      {"groups of 8", [&](float* y) { plain_groups<F, 8>(a, tb, X.data(), y); }},
      {"ELL buckets", [&](float* y) { buckets<F>(a, bk, X.data(), y); }},
      {"stores 3 rows later", [&](float* y) { plain_delayed_stores<F, 3>(a, tb, X.data(), y); }},
  };
  for (const auto& [what, write] : writers) {
    Floats Yv(a.rows * F + 272, std::nanf(""));
    write(Yv.data() + 272);  // 1088 bytes in: also the offset variant's placement
    for (int64_t k = 0; k < a.rows * F; ++k)
      if (!(relative_error(Yv[272 + k], Y[k]) <= 1e-4)) {
        std::printf("%s F=%d: %s differ from plain at %ld: %g vs %g\n", name.c_str(), F, what, static_cast<long>(k),
                    Yv[272 + k], Y[k]);
        return false;
      }
  }
  const std::vector<double> med =
      interleaved_medians({
                              [&] { plain_csr<F>(a, tb, X.data(), Y.data()); },
                              [&] { generated.run_into(Xt, Yt); },
                              [&] { loads<F, false>(a, tb, X.data(), -1, sums.data()); },
                              [&] { loads<F, true>(a, tb, X.data(), l1_mask, sums.data()); },
                              [&] { plain_nostore<F>(a, tb, X.data(), sums.data()); },
                              [&] { plain_csr<F, true>(a, tb, X.data(), Y.data()); },
                              [&] { plain_store_kind<F, true, 0>(a, tb, X.data(), Y.data()); },
                              [&] { plain_store_kind<F, false, 8>(a, tb, X.data(), Y.data()); },
                              [&] { plain_store_kind<F, false, 0, true>(a, tb, X.data(), Y.data()); },
                              [&] { plain_store_kind<F, false, 0, true, true>(a, tb, X.data(), Y.data()); },
                              [&] { plain_csr<F>(a, tb, X.data(), Yoff.data() + 272); },
                              [&] { plain_perm<F>(a, tb, perm, X.data(), Y.data()); },
                              [&] { plain_groups<F, 8>(a, tb, X.data(), Y.data()); },
                              [&] { buckets<F>(a, bk, X.data(), Y.data()); },
                              [&] { plain_delayed_stores<F, 3>(a, tb, X.data(), Y.data()); },
                              [&] { plain_csr<F>(eq, tb_eq, X.data(), Y.data()); },
                              [&] { plain_nostore<F>(eq, tb_eq, X.data(), sums.data()); },
                          },
                          repeats);
  const double p = med[0], g = med[1];
  std::printf("| %s | %d | %.1f | %.4f | %.4f | %.2fx | %.2fx | %.2fx |", name.c_str(), F,
              static_cast<double>(a.cols) * F * 4 / (1 << 20), g, p, g / med[2], p / med[2], med[2] / med[3]);
  for (size_t v = 4; v < med.size(); ++v) std::printf(" %.2fx |", p / med[v]);
  std::printf("\n");
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string header =
      "threads " + std::to_string(omp_get_max_threads()) + ", tasks of " + std::to_string(kGrain) +
      " non-zeros; ms are medians of 31 interleaved calls (21 at F = 256)\n"
      "the generated plain CSR kernel's and the hand-written plain's times over loads'; loads / l1; then the\n"
      "hand-written plain's time over each variant's\n"
      "| graph | F | X MiB | generated ms | plain ms | generated / loads | plain / loads | loads / l1 | no stores | "
      "static tasks | streaming stores | Y prefetched for writing | Y demoted | Y demoted, static | Y offset 1088 B | "
      "rows sorted by degree | "
      "groups of 8 | ELL buckets | stores 3 rows later | equal-degree rows | equal-degree rows, no stores |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  return strata::experiments::run_on_graphs(argc, argv, header, [](const std::string& name, const ExportedCsr& a) {
    return run<32>(name, a, 31) && run<64>(name, a, 31) && run<128>(name, a, 31) && run<256>(name, a, 21);
  });
}
