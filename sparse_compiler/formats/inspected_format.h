// The arrays a decomposed format's kernel reads, built from a graph's CSR by the
// inspectors: one FormatPart per part, plus the task partition that gives every
// output row one owner thread (deterministic, no atomics).
//
// Naming: part k's arrays bind to kernel parameters "p<k>_<array>" (p3_rows,
// p3_cols, p3_eid, ...) and its scalars to "p<k>_<scalar>"; the task arrays are
// "task_rows" (output rows of task t: [task_rows[t], task_rows[t+1])) and each
// part's "p<k>_tasks" (its outer-loop iterations of task t); "num_tasks" is T.
// Edge ids ("eid") map every slot to the CSR position of its non-zero, or -1 for
// padding, so edge values, SDDMM outputs and gradients land on the right edge.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/graph.h"
#include "sparse_compiler/formats/format_spec.h"

namespace strata::sc {

class KernelArgs;

enum class PartKind : uint8_t {
  RowSubsetEll,  // rows (ids) -> `width` column slots each (hyb buckets, ell)
  Dcsr,          // non-empty rows (ids) -> their columns
  Bsr,           // block rows -> block columns -> b x b dense block
};

struct FormatPart {
  std::string name;  // "p0", "p1", ...
  PartKind kind = PartKind::RowSubsetEll;
  int64_t width = 0;  // RowSubsetEll: slots per row; Bsr: block size
  int64_t col_begin = 0, col_end = 0;  // the column range this part covers (hyb)
  int64_t outer = 0;  // iterations of the part's outer loop: ELL rows, DCSR rows, block rows
  int64_t slots = 0;  // stored slots (non-zeros + padding)
  int64_t real = 0;   // non-zeros
  std::map<std::string, Tensor> arrays;    // suffix -> array ("rows", "cols", "eid", "tasks", ...)
  std::map<std::string, int64_t> scalars;  // suffix -> value ("n", "mb", ...)
  std::string describe() const;
};

struct InspectedFormat {
  FormatSpec spec;
  int64_t rows = 0, cols = 0, nnz = 0;
  std::vector<FormatPart> parts;
  int64_t num_tasks = 0;
  Tensor task_rows;  // int64 [num_tasks + 1]
  std::map<std::string, Tensor> arrays;  // format-level arrays bound by name ("coo_tasks")
  double inspect_ms = 0;

  int64_t slots() const;
  double padding_ratio() const;  // padding slots / all slots
  int64_t memory_bytes() const;  // every array of every part
  // Binds every part array and scalar, the task arrays and num_tasks (host arrays,
  // or device arrays by their device pointers).
  void bind(KernelArgs& args) const;
  // A copy whose arrays live on `device` (what a CUDA kernel in this format reads).
  InspectedFormat to(Device device) const;
};

// True when kernels in this format need inspected arrays at bind time.
bool needs_inspection(const FormatSpec& spec);
// Builds the format's arrays from A (int32 or int64 indices, sorted columns).
// `grain` is the number of slots a task aims at (the parallel granularity).
InspectedFormat inspect_format(const Graph& A, const FormatSpec& spec, int64_t grain);

}  // namespace strata::sc
