// Golden tests, one per lowering pass: each pass's output on the test programs is
// compared with tests/sparse_compiler/golden/<pass>/<program>.txt (printer text).
// STRATA_UPDATE_GOLDEN=1 rewrites the files after an intentional change.
#include <gtest/gtest.h>

#include "core/rng.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/passes/hoist_binary_search.h"
#include "sparse_compiler/passes/lower_sparse_buffer.h"
#include "sparse_compiler/passes/lower_sparse_iter.h"
#include "sparse_compiler/passes/materialize_aux_buffers.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/passes/promote_registers.h"
#include "sparse_compiler/passes/rebase_loops.h"
#include "sparse_compiler/passes/simplify.h"
#include "sparse_compiler/passes/unroll_loops.h"
#include "sparse_compiler/passes/vectorize_loops.h"
#include "tests/sparse_compiler/test_programs.h"
#include "tests/support/golden.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

struct Program {
  std::string name;
  Kernel (*make)();
};
const std::vector<Program> kPrograms = {
    {"spmm_weighted_scaled", testing::spmm_weighted_scaled},
    {"sddmm_dot", testing::sddmm_dot},
    {"sddmm_add", testing::sddmm_add},
    {"sddmm_dot_fused", testing::sddmm_dot_fused},
    {"masked_gather", [] { return testing::masked_gather(false); }},
    {"masked_gather_fused", [] { return testing::masked_gather(true); }},
};

// The pipeline up to (not including) each pass, so each golden shows one pass.
Kernel before_lower_sparse_iter(const Kernel& k) { return materialize_aux_buffers(k); }
Kernel before_hoist(const Kernel& k) { return lower_sparse_iter(before_lower_sparse_iter(k)); }
Kernel before_flatten(const Kernel& k) { return hoist_binary_search(before_hoist(k)); }
Kernel before_simplify(const Kernel& k) { return lower_sparse_buffer(before_flatten(k)); }
Kernel before_rebase(const Kernel& k) { return simplify(before_simplify(k)); }

void golden(const std::string& pass, const std::string& program, const Kernel& k) {
  strata::testing::expect_golden("sparse_compiler/golden/" + pass + "/" + program + ".txt", to_string(k));
}

TEST(MaterializeAuxBuffers, Golden) {
  for (const auto& p : kPrograms) golden("materialize_aux_buffers", p.name, materialize_aux_buffers(p.make()));
}

TEST(LowerSparseIter, Golden) {
  for (const auto& p : kPrograms) golden("lower_sparse_iter", p.name, lower_sparse_iter(before_lower_sparse_iter(p.make())));
}

TEST(HoistBinarySearch, Golden) {
  for (const auto& p : kPrograms) golden("hoist_binary_search", p.name, hoist_binary_search(before_hoist(p.make())));
}

TEST(HoistBinarySearch, FusedRowSearchRunsOncePerGraph) {
  const Kernel k = hoist_binary_search(before_hoist(testing::sddmm_dot_fused()));
  ASSERT_TRUE(k.preprocess.defined());
  const std::string body = to_string(k.body), pre = to_string(k.preprocess);
  EXPECT_EQ(body.find("upper_bound"), std::string::npos) << body;
  EXPECT_NE(pre.find("upper_bound"), std::string::npos) << pre;
  const Param* mid = k.find_param("mid_0");
  ASSERT_NE(mid, nullptr);
  EXPECT_EQ(mid->role, ParamRole::Workspace);
  EXPECT_EQ(to_string(mid->size), "nnz");
}

TEST(HoistBinarySearch, CoordinateSearchThroughFusedRowIsHoisted) {
  const Kernel k = hoist_binary_search(before_hoist(testing::masked_gather(true)));
  EXPECT_EQ(to_string(k.body).find("find("), std::string::npos) << to_string(k);
  EXPECT_NE(k.find_param("mid_1"), nullptr) << to_string(k);
}

TEST(HoistBinarySearch, SearchUnderARaggedLoopStaysInPlace) {
  // j's extent depends on i, so the search has no fixed-size home: left inline.
  const Kernel k = hoist_binary_search(before_hoist(testing::masked_gather(false)));
  EXPECT_NE(to_string(k.body).find("find("), std::string::npos);
  EXPECT_FALSE(k.preprocess.defined());
}

TEST(LowerSparseBuffer, Golden) {
  for (const auto& p : kPrograms) golden("lower_sparse_buffer", p.name, lower_sparse_buffer(before_flatten(p.make())));
}

TEST(Simplify, Golden) {
  for (const auto& p : kPrograms) golden("simplify", p.name, simplify(before_simplify(p.make())));
}

TEST(Simplify, FoldsIntegerArithmeticButKeepsFloatsIeee) {
  Expr i = var("i"), k = var("k");
  EXPECT_TRUE(is_zero(simplify(i - i)));
  EXPECT_EQ(to_string(simplify((i + k) * 2 - k - i)), "i + k");
  // inf - inf and NaN - NaN are NaN, inf * 0 is NaN: none of these is 0.
  Expr x = load(Type::f32(), "X", i);
  EXPECT_EQ(to_string(simplify(x - x)), "X[i] - X[i]");
  EXPECT_EQ(to_string(simplify(x * make_float(0.0))), "X[i] * 0.0f");
  EXPECT_EQ(to_string(simplify(max(x, x))), "X[i]");  // max(x, x) is x for every x, NaN included
}

TEST(RebaseLoops, Golden) {
  for (const auto& p : kPrograms) golden("rebase_loops", p.name, simplify(rebase_loops(before_rebase(p.make()))));
}

// The codegen-preparation passes act on a scheduled kernel.
Kernel scheduled_spmm() {
  SpmmSpec s;
  s.feat = 40;
  s.weighted = true;
  CpuKnobs k;
  k.vector_lanes = 16;
  k.prefetch = 8;
  return schedule_spmm_cpu(lower_to_loops(spmm_program(s)), k);
}
Kernel scheduled_sddmm() {
  CpuKnobs k;
  k.vector_lanes = 16;
  return schedule_sddmm_cpu(lower_to_loops(sddmm_program({SddmmKind::Dot, 24, DType::I32})), k);
}

TEST(UnrollLoops, Golden) {
  golden("unroll_loops", "spmm_f40", unroll_loops(scheduled_spmm()));
  golden("unroll_loops", "sddmm_f24", unroll_loops(scheduled_sddmm()));
}

TEST(VectorizeLoops, Golden) {
  golden("vectorize_loops", "spmm_f40", vectorize_loops(simplify(unroll_loops(scheduled_spmm()))));
  golden("vectorize_loops", "sddmm_f24", vectorize_loops(simplify(unroll_loops(scheduled_sddmm()))));
}

TEST(PromoteRegisters, Golden) {
  golden("promote_registers", "spmm_f40",
         promote_registers(simplify(vectorize_loops(simplify(unroll_loops(scheduled_spmm()))))));
  golden("promote_registers", "sddmm_f24",
         promote_registers(simplify(vectorize_loops(simplify(unroll_loops(scheduled_sddmm()))))));
}

TEST(PassChecks, PassesRejectTheWrongStage) {
  const Kernel stage1 = testing::sddmm_dot();
  EXPECT_THROW(lower_sparse_buffer(stage1), InternalError);
  EXPECT_THROW(hoist_binary_search(stage1), InternalError);
  EXPECT_THROW(vectorize_loops(stage1), InternalError);
  try {
    rebase_loops(stage1);
    FAIL() << "rebase_loops accepted a stage I kernel";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("rebase_loops expects a stage III (loops) kernel"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::sc

namespace strata::sc {
namespace {

// End to end through hoisting, search and guards: O[e] = B at A's coordinates.
TEST(CoordinateSearch, MaskedGatherMatchesDenseLookupInInterpreterAndGeneratedCode) {
  ::strata::testing::RandomGraphSpec sa, sb;
  sa.rows = sb.rows = 60;
  sa.cols = sb.cols = 50;
  sa.avg_degree = 8;
  sb.avg_degree = 10;
  sa.seed = 1;
  sb.seed = 2;
  const Graph A = ::strata::testing::random_graph(sa), B0 = ::strata::testing::random_graph(sb);
  Rng rng(4);
  const Graph B = B0.with_values(Tensor::uniform({B0.nnz()}, -1, 1, rng));
  // Dense lookup.
  Tensor want = Tensor::zeros({A.nnz()}, DType::F32);
  for (int64_t i = 0; i < A.num_rows(); ++i)
    for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p)
      for (int64_t q = B.row_begin(i); q < B.row_end(i); ++q)
        if (B.column(q) == A.column(p)) want.data<float>()[p] = B.values().data<float>()[q];
  for (bool fused : {false, true}) {
    const Kernel k = lower_to_loops(testing::masked_gather(fused));
    auto bind = [&](KernelArgs& a, Tensor& O) {
      a.buffer("A_indptr", A.indptr()).buffer("A_indices", A.indices());
      a.buffer("B_indptr", B.indptr()).buffer("B_indices", B.indices()).buffer("B", B.values()).buffer("O", O);
      a.scalar("m", A.num_rows()).scalar("n", A.num_cols()).scalar("nnz", A.nnz()).scalar("nnz_b", B.nnz());
    };
    Tensor O = Tensor::full({A.nnz()}, DType::F32, NAN);
    KernelArgs a;
    bind(a, O);
    Interpreter interp;
    a.bind(interp, k);
    interp.run(k);
    EXPECT_TRUE(all_close(O, want).ok) << (fused ? "fused" : "unfused") << " interpreter: " << all_close(O, want).str();
    // Generated code, with the preprocess run once.
    CompiledKernel c = compile_cpu({k}).front();
    Tensor O2 = Tensor::full({A.nnz()}, DType::F32, NAN);
    KernelArgs g;
    bind(g, O2);
    std::vector<Tensor> ws;
    for (const auto& [p, size] : c.workspaces(g)) {
      ws.push_back(Tensor::zeros({std::max<int64_t>(size, 1)}, p.dtype));
      g.buffer(p.name, ws.back());
    }
    EXPECT_EQ(ws.size(), fused ? 2u : 0u);
    c.run_preprocess(g);
    c.run(g);
    EXPECT_TRUE(all_close(O2, want).ok) << (fused ? "fused" : "unfused") << " generated: " << all_close(O2, want).str();
  }
}

}  // namespace
}  // namespace strata::sc
