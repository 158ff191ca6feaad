// The generated CUDA C itself, run without a GPU: compiled for the host against the
// SIMT emulation of cuda_host_emulation.h (one OS thread per GPU thread, shuffles
// and barriers among real threads), every kernel shape the default and extra knobs
// produce is checked against the dense reference. This checks the emitter's thread
// mapping (write predicates, lane registers, warp reductions, guards, fused parts)
// that the interpreter, running bound loops serially, cannot.
#include <gtest/gtest.h>

#include "core/rng.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "tests/sparse_compiler/cuda_host_emulation.h"
#include "tests/sparse_compiler/cuda_test_support.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

Graph small_graph(bool int64, uint64_t seed) {
  ::strata::testing::RandomGraphSpec s;
  s.rows = 45;
  s.cols = 37;
  s.avg_degree = 3;
  s.empty_row_fraction = 0.2;
  s.long_row_length = 30;
  s.int64_indices = int64;
  s.seed = seed;
  return ::strata::testing::random_graph(s);
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  CloseReport r = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(r.ok) << what << ": " << r.str();
}

TEST(CudaHostEmulation, SpmmKernelsComputeTheReference) {
  struct Case {
    cuda_testing::SpmmVariant v;
    int64_t F;
    GpuSpmmKnobs knobs;
    bool int64;
  };
  std::vector<Case> cases;
  for (bool int64 : {false, true})
    for (const auto& v : cuda_testing::kSpmmVariants)
      for (int64_t F : {1, 17, 64}) {
        const SpmmSpec spec = cuda_testing::spmm_spec(v, F, int64 ? DType::I64 : DType::I32);
        cases.push_back({v, F, default_gpu_spmm_knobs(spec), int64});
      }
  const auto& w = cuda_testing::kSpmmVariants[3];  // weighted and scaled
  for (const GpuSpmmKnobs& k : {GpuSpmmKnobs{8, 32, 2, 3, false}, GpuSpmmKnobs{8, 32, 2, 3, true},
                                GpuSpmmKnobs{3, 5, 1, 1, false}, GpuSpmmKnobs{2, 16, 4, 1, false}})
    cases.push_back({w, 64, k, false});
  cases.push_back({cuda_testing::kSpmmVariants[0], 256, GpuSpmmKnobs{4, 32, 4, 1, false}, false});  // y tiles
  std::vector<Kernel> lowered;
  for (const auto& c : cases)
    lowered.push_back(lower_spmm_gpu(cuda_testing::spmm_spec(c.v, c.F, c.int64 ? DType::I64 : DType::I32), c.knobs));
  const cuda_testing::HostEmulatedCuda emu(emit_cuda_source(lowered));
  Rng rng(12);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Graph g0 = small_graph(c.int64, 5 + i % 3);
    const Graph g = g0.with_values(Tensor::uniform({g0.nnz()}, -1, 1, rng));
    cuda_testing::SpmmInputs in(g, c.v, c.F, rng);
    Tensor Y = Tensor::full({g.num_rows(), c.F}, DType::F32, NAN);
    KernelArgs a;
    a.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices()).buffer("X", in.X).buffer("Y", Y);
    a.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
    const Kernel& k = emu.source().kernels[i].kernel;
    if (k.find_param("A")) a.buffer("A", g.values());
    if (k.find_param("row_scale")) a.buffer("row_scale", in.kernel_row_scale);
    if (k.find_param("col_scale")) a.buffer("col_scale", in.col_scale);
    emu.run(i, a);
    expect_close(Y, in.reference(g), fmt::format("{} F={} {} {}", c.v.name, c.F, c.knobs.str(), c.int64 ? "int64" : "int32"));
  }
}

TEST(CudaHostEmulation, SddmmKernelsComputeTheReference) {
  std::vector<std::pair<SddmmSpec, GpuSddmmKnobs>> cases;
  for (DType idt : {DType::I32, DType::I64}) {
    for (int64_t F : {1, 3, 17, 32, 64}) {
      const SddmmSpec spec{SddmmKind::Dot, F, idt};
      cases.emplace_back(spec, default_gpu_sddmm_knobs(spec));
    }
    for (int64_t H : {1, 5}) {
      const SddmmSpec spec{SddmmKind::Add, H, idt};
      cases.emplace_back(spec, default_gpu_sddmm_knobs(spec));
    }
  }
  cases.emplace_back(SddmmSpec{SddmmKind::Dot, 64, DType::I32}, GpuSddmmKnobs{3, 8, 2});
  cases.emplace_back(SddmmSpec{SddmmKind::Dot, 100, DType::I32}, GpuSddmmKnobs{2, 32, 1});
  std::vector<Kernel> lowered;
  for (const auto& [spec, knobs] : cases) lowered.push_back(lower_sddmm_gpu(spec, knobs));
  const cuda_testing::HostEmulatedCuda emu(emit_cuda_source(lowered));
  Rng rng(9);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [spec, knobs] = cases[i];
    const Graph g = small_graph(spec.index_dtype == DType::I64, 40 + i);
    const bool dot = spec.kind == SddmmKind::Dot;
    const Tensor X = Tensor::uniform({g.num_rows(), spec.feat}, -1, 1, rng);
    const Tensor Y = Tensor::uniform({g.num_cols(), spec.feat}, -1, 1, rng);
    Tensor O = dot ? Tensor::full({g.nnz()}, DType::F32, NAN) : Tensor::full({g.nnz(), spec.feat}, DType::F32, NAN);
    KernelArgs a;
    a.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices());
    a.buffer(dot ? "X" : "XL", X).buffer(dot ? "Y" : "XR", Y).buffer("O", O);
    a.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
    emu.run(i, a);
    expect_close(O, dot ? ::strata::testing::reference_sddmm_dot(g, X, Y) : ::strata::testing::reference_sddmm_add(g, X, Y),
                 fmt::format("{} {}", spec.name(), knobs.str()));
  }
}

// Three independent parts of different shapes fused into one launch (what the parts
// of a decomposed format become): a 1-D part over blocks of 32 threads, a part with
// a blockIdx.y dimension and 16 threads, and an unbound part. Each must run exactly
// once per iteration of its own loops, whatever the launch's grid and block.
TEST(CudaHostEmulation, HeterogeneousPartsShareOneLaunch) {
  Kernel k;
  k.name = "three_parts";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32),          Param::buffer("Y1", DType::F32, ParamRole::Output),
              Param::buffer("Y2", DType::F32, ParamRole::Output), Param::buffer("Z", DType::F32, ParamRole::Output),
              Param::scalar("m"),                      Param::scalar("n")};
  const Expr b = var("b"), t = var("t"), c = var("c"), y = var("y"), u = var("u");
  const Expr i = add(mul(b, make_int(32)), t);
  Stmt p1 = for_loop("b", make_int(0), div(add(var("m"), make_int(31)), make_int(32)), ForKind::GpuBlockX,
                     for_loop("t", make_int(0), make_int(32), ForKind::GpuThreadX,
                              if_then_else(lt(i, var("m")),
                                           store("Y1", i, mul(load(Type::f32(), "X", i), make_float(2))))));
  const Expr at = add(mul(add(mul(c, make_int(3)), y), make_int(16)), u);
  Stmt p2 = for_loop("c", make_int(0), var("n"), ForKind::GpuBlockX,
                     for_loop("y", make_int(0), make_int(3), ForKind::GpuBlockY,
                              for_loop("u", make_int(0), make_int(16), ForKind::GpuThreadX,
                                       store("Y2", at, cast(Type::f32(), add(add(c, y), u))))));
  Stmt p3 = store("Z", make_int(0), add(load(Type::f32(), "Z", make_int(0)), make_float(1)));  // once, not per thread
  k.body = seq({p1, p2, p3});
  const CudaSource src = emit_cuda_source({k});
  ASSERT_EQ(src.kernels[0].body.size(), 1u) << "independent parts share one launch";
  const CudaLaunch& L = src.kernels[0].body[0];
  EXPECT_EQ(L.parts.size(), 3u);
  EXPECT_EQ(L.block, (std::array<int64_t, 3>{32, 1, 1}));
  const cuda_testing::HostEmulatedCuda emu(src);
  const int64_t m = 70, n = 5;
  Tensor X = Tensor::arange(m, DType::F32), Y1 = Tensor::full({m}, DType::F32, NAN);
  Tensor Y2 = Tensor::full({n * 3 * 16}, DType::F32, NAN), Z = Tensor::zeros({1}, DType::F32);
  KernelArgs a;
  a.buffer("X", X).buffer("Y1", Y1).buffer("Y2", Y2).buffer("Z", Z).scalar("m", m).scalar("n", n);
  emu.run(0, a);
  for (int64_t q = 0; q < m; ++q) ASSERT_EQ(Y1.at<float>(q), 2.0f * static_cast<float>(q)) << q;
  for (int64_t cc = 0; cc < n; ++cc)
    for (int64_t yy = 0; yy < 3; ++yy)
      for (int64_t uu = 0; uu < 16; ++uu)
        ASSERT_EQ(Y2.at<float>((cc * 3 + yy) * 16 + uu), static_cast<float>(cc + yy + uu));
  EXPECT_EQ(Z.at<float>(0), 1.0f) << "an unbound part's write happens once in the whole launch";
}

TEST(CudaHostEmulation, SharedMemoryTileWithBarrier) {
  const cuda_testing::HostEmulatedCuda emu(emit_cuda_source({cuda_testing::shared_tile_reverse()}));
  Tensor X = Tensor::arange(4 * 64, DType::F32), Y = Tensor::zeros({4 * 64}, DType::F32);
  KernelArgs a;
  a.buffer("X", X).buffer("Y", Y).scalar("nb", 4);
  emu.run(0, a);
  for (int64_t i = 0; i < 4 * 64; ++i) ASSERT_EQ(Y.at<float>(i), static_cast<float>(i / 64 * 64 + 63 - i % 64)) << i;
}

}  // namespace
}  // namespace strata::sc
