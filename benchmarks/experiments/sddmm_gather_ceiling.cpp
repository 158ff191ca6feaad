// An experiment, hand-written (not generated code): the SDDMM counterpart of
// spmm_gather_ceiling.cpp. How close does the compiler's plain CSR SDDMM run to the rate at
// which this machine can gather its rows of Y? For each graph and F it times, in one process
// over the same X, Y and output:
//
//   generated  the compiler's plain CSR kernel (the [formats] goals' baseline):
//              O[e] = X[i] . Y[j] for each non-zero e = (i, j), X[i] held in registers;
//   groups     the compiler's edge groups over COO slots (16 edges summed by one transposing
//              reduction, static tasks): its best schedule that keeps the gathers in CSR order;
//   loads      what every SDDMM must read: the same loads of Y in the same order, over
//              equal tasks of about 4096 non-zeros, as many for each thread, and each row
//              of X once, added into up to four independent sets of registers: no
//              products, no horizontal sums, no stores of O (4 bytes an edge), no row
//              bookkeeping, so generated / loads bounds (roughly: see below) what a
//              schedule in CSR order with row-major operands can gain;
//   l1         `loads` with every id of Y folded into the first 32 KiB of Y, so that every
//              gather hits L1 (X still streamed): loads / l1 is left to schedules that change
//              which cache serves the gathers (panels, tiles, row order).
//
// The kernels are checked against a scalar reference (every edge), and loads and l1 against
// the sums they must equal.
//
//   cmake --build build --target strata_experiment_sddmm_gather_ceiling
//   for g in cora dblp imdb; do build/apps/strata export --graph $g --feat 32 --out /tmp/exp/$g; done
//   chrt -f 50 build/benchmarks/strata_experiment_sddmm_gather_ceiling /tmp/exp/{cora,dblp,imdb}
//
// (As in spmm_gather_ceiling.cpp, regular:N:D and irregular:N:D name synthetic graphs.)
//
// Measured on the Intel Xeon VM, 2026-12-05 and (balanced tasks) 2026-12-06 (docs/BENCHMARKS.md,
// "Where plain CSR SDDMM's time goes"): from F = 64 on, the plain kernel runs within 1.3x of its
// reads at every F on 14 of 19 graphs; the room is at F = 32 (1.2-3.0x), where slot groups take
// 1.04-1.61x. The reads bound only roughly: the plain kernel outran them in 15 cells from F = 64
// on (by up to 1.23x), and slot groups on Citeseer and Cora at F = 128.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/experiments/exported_csr.h"
#include "benchmarks/experiments/gather_ceiling.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "sparse_compiler/ops/sddmm.h"

namespace {

using strata::experiments::ExportedCsr;
using strata::experiments::Floats;
using strata::experiments::interleaved_medians;
using strata::experiments::l1_fold_mask;
using strata::experiments::LaneSums;
using strata::experiments::store;
using strata::experiments::sum_contiguous_rows;
using strata::experiments::sum_gathered_rows;
using strata::experiments::wrap_tensor;

constexpr int64_t kGrain = 4096;  // non-zeros per task

// Read-only tasks: equal ranges of non-zeros (starts[t], starts[t + 1]), about kGrain each,
// their count a multiple of the threads so that no thread gets more than another (with
// tasks of exactly kGrain, Cora's 5,429 non-zeros made 4,096 + 1,333: one thread read 75%
// of them, and Citeseer's 4,732 made 4,096 + 636). `rows` are the rows whose first
// non-zero falls in each task, so that each row of X is read by one task.
struct ReadTasks {
  std::vector<int64_t> starts, rows;
  int64_t count() const { return static_cast<int64_t>(starts.size()) - 1; }
};

ReadTasks read_tasks(const ExportedCsr& a, int threads) {
  const int64_t nnz = a.indptr.back();
  int64_t tasks = std::max<int64_t>(1, (nnz + kGrain - 1) / kGrain);
  tasks = (tasks + threads - 1) / threads * threads;
  ReadTasks r;
  for (int64_t t = 0; t <= tasks; ++t) r.starts.push_back(t * nnz / tasks);
  r.rows = strata::experiments::task_row_bounds(a, {r.starts.begin(), r.starts.end() - 1});
  return r;
}

// What every SDDMM must read, and nothing else: the loads of Y in CSR order, over the tasks
// `rt`, and each row of X once, in order; with Fold, each id of Y is folded by `mask`. Each
// task writes one vector, the sum of what it read, to sums[t].
template <int F, bool Fold>
void loads(const ExportedCsr& a, const ReadTasks& rt, const float* X, const float* Y, int32_t mask, float* sums) {
  const int64_t tasks = rt.count();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tasks; ++t)
    store(sums + 16 * t, sum_gathered_rows<F, Fold>(a.indices.data(), rt.starts[t], rt.starts[t + 1], Y, mask) +
                             sum_contiguous_rows<F>(X, rt.rows[t], rt.rows[t + 1]));
}

// What `loads` must sum: Y's row at each non-zero's (masked) id, and every row of X.
LaneSums expected_sums(const ExportedCsr& a, const Floats& X, const Floats& Y, int F, int32_t mask) {
  LaneSums s;
  for (int64_t e = 0; e < a.indptr.back(); ++e)
    for (int f = 0; f < F; ++f) s.add(Y[static_cast<int64_t>(a.indices[e] & mask) * F + f], f);
  for (int64_t i = 0; i < a.rows * F; ++i) s.add(X[i], i % F);
  return s;
}

template <int F>
bool run(const std::string& name, const ExportedCsr& a, int repeats) {
  const int64_t nnz = a.indptr.back();
  const ReadTasks rt = read_tasks(a, omp_get_max_threads());
  const int64_t tasks = rt.count();
  std::mt19937_64 rng(7);
  Floats X(a.rows * F), Y(a.cols * F), O(std::max<int64_t>(nnz, 1)), sums(16 * tasks);
  for (float& v : X) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (float& v : Y) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  const int32_t l1_mask = l1_fold_mask(a.cols, F);

  const strata::Graph A = strata::Graph::from_csr(a.rows, a.cols, strata::Tensor::from_vector(a.indptr),
                                                  strata::Tensor::from_vector(a.indices));
  strata::sc::SddmmOptions plain_options{strata::sc::SddmmKind::Dot, F};
  plain_options.plan = strata::sc::SddmmKernel::default_plan();
  strata::sc::KernelPlan groups_plan = strata::sc::SddmmKernel::default_plan();
  groups_plan.format = strata::sc::FormatSpec::parse("coo");
  groups_plan.knobs.edge_groups = true;
  groups_plan.knobs.static_tasks = true;
  groups_plan.knobs.grain = 1024;
  strata::sc::SddmmOptions groups_options{strata::sc::SddmmKind::Dot, F};
  groups_options.plan = groups_plan;
  const strata::sc::SddmmKernel generated(A, plain_options), groups(A, groups_options);
  // X, Y and O wrapped, not copied: every variant reads the same operands.
  const strata::Tensor Xt = wrap_tensor(X, {a.rows, F}), Yt = wrap_tensor(Y, {a.cols, F});
  strata::Tensor Ot = wrap_tensor(O, {static_cast<int64_t>(O.size())});

  for (const auto* k : {&generated, &groups}) {
    std::fill(O.begin(), O.end(), std::nanf(""));
    k->run_into(Xt, Yt, Ot);
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
        double want = 0, scale = 0;
        for (int f = 0; f < F; ++f) {
          const double p = static_cast<double>(X[i * F + f]) * Y[static_cast<int64_t>(a.indices[e]) * F + f];
          want += p;
          scale += std::fabs(p);
        }
        if (!(std::fabs(O[e] - want) <= 1e-5 * std::max(1.0, scale))) {
          std::printf("%s F=%d: %s edge %ld is %g, expected %g\n", name.c_str(), F,
                      k == &generated ? "the plain kernel's" : "the groups kernel's", static_cast<long>(e), O[e], want);
          return false;
        }
      }
  }
  for (int32_t mask : {int32_t{-1}, l1_mask}) {
    if (mask == -1)
      loads<F, false>(a, rt, X.data(), Y.data(), mask, sums.data());
    else
      loads<F, true>(a, rt, X.data(), Y.data(), mask, sums.data());
    if (!expected_sums(a, X, Y, F, mask).matches(sums, tasks)) {
      std::printf("%s F=%d: the loads variant (mask %d) did not read every non-zero\n", name.c_str(), F, mask);
      return false;
    }
  }

  const std::vector<double> med =
      interleaved_medians({
                              [&] { generated.run_into(Xt, Yt, Ot); },
                              [&] { groups.run_into(Xt, Yt, Ot); },
                              [&] { loads<F, false>(a, rt, X.data(), Y.data(), -1, sums.data()); },
                              [&] { loads<F, true>(a, rt, X.data(), Y.data(), l1_mask, sums.data()); },
                          },
                          repeats);
  std::printf("| %s | %d | %.1f | %.4f | %.4f | %.2fx | %.2fx | %.2fx | %.2fx |\n", name.c_str(), F,
              static_cast<double>(a.cols) * F * 4 / (1 << 20), med[0], med[1], med[0] / med[1], med[0] / med[2],
              med[1] / med[2], med[2] / med[3]);
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string header =
      "threads " + std::to_string(omp_get_max_threads()) +
      "; ms are medians of 31 interleaved calls (21 at F = 256)\n"
      "| graph | F | Y MiB | generated ms | groups ms | generated / groups | generated / loads | groups / loads | "
      "loads / l1 |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  return strata::experiments::run_on_graphs(argc, argv, header, [](const std::string& name, const ExportedCsr& a) {
    return run<32>(name, a, 31) && run<64>(name, a, 31) && run<128>(name, a, 31) && run<256>(name, a, 21);
  });
}
