// An experiment, hand-written (not generated code): does the order in which an SpMM visits
// its rows matter, when X is too large for a core's L2? Rows that share neighbours read the
// same rows of X; visited one after the other, the second finds them still in L2. Visiting
// the rows in reverse Cuthill-McKee order (a breadth-first order that keeps neighbours
// together) changes nothing but the loop order: X, Y and the column ids stay as they are,
// and each row of Y is still written by one thread.
//
// Relabelling the whole graph in that order (rows and columns, as DGL's reorder_graph does)
// is shown for comparison: it also makes the gathered rows of X neighbours in memory, but it
// needs X in the new order, which a kernel cannot have without copying it on every call.
//
// Variants, 2 threads, each thread a contiguous share of the visiting order balanced by
// non-zeros (medians of alternating calls, each checked against the natural order first):
//   natural:   rows 0, 1, 2, ...
//   rcm rows:  rows in RCM order, the same column ids and X
//   relabel:   the graph and X relabelled in RCM order (X permuted before timing; for scale)
//
//   cmake --build build --target strata strata_experiment_spmm_row_order
//   for g in facebook github deezer-hu condmat; do
//     build/apps/strata export --graph $g --feat 32 --out /tmp/exp/$g
//   done
//   OMP_NUM_THREADS=2 chrt -f 50 build/benchmarks/strata_experiment_spmm_row_order /tmp/exp/facebook ...
//
// Measured results: docs/BENCHMARKS.md, "SpMM row order" (the row order alone lost on most
// graphs: scattered reads of the row's ids and writes of Y cost more than it saved).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"

namespace {

using namespace strata::experiments;

// Reverse Cuthill-McKee: breadth-first from a lowest-degree unvisited row, neighbours by
// ascending degree, the whole order reversed.
std::vector<int64_t> rcm_order(const ExportedCsr& a) {
  const int64_t n = a.rows;
  std::vector<int64_t> by_degree(n), order;
  for (int64_t i = 0; i < n; ++i) by_degree[i] = i;
  const auto degree = [&](int64_t i) { return a.indptr[i + 1] - a.indptr[i]; };
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](int64_t x, int64_t y) { return degree(x) < degree(y); });
  std::vector<char> seen(n, 0);
  std::vector<int64_t> next;
  for (int64_t s : by_degree) {
    if (seen[s]) continue;
    seen[s] = 1;
    std::deque<int64_t> q{s};
    while (!q.empty()) {
      const int64_t v = q.front();
      q.pop_front();
      order.push_back(v);
      next.clear();
      for (int64_t e = a.indptr[v]; e < a.indptr[v + 1]; ++e)
        if (const int64_t w = a.indices[e]; w < n && !seen[w]) {
          seen[w] = 1;
          next.push_back(w);
        }
      std::stable_sort(next.begin(), next.end(), [&](int64_t x, int64_t y) { return degree(x) < degree(y); });
      q.insert(q.end(), next.begin(), next.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// Y = A X visiting rows order[0], order[1], ...; thread t takes the t-th share of the
// visiting order, balanced by non-zeros (start[k]: non-zeros before the k-th visited row).
template <int F>
void spmm_in_order(const ExportedCsr& a, const std::vector<int64_t>& order, const std::vector<int64_t>& start,
                   const float* X, float* Y) {
  const int64_t n = static_cast<int64_t>(order.size()), nnz = start[n];
#pragma omp parallel
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t lo = std::lower_bound(start.begin(), start.end(), nnz * t / T) - start.begin();
    const int64_t hi = t + 1 == T ? n : std::lower_bound(start.begin(), start.end(), nnz * (t + 1) / T) - start.begin();
    for (int64_t k = lo; k < hi; ++k) {
      const int64_t i = order[k];
      f32x16 acc[F / 16] = {};
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int f = 0; f < F / 16; ++f) acc[f] += load(x + 16 * f);
      }
      for (int f = 0; f < F / 16; ++f) store(Y + i * F + 16 * f, acc[f]);
    }
  }
}

std::vector<int64_t> starts(const ExportedCsr& a, const std::vector<int64_t>& order) {
  std::vector<int64_t> s{0};
  for (int64_t i : order) s.push_back(s.back() + a.indptr[i + 1] - a.indptr[i]);
  return s;
}

// The graph relabelled: new id of row/column v is where[v].
ExportedCsr relabel(const ExportedCsr& a, const std::vector<int64_t>& order, std::vector<int64_t>& where) {
  where.assign(a.cols, 0);
  for (int64_t k = 0; k < static_cast<int64_t>(order.size()); ++k) where[order[k]] = k;
  for (int64_t v = a.rows; v < a.cols; ++v) where[v] = v;  // columns past the rows keep their ids
  ExportedCsr b;
  b.rows = a.rows;
  b.cols = a.cols;
  b.indptr = {0};
  for (int64_t i : order) {
    std::vector<int32_t> cols;
    for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) cols.push_back(static_cast<int32_t>(where[a.indices[e]]));
    std::sort(cols.begin(), cols.end());
    b.indices.insert(b.indices.end(), cols.begin(), cols.end());
    b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
  }
  return b;
}

template <int F>
void measure(const std::string& name, const ExportedCsr& a, const std::vector<int64_t>& rcm, int repeats) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Floats X(static_cast<size_t>(a.cols * F)), Xr(X.size());
  Floats Y1(static_cast<size_t>(a.rows * F)), Y2(Y1.size()), Y3(Y1.size());
  for (float& x : X) x = u(rng);
  std::vector<int64_t> natural(a.rows), where;
  for (int64_t i = 0; i < a.rows; ++i) natural[i] = i;
  const std::vector<int64_t> s_nat = starts(a, natural), s_rcm = starts(a, rcm);
  const ExportedCsr b = relabel(a, rcm, where);
  for (int64_t v = 0; v < a.cols; ++v) std::copy(&X[v * F], &X[v * F] + F, &Xr[where[v] * F]);
  const std::vector<int64_t> s_rel = starts(b, natural);
  const auto plain = [&] { spmm_in_order<F>(a, natural, s_nat, X.data(), Y1.data()); };
  const auto rows = [&] { spmm_in_order<F>(a, rcm, s_rcm, X.data(), Y2.data()); };
  const auto relabelled = [&] { spmm_in_order<F>(b, natural, s_rel, Xr.data(), Y3.data()); };
  plain();
  rows();
  relabelled();
  // The rows in RCM order sum exactly as in natural order; the relabelled graph sums a row's
  // terms in another order, within the bound of float summation (n terms: n * 2^-24 * the sum
  // of their magnitudes).
  for (int64_t i = 0; i < a.rows; ++i)
    for (int f = 0; f < F; ++f) {
      const float want = Y1[i * F + f];
      double mag = 0;
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) mag += std::fabs(X[a.indices[e] * F + f]);
      const double bound = 2 * static_cast<double>(a.indptr[i + 1] - a.indptr[i]) * 0x1p-24 * mag + 1e-6;
      if (Y2[i * F + f] != want || std::fabs(Y3[where[i] * F + f] - want) > bound)
        throw std::runtime_error(name + ": row " + std::to_string(i) + " differs between the orders");
    }
  std::vector<double> tp, tr, tl;
  for (int r = 0; r < repeats; ++r) {  // alternate, so drift on a noisy host hits all three
    tp.push_back(median_ms(plain, 1));
    tr.push_back(median_ms(rows, 1));
    tl.push_back(median_ms(relabelled, 1));
  }
  for (auto* t : {&tp, &tr, &tl}) std::sort(t->begin(), t->end());
  const double p = tp[repeats / 2], q = tr[repeats / 2], l = tl[repeats / 2];
  std::printf("%-10s F=%-3d natural %8.4f ms  rcm rows %8.4f ms (%.2fx)  relabel %8.4f ms (%.2fx)\n", name.c_str(), F,
              p, q, p / q, l, p / l);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXPORT_DIR... (folders written by `strata export`)\n", argv[0]);
    return 2;
  }
  try {
    for (int k = 1; k < argc; ++k) {
      const std::string dir = argv[k];
      const ExportedCsr a = read_exported_csr(dir);
      const std::vector<int64_t> rcm = rcm_order(a);
      const std::string name = dir.substr(dir.find_last_of('/') + 1);
      std::printf("%s: %ld rows, %ld non-zeros\n", dir.c_str(), a.rows, a.indptr.back());
      measure<32>(name, a, rcm, 31);
      measure<64>(name, a, rcm, 31);
      measure<128>(name, a, rcm, 31);
      measure<256>(name, a, rcm, 21);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
