// An experiment, hand-written (not generated code): does CSR SpMM on real graphs wait on its
// accumulator chain? The generated CSR kernel adds a row's non-zeros into one set of F/16
// vector accumulators, so consecutive non-zeros of a row form a chain of dependent adds
// (4 cycles each on this Xeon). This program times that form against two accumulator sets
// (even and odd non-zeros, summed at the row's end) on graphs written by `strata export`,
// F = 16, 32, 64, 2 threads, rows handed out in blocks of equal non-zeros, X and Y allocated
// as Strata's tensors are (experiment_arrays.h), each timed call
// after an untimed call of the same form, medians of the repeats, after checking that the two
// agree.
//
//   cmake --build build --target strata_experiment_spmm_accumulators
//   for g in acm dblp facebook cora pubmed; do build/apps/strata export --graph $g --feat 32 --out /tmp/exp/$g; done
//   chrt -f 50 build/benchmarks/strata_experiment_spmm_accumulators /tmp/exp/acm /tmp/exp/dblp ...
//
// Measured on the Intel Xeon VM, 2026-12-05 (docs/BENCHMARKS.md, "Column tiles", "Accumulator
// sets"): 0.92-1.02x at F = 32 and 64, where a row's F/16 chains already keep the adds busy;
// 1.42-1.43x at F = 16 on graphs with long rows (ACM, Squirrel), nothing on Cora's short rows.
// The compiler now generates this form (CpuKnobs::accumulator_sets, via Schedule::rfactor over
// the non-zero loop); this program stays as the hand-written reference point.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/experiments/experiment_arrays.h"

namespace {

using strata::experiments::f32x16;
using strata::experiments::Floats;
using strata::experiments::load;
using strata::experiments::store;

// The data of a little-endian .npy file whose elements are T (the header is not checked
// beyond its length: the files come from `strata export`).
template <class T>
std::vector<T> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10) throw std::runtime_error(path + ": not a .npy file");
  uint16_t header = 0;
  std::memcpy(&header, bytes.data() + 8, 2);
  const size_t begin = 10 + header;
  if (begin > bytes.size() || (bytes.size() - begin) % sizeof(T) != 0)
    throw std::runtime_error(path + ": data is not a whole number of elements");
  std::vector<T> v((bytes.size() - begin) / sizeof(T));
  std::memcpy(v.data(), bytes.data() + begin, v.size() * sizeof(T));
  return v;
}

struct Csr {
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  int64_t rows() const { return static_cast<int64_t>(indptr.size()) - 1; }
};

// Y = A X, unweighted, one set (K = 1) or two sets (K = 2) of accumulators per row; thread t
// takes the rows of the t-th equal share of the non-zeros.
template <int F, int K>
void spmm(const Csr& a, const float* X, float* Y) {
  const int64_t n = a.rows(), nnz = a.indptr[n];
#pragma omp parallel
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t lo = std::lower_bound(a.indptr.begin(), a.indptr.end(), nnz * t / T) - a.indptr.begin();
    const int64_t hi = t + 1 == T ? n : std::lower_bound(a.indptr.begin(), a.indptr.end(), nnz * (t + 1) / T) - a.indptr.begin();
    for (int64_t i = lo; i < hi; ++i) {
      f32x16 acc[K][F / 16] = {};
      int64_t e = a.indptr[i];
      const int64_t end = a.indptr[i + 1];
      for (; e + K <= end; e += K)
        for (int k = 0; k < K; ++k) {
          const float* x = X + static_cast<int64_t>(a.indices[e + k]) * F;
          for (int f = 0; f < F / 16; ++f) acc[k][f] += load(x + 16 * f);
        }
      for (; e < end; ++e) {
        const float* x = X + static_cast<int64_t>(a.indices[e]) * F;
        for (int f = 0; f < F / 16; ++f) acc[0][f] += load(x + 16 * f);
      }
      for (int f = 0; f < F / 16; ++f) {
        f32x16 s = acc[0][f];
        for (int k = 1; k < K; ++k) s += acc[k][f];
        store(Y + i * F + 16 * f, s);
      }
    }
  }
}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <int F>
void measure(const std::string& name, const Csr& a, int repeats) {
  int64_t cols = 0;
  for (int32_t c : a.indices) cols = std::max<int64_t>(cols, c + 1);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Floats X(static_cast<size_t>(cols * F)), Y1(static_cast<size_t>(a.rows() * F)), Y2(Y1.size());
  for (float& x : X) x = u(rng);
  spmm<F, 1>(a, X.data(), Y1.data());
  spmm<F, 2>(a, X.data(), Y2.data());
  double worst = 0;
  for (size_t k = 0; k < Y1.size(); ++k)
    worst = std::max(worst, std::fabs(double(Y1[k]) - Y2[k]) / (1.0 + std::fabs(double(Y1[k]))));
  if (worst > 1e-4) throw std::runtime_error(name + ": the two forms disagree");
  std::vector<double> one, two;
  for (int r = 0; r < repeats; ++r) {
    spmm<F, 1>(a, X.data(), Y1.data());
    double t = seconds();
    spmm<F, 1>(a, X.data(), Y1.data());
    one.push_back(seconds() - t);
    spmm<F, 2>(a, X.data(), Y2.data());
    t = seconds();
    spmm<F, 2>(a, X.data(), Y2.data());
    two.push_back(seconds() - t);
  }
  std::sort(one.begin(), one.end());
  std::sort(two.begin(), two.end());
  const double m1 = one[one.size() / 2], m2 = two[two.size() / 2];
  std::printf("%-28s F=%-3d one set %8.4f ms  two sets %8.4f ms  one/two %.2fx\n", name.c_str(), F, m1 * 1e3,
              m2 * 1e3, m1 / m2);
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
      Csr a{read_npy<int64_t>(dir + "/indptr.npy"), read_npy<int32_t>(dir + "/indices.npy")};
      if (a.indptr.empty() || a.indptr.back() != static_cast<int64_t>(a.indices.size()))
        throw std::runtime_error(dir + ": indptr does not end at the number of indices");
      measure<16>(dir, a, 41);
      measure<32>(dir, a, 41);
      measure<64>(dir, a, 41);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
