// Schedule primitives on stage-III loops.
//
// A Schedule owns a kernel and rewrites it one primitive at a time. Loops are named
// by their variable. Every primitive validates its arguments and refuses an illegal
// request with a ScheduleError whose message names the primitive, the loop and the
// reason ("vectorize(j): loop j has non-constant extent ..."); a refused primitive
// leaves the kernel unchanged. attempt() is the non-throwing form the tuner uses.
//
// What they do (f, i, j are loop names):
//   split(f, 16)          f -> f_o * 16 + f_i (+ a tail loop f_t when 16 does not divide;
//                         with TailStrategy::Guard, f_o rounds up and the body is guarded
//                         instead, as GPU bindings need one uniform loop)
//   split(f, 4, Peel)     a symbolic extent too: f_o over extent / 4 blocks of f_i,
//                         then the remainder in a tail loop f_t
//   reorder(a, b)         swaps two perfectly nested loops
//   fission(i)            for i { A; B } -> for i { A }; for i_1 { B } when no iteration
//                         of i touches what another writes
//   unroll_and_jam(b, k)  for b { pre; for k { S }; post } with b constant -> the copies'
//                         pre, then one loop k over every copy's S, then their post
//   fuse(a, b)            a and b (perfectly nested) -> one loop over both
//   balance(i, indptr, g) rows of loop i -> chunks of ~g non-zeros each (loop i_chunk)
//   parallel(c)           iterations of c run on threads (CPU), each taken by the
//                         next free thread
//   static_tasks(c)       parallel loop c's iterations go to the threads in fixed
//                         contiguous blocks instead (the same rows on the same core
//                         every call; no shared counter per iteration)
//   vectorize(f)          f's iterations become vector lanes (constant extent)
//   unroll(f)             f is replicated (constant extent)
//   bind(f, axis)         f maps to a GPU block/thread index
//   cache_write(Y, i)     Y's accesses inside loop i go to a register-resident local,
//                         written back at the end of i's body (under the same guard
//                         when every access is guarded, e.g. skipping padding slots)
//   cache_read(X, i)      X's region read inside loop i is loaded once into a local
//   rfactor(f_i, acc)     a reduction into acc[k] across loop f_i gets one partial
//                         accumulator per f_i iteration, summed afterwards (so f_i
//                         can be vectorized); when k varies inside f_i's body (a
//                         feature loop), each iteration gets a whole copy of acc
//   transpose_sums(j_i)   W dot products of loop j_i (W iterations, each an rfactor'd
//                         partial vector summed into a scalar output) summed by one
//                         transposing reduction and stored as one vector
//   prefetch(j, X, d, n)  inside loop j, prefetch X's rows d iterations ahead
//                         (positions clamped below scalar n)
//   stream_stores(Y)      Y's stores become non-temporal (bypass the cache; for an
//                         output written once and larger than the cache)
//   split_gather(i, X, S, indptr, split[, scales])
//                         row i's non-zeros before split[i] gather X, the rest S
//   partition_tasks(...)  top-level loops -> one parallel loop over owner tasks
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sparse_compiler/schedule/schedule_error.h"
#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// What split does with the iterations left over when the factor does not divide the
// extent: a separate tail loop (CPU; symbolic extents get the guard), a rounded-up
// outer loop whose body is guarded (GPU), or, with Peel, a separate tail loop even
// for a symbolic extent (extent / factor guard-free blocks, then extent % factor
// iterations; for register blocking over a row's or relation's ragged list).
enum class TailStrategy : uint8_t { Loop, Guard, Peel };

class Schedule {
 public:
  // The most elements cache_write and cache_read stage in one local (16 KiB of
  // floats); larger regions are refused, and the schedules leave them in memory.
  static constexpr int64_t kMaxStagedElements = 4096;

  explicit Schedule(Kernel k);

  const Kernel& kernel() const { return k_; }
  // The primitives applied so far, one per line ("split(f, 16)").
  const std::vector<std::string>& trace() const { return trace_; }
  std::vector<std::string> loops() const;

  // The loops a split creates. Their names are fresh: when `loop`_t is taken already
  // (a peeled copy of an enclosing loop's body holds a loop of that name), the tail
  // is called something else, so callers take the names from here.
  struct SplitLoops {
    std::string outer, inner;
    std::string tail;  // empty when there is no tail loop
  };
  SplitLoops split(const std::string& loop, int64_t factor, TailStrategy tail = TailStrategy::Loop);
  void reorder(const std::string& outer, const std::string& inner);
  // Distributes loop `loop` over the statements of its body, one loop each (the
  // first keeps the name; the names of all are returned, in order). Refused unless
  // the body is a sequence and every buffer written in it is accessed, at each
  // iteration, only inside a window that no other iteration touches (index =
  // c * loop + an offset that stays within |c|): then no iteration depends on
  // another and running all of A before all of B changes nothing. Register
  // blocking uses it to separate a block's init, accumulation and write-back.
  std::vector<std::string> fission(const std::string& loop);
  // Unrolls loop `loop` (constant extent) and jams its copies' loop `jam` (a
  // top-level statement of its body, under the locals allocated per iteration)
  // into one: `for b { pre(b); for k { S(b, k) }; post(b) }` becomes
  // `pre(0) ... pre(n-1); for k { S(0, k) ... S(n-1, k) }; post(0) ... post(n-1)`,
  // each copy with its own locals. Register blocking for an output addressed
  // indirectly: n rows' accumulators live at once and each k's operands serve
  // all n. Refused unless the copies touch disjoint data (as fission requires),
  // where an index may also separate iterations through a load from one of
  // `distinct`: arrays the caller guarantees hold distinct values at distinct
  // positions (a sparse axis's strictly increasing coordinates; the inspector
  // guarantees it, as it guarantees partition_tasks' disjoint owners).
  void unroll_and_jam(const std::string& loop, const std::string& jam, const std::vector<std::string>& distinct = {});
  std::string fuse(const std::string& outer, const std::string& inner);
  std::string balance(const std::string& loop, const std::string& indptr, int64_t grain);
  void parallel(const std::string& loop);
  // Parallel loop `loop`'s iterations are split among the threads in contiguous
  // blocks, fixed from call to call (OpenMP schedule(static)), instead of being
  // taken one at a time by whichever thread is free. For kernels of a few
  // microseconds: no shared counter bounces between the cores per task, and each
  // core writes the same output rows every call, so they stay in its cache. The
  // iterations must cost about the same (balance() makes them so); a thread that
  // is preempted is not helped by the others.
  void static_tasks(const std::string& loop);
  void vectorize(const std::string& loop);
  void unroll(const std::string& loop);
  void bind(const std::string& loop, ForKind gpu_axis);
  std::string cache_write(const std::string& buffer, const std::string& loop);
  std::string cache_read(const std::string& buffer, const std::string& loop);
  // Reassociates a reduction into local `local` across loop `loop` (constant
  // extent W, from 0): acc[k] = acc[k] + e inside it becomes an update of a
  // partial, one per iteration of `loop`, and the partials are added into acc
  // after the statement that holds the loop. Where k is the same location
  // throughout the loop (a dot product's accumulator), the partial holds W
  // values; where k varies inside the loop's body (an SpMM row's features), it
  // holds W whole copies of acc, so that W consecutive non-zeros of a row add
  // into independent accumulator sets instead of one chain of dependent adds.
  // Refused when acc is read, not only updated, inside that statement before the
  // partials are added back.
  struct RFactor {
    std::string local;      // the partial accumulators
    std::string init_loop;  // zeroes them
    std::string sum_loop;   // adds them into the original accumulator
  };
  RFactor rfactor(const std::string& loop, const std::string& local);
  // Loop `loop` (serial, W iterations from 0, W a power of two) computes one dot
  // product per iteration as cache_write and a vectorized rfactor leave it: an
  // accumulator initialised, a W-lane partial vector zeroed, updated and added
  // into the accumulator lane by lane, the accumulator stored to out[base + k].
  // The partial vectors of all W iterations are kept side by side instead (one
  // local of W * W), and after the loop one lane_sums leaves product k in lane k,
  // added to the accumulator's start and stored to out[base .. base + W) as one
  // vector. Refused, naming the part that differs, for any other body. Unroll the
  // loop afterwards so that each partial vector becomes its own register.
  void transpose_sums(const std::string& loop);
  // Every let binding in loop `loop`'s body is replaced by its value at each use,
  // so that the body holds the statements other primitives look for: a COO
  // slot's row id (`let i = rows[slot]`) otherwise wraps the dot product that
  // transpose_sums rewrites. The value is computed again at each use (the C++
  // compiler shares them again). Refused when the loop binds no lets, or when a
  // let's body writes a buffer its value reads (the value could then change
  // between the binding and a use).
  void inline_lets(const std::string& loop);
  void prefetch(const std::string& loop, const std::string& buffer, int64_t distance, const std::string& bound);
  void annotate(const std::string& loop, const std::string& key, const std::string& value);
  // Every store to output `buffer` becomes StoreKind::Streaming. Refused unless
  // each is a plain store that does not read `buffer` (write-once outputs, e.g.
  // after cache_write). The caller guarantees vector stores are aligned.
  void stream_stores(const std::string& buffer);
  // Row loop `row` gathers the rows of input `buffer` at its non-zeros'
  // ids; afterwards, the non-zeros at positions [indptr[row], split[row]) gather
  // from `buffer` as before and those at [split[row], indptr[row + 1]) from
  // `second`, a new input of the same dtype (read at the same ids). `split` is a
  // new int64 buffer parameter. Each segment loop (an outermost reduction loop in
  // the row's body that reads `buffer`, its range read from indptr[row] and
  // indptr[row + 1] only) runs twice: once with indptr[row + 1] replaced by
  // split[row], once with indptr[row] replaced by it and `buffer` by `second`.
  // The caller guarantees that the segment loops together cover the row's
  // positions exactly once as functions of its two bounds (as split, peel and
  // rfactor leave them), and that indptr[row] <= split[row] <= indptr[row + 1].
  // For an operand whose rows live in two allocations: shared neighbour pairs
  // read a row's columns from X and its pair sums from S, with no copy of X.
  // `first_only` names per-id factors of the first operand's rows (SpMM's column
  // scales): the second segment reads them as 1, its rows being sums of rows the
  // factors were applied to already. A prefetch ahead of the last non-zero of a
  // segment may name a row of the other operand's ids in this one, outside this
  // one's rows: a hint, never a load, whose address the CPU emitter forms as an
  // integer (strata_prefetch), so it is defined behaviour and the hardware drops it.
  void split_gather(const std::string& row, const std::string& buffer, const std::string& second,
                    const std::string& indptr, const std::string& split,
                    const std::vector<std::string>& first_only = {});
  // Fuses two consecutive loop nests at their outer `depth` levels, which must
  // run over the same ranges: `for r { for i { A } }; for r2 { for i2 { B } }`
  // becomes `for r { for i { A; B[r2 := r, i2 := i] } }`. Refused unless B, at each
  // fused iteration, reads only what A wrote at that same iteration (compute_at:
  // a per-(relation, row) intermediate then never leaves registers), and A reads
  // nothing B writes. Returns nothing; the fused loops keep A's names.
  void fuse_nests(const std::string& first, const std::string& second, int depth);
  // Runs the kernel body's top-level loops `loops` (every statement of its top
  // level, in order) as one parallel loop over `tasks` tasks: task t runs
  // iterations [ranges[k][t], ranges[k][t+1]) of loops[k], where ranges[k] names an
  // int64 buffer parameter of tasks + 1 entries. A loop nested directly in a
  // top-level loop is named "outer/inner": its range array then holds tasks + 1
  // entries per iteration of the outer loop (ranges[outer * (tasks + 1) + t]).
  // The inspector that builds the
  // ranges guarantees that tasks write disjoint outputs (each output row has one
  // owner), so no atomics are needed. Returns the task loop's name.
  std::string partition_tasks(const std::vector<std::string>& loops, const std::vector<std::string>& ranges,
                              const std::string& tasks);

  // Runs fn (a sequence of primitives on this schedule); on a ScheduleError,
  // restores the kernel as it was and returns the reason; returns "" on success.
  std::string attempt(const std::function<void()>& fn);

 private:
  const ForNode* loop_or_throw(const char* prim, const std::string& loop) const;
  void commit(Stmt body, std::string step);

  Kernel k_;
  std::vector<std::string> trace_;
};

}  // namespace strata::sc
