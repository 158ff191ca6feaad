#include <gtest/gtest.h>

#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/passes/pipeline.h"

namespace strata::sc {
namespace {

TEST(Scratch, Print) {
  SddmmSpec s;
  s.feat = 40;
  CpuKnobs kn;
  kn.prefetch = 16;
  Kernel k = schedule_sddmm_cpu(lower_to_loops(sddmm_program(s)), kn);
  std::cout << to_string(k) << "\n";
  Kernel low = lower_schedule(k);
  std::cout << to_string(low) << "\n";
  std::cout << emit_cpu_source({low}) << "\n";
}

}  // namespace
}  // namespace strata::sc
