#include "sparse_compiler/passes/pipeline.h"

#include "sparse_compiler/passes/hoist_binary_search.h"
#include "sparse_compiler/passes/hoist_invariant_ifs.h"
#include "sparse_compiler/passes/lower_cross_thread_reduction.h"
#include "sparse_compiler/passes/lower_sparse_buffer.h"
#include "sparse_compiler/passes/lower_sparse_iter.h"
#include "sparse_compiler/passes/materialize_aux_buffers.h"
#include "sparse_compiler/passes/pass_log.h"
#include "sparse_compiler/passes/promote_registers.h"
#include "sparse_compiler/passes/rebase_loops.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/passes/unroll_loops.h"
#include "sparse_compiler/passes/vectorize_loops.h"

namespace strata::sc {

namespace {
Kernel to_positions(PassLog& log, const Kernel& k) {
  Kernel s = log.run("materialize_aux_buffers", k, materialize_aux_buffers);
  s = log.run("lower_sparse_iter", s, lower_sparse_iter);
  s = log.run("hoist_binary_search", s, hoist_binary_search);
  return s;
}
}  // namespace

Kernel lower_to_positions(const Kernel& stage1) {
  PassLog log;
  return to_positions(log, stage1);
}

Kernel lower_to_loops(const Kernel& stage1) {
  PassLog log;
  Kernel s = to_positions(log, stage1);
  s = log.run("lower_sparse_buffer", s, lower_sparse_buffer);
  s = log.run("simplify", s, [](const Kernel& k) { return simplify(k); });
  s = log.run("rebase_loops", s, rebase_loops);
  s = log.run("simplify", s, [](const Kernel& k) { return simplify(k); });
  s = log.run("hoist_invariant_ifs", s, hoist_invariant_ifs);
  return s;
}

Kernel lower_schedule(const Kernel& scheduled) {
  PassLog log;
  auto simp = [](const Kernel& k) { return simplify(k); };
  Kernel s = log.run("unroll_loops", scheduled, unroll_loops);
  s = log.run("simplify", s, simp);
  s = log.run("vectorize_loops", s, vectorize_loops);
  s = log.run("simplify", s, simp);
  s = log.run("lower_cross_thread_reduction", s, lower_cross_thread_reduction);
  s = log.run("promote_registers", s, promote_registers);
  return s;
}

}  // namespace strata::sc
