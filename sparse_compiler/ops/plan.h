// A kernel plan: everything that decides which code a kernel gets for a graph
// and a feature size besides the op itself — the sparse format (format_spec.h)
// and the schedule knobs. Plans are what the tuner chooses and records, what runs
// print in their headers, and what `strata compile --plan plan.json` replays: the
// same plan always produces the same code.
#pragma once

#include <string>

#include "sparse_compiler/formats/format_spec.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/cusparse_baseline.h"
#include "sparse_compiler/ops/dense_layout.h"
#include "sparse_compiler/ops/gpu_schedules.h"

namespace strata::sc {

struct KernelPlan {
  FormatSpec format;
  CpuKnobs knobs;
  int64_t feature_tile = 0;  // SpMM on CSR: split the features into tiles of this width (0: none)
  // SpMM on CSR: the layout the kernel reads X in (dense_layout.h); a panel layout
  // runs panel by panel (its width is the feature tile). SDDMM dot products on
  // CSR: row, or panels of X and Y alike, one pass over the edges per panel.
  DenseLayout x_layout;
  // SpMM on a CUDA device: the GPU schedule's knobs, or the cuSPARSE algorithm for
  // Backend::CuSparse. Not part of str()/to_json(), which describe the CPU plan.
  GpuSpmmKnobs gpu{};
  // SpMM on the CPU: rounds of shared neighbour pairs (formats/shared_pairs.h) summed once
  // before the rows read them (ops/shared_pairs_spmm.h); 0: off. A pair is summed when at
  // least pair_min_rows rows hold it.
  int pair_rounds = 0;
  int64_t pair_min_rows = 4;
  CusparseSpmmAlgorithm cusparse_algorithm = CusparseSpmmAlgorithm::Default;

  // "csr lanes=16,grain=4096,prefetch=32,tile=64" (+ ",x=panel:64" for a non-row X, ",pairs=r4m4"
  // for shared pairs)
  std::string str() const;
  // {"format": "hyb:c=2,B=5", "lanes": 16, "grain": 4096, "prefetch": 0, "tile": 0, "x_layout": "row", "stream": false}
  // (+ "static_tasks": true for Schedule::static_tasks, "accumulator_sets": n for n > 1, "edge_groups": true
  // for SDDMM's transposing sums, "pair_rounds": r and "pair_min_rows": m for shared pairs; absent: false, 1,
  // false, 0)
  std::string to_json() const;
  // Parses to_json()'s output; throws UserError naming `what` and the bad key.
  static KernelPlan from_json(const std::string& text, const std::string& what = "plan");
  bool operator==(const KernelPlan& o) const {
    return format == o.format && knobs.vector_lanes == o.knobs.vector_lanes && knobs.grain == o.knobs.grain &&
           knobs.prefetch == o.knobs.prefetch && knobs.stream_stores == o.knobs.stream_stores &&
           knobs.static_tasks == o.knobs.static_tasks && knobs.accumulator_sets == o.knobs.accumulator_sets &&
           knobs.edge_groups == o.knobs.edge_groups && feature_tile == o.feature_tile && x_layout == o.x_layout &&
           pair_rounds == o.pair_rounds && (pair_rounds == 0 || pair_min_rows == o.pair_min_rows);
  }
};

using SpmmPlan = KernelPlan;

}  // namespace strata::sc
