// GAT's single-pass programs (score, the four edge-softmax stages, aggregation, the
// attention gradient) decomposed into formats, lowered, scheduled and compiled in one
// batch, and a runner for one of them over a format's inspected parts: shared by the
// tests that run them (attention_test: values on every format; numeric_extremes_test:
// infinite features under padding).
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/attention.h"

namespace strata::sc {

struct GatOverFormats {
  std::vector<Kernel> programs;          // the single-pass programs, in run order
  std::vector<Kernel> loops;             // per (format, program): lowered to loops
  std::vector<CompiledKernel> compiled;  // per (format, program): scheduled and compiled
  size_t at(size_t format, size_t program) const { return format * programs.size() + program; }
};

GatOverFormats compile_gat_over_formats(const GatSpec& spec, const std::vector<std::string>& formats,
                                        const CpuKnobs& knobs);

// Runs `loops` in the interpreter, or `compiled` when given, with `args` and the
// format's arrays (and the compiled kernel's workspaces) bound.
void run_over_format(const Kernel& loops, const CompiledKernel* compiled, const InspectedFormat& parts,
                     KernelArgs args);

}  // namespace strata::sc
