// NVRTC without a GPU: the generated CUDA source of every op × default schedule
// (and the non-default knobs that change the code's shape) compiles to a cubin for
// sm_80 and sm_90; PTX for architectures NVRTC cannot emit machine code for; the
// CUDA binary cache (hits, corrupt entries rebuilt, keys per target); and NVRTC
// errors that carry the log and the kept source.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/file_util.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/codegen/cuda_kernel.h"
#include "sparse_compiler/codegen/nvrtc_compiler.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/ops/cublas_gemm.h"
#include "sparse_compiler/ops/cusparse_baseline.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "sparse_compiler/ops/spmm.h"
#include "tests/sparse_compiler/cuda_test_support.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

namespace fs = std::filesystem;

// A fresh cache root per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            fmt::format("strata-nvrtc-test-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->random_seed());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Every op the CUDA backend generates, with its default GPU schedule, plus the
// knob settings that give the code another shape.
std::vector<Kernel> every_default_kernel() {
  std::vector<Kernel> out;
  for (DType idt : {DType::I32, DType::I64}) {
    for (const auto& v : cuda_testing::kSpmmVariants)
      for (int64_t F : {1, 17, 32, 64, 128, 257}) {
        const SpmmSpec spec = cuda_testing::spmm_spec(v, F, idt);
        out.push_back(lower_spmm_gpu(spec, default_gpu_spmm_knobs(spec)));
      }
    for (int64_t F : {1, 17, 32, 64, 128, 257}) {
      const SddmmSpec spec{SddmmKind::Dot, F, idt};
      out.push_back(lower_sddmm_gpu(spec, default_gpu_sddmm_knobs(spec)));
    }
    for (int64_t H : {1, 4, 8, 17}) {
      const SddmmSpec spec{SddmmKind::Add, H, idt};
      out.push_back(lower_sddmm_gpu(spec, default_gpu_sddmm_knobs(spec)));
    }
  }
  SpmmSpec spec;
  spec.feat = 64;
  spec.weighted = true;
  for (const GpuSpmmKnobs& k : {GpuSpmmKnobs{8, 32, 2, 3, false}, GpuSpmmKnobs{8, 32, 2, 3, true},
                                GpuSpmmKnobs{3, 5, 1, 1, false}, GpuSpmmKnobs{4, 16, 4, 1, false}})
    out.push_back(lower_spmm_gpu(spec, k));
  out.push_back(cuda_testing::shared_tile_reverse());
  return out;
}

// Every decomposed format (and coo) x op with its default GPU schedule, and the
// deterministic SpMM where the format has atomics, both index widths.
std::vector<Kernel> every_format_kernel() {
  std::vector<Kernel> out;
  for (const char* fs : {"ell:w=8", "hyb:c=1,B=5", "hyb:c=4,B=3", "bsr:b=4", "dcsr", "coo"}) {
    const FormatSpec f = FormatSpec::parse(fs);
    for (DType idt : {DType::I32, DType::I64}) {
      for (const auto& v : {cuda_testing::kSpmmVariants[0], cuda_testing::kSpmmVariants[3]})
        for (int64_t F : {1, 17, 64, 128}) {
          const SpmmSpec spec = cuda_testing::spmm_spec(v, F, idt);
          GpuSpmmKnobs k = default_gpu_spmm_knobs(spec, f);
          out.push_back(lower_spmm_gpu(spec, f, k));
          k.deterministic = true;
          if (F == 64 && gpu_uses_tasks(f, k)) out.push_back(lower_spmm_gpu(spec, f, k));
        }
      for (const SddmmSpec sd : {SddmmSpec{SddmmKind::Dot, 17, idt}, SddmmSpec{SddmmKind::Dot, 128, idt},
                                 SddmmSpec{SddmmKind::Add, 4, idt}})
        out.push_back(lower_sddmm_gpu(sd, f, default_gpu_sddmm_knobs(sd, f)));
    }
  }
  return out;
}

bool is_elf(const std::string& bytes) { return bytes.size() > 4 && bytes.compare(0, 4, "\x7f" "ELF") == 0; }

class NvrtcEveryKernel : public ::testing::TestWithParam<int> {};

TEST_P(NvrtcEveryKernel, CompilesToCubin) {
  const int arch = GetParam();
  const std::vector<Kernel> kernels = every_default_kernel();
  const CudaSource src = emit_cuda_source(kernels);
  TempDir dir;
  const fs::path kept = dir.path() / "every_kernel.cu";
  write_file_atomic(kept, src.source);
  Timer t;
  const NvrtcOutput out = nvrtc_compile(src.source, {arch, true}, kept);
  EXPECT_TRUE(is_elf(out.binary)) << "sm_" << arch << ": NVRTC did not return a cubin";
  EXPECT_EQ(out.log.find("warning"), std::string::npos) << "NVRTC warned:\n" << out.log;
  std::cout << "NVRTC " << nvrtc_info().version() << ": " << kernels.size() << " kernels, "
            << src.source.size() / 1024 << " KiB of CUDA, cubin for sm_" << arch << " (" << out.binary.size() / 1024
            << " KiB) in " << t.ms() << " ms\n";
  // Every launch's function is in the cubin.
  for (const auto& plan : src.kernels) {
    for (const auto& L : plan.preprocess) EXPECT_NE(out.binary.find(L.symbol), std::string::npos) << L.symbol;
    for (const auto& L : plan.body) EXPECT_NE(out.binary.find(L.symbol), std::string::npos) << L.symbol;
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, NvrtcEveryKernel, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });

class NvrtcEveryFormatKernel : public ::testing::TestWithParam<int> {};

TEST_P(NvrtcEveryFormatKernel, CompilesToCubin) {
  const int arch = GetParam();
  const std::vector<Kernel> kernels = every_format_kernel();
  const CudaSource src = emit_cuda_source(kernels);
  TempDir dir;
  const fs::path kept = dir.path() / "every_format_kernel.cu";
  write_file_atomic(kept, src.source);
  Timer t;
  const NvrtcOutput out = nvrtc_compile(src.source, {arch, true}, kept);
  EXPECT_TRUE(is_elf(out.binary)) << "sm_" << arch << ": NVRTC did not return a cubin";
  EXPECT_EQ(out.log.find("warning"), std::string::npos) << "NVRTC warned:\n" << out.log;
  std::cout << "NVRTC " << nvrtc_info().version() << ": " << kernels.size() << " format kernels, "
            << src.source.size() / 1024 << " KiB of CUDA, cubin for sm_" << arch << " (" << out.binary.size() / 1024
            << " KiB) in " << t.ms() << " ms\n";
  for (const auto& plan : src.kernels) {
    for (const auto& L : plan.preprocess) EXPECT_NE(out.binary.find(L.symbol), std::string::npos) << L.symbol;
    for (const auto& L : plan.body) EXPECT_NE(out.binary.find(L.symbol), std::string::npos) << L.symbol;
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, NvrtcEveryFormatKernel, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });

// A batch dealt into translation units: results in the batch's order, one module
// (and cache entry) per unit; the front door's lowering of a plan in a decomposed
// format (what SpmmKernel compiles on demand) is among them.
TEST(CompileCuda, BatchSplitIntoUnitsKeepsOrderWithOneModulePerUnit) {
  std::vector<Kernel> lowered;
  for (int64_t F : {16, 32, 48, 64}) {
    SpmmSpec spec;
    spec.feat = F;
    spec.weighted = true;
    lowered.push_back(lower_spmm_gpu(spec, default_gpu_spmm_knobs(spec)));
  }
  SpmmSpec spec;
  spec.feat = 40;
  SpmmPlan plan = SpmmKernel::default_plan(spec);
  plan.format = FormatSpec::parse("hyb:c=2,B=3");
  plan.gpu = default_gpu_spmm_knobs(spec, plan.format);
  lowered.push_back(SpmmKernel::lower_cuda(spec, plan));
  const std::vector<CompiledCudaKernel> compiled = compile_cuda(lowered, {90, true}, 3);
  ASSERT_EQ(compiled.size(), lowered.size());
  std::set<const CudaModule*> modules;
  for (size_t i = 0; i < lowered.size(); ++i) {
    EXPECT_EQ(compiled[i].kernel().name, lowered[i].name) << i;
    EXPECT_EQ(compiled[i].plan.body.size(), emit_cuda_source({lowered[i]}).kernels[0].body.size()) << i;
    modules.insert(compiled[i].module.get());
  }
  EXPECT_EQ(modules.size(), 3u);
  // 5 kernels dealt into 3 units: {0, 3}, {1, 4}, {2}.
  EXPECT_EQ(compiled[0].module, compiled[3].module);
  EXPECT_EQ(compiled[1].module, compiled[4].module);
  EXPECT_NE(compiled[0].module, compiled[1].module);
  EXPECT_NE(compiled[2].module, compiled[0].module);
  EXPECT_NE(compiled[2].module, compiled[1].module);
}

TEST(Nvrtc, TargetIsCubinForKnownArchitecturesAndPtxBeyondThem) {
  const NvrtcInfo& info = nvrtc_info();
  ASSERT_FALSE(info.archs.empty());
  EXPECT_NE(std::find(info.archs.begin(), info.archs.end(), 90), info.archs.end()) << "NVRTC " << info.version();
  const CudaTarget hopper = nvrtc_target_for(90);
  EXPECT_TRUE(hopper.cubin);
  EXPECT_EQ(hopper.option(), "--gpu-architecture=sm_90");
  // A GPU newer than this NVRTC: PTX for the newest architecture it knows.
  const CudaTarget future = nvrtc_target_for(info.archs.back() + 5);
  EXPECT_FALSE(future.cubin);
  EXPECT_EQ(future.arch, info.archs.back());
  SpmmSpec spec;
  spec.feat = 32;
  const CudaSource src = emit_cuda_source({lower_spmm_gpu(spec, default_gpu_spmm_knobs(spec))});
  const NvrtcOutput ptx = nvrtc_compile(src.source, future, {});
  EXPECT_NE(ptx.binary.find(".version"), std::string::npos);
  EXPECT_NE(ptx.binary.find(src.kernels[0].body[0].symbol), std::string::npos);
  EXPECT_EQ(ptx.binary.back(), '\0') << "the driver needs NUL-terminated PTX";
  ::strata::testing::expect_user_error([] { nvrtc_target_for(10); }, {"cannot compile for compute capability 1.0"});
}

constexpr const char* kTinyKernel = R"(extern "C" __global__ void strata_tiny(float* y) { y[threadIdx.x] = 2.0f; }
)";

TEST(CudaBinaryCache, CompilesOnceThenHitsMemoryAndDisk) {
  TempDir dir;
  const CudaTarget sm90{90, true};
  CudaBinaryCache cache(dir.path());
  const CudaBinaryResult first = cache.get_or_compile(kTinyKernel, sm90);
  EXPECT_EQ(first.outcome, CacheOutcome::Compiled);
  EXPECT_TRUE(is_elf(*first.binary));
  const CudaBinaryEntryPaths p = cache.paths(first.key, sm90);
  EXPECT_TRUE(fs::exists(p.source) && fs::exists(p.binary) && fs::exists(p.manifest));
  EXPECT_EQ(p.binary.extension(), ".cubin");
  EXPECT_EQ(read_file(p.source), kTinyKernel);
  EXPECT_FALSE(fs::exists(p.lock));
  EXPECT_EQ(cache.get_or_compile(kTinyKernel, sm90).outcome, CacheOutcome::MemoryHit);
  CudaBinaryCache fresh(dir.path());  // another process, in effect
  const CudaBinaryResult disk = fresh.get_or_compile(kTinyKernel, sm90);
  EXPECT_EQ(disk.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(*disk.binary, *first.binary);
  // The key covers the target: sm_80 and PTX are other entries.
  EXPECT_NE(cache.key_for(kTinyKernel, {80, true}), first.key);
  EXPECT_NE(cache.key_for(kTinyKernel, {90, false}), first.key);
  EXPECT_EQ(fresh.get_or_compile(kTinyKernel, {80, false}).outcome, CacheOutcome::Compiled);
}

TEST(CudaBinaryCache, CorruptOrIncompleteEntriesAreRebuilt) {
  TempDir dir;
  const CudaTarget sm80{80, true};
  std::string key;
  {
    CudaBinaryCache cache(dir.path());
    key = cache.get_or_compile(kTinyKernel, sm80).key;
  }
  const CudaBinaryEntryPaths p = CudaBinaryCache(dir.path()).paths(key, sm80);
  const std::string good = read_file(p.binary);
  // A flipped byte: the checksum catches it.
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x5a;
  write_file_atomic(p.binary, bad);
  {
    CudaBinaryCache cache(dir.path());
    const CudaBinaryResult r = cache.get_or_compile(kTinyKernel, sm80);
    EXPECT_EQ(r.outcome, CacheOutcome::Compiled);
    EXPECT_EQ(cache.stats().rebuilt_entries, 1u);
    EXPECT_EQ(*r.binary, good);
  }
  // A missing manifest (a build that died before finishing): rebuilt too.
  fs::remove(p.manifest);
  {
    CudaBinaryCache cache(dir.path());
    EXPECT_EQ(cache.get_or_compile(kTinyKernel, sm80).outcome, CacheOutcome::Compiled);
    EXPECT_EQ(cache.stats().rebuilt_entries, 1u);
  }
  // A truncated binary.
  write_file_atomic(p.binary, good.substr(0, good.size() / 3));
  CudaBinaryCache cache(dir.path());
  EXPECT_EQ(cache.get_or_compile(kTinyKernel, sm80).outcome, CacheOutcome::Compiled);
  EXPECT_EQ(read_file(p.binary), good);
}

TEST(CudaCompileErrorTest, NvrtcErrorCarriesTheLogAndTheKeptSource) {
  TempDir dir;
  CudaBinaryCache cache(dir.path());
  const std::string broken = "extern \"C\" __global__ void strata_broken(float* y) { y[0] = no_such_value; }\n";
  try {
    cache.get_or_compile(broken, {90, true});
    ADD_FAILURE() << "expected a CompileError";
  } catch (const CompileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("failed to compile with NVRTC"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NVRTC log:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no_such_value"), std::string::npos) << "the log names the culprit:\n" << msg;
    EXPECT_NE(msg.find("--gpu-architecture=sm_90"), std::string::npos) << msg;
    EXPECT_NE(msg.find("source kept at " + e.source_path().string()), std::string::npos) << msg;
    EXPECT_TRUE(fs::exists(e.source_path()));
    EXPECT_EQ(read_file(e.source_path()), broken);
    EXPECT_NE(e.output().find("no_such_value"), std::string::npos);
  }
  EXPECT_EQ(cache.stats().compiles, 0u);
}

TEST(CudaLibrariesErrorTest, CusparseAndCublasAreLinkedAndSayWhyTheyCannotRun) {
  const std::string why = cuda_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA GPU is usable here; this test checks the message when none is";
  const Graph g = Graph::from_coo(3, 3, Tensor::from_list<int64_t>({0, 1, 2}), Tensor::from_list<int64_t>({1, 2, 0}));
  ::strata::testing::expect_user_error([&] { CusparseSpmm s(g, Device::cuda(), 16, Tensor()); },
                                       {"the cuSPARSE SpMM baseline on cuda:0 needs a CUDA GPU", why});
  ::strata::testing::expect_user_error([&] { CusparseSddmm s(g, Device::cuda(), 16); },
                                       {"the cuSPARSE SDDMM baseline on cuda:0 needs a CUDA GPU", why});
  const Tensor A = Tensor::zeros({2, 3}, DType::F32);
  ::strata::testing::expect_user_error([&] { gemm(A, A, false, true); },
                                       {"gemm: A is float32[2, 3] cpu", "runs on CUDA tensors"});
}

}  // namespace
}  // namespace strata::sc
