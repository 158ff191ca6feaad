// SpMM over shared neighbour pairs: Y = A X computed as the rewrite of
// formats/shared_pairs.h prescribes, out of generated CSR SpMM kernels.
//
// The rows of A are split into one part per thread (equal shares of the non-zeros), and
// each part gets its own rewrite: the pairs its rows share, summed for it alone. The operand
// is extended, E = [X; S_0; S_1; ...], S_t holding part t's sums. A call copies X into E's
// head; then each thread, for its part, runs one generated CSR kernel per round over that
// round's pairs (rows of two ids, reading E's earlier rows, writing the round's rows of S_t)
// and one over its rewritten rows (reading E, writing its rows of Y). A thread reads only
// the sums it wrote itself: no barrier between rounds and no line another core wrote,
// which is what made this pay on small graphs (benchmarks/experiments/spmm_shared_pairs.cpp:
// the form with every thread in every round lost on bcsstk13). Every kernel is the plan's
// CSR kernel for the feature size, run inside the part's thread (its own parallel region
// nested, so one thread); only the graphs they are bound to differ. SpmmKernel builds one
// of these when its plan asks for pair rounds (KernelPlan::pair_rounds).
//
// A sum stands for two edges, so the aggregation must not weigh edges differently: no edge
// values, no column scales (row scales and the mean are applied to the rewritten rows, with
// the degrees of A). CPU only. The parts are fixed when the kernel is built (the threads
// then); calls on one instance are serialised (they share E).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/graph.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/formats/shared_pairs.h"
#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/ops/programs.h"

namespace strata::sc {

class SpmmKernel;

class SharedPairsSpmm {
 public:
  // `spec` and `plan` are the SpMM's (plan.pair_rounds > 0); `row_scale` its row scale
  // (the mean's 1/degree folded in), or undefined; `rows_kernel` the SpMM's compiled kernel,
  // SpmmKernel::lower(spec, plan), which every part runs over its rewritten rows.
  SharedPairsSpmm(const Graph& A, const SpmmSpec& spec, const KernelPlan& plan, const Tensor& row_scale,
                  const CompiledKernel& rows_kernel);
  ~SharedPairsSpmm();

  void run_into(const Tensor& X, Tensor& Y) const;

  struct Part {
    const SharedPairs* pairs = nullptr;  // rows row_begin .. row_end of A; sum k is row sum_offset + k of S
    int64_t sum_offset = 0;
    std::vector<std::unique_ptr<SpmmKernel>> rounds;  // one per round: its sums
    std::unique_ptr<SpmmKernel> rows;                 // the rewritten rows
  };
  const std::vector<Part>& parts() const { return parts_; }
  int64_t sums() const { return sums_; }

 private:
  std::shared_ptr<const std::vector<SharedPairs>> rewrites_;  // one per part
  std::vector<Part> parts_;
  int64_t cols_ = 0, feat_ = 0, sums_ = 0;
  mutable Tensor extended_;  // E = [X; S_0; S_1; ...], [cols + sums, F]
  mutable std::mutex mutex_;
};

}  // namespace strata::sc
