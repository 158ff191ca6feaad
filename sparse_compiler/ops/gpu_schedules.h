// Default GPU schedules for the op programs (SparseTIR §2.1 and §3), the knobs the
// tuner searches, and the lowering that prepares them for the CUDA emitter. The
// programs and the lowering passes are the CPU path's; only the schedule differs.
//
// SpMM (CSR): rows over blockIdx.x × threadIdx.y (rows_per_block rows per block,
// one group of `lanes` threads per row); the feature dimension over threadIdx.x,
// each thread owning `coarsen` consecutive features (so a thread's share of an X
// row is one aligned vector load of up to 4 floats) and, when lanes × coarsen < F,
// feature tiles over blockIdx.y; the row's accumulators in registers (cache_write)
// and one write-back per row. Each output row has one owner, so no atomics. With
// row_parts = P > 1 every row's non-zeros are split into P contiguous parts, each
// scheduled as above: the parts are horizontally fused into one launch and write
// back with atomic adds (into an output zeroed by a first launch), or, with
// `deterministic`, run as P ordered launches that add plain, without atomics.
//
// SDDMM (dot): one loop over the non-zeros (sparse_fuse), the row of each from the
// search hoisted into the preprocess (run once per graph, one thread per
// non-zero); edges over blockIdx.x × threadIdx.y; the feature dimension over
// threadIdx.x lanes with `vec` consecutive features per lane per step (vector
// loads), each lane's partial dot product in a register (rfactor) and a cross-lane
// shuffle reduction (bind of the rfactor's sum loop, lowered by
// lower_cross_thread_reduction). SDDMM (add): heads over threadIdx.x.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

struct GpuSpmmKnobs {
  int64_t rows_per_block = 8;  // threadIdx.y
  int64_t lanes = 32;          // threadIdx.x: threads sharing one row's features
  int64_t coarsen = 1;         // consecutive features per thread (must divide F)
  int64_t row_parts = 1;       // parts each row's non-zeros are split into
  bool deterministic = false;  // row_parts > 1: ordered launches instead of atomics; decomposed
                               // formats: owner tasks instead of atomics (formats/gpu_format_schedule.h)
  // Decomposed formats only (0: the format's default). Atomic mode: the padded slots
  // each thread group handles in every bucket (a bucket of width w gives a group
  // group_slots / w rows; coo: non-zeros per group). Deterministic mode: the slots of
  // one owner task (the inspector's grain).
  int64_t group_slots = 0;
  std::string str() const;     // "r8_l32_c1_p1" (+ "_det") (+ "_g32" when group_slots is set)
};

struct GpuSddmmKnobs {
  int64_t edges_per_block = 8;  // threadIdx.y
  int64_t lanes = 32;           // threadIdx.x: threads sharing one edge (power of two <= 32)
  int64_t vec = 4;              // consecutive features per lane per step (must divide F)
  std::string str() const;      // "e8_l32_v4"
};

GpuSpmmKnobs default_gpu_spmm_knobs(const SpmmSpec& spec);
GpuSddmmKnobs default_gpu_sddmm_knobs(const SddmmSpec& spec);

// The candidate knob settings for one spec, each valid for it (the tuner's grid).
std::vector<GpuSpmmKnobs> gpu_spmm_search_space(const SpmmSpec& spec);
std::vector<GpuSddmmKnobs> gpu_sddmm_search_space(const SddmmSpec& spec);

// The stage-III kernel scheduled for the GPU, before lower_schedule (what the
// interpreter runs to check a schedule's meaning), and after it (what the CUDA
// emitter takes). Throw UserError naming the knob when the knobs do not fit the spec.
Kernel schedule_spmm_gpu(const SpmmSpec& spec, const GpuSpmmKnobs& knobs);
Kernel schedule_sddmm_gpu(const SddmmSpec& spec, const GpuSddmmKnobs& knobs);
Kernel lower_spmm_gpu(const SpmmSpec& spec, const GpuSpmmKnobs& knobs);
Kernel lower_sddmm_gpu(const SddmmSpec& spec, const GpuSddmmKnobs& knobs);

// Binds every top-level loop of the kernel's preprocess body (hoisted searches)
// that starts at 0 and has an extent over scalar parameters: one thread per
// iteration, 256 threads per block.
Kernel bind_preprocess_gpu(const Kernel& k);

// Building blocks the decomposed formats' GPU schedules (formats/gpu_format_schedule.h)
// share with the CSR ones.
namespace gpu_parts {
// SDDMM dot: the reduction loop `f` of one edge, whose output accumulator is `acc`
// (from cache_write): `vec` features per lane per step, `lanes` lanes with per-lane
// partial sums (rfactor) reduced by shuffles.
void schedule_sddmm_dot_features(Schedule& s, const SddmmSpec& spec, const GpuSddmmKnobs& knobs,
                                 const std::string& f, const std::string& acc);
// SDDMM add: heads loop `h` over threadIdx.x lanes.
void schedule_sddmm_add_heads(Schedule& s, const SddmmSpec& spec, const GpuSddmmKnobs& knobs, const std::string& h);
// Thread groups over loop `loop`: `per_block` groups per block along threadIdx.y,
// each running `per_group` consecutive iterations of the block's share serially,
// blocks along blockIdx.x. Returns the outermost loop (the one bound to blockIdx.x).
std::string bind_groups(Schedule& s, const std::string& loop, int64_t per_block, int64_t per_group);
// A thread's few consecutive elements as vectors of up to 4 lanes (unrolled rest).
void vectorize_thread_elements(Schedule& s, const std::string& loop);
// A loop over [0, extent): one thread per iteration, `threads` per block.
void bind_flat(Schedule& s, const std::string& loop, int64_t threads);
bool has_atomic_store(const Stmt& s);
// The knob checks of the CSR schedules (UserError naming the knob); with csr = false,
// group_slots is allowed.
void validate_knobs(const SpmmSpec& spec, const GpuSpmmKnobs& knobs, bool csr);
void validate_knobs(const SddmmSpec& spec, const GpuSddmmKnobs& knobs);
}  // namespace gpu_parts

}  // namespace strata::sc
