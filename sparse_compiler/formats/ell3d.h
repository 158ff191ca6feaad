// ELL3D: the composable RGCN format of SparseTIR (§2.2). The relation-major
// 3-level format (relation -> destination rows -> sources) is decomposed, within
// each relation, into buckets of (relation, row) pairs grouped by degree: bucket b
// holds pairs of degree <= 2^b as ELL rows of exactly 2^b source slots (padding
// slots carry edge id -1); pairs longer than the widest bucket are split into
// pieces of 2^B. Every piece accumulates into its pair's row of H.
//
// decompose_ell3d rewrites the RGMS aggregation program (rgms_aggregate_program)
// into one dense init over the pairs plus one iteration per bucket; the inspector
// builds each bucket's arrays (per-relation ELL rows, the pair of each ELL row,
// source slots, edge ids) and owner tasks over pairs, so pieces of one pair never
// land in two tasks.
#pragma once

#include "sparse_compiler/ir/kernel.h"
#include "sparse_compiler/ops/rgms.h"

namespace strata::sc {

Kernel decompose_ell3d(const Kernel& aggregate_program, int max_bucket);

struct Ell3dBucket {
  int64_t width = 1;
  int64_t rows = 0, slots = 0;
  Tensor rptr, pairs, cols, eid, tasks;  // int64 [rels+1], idx [rows], idx [rows*w], idx [rows*w], int64 [rels*(T+1)]
};

struct InspectedEll3d {
  int max_bucket = 0;
  std::vector<Ell3dBucket> buckets;
  int64_t num_tasks = 0;
  Tensor task_pairs;  // int64 [T+1]
  int64_t slots() const;
  void bind(KernelArgs& a) const;
};

InspectedEll3d inspect_ell3d(const RelationalGraph& g, int max_bucket, int64_t grain);

}  // namespace strata::sc
