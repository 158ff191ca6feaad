// The CUDA backend on a device. Every suite here ends in GpuTest (ctest label gpu)
// and skips, naming the reason, where no GPU is usable. On a machine with one they
// run every generated kernel (every op and SpMM variant, both index widths, feature
// sizes across the lane and vector boundaries, the edge-case graphs, the non-default
// knobs that change the code's shape) and compare it with the CPU reference; the
// cuSPARSE baselines, the cuBLAS GEMM and the runtime pieces likewise.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "core/cuda_stream.h"
#include "core/rng.h"
#include "sparse_compiler/codegen/cuda_kernel.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/ops/cublas_gemm.h"
#include "sparse_compiler/ops/cuda_binding.h"
#include "sparse_compiler/ops/cusparse_baseline.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "tests/sparse_compiler/cuda_test_support.h"
#include "tests/sparse_compiler/edge_case_graphs.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

using ::strata::testing::edge_case_graphs;

#define STRATA_REQUIRE_GPU() \
  if (!cuda_backend_unavailable_reason().empty()) GTEST_SKIP() << cuda_backend_unavailable_reason()

const Device kGpu = Device::cuda(0);

void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double tol = 1e-4) {
  const Tensor host = got.to(Device::cpu());
  CloseReport r = all_close(host, want, tol, tol);
  EXPECT_TRUE(r.ok) << what << ": " << r.str();
}

const std::vector<int64_t> kFeatures = {1, 3, 17, 32, 33, 64, 128, 257};
const std::vector<GpuSpmmKnobs> kExtraSpmmKnobs = {
    {8, 32, 2, 3, false},  // row parts, atomics, one fused launch
    {8, 32, 2, 3, true},   // row parts, ordered launches
    {3, 5, 1, 1, false},   // odd lanes and rows: every guard
    {2, 16, 4, 1, false},  // float4 per thread, several feature tiles
};

class SpmmCudaGpuTest : public ::testing::TestWithParam<bool> {};

TEST_P(SpmmCudaGpuTest, GeneratedMatchesCpuReferenceOnEveryEdgeCase) {
  STRATA_REQUIRE_GPU();
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  // One NVRTC batch: every variant × F with the default knobs, plus the extra knobs.
  struct Case {
    cuda_testing::SpmmVariant v;
    int64_t F;
    GpuSpmmKnobs knobs;
  };
  std::vector<Case> cases;
  std::vector<Kernel> lowered;
  for (const auto& v : cuda_testing::kSpmmVariants) {
    for (int64_t F : kFeatures) {
      const SpmmSpec spec = cuda_testing::spmm_spec(v, F, idt);
      cases.push_back({v, F, default_gpu_spmm_knobs(spec)});
    }
    for (GpuSpmmKnobs k : kExtraSpmmKnobs) cases.push_back({v, 64, k});
  }
  for (const auto& c : cases) lowered.push_back(lower_spmm_gpu(cuda_testing::spmm_spec(c.v, c.F, idt), c.knobs));
  const std::vector<CompiledCudaKernel> compiled = compile_cuda(lowered, cuda_target_for_device(0));
  Rng rng(2026);
  for (const auto& gc : edge_case_graphs(int64)) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      cuda_testing::SpmmInputs in(g, c.v, c.F, rng);
      SpmmOptions o = in.options(c.F);
      o.device = kGpu;
      SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(g, o));
      plan.gpu = c.knobs;
      o.plan = plan;
      SpmmKernel k(g, o, compiled[i]);
      expect_close(k.run(in.X.to(kGpu)), in.reference(g),
                   fmt::format("{} {} F={} {}", gc.name, c.v.name, c.F, c.knobs.str()));
    }
  }
}

TEST_P(SpmmCudaGpuTest, FrontDoorCompilesOnDemandAndDeterministicPartsRepeatBitwise) {
  STRATA_REQUIRE_GPU();
  const Graph g = edge_case_graphs(GetParam())[1].g;  // one very long row
  Rng rng(3);
  SpmmOptions o;
  o.feat = 96;
  o.device = kGpu;
  SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(g, o));
  plan.gpu = {4, 32, 3, 4, true};
  o.plan = plan;
  SpmmKernel k(g, o);
  EXPECT_NE(k.describe().find("gpu r4_l32_c3_p4_det (generated, cuda:0)"), std::string::npos) << k.describe();
  const Tensor X = Tensor::uniform({g.num_cols(), 96}, -1, 1, rng);
  const Tensor Xd = X.to(kGpu);
  const Tensor a = k.run(Xd).to(Device::cpu()), b = k.run(Xd).to(Device::cpu());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())), 0);
  expect_close(a, ::strata::testing::reference_spmm(g, X, Tensor(), Tensor(), Tensor(), false), "on demand");
}

// Plans in decomposed formats through the front door: inspected on the host,
// uploaded once per (graph, format, grain) and shared by every kernel bound to it.
TEST_P(SpmmCudaGpuTest, FrontDoorRunsDecomposedFormatsOnOneUploadPerFormat) {
  STRATA_REQUIRE_GPU();
  Rng rng(41);
  for (const auto& gc : edge_case_graphs(GetParam())) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (const char* name : {"hyb:c=2,B=3", "ell:w=4", "bsr:b=3", "dcsr", "coo"}) {
      for (const auto& v : {cuda_testing::kSpmmVariants[0], cuda_testing::kSpmmVariants[3]}) {
        cuda_testing::SpmmInputs in(g, v, 33, rng);
        SpmmOptions o = in.options(33);
        o.device = kGpu;
        SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(g, o));
        plan.format = FormatSpec::parse(name);
        plan.gpu = default_gpu_spmm_knobs(SpmmKernel::spec(g, o), plan.format);
        o.plan = plan;
        SpmmKernel k(g, o);
        EXPECT_NE(k.describe().find(plan.format.str()), std::string::npos) << k.describe();
        expect_close(k.run(in.X.to(kGpu)), in.reference(g), fmt::format("{} {} {}", gc.name, v.name, name));
      }
    }
  }
  const Graph g = edge_case_graphs(GetParam())[1].g;
  const FormatSpec hyb = FormatSpec::parse("hyb:c=1,B=4");
  const auto a = CudaOpBinding::device_format(g, hyb, 64, kGpu), b = CudaOpBinding::device_format(g, hyb, 64, kGpu);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), CudaOpBinding::device_format(g, hyb, 32, kGpu).get());
  EXPECT_FALSE(a->task_rows.device().is_cpu());
}

TEST_P(SpmmCudaGpuTest, CusparseBaselineMatchesCpuReference) {
  STRATA_REQUIRE_GPU();
  Rng rng(11);
  for (const auto& gc : edge_case_graphs(GetParam())) {
    const Graph g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    for (const auto& v : cuda_testing::kSpmmVariants) {
      for (auto alg : {CusparseSpmmAlgorithm::Default, CusparseSpmmAlgorithm::CsrAlg1, CusparseSpmmAlgorithm::CsrAlg2,
                       CusparseSpmmAlgorithm::CsrAlg3, CusparseSpmmAlgorithm::Best}) {
        const int64_t F = 32;
        cuda_testing::SpmmInputs in(g, v, F, rng);
        SpmmOptions o = in.options(F);
        o.device = kGpu;
        o.backend = Backend::CuSparse;
        SpmmPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(g, o));
        plan.cusparse_algorithm = alg;
        o.plan = plan;
        std::unique_ptr<SpmmKernel> k;
        try {
          k = std::make_unique<SpmmKernel>(g, o);
        } catch (const UserError& e) {
          // An algorithm cuSPARSE does not support for these operands says so.
          EXPECT_NE(std::string(e.what()).find("does not support"), std::string::npos) << e.what();
          continue;
        }
        ASSERT_NE(k->cusparse(), nullptr);
        expect_close(k->run(in.X.to(kGpu)), in.reference(g),
                     fmt::format("cusparse {} {} {}", to_string(alg), gc.name, v.name));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, SpmmCudaGpuTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

class SddmmCudaGpuTest : public ::testing::TestWithParam<bool> {};

TEST_P(SddmmCudaGpuTest, GeneratedMatchesCpuReferenceOnEveryEdgeCase) {
  STRATA_REQUIRE_GPU();
  const DType idt = GetParam() ? DType::I64 : DType::I32;
  std::vector<std::pair<SddmmSpec, GpuSddmmKnobs>> cases;
  for (int64_t F : kFeatures) {
    const SddmmSpec spec{SddmmKind::Dot, F, idt};
    cases.emplace_back(spec, default_gpu_sddmm_knobs(spec));
  }
  cases.emplace_back(SddmmSpec{SddmmKind::Dot, 64, idt}, GpuSddmmKnobs{3, 8, 2});
  cases.emplace_back(SddmmSpec{SddmmKind::Dot, 100, idt}, GpuSddmmKnobs{2, 32, 1});
  for (int64_t H : {1, 4, 8, 17}) {
    const SddmmSpec spec{SddmmKind::Add, H, idt};
    cases.emplace_back(spec, default_gpu_sddmm_knobs(spec));
  }
  std::vector<Kernel> lowered;
  for (const auto& [spec, knobs] : cases) lowered.push_back(lower_sddmm_gpu(spec, knobs));
  const std::vector<CompiledCudaKernel> compiled = compile_cuda(lowered, cuda_target_for_device(0));
  Rng rng(77);
  for (const auto& gc : edge_case_graphs(GetParam())) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto& [spec, knobs] = cases[i];
      SddmmOptions o;
      o.kind = spec.kind;
      o.feat = spec.feat;
      o.device = kGpu;
      o.gpu = knobs;
      SddmmKernel k(gc.g, o, compiled[i]);
      const Tensor X = Tensor::uniform({gc.g.num_rows(), spec.feat}, -1, 1, rng);
      const Tensor Y = Tensor::uniform({gc.g.num_cols(), spec.feat}, -1, 1, rng);
      const Tensor want = spec.kind == SddmmKind::Dot ? ::strata::testing::reference_sddmm_dot(gc.g, X, Y)
                                                      : ::strata::testing::reference_sddmm_add(gc.g, X, Y);
      expect_close(k.run(X.to(kGpu), Y.to(kGpu)), want,
                   fmt::format("{} {} {}", gc.name, spec.name(), knobs.str()));
    }
  }
}

TEST_P(SddmmCudaGpuTest, FrontDoorRunsDecomposedFormats) {
  STRATA_REQUIRE_GPU();
  Rng rng(43);
  for (const auto& gc : edge_case_graphs(GetParam())) {
    for (const char* name : {"dcsr", "hyb:c=2,B=3", "coo"}) {
      SddmmOptions o;
      o.feat = 17;
      o.device = kGpu;
      KernelPlan plan = SddmmKernel::default_plan();
      plan.format = FormatSpec::parse(name);
      o.plan = plan;
      SddmmKernel k(gc.g, o);
      EXPECT_NE(k.describe().find(plan.format.str()), std::string::npos) << k.describe();
      const Tensor X = Tensor::uniform({gc.g.num_rows(), 17}, -1, 1, rng);
      const Tensor Y = Tensor::uniform({gc.g.num_cols(), 17}, -1, 1, rng);
      expect_close(k.run(X.to(kGpu), Y.to(kGpu)), ::strata::testing::reference_sddmm_dot(gc.g, X, Y),
                   fmt::format("sddmm {} {}", gc.name, name));
    }
  }
}

TEST_P(SddmmCudaGpuTest, CusparseBaselineMatchesCpuReference) {
  STRATA_REQUIRE_GPU();
  Rng rng(8);
  for (const auto& gc : edge_case_graphs(GetParam())) {
    for (int64_t F : {1, 32, 64}) {
      SddmmOptions o;
      o.feat = F;
      o.device = kGpu;
      o.backend = Backend::CuSparse;
      SddmmKernel k(gc.g, o);
      const Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
      const Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
      expect_close(k.run(X.to(kGpu), Y.to(kGpu)), ::strata::testing::reference_sddmm_dot(gc.g, X, Y),
                   fmt::format("cusparse sddmm {} F={}", gc.name, F));
    }
  }
  SddmmOptions add;
  add.kind = SddmmKind::Add;
  add.feat = 4;
  add.device = kGpu;
  add.backend = Backend::CuSparse;
  ::strata::testing::expect_user_error([&] { SddmmKernel k(edge_case_graphs(false)[0].g, add); },
                                       {"dot products only"});
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, SddmmCudaGpuTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int64") : std::string("int32"); });

TEST(CublasGpuTest, GemmMatchesHostProductForEveryTranspose) {
  STRATA_REQUIRE_GPU();
  Rng rng(4);
  const int64_t m = 37, k = 53, n = 29;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Tensor A = Tensor::uniform(ta ? Shape{k, m} : Shape{m, k}, -1, 1, rng);
      const Tensor B = Tensor::uniform(tb ? Shape{n, k} : Shape{k, n}, -1, 1, rng);
      Tensor want = Tensor::zeros({m, n}, DType::F32);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += double(A.at<float>(ta ? p * m + i : i * k + p)) * B.at<float>(tb ? j * k + p : p * n + j);
          want.at<float>(i * n + j) = static_cast<float>(s);
        }
      expect_close(gemm(A.to(kGpu), B.to(kGpu), ta, tb), want, fmt::format("gemm ta={} tb={}", ta, tb));
    }
  }
  // C = 2·A·B + 0.5·C
  const Tensor A = Tensor::uniform({m, k}, -1, 1, rng), B = Tensor::uniform({k, n}, -1, 1, rng);
  const Tensor C0 = Tensor::uniform({m, n}, -1, 1, rng);
  Tensor C = C0.to(kGpu);
  gemm_into(A.to(kGpu), B.to(kGpu), C, false, false, 2.0f, 0.5f, default_stream(0));
  const Tensor AB = gemm(A.to(kGpu), B.to(kGpu)).to(Device::cpu());
  Tensor want = Tensor::empty({m, n}, DType::F32);
  for (int64_t i = 0; i < m * n; ++i) want.at<float>(i) = 2 * AB.at<float>(i) + 0.5f * C0.at<float>(i);
  expect_close(C, want, "alpha and beta");
  ::strata::testing::expect_user_error([&] { gemm(A.to(kGpu), A.to(kGpu)); }, {"op(A) is 37 x 53 but op(B) is 37 x 53"});
}

TEST(CudaRuntimeGpuTest, ModulesAreCachedAndViewsThatBreakVectorAlignmentAreRefused) {
  STRATA_REQUIRE_GPU();
  SpmmSpec spec;
  spec.feat = 64;
  const GpuSpmmKnobs knobs = default_gpu_spmm_knobs(spec);  // coarsen 2: float2 accesses
  const auto first = compile_cuda({lower_spmm_gpu(spec, knobs)}, cuda_target_for_device(0));
  const auto again = compile_cuda({lower_spmm_gpu(spec, knobs)}, cuda_target_for_device(0));
  EXPECT_EQ(again[0].outcome, CacheOutcome::MemoryHit);
  const Graph g = edge_case_graphs(false)[0].g;
  SpmmOptions o;
  o.feat = 64;
  o.device = kGpu;
  SpmmKernel k(g, o, first[0]);
  // X starting 4 bytes into its allocation cannot be read with 8-byte loads.
  const Tensor backing = Tensor::zeros({g.num_cols() * 64 + 1}, DType::F32, kGpu);
  const Tensor X = Tensor::from_storage(backing.storage(), {g.num_cols(), 64}, DType::F32, 4);
  ::strata::testing::expect_user_error([&] { k.run(X); }, {"buffer X", "not 8-byte aligned", "offset view"});
  ::strata::testing::expect_user_error([&] { k.run(Tensor::zeros({g.num_cols(), 64}, DType::F32)); },
                                       {"spmm input X: expected a tensor on cuda:0", "cpu"});
}

TEST(CudaRuntimeGpuTest, EventsTimeWorkOnAStream) {
  STRATA_REQUIRE_GPU();
  CudaStream stream(0);
  CudaEvent start(0), stop(0);
  Tensor big = Tensor::empty({64 << 20}, DType::F32, kGpu);
  const CudaDriver& d = require_cuda_driver("test");
  start.record(stream);
  STRATA_CU(d.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(big.raw_data()), 0, big.nbytes(), stream.get()));
  stop.record(stream);
  const float ms = CudaEvent::elapsed_ms(start, stop);
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 1000.0f);
  stream.synchronize();
}

}  // namespace
}  // namespace strata::sc
