// An experiment, hand-written (not generated code): how much of an unweighted SpMM's work is
// the same sum done again in another row? When columns u and v both appear in many rows, each
// of those rows adds X[u] + X[v] on its own. Summing the pair once into a new row of an
// extended operand (X followed by the pair sums) and letting the rows read that one row
// instead removes a gather and an add per such row: the redundancy elimination of
// "Redundancy-Free Computation for Graph Neural Networks" (Jia et al., KDD 2020; "HAG").
// Pairs are found in rounds; a round's pairs may join sums of earlier rounds, so the sums are
// computed round by round before the rows.
//
// This program finds the pairs with the library's inspector (sparse_compiler/formats/
// shared_pairs.h), checks each form against the row sums in double, and times plain CSR SpMM
// against two forms of the rewritten one, alternating (2 threads, X and Y allocated as Strata's
// tensors are, each timed call after an untimed one, medians):
//   shared: one rewrite for all rows; every thread takes part in every round (a barrier
//           between rounds), X already in the head of the extended operand;
//   owned:  one rewrite per thread's share of the rows; each thread sums its own pairs, then
//           its rows, reading X or its sums by id (no barrier, no copy of X).
// The compiler runs the owned form out of its CSR kernels (sparse_compiler/ops/
// shared_pairs_spmm.h); split_gather gives them a row's columns from X and its sums from S,
// as here, with no copy of X.
//
//   cmake --build build --target strata strata_experiment_spmm_shared_pairs
//   for g in squirrel bcsstk13 ddi facebook acm; do
//     build/apps/strata export --graph $g --feat 32 --out /tmp/exp/$g
//   done
//   OMP_NUM_THREADS=2 chrt -f 50 build/benchmarks/strata_experiment_spmm_shared_pairs
//     [--rounds 4] [--min-rows 4] /tmp/exp/squirrel /tmp/exp/bcsstk13 ...   (one command line)
//
// Measured results: docs/BENCHMARKS.md, "SpMM shared neighbour pairs".
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"
#include "core/graph.h"
#include "sparse_compiler/formats/shared_pairs.h"

namespace {

using namespace strata::experiments;

// A rewrite's arrays as the kernels read them: 32-bit ids, as plain CSR's columns are.
struct Rows {
  int64_t cols = 0, row_lo = 0;
  std::vector<int64_t> indptr, first_sum;
  std::vector<int32_t> indices;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> rounds;
  int64_t sums = 0;
};

Rows rows_of(const strata::sc::SharedPairs& s) {
  Rows r;
  r.cols = s.cols;
  r.row_lo = s.row_begin;
  r.indptr = s.indptr;
  r.first_sum = s.first_sum;
  r.indices.assign(s.indices.begin(), s.indices.end());
  for (int64_t k = 0; k < s.rounds(); ++k) {
    r.rounds.emplace_back();
    for (int64_t p = s.round_begin[k]; p < s.round_begin[k + 1]; ++p)
      r.rounds.back().push_back({static_cast<int32_t>(s.pair_a[p]), static_cast<int32_t>(s.pair_b[p])});
  }
  r.sums = s.sums();
  return r;
}

// Y = A X over CSR arrays; thread t takes the rows of the t-th equal share of the non-zeros.
template <int F>
void spmm(const std::vector<int64_t>& indptr, const std::vector<int32_t>& indices, const float* X, float* Y) {
  const int64_t n = static_cast<int64_t>(indptr.size()) - 1, nnz = indptr[n];
#pragma omp parallel
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t lo = std::lower_bound(indptr.begin(), indptr.end(), nnz * t / T) - indptr.begin();
    const int64_t hi =
        t + 1 == T ? n : std::lower_bound(indptr.begin(), indptr.end(), nnz * (t + 1) / T) - indptr.begin();
    for (int64_t i = lo; i < hi; ++i) {
      f32x16 acc[F / 16] = {};
      for (int64_t e = indptr[i]; e < indptr[i + 1]; ++e) {
        const float* x = X + static_cast<int64_t>(indices[e]) * F;
        for (int f = 0; f < F / 16; ++f) acc[f] += load(x + 16 * f);
      }
      for (int f = 0; f < F / 16; ++f) store(Y + i * F + 16 * f, acc[f]);
    }
  }
}

// The pair sums, round by round, into the extended operand's rows cols, cols + 1, ...
template <int F>
void pair_sums(const Rows& s, float* Xext) {
  int64_t base = s.cols;
  for (const auto& round : s.rounds) {
    const int64_t n = static_cast<int64_t>(round.size());
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) {
      const float* u = Xext + static_cast<int64_t>(round[k].first) * F;
      const float* v = Xext + static_cast<int64_t>(round[k].second) * F;
      float* out = Xext + (base + k) * F;
      for (int f = 0; f < F / 16; ++f) store(out + 16 * f, load(u + 16 * f) + load(v + 16 * f));
    }
    base += n;
  }
}

// Each thread owns the rows of one share of the non-zeros and the pairs found among them
// alone (parts[t]): it sums its own pairs, round by round, and then its rows, so no thread
// waits for another or reads a line another core wrote, at the price of pairs that both
// shares hold being summed twice.
template <int F>
void spmm_owned_pairs(const std::vector<Rows>& parts, const float* X, std::vector<Floats>& S, float* Y) {
#pragma omp parallel num_threads(static_cast <int>(parts.size()))
  {
    const int t = omp_get_thread_num();
    const Rows& p = parts[t];
    float* S0 = S[t].data() - p.cols * F;
    const auto row_of = [&](int64_t id) -> const float* { return (id < p.cols ? X : S0) + id * F; };
    int64_t base = p.cols;
    for (const auto& round : p.rounds) {
      for (size_t k = 0; k < round.size(); ++k) {
        const float *u = row_of(round[k].first), *v = row_of(round[k].second);
        float* out = S0 + (base + static_cast<int64_t>(k)) * F;
        for (int f = 0; f < F / 16; ++f) store(out + 16 * f, load(u + 16 * f) + load(v + 16 * f));
      }
      base += static_cast<int64_t>(round.size());
    }
    const int64_t n = static_cast<int64_t>(p.indptr.size()) - 1;
    for (int64_t i = 0; i < n; ++i) {
      f32x16 acc[F / 16] = {};
      for (int64_t e = p.indptr[i]; e < p.first_sum[i]; ++e) {
        const float* x = X + static_cast<int64_t>(p.indices[e]) * F;
        for (int f = 0; f < F / 16; ++f) acc[f] += load(x + 16 * f);
      }
      for (int64_t e = p.first_sum[i]; e < p.indptr[i + 1]; ++e) {
        const float* x = S0 + static_cast<int64_t>(p.indices[e]) * F;
        for (int f = 0; f < F / 16; ++f) acc[f] += load(x + 16 * f);
      }
      for (int f = 0; f < F / 16; ++f) store(Y + (p.row_lo + i) * F + 16 * f, acc[f]);
    }
  }
}

template <int F>
void measure(const std::string& name, const ExportedCsr& a, const Rows& s, const std::vector<Rows>& parts,
             int repeats) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Floats X(static_cast<size_t>(a.cols * F)), Xext(static_cast<size_t>((a.cols + s.sums) * F));
  Floats Y1(static_cast<size_t>(a.rows * F)), Y2(Y1.size()), Y4(Y1.size());
  std::vector<Floats> owned;
  for (const Rows& p : parts) owned.emplace_back(static_cast<size_t>(std::max<int64_t>(1, p.sums) * F));
  const auto owned_pairs = [&] { spmm_owned_pairs<F>(parts, X.data(), owned, Y4.data()); };
  for (float& x : X) x = u(rng);
  std::copy(X.begin(), X.end(), Xext.begin());
  const auto plain = [&] { spmm<F>(a.indptr, a.indices, X.data(), Y1.data()); };
  const auto pairs = [&] {
    pair_sums<F>(s, Xext.data());
    spmm<F>(s.indptr, s.indices, Xext.data(), Y2.data());
  };
  plain();
  pairs();
  owned_pairs();
  // Each form sums a row's terms in its own order: check each against the sum in double within
  // the bound of float summation (n terms: n * 2^-24 * the sum of their magnitudes).
  for (int64_t i = 0; i < a.rows; ++i) {
    const double n = static_cast<double>(a.indptr[i + 1] - a.indptr[i]);
    for (int f = 0; f < F; ++f) {
      double sum = 0, mag = 0;
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        const double x = X[static_cast<int64_t>(a.indices[e]) * F + f];
        sum += x;
        mag += std::fabs(x);
      }
      const size_t k = static_cast<size_t>(i * F + f);
      for (const float y : {Y1[k], Y2[k], Y4[k]})
        if (std::fabs(y - sum) > 2 * n * 0x1p-24 * mag + 1e-6)
          throw std::runtime_error(name + ": row " + std::to_string(i) + " disagrees with the sum in double");
    }
  }
  std::vector<double> tp, ts, to;
  for (int r = 0; r < repeats; ++r) {  // alternate, so drift on a noisy host hits all three
    tp.push_back(median_ms(plain, 1));
    ts.push_back(median_ms(pairs, 1));
    to.push_back(median_ms(owned_pairs, 1));
  }
  for (auto* t : {&tp, &ts, &to}) std::sort(t->begin(), t->end());
  const double p = tp[repeats / 2], q = ts[repeats / 2], o = to[repeats / 2];
  std::printf("%-10s F=%-3d plain %8.4f ms  shared %8.4f ms (%.2fx)  owned %8.4f ms (%.2fx)\n", name.c_str(), F, p, q,
              p / q, o, p / o);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 4, min_rows = 4, first = 1;
  for (; first + 1 < argc && argv[first][0] == '-'; first += 2) {
    if (std::string(argv[first]) == "--rounds")
      rounds = std::atoi(argv[first + 1]);
    else if (std::string(argv[first]) == "--min-rows")
      min_rows = std::atoi(argv[first + 1]);
    else
      break;
  }
  if (first >= argc || argv[first][0] == '-') {
    std::fprintf(stderr, "usage: %s [--rounds R] [--min-rows M] EXPORT_DIR... (folders written by `strata export`)\n",
                 argv[0]);
    return 2;
  }
  try {
    for (int k = first; k < argc; ++k) {
      const std::string dir = argv[k];
      const ExportedCsr a = read_exported_csr(dir);
      const strata::Graph A = strata::Graph::from_csr(a.rows, a.cols, strata::Tensor::from_vector(a.indptr),
                                                      strata::Tensor::from_vector(a.indices));
      strata::sc::SharedPairsOptions o;
      o.rounds = rounds;
      o.min_rows = min_rows;
      auto t0 = std::chrono::steady_clock::now();
      const Rows s = rows_of(strata::sc::find_shared_pairs(A, 0, a.rows, o));
      const double shared_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const int threads = omp_get_max_threads();
      std::vector<Rows> parts;
      int64_t owned_gathers = 0;
      t0 = std::chrono::steady_clock::now();
      for (int t = 0; t < threads; ++t) {
        const int64_t nnz = a.indptr.back();
        const auto at = [&](int64_t share) {
          return std::lower_bound(a.indptr.begin(), a.indptr.end(), share) - a.indptr.begin();
        };
        const int64_t lo = at(nnz * t / threads), hi = t + 1 == threads ? a.rows : at(nnz * (t + 1) / threads);
        parts.push_back(rows_of(strata::sc::find_shared_pairs(A, lo, hi, o)));
        owned_gathers += parts.back().indptr.back() + 2 * parts.back().sums;
      }
      const double owned_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const int64_t nnz = a.indptr.back();
      std::printf(
          "%s: %ld non-zeros; shared by all rows: %.3f of the gathers (%ld sums, %zu rounds, inspector "
          "%.0f ms); owned by %d threads: %.3f (inspectors %.0f ms)\n",
          dir.c_str(), nnz, double(s.indptr.back() + 2 * s.sums) / nnz, s.sums, s.rounds.size(), shared_ms, threads,
          double(owned_gathers) / nnz, owned_ms);
      const std::string name = dir.substr(dir.find_last_of('/') + 1);
      measure<32>(name, a, s, parts, 31);
      measure<64>(name, a, s, parts, 31);
      measure<128>(name, a, s, parts, 31);
      measure<256>(name, a, s, parts, 21);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
