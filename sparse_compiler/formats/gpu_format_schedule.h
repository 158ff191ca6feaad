// GPU schedules for the decomposed formats (ell, hyb, bsr, dcsr) and coo: the
// stage-I program of decompose_format (one sparse iteration per part or bucket) or
// coo_program, lowered by the same passes as every kernel, scheduled for the CUDA
// emitter. All parts of a format run in one launch (horizontal fusion), after the
// launch that zeroes a node-indexed output where one is needed.
//
// SpMM. The feature mapping is the CSR schedule's (ops/gpu_schedules.h): `lanes`
// threads along threadIdx.x own `coarsen` consecutive features each (feature tiles
// over blockIdx.y), the row's sums in registers; thread groups along threadIdx.y
// (`rows_per_block`), blocks along blockIdx.x. Per part:
//   ell / hyb  SparseTIR's hyb (sparsetir-reference.md §2.1): in a bucket of width w
//              every group runs group_slots / w rows serially, so each group gets the
//              same number of padded slots in every bucket (default group_slots: the
//              widest bucket); the slot loop is unrolled (w <= 16). A part whose rows
//              may be shared (the last bucket, whose long rows are split into pieces,
//              or any bucket when c > 1) adds its sums with atomicAdd; the others
//              store them (each row of theirs has one writer), declared exclusive so
//              the emitter still fuses every part into one launch.
//   dcsr       one group per non-empty row, plain stores.
//   bsr        block rows and the rows inside them fused, one group per row, plain
//              stores; every row is visited, so no zeroing launch either.
//   coo        group_slots consecutive non-zeros per group (default 1), each added
//              with atomicAdd (the row of each from the search hoisted into the
//              preprocess).
// Deterministic mode (knobs.deterministic; ell, hyb and coo, the formats with
// atomics): the inspector's owner tasks (group_slots slots each) instead of
// atomics. One thread group per task runs, in order, the zeroing of the task's
// output rows and every part's iterations for those rows, so each row is summed by
// one group in a fixed order (one launch, no atomics, the same bits every run).
// dcsr and bsr are deterministic in either mode. row_parts is CSR's knob and is
// refused here.
//
// SDDMM. Every edge has exactly one slot, so no part needs atomics and all declare
// their output writes exclusive. One group per slot (ell, hyb: rows and slots fused;
// coo: the non-zero loop, as CSR) or per row with its slots serial (dcsr; bsr: rows
// fused over block rows); within a slot the CSR SDDMM feature mapping (vec features
// per lane, per-lane partial sums, shuffle reduction; sddmm_add: heads over lanes).
// Padding slots (edge id -1) neither compute nor store.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/formats/format_spec.h"
#include "sparse_compiler/ops/gpu_schedules.h"

namespace strata::sc {

// The format's default knobs: the CSR defaults for the feature mapping, group_slots 0.
GpuSpmmKnobs default_gpu_spmm_knobs(const SpmmSpec& spec, const FormatSpec& format);
GpuSddmmKnobs default_gpu_sddmm_knobs(const SddmmSpec& spec, const FormatSpec& format);

// The group_slots a schedule uses (resolves 0 to the format's default).
int64_t gpu_group_slots(const FormatSpec& format, const GpuSpmmKnobs& knobs);
// Whether the SpMM schedule runs owner tasks (deterministic mode on ell, hyb, coo).
bool gpu_uses_tasks(const FormatSpec& format, const GpuSpmmKnobs& knobs);
// The grain the inspector must build the task arrays with for this plan: the task
// size in deterministic mode, else `cpu_grain` (the arrays are bound but unused).
int64_t gpu_inspector_grain(const FormatSpec& format, const GpuSpmmKnobs& knobs, int64_t cpu_grain);

// Knob settings worth trying for one spec in one format, each valid for it.
std::vector<GpuSpmmKnobs> gpu_spmm_search_space(const SpmmSpec& spec, const FormatSpec& format);
std::vector<GpuSddmmKnobs> gpu_sddmm_search_space(const SddmmSpec& spec, const FormatSpec& format);

// The GPU-scheduled stage-III kernel for any format (csr: the CSR schedules), before
// lower_schedule (what the interpreter runs) and after it (for the CUDA emitter).
// UserError naming the knob or the format when they do not fit.
Kernel schedule_spmm_gpu(const SpmmSpec& spec, const FormatSpec& format, const GpuSpmmKnobs& knobs);
Kernel schedule_sddmm_gpu(const SddmmSpec& spec, const FormatSpec& format, const GpuSddmmKnobs& knobs);
Kernel lower_spmm_gpu(const SpmmSpec& spec, const FormatSpec& format, const GpuSpmmKnobs& knobs);
Kernel lower_sddmm_gpu(const SddmmSpec& spec, const FormatSpec& format, const GpuSddmmKnobs& knobs);

}  // namespace strata::sc
