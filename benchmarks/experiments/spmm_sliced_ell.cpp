// An experiment, hand-written (not generated code): does sliced ELL (SELL-C-sigma) pay for
// SpMM on CPUs where plain CSR's time goes to the rows themselves? On graphs of short,
// irregular rows (Pubmed, Cora, Citeseer at F = 32 and 64) plain CSR runs 2.5-4x its
// gathers alone (spmm_gather_ceiling.cpp). Two costs hide each other there: each row's loop
// ends at a trip count the branch predictor cannot know, and each row's stores wait on its
// sum; rows of equal degree without stores run 2-4x plain, either change alone far less.
//
// Sliced ELL takes on the first: within windows of sigma rows (inside each task, so the
// tasks stay those of the plain CSR plan), rows are sorted by degree and cut into chunks of
// C; a chunk's C rows walk their non-zeros together, to the longest one's degree, the
// shorter ones padded. One loop exit per chunk instead of one per row, C independent chains,
// and, with sigma small, Y's stores and X's locality stay close to CSR order.
//
//   plain          Y[i] = sum of X[j] over row i's non-zeros (the generated plain CSR's form)
//   sell C/s       chunks of C rows from windows of s rows (s = C: no sorting); padding
//                  slots masked off (a masked load with an empty mask reads nothing), so X
//                  is the caller's, unchanged
//   zero-row C/s   the same, padding slots reading a zero row appended to a copy of X
//                  (free padding: a bound on what the masks cost, not a kernel's option)
//
// Every variant is checked against plain. Tasks: 4096 non-zeros, handed out dynamically.
//
//   cmake --build build --target strata_experiment_spmm_sliced_ell
//   chrt -f 50 build/benchmarks/strata_experiment_spmm_sliced_ell /tmp/exp/{pubmed,cora,citeseer,aifb,acm}
//   irregular:4000:11
//
// Measured on the Intel Xeon VM, 2026-12-06 (docs/BENCHMARKS.md, "Where plain CSR SpMM's
// time goes"), F = 32 / 64 / 128, on the nine graphs where plain CSR leaves the most room
// (AIFB, ca-grqc, Citeseer, Cora, gnutella, IMDB, luxembourg, MUTAG, Pubmed): the masked
// chunks ran 0.57-1.37x plain at F = 32 (over 1.1x on ca-grqc, Citeseer and gnutella),
// 0.71-1.03x at F = 64 and 0.58-1.02x at F = 128; free padding (zero-row) 0.54-1.56x, above
// 1.1x again only at F = 32. Sorting within a window costs X's locality and padding costs loads, about
// what the predictable exits win; not built into the compiler.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"
#include "benchmarks/experiments/gather_ceiling.h"

namespace {

using strata::experiments::ExportedCsr;
using strata::experiments::Floats;
using strata::experiments::interleaved_medians;

constexpr int64_t kGrain = 4096;  // non-zeros per task, as the plain CSR plan

std::vector<int64_t> task_bounds(const ExportedCsr& a) { return strata::experiments::nnz_balanced_tasks(a, kGrain); }

// Chunks of C rows. Chunk k's rows are row[k*C .. k*C+C) (-1: none, in a task's last
// chunk); its slots start at slot[k], C a step (slot j of row r at slot[k] + j*C + r), for
// width[k] steps; deg[k*C + r] of them are row r's, the rest padding (the row's last column
// again, or column 0 for an empty row, so every id is valid).
struct SlicedEll {
  int C = 0;
  std::vector<int64_t> row, slot, task_chunk;
  std::vector<int32_t> width, deg, col;
};

SlicedEll make_sliced_ell(const ExportedCsr& a, const std::vector<int64_t>& tb, int C, int sigma) {
  SlicedEll s;
  s.C = C;
  const int64_t tasks = static_cast<int64_t>(tb.size()) - 1;
  auto degree = [&](int64_t i) { return static_cast<int32_t>(a.indptr[i + 1] - a.indptr[i]); };
  s.task_chunk.push_back(0);
  for (int64_t t = 0; t < tasks; ++t) {
    for (int64_t w0 = tb[t]; w0 < tb[t + 1]; w0 += sigma) {
      const int64_t w1 = std::min(tb[t + 1], w0 + sigma);
      std::vector<int64_t> rows(w1 - w0);
      std::iota(rows.begin(), rows.end(), w0);
      if (sigma > C)
        std::stable_sort(rows.begin(), rows.end(), [&](int64_t x, int64_t y) { return degree(x) > degree(y); });
      for (size_t c0 = 0; c0 < rows.size(); c0 += C) {
        int32_t width = 0;
        for (int r = 0; r < C; ++r) width = std::max(width, c0 + r < rows.size() ? degree(rows[c0 + r]) : 0);
        s.slot.push_back(static_cast<int64_t>(s.col.size()));
        s.width.push_back(width);
        const size_t base = s.col.size();
        s.col.resize(base + static_cast<size_t>(width) * C);
        for (int r = 0; r < C; ++r) {
          const bool real = c0 + r < rows.size();
          const int64_t i = real ? rows[c0 + r] : -1;
          const int32_t d = real ? degree(i) : 0;
          s.row.push_back(i);
          s.deg.push_back(d);
          for (int32_t j = 0; j < width; ++j)
            s.col[base + static_cast<size_t>(j) * C + r] =
                j < d ? a.indices[a.indptr[i] + j] : (d > 0 ? a.indices[a.indptr[i] + d - 1] : 0);
        }
      }
    }
    s.task_chunk.push_back(static_cast<int64_t>(s.width.size()));
  }
  return s;
}

template <int F, int C, bool ZeroRow = false>
void sliced_ell(const SlicedEll& s, const float* X, float* Y) {
  constexpr int V = F / 16;
  const int64_t tasks = static_cast<int64_t>(s.task_chunk.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t k = s.task_chunk[t]; k < s.task_chunk[t + 1]; ++k) {
      __m512 acc[C][V];
      for (int r = 0; r < C; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
      const int32_t* col = s.col.data() + s.slot[k];
      const int32_t* deg = s.deg.data() + k * C;
      int32_t d[C];
      for (int r = 0; r < C; ++r) d[r] = deg[r];
      const int32_t width = s.width[k];
      for (int32_t j = 0; j < width; ++j)
        for (int r = 0; r < C; ++r) {
          const float* x = X + static_cast<int64_t>(col[j * C + r]) * F;
          if (ZeroRow) {
            for (int v = 0; v < V; ++v) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_loadu_ps(x + 16 * v));
          } else {
            const __mmask16 m = static_cast<__mmask16>(-static_cast<int>(j < d[r]));
            for (int v = 0; v < V; ++v) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_maskz_loadu_ps(m, x + 16 * v));
          }
        }
      for (int r = 0; r < C; ++r) {
        const int64_t i = s.row[k * C + r];
        if (i < 0) continue;
        for (int v = 0; v < V; ++v) _mm512_storeu_ps(Y + i * F + 16 * v, acc[r][v]);
      }
    }
}

double relative_error(double got, double want) { return std::fabs(got - want) / std::max(1.0, std::fabs(want)); }

struct Variant {
  std::string name;
  std::function<void(float*)> run;
};

template <int F>
bool run(const std::string& name, const ExportedCsr& a, int repeats) {
  constexpr int V = F / 16;
  const std::vector<int64_t> tb = task_bounds(a);
  std::mt19937_64 rng(7);
  Floats X(a.cols * F), Y(a.rows * F);
  for (float& v : X) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  strata::experiments::plain_csr<F>(a, tb, X.data(), Y.data());
  Floats Xz((a.cols + 1) * F, 0.0f);
  std::copy(X.begin(), X.end(), Xz.begin());

  std::deque<SlicedEll> layouts;  // a deque: the variants keep pointers to its elements
  std::vector<Variant> variants = {{"plain", [&](float* y) { strata::experiments::plain_csr<F>(a, tb, X.data(), y); }}};
  auto add = [&]<int C>(int sigma) {
    if (C * V > 16) return;  // C rows of F/16 accumulators must fit the registers
    layouts.push_back(make_sliced_ell(a, tb, C, sigma));
    const SlicedEll* s = &layouts.back();
    variants.push_back({"sell " + std::to_string(C) + "/" + std::to_string(sigma),
                        [s, &X](float* y) { sliced_ell<F, C>(*s, X.data(), y); }});
    layouts.push_back(*s);
    SlicedEll* z = &layouts.back();
    for (size_t k = 0; k < z->width.size(); ++k)
      for (int r = 0; r < C; ++r)
        for (int32_t j = z->deg[k * C + r]; j < z->width[k]; ++j) z->col[z->slot[k] + j * C + r] = a.cols;
    variants.push_back({"zero-row " + std::to_string(C) + "/" + std::to_string(sigma),
                        [z, &Xz](float* y) { sliced_ell<F, C, true>(*z, Xz.data(), y); }});
  };
  for (int sigma : {0, 32, 256}) {  // 0: windows of C rows, in CSR order (no sorting)
    add.template operator()<2>(sigma ? sigma : 2);
    add.template operator()<4>(sigma ? sigma : 4);
    add.template operator()<8>(sigma ? sigma : 8);
  }
  std::vector<std::function<void()>> timed;
  for (const Variant& v : variants) {
    Floats Yv(a.rows * F, std::nanf(""));
    v.run(Yv.data());
    for (int64_t k = 0; k < a.rows * F; ++k)
      if (!(relative_error(Yv[k], Y[k]) <= 1e-4)) {
        std::printf("%s F=%d: %s differs from plain at %ld: %g vs %g\n", name.c_str(), F, v.name.c_str(),
                    static_cast<long>(k), Yv[k], Y[k]);
        return false;
      }
    timed.push_back([&v, &Y] { v.run(Y.data()); });
  }
  const std::vector<double> med = interleaved_medians(timed, repeats);
  std::printf("| %s | %d | %.4f |", name.c_str(), F, med[0]);
  for (size_t v = 1; v < med.size(); ++v) std::printf(" %s %.2fx |", variants[v].name.c_str(), med[0] / med[v]);
  std::printf("\n");
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string header = "threads " + std::to_string(omp_get_max_threads()) + ", tasks of " +
                             std::to_string(kGrain) +
                             " non-zeros; plain ms, then plain's time over each variant's (medians of 31 interleaved "
                             "calls)\n";
  return strata::experiments::run_on_graphs(argc, argv, header, [](const std::string& name, const ExportedCsr& a) {
    return run<32>(name, a, 31) && run<64>(name, a, 31) && run<128>(name, a, 31);
  });
}
