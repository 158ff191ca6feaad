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

namespace strata::sc {

struct GpuSpmmKnobs {
  int64_t rows_per_block = 8;  // threadIdx.y
  int64_t lanes = 32;          // threadIdx.x: threads sharing one row's features
  int64_t coarsen = 1;         // consecutive features per thread (must divide F)
  int64_t row_parts = 1;       // parts each row's non-zeros are split into
  bool deterministic = false;  // row_parts > 1: ordered launches instead of atomics
  std::string str() const;     // "r8_l32_c1_p1" (+ "_det")
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

}  // namespace strata::sc
