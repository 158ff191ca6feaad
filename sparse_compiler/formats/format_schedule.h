// CPU schedules for decomposed formats: one parallel region over owner tasks
// (partition_tasks with the inspector's task arrays), so all parts run in one
// call, work is balanced by slots, and every output row is written by one thread
// (no atomics; the same result every run). Inside each part, the row's output is
// accumulated in registers (SpMM) or each slot's dot product is vectorized (SDDMM).
#pragma once

#include "sparse_compiler/formats/format_spec.h"
#include "sparse_compiler/ops/cpu_schedules.h"

namespace strata::sc {

Kernel schedule_decomposed_spmm_cpu(const Kernel& loops, const FormatSpec& spec, const CpuKnobs& knobs);
Kernel schedule_decomposed_sddmm_cpu(const Kernel& loops, const FormatSpec& spec, const CpuKnobs& knobs);
// COO (coo_program): row-aligned non-zero ranges per task; SpMM accumulates in Y
// directly (the row changes with every non-zero), SDDMM vectorizes each dot, or
// with knobs.edge_groups sums the dots of `lanes` consecutive slots together,
// whatever rows they belong to (group_dot_products).
Kernel schedule_coo_spmm_cpu(const Kernel& loops, const CpuKnobs& knobs);
Kernel schedule_coo_sddmm_cpu(const Kernel& loops, const CpuKnobs& knobs);
// A single-pass GAT program over any format but CSR (gat_program_over): the
// parallel region over owner tasks, head and feature loops as vectors.
Kernel schedule_gat_over_format_cpu(const Kernel& loops, const FormatSpec& spec, const CpuKnobs& knobs);

}  // namespace strata::sc
