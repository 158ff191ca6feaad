#include "tests/sparse_compiler/gat_over_formats.h"

#include <algorithm>

#include "sparse_compiler/formats/format_schedule.h"
#include "sparse_compiler/passes/pipeline.h"
#include "tests/support/test_support.h"

namespace strata::sc {

GatOverFormats compile_gat_over_formats(const GatSpec& spec, const std::vector<std::string>& formats,
                                        const CpuKnobs& knobs) {
  GatOverFormats g;
  g.programs = {gat_score_program(spec)};
  for (const auto& k : edge_softmax_stage_programs(spec)) g.programs.push_back(k);
  g.programs.push_back(gat_aggregate_program(spec, false));
  g.programs.push_back(gat_sddmm_program(spec));
  std::vector<Kernel> lowered;
  for (const auto& f : formats)
    for (const auto& p : g.programs) {
      const FormatSpec format = FormatSpec::parse(f);
      g.loops.push_back(lower_to_loops(gat_program_over(p, format)));
      lowered.push_back(lower_schedule(schedule_gat_over_format_cpu(g.loops.back(), format, knobs)));
    }
  g.compiled = compile_cpu(lowered);
  return g;
}

void run_over_format(const Kernel& loops, const CompiledKernel* compiled, const InspectedFormat& parts,
                     KernelArgs args) {
  parts.bind(args);
  if (compiled) {
    std::vector<Tensor> workspaces;
    for (const auto& [param, size] : compiled->workspaces(args)) {
      workspaces.push_back(Tensor::zeros({std::max<int64_t>(size, 1)}, param.dtype));
      args.buffer(param.name, workspaces.back());
    }
    if (compiled->preprocess) compiled->run_preprocess(args);
    compiled->run(args);
  } else {
    Interpreter interp;
    args.bind(interp, loops);
    interp.run(loops);
  }
}

}  // namespace strata::sc
