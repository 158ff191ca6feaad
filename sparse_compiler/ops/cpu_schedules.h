// Default CPU schedules for the op programs, parameterised by the knobs the tuner
// searches. Each takes the stage-III kernel from lower_to_loops and returns the
// scheduled kernel (still stage III; lower_schedule runs next).
//
// SpMM: rows in nnz-balanced parallel chunks; the output row accumulated in
// registers (cache_write) across the row's non-zeros, optionally in several
// accumulator sets that consecutive non-zeros alternate between; feature loops
// split into full vectors + narrower vectors + scalars, vectorized and unrolled;
// optional software prefetch of X rows `prefetch` non-zeros ahead.
// SDDMM (dot): rows in balanced chunks; X[i] staged in registers once per row
// (cache_read); per edge a vector accumulator (rfactor) reduced horizontally once.
// SDDMM (add): rows in balanced chunks; the head loop vectorized.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

struct CpuKnobs {
  int vector_lanes = 16;   // float lanes of the widest vector (16 = AVX-512)
  int64_t grain = 4096;    // non-zeros per parallel task
  int64_t prefetch = 0;    // prefetch distance in non-zeros; 0 = none
  // SpMM: write output rows with non-temporal stores (for a Y larger than the
  // cache: no read-for-ownership, no eviction of X). Needs F a multiple of the lanes.
  bool stream_stores = false;
  // The parallel task loop hands tasks to threads in fixed contiguous blocks
  // (Schedule::static_tasks) instead of one by one as threads free up: pays for
  // kernels of a few microseconds, where a task's dispatch is a sizeable share.
  bool static_tasks = false;
  // SpMM over CSR: a row's non-zeros add into this many accumulator sets in turn
  // (rfactor over the non-zero loop), summed at the row's end. A row whose
  // features fill one vector otherwise waits on one chain of dependent adds per
  // non-zero (Xeon VM, F = 16, hand-written: 1.43x on ACM's and Squirrel's long
  // rows); wider rows already have F / lanes independent chains.
  int accumulator_sets = 1;
  // SDDMM (dot) over CSR: a row's edges are taken `vector_lanes` at a time, and
  // their dot products summed by one transposing reduction (Schedule::transpose_sums)
  // instead of one horizontal sum each; the rest of a row goes edge by edge. At
  // F = 32 the per-edge sums cost as many shuffles as the products cost FMAs
  // (Xeon VM, hand-written: 1.34-1.47x on ACM, ogbl-ddi and Squirrel, whose rows
  // are long; benchmarks/experiments/sddmm_edge_groups.cpp). Over COO the groups
  // are `vector_lanes` consecutive slots whatever their rows, so short rows fill
  // them too.
  bool edge_groups = false;
  std::string str() const;  // "lanes=16,grain=4096,prefetch=0" (+ ",stream", ",static", ",sets=2", ",groups")
};

// Vector lanes of the host CPU (16 with AVX-512, 8 with AVX2, else 4).
int host_vector_lanes();

// The task loop every CPU schedule starts with, per the knobs: CSR row loop `i`
// balanced into tasks of ~grain non-zeros (row_tasks), or the top-level loops of a
// decomposed or COO kernel as owner tasks (owner_tasks, Schedule::partition_tasks),
// run in parallel, in fixed blocks when knobs.static_tasks. Each returns the task loop.
std::string row_tasks(Schedule& s, const CpuKnobs& knobs);
std::string owner_tasks(Schedule& s, const std::vector<std::string>& loops, const std::vector<std::string>& ranges,
                        const CpuKnobs& knobs);

Kernel schedule_spmm_cpu(const Kernel& loops, const CpuKnobs& knobs);
Kernel schedule_sddmm_cpu(const Kernel& loops, const CpuKnobs& knobs);

// Splits, vectorizes and unrolls loop `loop` (constant extent) into vectors of at
// most `lanes` lanes, narrower vectors for the remainder and scalars last.
void vectorize_feature_loop(Schedule& s, const std::string& loop, int lanes);
// The same for a loop that reduces into local `acc` (a scalar accumulator): each
// vector part gets per-lane partial sums (rfactor) reduced horizontally once.
void vectorize_reduction_loop(Schedule& s, const std::string& loop, const std::string& acc, int lanes);
// Loop `loop` (W iterations, W = the reduction's vector width) computes one dot
// product per iteration into `output`: stages each in a register accumulator,
// vectorizes its reduction loop `reduction` (rfactor), sums the W partial
// vectors by one transposing reduction (Schedule::transpose_sums) and unrolls.
// SDDMM's edge groups and GAT's heads of its attention gradient.
void sum_dot_products_together(Schedule& s, const std::string& loop, const std::string& output,
                               const std::string& reduction, int lanes);
// SDDMM's edge groups (CpuKnobs::edge_groups): loop `edges` (a CSR row's edges, or
// a COO kernel's slots) computes one dot product per iteration into O over the
// feature loop `f`. It is split into groups of knobs.vector_lanes edges whose
// dot products are summed together (sum_dot_products_together), and the rest,
// peeled, edge by edge. The prefetch of Y rows goes in before the split, so that
// it is clamped at the edge's own position. Refused unless the features are
// whole vectors of 4 lanes or more, staged in registers.
void group_dot_products(Schedule& s, const std::string& edges, const std::string& f, const CpuKnobs& knobs);
// Splits the non-zero loop `loop` into groups of `sets` (peeling the rest) and
// gives each position in a group its own copy of the row accumulator `acc`
// (rfactor), unrolled: consecutive non-zeros then add into independent sets.
void interleave_accumulators(Schedule& s, const std::string& loop, const std::string& acc, int sets);
// Whether every loop along the given feature axes fits a staged local
// (Schedule::kMaxStagedElements): the schedules stage rows in registers only then.
bool fits_in_locals(const Schedule& s, const std::vector<std::string>& feature_axes);

}  // namespace strata::sc
