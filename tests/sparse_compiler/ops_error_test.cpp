// The op front doors reject bad arguments with a message that names the argument
// and what was expected; STRATA_DUMP_IR and STRATA_TIME_PASSES instrument lowering.
#include <gtest/gtest.h>

#include <cstdlib>

#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/passes/pipeline.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

Graph small() {
  testing::RandomGraphSpec s;
  s.rows = 10;
  s.cols = 12;
  return testing::random_graph(s);
}

TEST(OpsErrorTest, SpmmNamesTheOffendingArgument) {
  const Graph g = small();
  SpmmOptions o;
  o.feat = 8;
  o.backend = Backend::Reference;
  SpmmKernel k(g, o);
  testing::expect_user_error([&] { k.run(Tensor::zeros({10, 8}, DType::F32)); },
                             {"spmm input X", "expected shape [12, 8]", "[10, 8]"});
  testing::expect_user_error([&] { k.run(Tensor::zeros({12, 8}, DType::F64)); }, {"spmm input X", "expected dtype float32"});
  Tensor X = Tensor::zeros({12, 8}, DType::F32), Y = Tensor::zeros({10, 4}, DType::F32);
  testing::expect_user_error([&] { k.run_into(X, Y); }, {"spmm output Y", "expected shape [10, 8]"});
  SpmmOptions w = o;
  w.weighted = true;
  SpmmKernel kw(g, w);
  testing::expect_user_error([&] { kw.run(X); }, {"weighted aggregation needs edge values"});
  testing::expect_user_error([&] { kw.run(X, Tensor::zeros({3}, DType::F32)); }, {"spmm edge values", "expected shape"});
  SpmmOptions bad = o;
  bad.feat = 0;
  testing::expect_user_error([&] { SpmmKernel(g, bad); }, {"feature size must be at least 1, got 0"});
  SpmmOptions scale = o;
  scale.row_scale = Tensor::zeros({3}, DType::F32);
  testing::expect_user_error([&] { SpmmKernel(g, scale); }, {"spmm row_scale", "expected shape [10]"});
  testing::expect_user_error([] { parse_backend("fast", "runtime.backend"); },
                             {"runtime.backend", "unknown backend 'fast'", "generated, reference, interpreter or cusparse"});
}

// SpmmSpec::from_name inverts name() (runs record program names; `strata compile
// --role` rebuilds the program from one), and refuses anything else.
TEST(SpmmSpecName, FromNameInvertsNameForEveryVariant) {
  for (int64_t feat : {1, 7, 64, 1000})
    for (DType idt : {DType::I32, DType::I64})
      for (int bits = 0; bits < 8; ++bits) {
        SpmmSpec s;
        s.feat = feat;
        s.index_dtype = idt;
        s.weighted = bits & 1;
        s.row_scale = bits & 2;
        s.col_scale = bits & 4;
        const std::optional<SpmmSpec> back = SpmmSpec::from_name(s.name());
        ASSERT_TRUE(back.has_value()) << s.name();
        EXPECT_EQ(back->name(), s.name());
        EXPECT_EQ(back->feat, feat);
        EXPECT_EQ(back->index_dtype, idt);
        EXPECT_EQ(back->weighted, s.weighted);
        EXPECT_EQ(back->row_scale, s.row_scale);
        EXPECT_EQ(back->col_scale, s.col_scale);
      }
  for (const char* bad : {"", "spmm_f0_i32", "spmm_f32_i16", "spmm_f32_i32_cs_rs", "sddmm_dot_f32_i32",
                          "spmm_f32_i32_rs_l16_g4096_p0", "spmm_f32"})
    EXPECT_FALSE(SpmmSpec::from_name(bad).has_value()) << bad;
}

TEST(OpsErrorTest, SddmmNamesTheOffendingArgument) {
  const Graph g = small();
  SddmmKernel k(g, {SddmmKind::Dot, 4, Backend::Reference, std::nullopt});
  testing::expect_user_error([&] { k.run(Tensor::zeros({10, 4}, DType::F32), Tensor::zeros({10, 4}, DType::F32)); },
                             {"sddmm input Y", "expected shape [12, 4]"});
  SddmmKernel add(g, {SddmmKind::Add, 2, Backend::Reference, std::nullopt});
  testing::expect_user_error([&] { add.run(Tensor::zeros({10, 3}, DType::F32), Tensor::zeros({12, 2}, DType::F32)); },
                             {"sddmm input XL", "expected shape [10, 2]"});
  // A plan that reads panels takes X and Y in that layout: a row-major operand is
  // refused, naming the layout and the storage shape it expects.
  KernelPlan panels = SddmmKernel::default_plan();
  panels.x_layout = DenseLayout::panel(2);
  SddmmKernel paneled(g, {SddmmKind::Dot, 4, Backend::Reference, panels});
  testing::expect_user_error(
      [&] {
        paneled.run(Tensor::zeros({10, 4}, DType::F32), Tensor::zeros({2, 12, 2}, DType::F32));
      },
      {"sddmm input X (in the plan's layout panel:2)", "expected 3 dimension(s)"});
  testing::expect_user_error(
      [&] {
        paneled.run(Tensor::zeros({2, 10, 2}, DType::F32), Tensor::zeros({2, 10, 2}, DType::F32));
      },
      {"sddmm input Y (in the plan's layout panel:2)", "expected shape [2, 12, 2]"});
  // Per-head sums read rows on every backend (the reference would read a panel as rows).
  testing::expect_user_error(
      [&] {
        SddmmKernel(g, {SddmmKind::Add, 4, Backend::Reference, panels});
      },
      {"sddmm plan: X and Y layout panel:2 applies to dot products, not sddmm_add_h4_i32"});
  panels.x_layout = DenseLayout::panel(3);
  testing::expect_user_error(
      [&] {
        SddmmKernel(g, {SddmmKind::Dot, 4, Backend::Reference, panels});
      },
      {"sddmm plan", "layout panel:3 needs a feature size divisible by 3, got 4"});
}

TEST(PassLog, DumpIrPrintsEveryPassThatChangedTheKernel) {
  setenv("STRATA_DUMP_IR", "1", 1);
  setenv("STRATA_TIME_PASSES", "1", 1);
  ::testing::internal::CaptureStderr();
  SpmmSpec s;
  s.feat = 4;
  lower_to_loops(spmm_program(s));
  const std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("STRATA_DUMP_IR");
  unsetenv("STRATA_TIME_PASSES");
  EXPECT_NE(err.find("--- after lower_sparse_iter ---"), std::string::npos) << err;
  EXPECT_NE(err.find("kernel spmm_f4_i32 [stage II (position)]"), std::string::npos);
  EXPECT_NE(err.find("--- after lower_sparse_buffer ---"), std::string::npos);
  // hoist_binary_search changes nothing for CSR SpMM, so it is not dumped...
  EXPECT_EQ(err.find("--- after hoist_binary_search ---"), std::string::npos);
  // ... but it is timed.
  EXPECT_NE(err.find("pass times"), std::string::npos);
  EXPECT_NE(err.find("hoist_binary_search"), std::string::npos);
}

}  // namespace
}  // namespace strata::sc
