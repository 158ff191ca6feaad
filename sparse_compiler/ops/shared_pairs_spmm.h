// SpMM over shared neighbour pairs: Y = A X computed as the rewrite of
// formats/shared_pairs.h prescribes, out of generated CSR SpMM kernels.
//
// The rows of A are split into one part per thread (equal shares of the non-zeros), and
// each part gets its own rewrite: the pairs its rows share, summed for it alone, into its
// rows of S = [S_0; S_1; ...]. Each thread, for its part, runs one kernel per round over
// that round's pairs (rows of two ids, writing the round's rows of S_t) and one over its
// rewritten rows (writing its rows of Y). A thread reads only the sums it wrote itself: no
// barrier between rounds and no line another core wrote, which is what made this pay on
// small graphs (benchmarks/experiments/spmm_shared_pairs.cpp: the form with every thread in
// every round lost on bcsstk13).
//
// Every kernel is the plan's CSR kernel for the feature size with one more schedule step,
// split_gather (schedule/schedule.h): a row's ids before A_split[i] are columns, gathered
// from X, the rest are sums, gathered from S. So X is read where the caller keeps it; an
// earlier form copied it into the head of one extended operand [X; S] on every call, which
// cost bcsstk13 and ACM most of what the pairs saved. The kernels run inside the part's
// thread (their own parallel regions nested, so one thread); only the arrays they are bound
// to differ. SpmmKernel builds one of these when its plan asks for pair rounds
// (KernelPlan::pair_rounds).
//
// A sum stands for two edges, so the aggregation must weigh an edge only by factors of its
// row and its column: no edge values. Row scales and the mean are applied to the rewritten
// rows, with the degrees of A; column scales to the columns a row or a pair reads from X,
// never to the sums it reads from S (they were summed from scaled columns). CPU only. The parts are fixed when the
// kernel is built (the threads then); calls on one instance are serialised (they share S).
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

class SharedPairsSpmm {
 public:
  // `spec` and `plan` are the SpMM's (plan.pair_rounds > 0); `row_scale` its row scale
  // (the mean's 1/degree folded in) and `col_scale` its column scale, or undefined;
  // `rows_kernel` the SpMM's compiled kernel, SpmmKernel::lower(spec, plan), which every part
  // runs over its rewritten rows.
  SharedPairsSpmm(const Graph& A, const SpmmSpec& spec, const KernelPlan& plan, const Tensor& row_scale,
                  const Tensor& col_scale, const CompiledKernel& rows_kernel);
  ~SharedPairsSpmm();

  void run_into(const Tensor& X, Tensor& Y) const;

  // One kernel launch over one of a part's row lists: its arrays (int64 row offsets and
  // split points; ids in A's index type, rows of X before a row's split point and rows of
  // S from it on) and the argument list packed once, X (and Y, for the rows) per call.
  struct Launch {
    int64_t rows = 0;
    Tensor indptr, indices, split;
    PackedArgs args;
  };
  struct Part {
    const SharedPairs* pairs = nullptr;  // rows row_begin .. row_end of A; sum k is row sum_offset + k of S
    int64_t sum_offset = 0;
    std::vector<Launch> rounds;  // one per round: its sums
    Launch rows;                 // the rewritten rows
  };
  const std::vector<Part>& parts() const { return parts_; }
  int64_t sums() const { return sums_; }

 private:
  std::shared_ptr<const std::vector<SharedPairs>> rewrites_;  // one per part
  std::vector<Part> parts_;
  int64_t cols_ = 0, feat_ = 0, sums_ = 0;
  CompiledKernel sums_kernel_, rows_kernel_;
  mutable Tensor S_;  // the pair sums, [sums, F]
  mutable std::mutex mutex_;
};

}  // namespace strata::sc
