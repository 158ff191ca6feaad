// The CUDA backend without a GPU: GPU schedules keep the programs' meaning (the
// interpreter runs the bound loops serially and must match the dense reference),
// the emitter's launch plans (geometry, horizontal fusion, ordered launches for
// dependent parts), golden CUDA source, the emitter's refusals, and the clear
// error a CUDA request gets where the backend cannot run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/codegen/cuda_kernel.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/schedule.h"
#include "tests/sparse_compiler/cuda_test_support.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/sparse_compiler/test_programs.h"
#include "tests/support/golden.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

// Small graphs the interpreter runs quickly, with the edge cases that matter for
// guards: empty rows, a row far longer than the rest, one node, no edges.
std::vector<std::pair<std::string, Graph>> small_graphs(bool int64) {
  std::vector<std::pair<std::string, Graph>> out;
  ::strata::testing::RandomGraphSpec s;
  s.rows = 45;
  s.cols = 37;
  s.avg_degree = 3;
  s.empty_row_fraction = 0.2;
  s.long_row_length = 30;
  s.int64_indices = int64;
  s.seed = 21;
  out.emplace_back("random", ::strata::testing::random_graph(s));
  CooOptions o;
  o.force_int64 = int64;
  out.emplace_back("single_node", Graph::from_coo(1, 1, Tensor::from_list<int64_t>({0}),
                                                  Tensor::from_list<int64_t>({0}), o));
  out.emplace_back("no_edges", Graph::from_coo(7, 5, Tensor::arange(0), Tensor::arange(0), o));
  return out;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  CloseReport r = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(r.ok) << what << ": " << r.str();
}

TEST(GpuSchedule, SpmmMatchesDenseReferenceWhenRunSerially) {
  const std::vector<GpuSpmmKnobs> knob_sets = {
      {},                        // replaced by the defaults per F below
      {3, 5, 1, 1, false},       // lanes that do not divide F: guarded feature tiles
      {2, 4, 2, 3, false},       // row parts with atomic write-back
      {4, 8, 1, 2, true},        // row parts, deterministic
  };
  Rng rng(31);
  for (bool int64 : {false, true}) {
    for (const auto& [name, g0] : small_graphs(int64)) {
      const Graph g = g0.with_values(Tensor::uniform({g0.nnz()}, -1, 1, rng));
      for (const auto& v : cuda_testing::kSpmmVariants) {
        for (int64_t F : {1, 6, 17, 64}) {
          for (size_t k = 0; k < knob_sets.size(); ++k) {
            SpmmSpec spec = cuda_testing::spmm_spec(v, F, g.index_dtype());
            GpuSpmmKnobs knobs = k == 0 ? default_gpu_spmm_knobs(spec) : knob_sets[k];
            if (F % knobs.coarsen) knobs.coarsen = 1;
            const Kernel lowered = lower_spmm_gpu(spec, knobs);
            cuda_testing::SpmmInputs in(g, v, F, rng);
            expect_close(cuda_testing::interpret_spmm(lowered, g, in), in.reference(g),
                         fmt::format("{} {} F={} {} {}", name, v.name, F, knobs.str(), int64 ? "int64" : "int32"));
          }
        }
      }
    }
  }
}

TEST(GpuSchedule, ScheduledAndLoweredSpmmAgree) {
  // The schedule alone (bound loops, guards, cache_write) before lower_schedule's
  // vectorization and register promotion.
  Rng rng(5);
  const Graph g = small_graphs(false)[0].second;
  for (int64_t F : {8, 33}) {
    SpmmSpec spec = cuda_testing::spmm_spec(cuda_testing::kSpmmVariants[0], F, DType::I32);
    cuda_testing::SpmmInputs in(g, cuda_testing::kSpmmVariants[0], F, rng);
    const GpuSpmmKnobs knobs{2, 4, F % 2 ? 1 : 2, 2, true};
    expect_close(cuda_testing::interpret_spmm(schedule_spmm_gpu(spec, knobs), g, in), in.reference(g),
                 "scheduled F=" + std::to_string(F));
  }
}

TEST(GpuSchedule, SddmmMatchesDenseReferenceWhenRunSerially) {
  Rng rng(41);
  for (bool int64 : {false, true}) {
    for (const auto& [name, g] : small_graphs(int64)) {
      for (int64_t F : {1, 3, 8, 17, 64}) {
        const SddmmSpec spec{SddmmKind::Dot, F, g.index_dtype()};
        std::vector<GpuSddmmKnobs> knob_sets = {default_gpu_sddmm_knobs(spec), {3, 4, 1}, {2, 8, F % 2 ? 1 : 2}};
        for (const auto& knobs : knob_sets) {
          Tensor X = Tensor::uniform({g.num_rows(), F}, -1, 1, rng);
          Tensor Y = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
          expect_close(cuda_testing::interpret_sddmm(lower_sddmm_gpu(spec, knobs), g, X, Y, true),
                       ::strata::testing::reference_sddmm_dot(g, X, Y),
                       fmt::format("{} dot F={} {}", name, F, knobs.str()));
        }
      }
      for (int64_t H : {1, 3, 8}) {
        const SddmmSpec spec{SddmmKind::Add, H, g.index_dtype()};
        for (const auto& knobs : {default_gpu_sddmm_knobs(spec), GpuSddmmKnobs{5, 2, 1}}) {
          Tensor XL = Tensor::uniform({g.num_rows(), H}, -1, 1, rng);
          Tensor XR = Tensor::uniform({g.num_cols(), H}, -1, 1, rng);
          expect_close(cuda_testing::interpret_sddmm(lower_sddmm_gpu(spec, knobs), g, XL, XR, false),
                       ::strata::testing::reference_sddmm_add(g, XL, XR),
                       fmt::format("{} add H={} {}", name, H, knobs.str()));
        }
      }
    }
  }
}

TEST(GpuSchedule, SearchSpacesHoldOnlyValidKnobs) {
  for (int64_t F : {1, 17, 32, 64, 257}) {
    SpmmSpec spec;
    spec.feat = F;
    const auto space = gpu_spmm_search_space(spec);
    EXPECT_GE(space.size(), 3u) << "F=" << F;
    for (const auto& k : space) {
      EXPECT_EQ(F % k.coarsen, 0) << k.str();
      EXPECT_LE(k.lanes * k.rows_per_block, 1024) << k.str();
      EXPECT_NO_THROW(schedule_spmm_gpu(spec, k)) << k.str();
    }
    const SddmmSpec sd{SddmmKind::Dot, F, DType::I32};
    const auto sspace = gpu_sddmm_search_space(sd);
    EXPECT_GE(sspace.size(), 2u) << "F=" << F;
    for (const auto& k : sspace) EXPECT_NO_THROW(schedule_sddmm_gpu(sd, k)) << k.str();
  }
}

TEST(GpuScheduleErrorTest, KnobsThatDoNotFitAreRefusedByName) {
  SpmmSpec spec;
  spec.feat = 17;
  ::strata::testing::expect_user_error([&] { schedule_spmm_gpu(spec, {8, 32, 2, 1, false}); },
                                       {"coarsen = 2", "divide the feature size 17"});
  ::strata::testing::expect_user_error([&] { schedule_spmm_gpu(spec, {64, 32, 1, 1, false}); },
                                       {"rows_per_block = 64", "1024 threads"});
  ::strata::testing::expect_user_error([&] { schedule_sddmm_gpu({SddmmKind::Dot, 64, DType::I32}, {8, 24, 1}); },
                                       {"lanes = 24", "power of two"});
}

TEST(CudaEmitter, SpmmLaunchGeometryComesFromTheBoundLoops) {
  SpmmSpec spec;
  spec.feat = 256;
  const GpuSpmmKnobs knobs{4, 32, 4, 1, false};  // 256 = 2 tiles of 32 lanes x 4
  const CudaSource src = emit_cuda_source({lower_spmm_gpu(spec, knobs)});
  ASSERT_EQ(src.kernels.size(), 1u);
  const CudaKernelPlan& plan = src.kernels[0];
  EXPECT_TRUE(plan.preprocess.empty());
  ASSERT_EQ(plan.body.size(), 1u);
  const CudaLaunch& L = plan.body[0];
  EXPECT_EQ(L.block, (std::array<int64_t, 3>{32, 4, 1}));
  ASSERT_EQ(L.parts.size(), 1u);
  EXPECT_EQ(to_string(L.parts[0].x), "(m + 3) / 4");
  EXPECT_EQ(to_string(L.parts[0].y), "2");
  EXPECT_FALSE(L.parts[0].z.defined());
  // Graph sizes are run-time values; block sizes and F are compiled in.
  KernelArgs a;
  a.scalar("m", 1001).scalar("n", 5).scalar("nnz", 7);
  EXPECT_EQ(evaluate_scalar_expr(plan.kernel, L.parts[0].x, a), 251);
  EXPECT_NE(src.source.find("__launch_bounds__(128)"), std::string::npos);
  EXPECT_NE(src.source.find("strata_vload<float, 4>"), std::string::npos) << "coarsened loads are vector loads";
  EXPECT_EQ(L.aligned_buffers, (std::map<std::string, int64_t>{{"X", 16}, {"Y", 16}}));
}

TEST(CudaEmitter, RowPartsFuseIntoOneLaunchWithAtomicsOrRunInOrderWithout) {
  SpmmSpec spec;
  spec.feat = 64;
  {
    const CudaSource src = emit_cuda_source({lower_spmm_gpu(spec, {8, 32, 2, 3, false})});
    const auto& body = src.kernels[0].body;
    ASSERT_EQ(body.size(), 2u) << "zeroing Y, then the three parts in one launch";
    EXPECT_EQ(body[0].parts.size(), 1u);
    EXPECT_EQ(body[1].parts.size(), 3u);
    EXPECT_NE(src.source.find("strata_atomic_add(&Y["), std::string::npos);
    EXPECT_NE(src.source.find("strata_bx -= strata_blocks"), std::string::npos);
  }
  {
    const CudaSource src = emit_cuda_source({lower_spmm_gpu(spec, {8, 32, 2, 3, true})});
    const auto& body = src.kernels[0].body;
    EXPECT_EQ(body.size(), 3u) << "deterministic: one launch per part, in order";
    for (const auto& L : body) EXPECT_EQ(L.parts.size(), 1u);
    const std::string kernels = src.source.substr(src.source.find("// kernel "));
    EXPECT_EQ(kernels.find("strata_atomic_add(&"), std::string::npos) << "no atomics in deterministic mode";
  }
}

TEST(CudaEmitter, SddmmPreprocessRunsAsItsOwnLaunchAndLanesReduceByShuffles) {
  const CudaSource src = emit_cuda_source({lower_sddmm_gpu({SddmmKind::Dot, 128, DType::I32}, {8, 32, 4})});
  const CudaKernelPlan& plan = src.kernels[0];
  ASSERT_EQ(plan.preprocess.size(), 1u);
  EXPECT_EQ(plan.preprocess[0].block, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(to_string(plan.preprocess[0].parts[0].x), "(nnz + 255) / 256");
  ASSERT_EQ(plan.body.size(), 1u);
  EXPECT_EQ(plan.body[0].block, (std::array<int64_t, 3>{32, 8, 1}));
  EXPECT_NE(src.source.find("strata_warp_reduce_add<32>("), std::string::npos);
  EXPECT_NE(src.source.find("if (threadIdx.x == 0) O["), std::string::npos)
      << "the edge's value is written once per edge, not once per lane";
}

TEST(CudaEmitter, DependentPreprocessPartsRunInOrder) {
  // mid_1's search reads mid_0: the two cannot share a launch.
  Kernel k = bind_preprocess_gpu(lower_to_loops(testing::masked_gather(true)));
  const CudaSource src = emit_cuda_source({lower_schedule(k)});
  EXPECT_EQ(src.kernels[0].preprocess.size(), 2u);
  // Its body binds nothing: one thread in one block runs it, serially.
  ASSERT_EQ(src.kernels[0].body.size(), 1u);
  EXPECT_EQ(src.kernels[0].body[0].block, (std::array<int64_t, 3>{1, 1, 1}));
}

TEST(CudaEmitter, SharedMemoryStagingWithBarriers) {
  const Kernel k = cuda_testing::shared_tile_reverse();
  const CudaSource src = emit_cuda_source({k});
  EXPECT_NE(src.source.find("__shared__ float tile[64];"), std::string::npos);
  EXPECT_NE(src.source.find("__syncthreads();"), std::string::npos);
  Tensor X = Tensor::arange(3 * 64, DType::F32), Y = Tensor::zeros({3 * 64}, DType::F32);
  Interpreter interp;
  interp.bind_buffer("X", X.raw_data(), DType::F32, X.numel());
  interp.bind_buffer("Y", Y.raw_data(), DType::F32, Y.numel());
  interp.bind_scalar("nb", 3);
  interp.run(k);
  for (int64_t i = 0; i < 3 * 64; ++i) ASSERT_EQ(Y.at<float>(i), static_cast<float>(i / 64 * 64 + 63 - i % 64));
}

TEST(CudaEmitter, GoldenSpmmAndSddmm) {
  auto kernel_text = [](const std::string& source) { return source.substr(source.find("// kernel ")); };
  SpmmSpec spmm;
  spmm.feat = 64;
  ::strata::testing::expect_golden("sparse_compiler/golden/cuda/spmm_f64_i32.cu",
                                   kernel_text(emit_cuda_source({lower_spmm_gpu(spmm, default_gpu_spmm_knobs(spmm))}).source));
  const SddmmSpec sddmm{SddmmKind::Dot, 64, DType::I32};
  ::strata::testing::expect_golden(
      "sparse_compiler/golden/cuda/sddmm_dot_f64_i32.cu",
      kernel_text(emit_cuda_source({lower_sddmm_gpu(sddmm, default_gpu_sddmm_knobs(sddmm))}).source));
}

TEST(CudaEmitter, RefusesWhatItCannotMapOntoThreads) {
  auto expect_internal = [](const Kernel& k, const std::string& part) {
    try {
      emit_cuda_source({k});
      ADD_FAILURE() << "expected an InternalError containing '" << part << "'";
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  Kernel k;
  k.name = "bad";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("Y", DType::F32, ParamRole::Output), Param::scalar("m")};
  // A thread loop's extent is the block size: it must be a constant.
  k.body = for_loop("t", make_int(0), var("m"), ForKind::GpuThreadX, store("Y", var("t"), make_float(1)));
  expect_internal(k, "threadIdx.x with extent m");
  // A local shared by the threads of a loop inside its scope, not one per thread.
  k.body = allocate("acc", Type::f32(), 4, MemoryScope::Stack,
                    for_loop("t", make_int(0), make_int(32), ForKind::GpuThreadX,
                             seq({store("acc", make_int(0), make_float(1)),
                                  store("Y", var("t"), load(Type::f32(), "acc", make_int(0)))})));
  expect_internal(k, "be given shared scope");
  // Shared memory belongs to the block, not to one thread.
  k.body = for_loop("t", make_int(0), make_int(32), ForKind::GpuThreadX,
                    allocate("s", Type::f32(), 32, MemoryScope::Shared, store("Y", var("t"), make_float(0))));
  expect_internal(k, "shared allocation s sits inside a loop bound to threadIdx.x");
  // Block extents size the grid at launch: scalars only.
  k.params.push_back(Param::buffer("P", DType::I64));
  k.body = for_loop("b", make_int(0), load(Type::i64(), "P", make_int(0)), ForKind::GpuBlockX,
                    store("Y", var("b"), make_float(0)));
  expect_internal(k, "not an expression over the kernel's scalar parameters");
}

TEST(CrossThreadReductionErrorTest, BoundReductionOverMoreThanAWarpIsRefused) {
  Kernel k;
  k.name = "wide";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("Y", DType::F32, ParamRole::Output)};
  Stmt red = for_loop("t", make_int(0), make_int(64), ForKind::GpuThreadX,
                      store("Y", make_int(0), add(load(Type::f32(), "Y", make_int(0)), load(Type::f32(), "X", var("t")))));
  k.body = red;
  try {
    lower_schedule(k);
    ADD_FAILURE() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("no larger than a warp (32), not 64"), std::string::npos) << e.what();
  }
}

TEST(CudaBackendErrorTest, CudaWithoutAUsableBackendSaysWhy) {
  const std::string why = cuda_backend_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA GPU is usable here; this test checks the message when none is";
  const Graph g = small_graphs(false)[0].second;
  SpmmOptions o;
  o.feat = 16;
  o.device = Device::cuda();
  ::strata::testing::expect_user_error([&] { SpmmKernel k(g, o); }, {"spmm on cuda:0 needs a CUDA GPU", why});
  o.backend = Backend::CuSparse;
  ::strata::testing::expect_user_error([&] { SpmmKernel k(g, o); }, {"needs a CUDA GPU", why});
  SddmmOptions so;
  so.feat = 16;
  so.device = Device::cuda();
  ::strata::testing::expect_user_error([&] { SddmmKernel k(g, so); }, {"sddmm on cuda:0 needs a CUDA GPU", why});
}

TEST(CudaBackendErrorTest, CusparseIsAGpuBackend) {
  EXPECT_EQ(parse_backend("cusparse", "--backend"), Backend::CuSparse);
  ::strata::testing::expect_user_error([] { parse_backend("cuda", "--backend"); },
                                       {"unknown backend 'cuda'", "generated, reference, interpreter or cusparse"});
  const Graph g = small_graphs(false)[0].second;
  SpmmOptions o;
  o.feat = 8;
  o.backend = Backend::CuSparse;
  ::strata::testing::expect_user_error([&] { SpmmKernel k(g, o); },
                                       {"backend cusparse runs on CUDA devices only", "bound on cpu"});
  SddmmOptions so;
  so.feat = 8;
  so.backend = Backend::CuSparse;
  ::strata::testing::expect_user_error([&] { SddmmKernel k(g, so); }, {"backend cusparse runs on CUDA devices only"});
}

}  // namespace
}  // namespace strata::sc
