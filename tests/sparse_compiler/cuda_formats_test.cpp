// GPU schedules of the decomposed formats (ell, hyb, bsr, dcsr) and coo, without a
// GPU: every op x format x default GPU schedule (and the deterministic mode where
// the format has atomics) (a) keeps the program's meaning when the interpreter runs
// the bound loops serially and (b) computes the reference when the emitted CUDA C
// runs in the host SIMT emulation, on the edge-case graphs with int32 and int64
// indices and odd feature sizes; the launch plans (every part in one launch), the
// golden CUDA source of a hyb kernel, the knob search spaces and the refusals.
#include <gtest/gtest.h>

#include <set>

#include "core/rng.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/passes/pipeline.h"
#include "tests/sparse_compiler/cuda_host_emulation.h"
#include "tests/sparse_compiler/cuda_test_support.h"
#include "tests/sparse_compiler/edge_case_graphs.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/golden.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

using ::strata::testing::edge_case_graphs;

// Every format with a GPU schedule, with parameters that give several buckets,
// column parts, split rows, padding and partial blocks on the edge-case graphs.
const std::vector<std::string> kFormats = {"ell:w=4", "hyb:c=1,B=2", "hyb:c=2,B=3", "bsr:b=3", "dcsr", "coo"};

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  CloseReport r = all_close(got, want, 1e-4, 1e-4);
  EXPECT_TRUE(r.ok) << what << ": " << r.str();
}

// Runs one case; an exception fails it with the case's name instead of ending the test.
template <class Fn>
void one_case(const std::string& what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

// The default knobs of a format, and the deterministic variant where it differs.
std::vector<GpuSpmmKnobs> spmm_knob_sets(const SpmmSpec& spec, const FormatSpec& f) {
  std::vector<GpuSpmmKnobs> out = {default_gpu_spmm_knobs(spec, f)};
  GpuSpmmKnobs det = out[0];
  det.deterministic = true;
  if (gpu_uses_tasks(f, det)) {
    det.group_slots = 8;  // small tasks: several per graph
    out.push_back(det);
  }
  return out;
}

InspectedFormat inspect_for(const Graph& g, const FormatSpec& f, const GpuSpmmKnobs& knobs) {
  return inspect_format(g, f, gpu_inspector_grain(f, knobs, 4096));
}

// The edge-case graphs (empty rows, one very long row, a single node, isolated
// nodes, no edges, few rows with many columns) with random edge values.
std::vector<::strata::testing::GraphCase> graphs_with_values(bool int64, Rng& rng) {
  std::vector<::strata::testing::GraphCase> out;
  for (auto& gc : edge_case_graphs(int64)) {
    gc.g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
    out.push_back(gc);
  }
  return out;
}

// The same edge cases, smaller, for the host emulation (one OS thread per GPU
// thread): empty rows, a row far longer than the widest bucket, a single node,
// isolated nodes, no edges, few rows with many columns.
std::vector<::strata::testing::GraphCase> small_edge_case_graphs(bool int64, Rng& rng) {
  std::vector<::strata::testing::GraphCase> out;
  ::strata::testing::RandomGraphSpec s;
  s.int64_indices = int64;
  s.rows = 60;
  s.cols = 50;
  s.avg_degree = 5;
  s.empty_row_fraction = 0.15;
  s.seed = 31;
  out.push_back({"random_with_empty_rows", ::strata::testing::random_graph(s)});
  s.rows = 30;
  s.cols = 400;
  s.avg_degree = 3;
  s.long_row_length = 200;
  s.seed = 32;
  out.push_back({"one_long_row", ::strata::testing::random_graph(s)});
  s = {};
  s.int64_indices = int64;
  s.rows = 4;
  s.cols = 600;
  s.avg_degree = 30;
  s.empty_row_fraction = 0;
  s.seed = 33;
  out.push_back({"few_rows_many_columns", ::strata::testing::random_graph(s)});
  for (auto& gc : edge_case_graphs(int64))
    if (gc.name == "single_node" || gc.name == "isolated_nodes" || gc.name == "no_edges") out.push_back(gc);
  for (auto& gc : out) gc.g = gc.g.with_values(Tensor::uniform({gc.g.nnz()}, -1, 1, rng));
  return out;
}

class GpuFormatSchedule : public ::testing::TestWithParam<bool> {};

TEST_P(GpuFormatSchedule, SpmmEveryFormatMatchesDenseReferenceWhenRunSerially) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  Rng rng(101);
  for (const auto& gc : graphs_with_values(int64, rng)) {
    for (const auto& fs : kFormats) {
      const FormatSpec f = FormatSpec::parse(fs);
      for (const auto& v : cuda_testing::kSpmmVariants) {
        // Odd F: guarded lanes (17 = one tile of 17 lanes), one feature per thread (1).
        for (int64_t F : {1, 17}) {
          const SpmmSpec spec = cuda_testing::spmm_spec(v, F, idt);
          for (const auto& knobs : spmm_knob_sets(spec, f)) {
            const std::string what =
                fmt::format("{} {} {} F={} {} {}", gc.name, fs, v.name, F, knobs.str(), int64 ? "int64" : "int32");
            one_case(what, [&] {
              const InspectedFormat in_f = inspect_for(gc.g, f, knobs);
              cuda_testing::SpmmInputs in(gc.g, v, F, rng);
              expect_close(cuda_testing::interpret_spmm(lower_spmm_gpu(spec, f, knobs), gc.g, in, &in_f),
                           in.reference(gc.g), what);
            });
          }
        }
      }
    }
  }
}

TEST_P(GpuFormatSchedule, SpmmCoarsenedFeaturesAndFeatureTiles) {
  // F = 66: coarsen 2 with 33 lanes in one tile; F = 128 with 16 lanes x 4: two
  // tiles along blockIdx.y (serial tiles in deterministic mode).
  const bool int64 = GetParam();
  Rng rng(7);
  const Graph g = graphs_with_values(int64, rng)[0].g;
  for (const auto& fs : kFormats) {
    const FormatSpec f = FormatSpec::parse(fs);
    for (const auto& c : std::vector<std::pair<int64_t, GpuSpmmKnobs>>{
             {66, {4, 33, 2, 1, false, 0}}, {128, {2, 16, 4, 1, false, 0}}, {128, {2, 16, 4, 1, true, 16}}}) {
      const int64_t F = c.first;  // captured below: no structured binding (Clang 14 cannot)
      const GpuSpmmKnobs& knobs = c.second;
      const SpmmSpec spec = cuda_testing::spmm_spec(cuda_testing::kSpmmVariants[3], F, g.index_dtype());
      const std::string what = fmt::format("{} F={} {}", fs, F, knobs.str());
      one_case(what, [&] {
        const InspectedFormat in_f = inspect_for(g, f, knobs);
        cuda_testing::SpmmInputs in(g, cuda_testing::kSpmmVariants[3], F, rng);
        expect_close(cuda_testing::interpret_spmm(lower_spmm_gpu(spec, f, knobs), g, in, &in_f), in.reference(g), what);
      });
    }
  }
}

TEST_P(GpuFormatSchedule, SddmmEveryFormatMatchesDenseReferenceWhenRunSerially) {
  const bool int64 = GetParam();
  const DType idt = int64 ? DType::I64 : DType::I32;
  Rng rng(202);
  for (const auto& gc : graphs_with_values(int64, rng)) {
    for (const auto& fs : kFormats) {
      const FormatSpec f = FormatSpec::parse(fs);
      const InspectedFormat in_f = inspect_format(gc.g, f, 4096);
      for (int64_t F : {1, 17, 64}) {
        const SddmmSpec spec{SddmmKind::Dot, F, idt};
        const Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
        const Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
        expect_close(cuda_testing::interpret_sddmm(lower_sddmm_gpu(spec, f, default_gpu_sddmm_knobs(spec, f)), gc.g, X,
                                                   Y, true, &in_f),
                     ::strata::testing::reference_sddmm_dot(gc.g, X, Y), fmt::format("{} {} dot F={}", gc.name, fs, F));
      }
      for (int64_t H : {1, 3}) {
        const SddmmSpec spec{SddmmKind::Add, H, idt};
        const Tensor XL = Tensor::uniform({gc.g.num_rows(), H}, -1, 1, rng);
        const Tensor XR = Tensor::uniform({gc.g.num_cols(), H}, -1, 1, rng);
        expect_close(cuda_testing::interpret_sddmm(lower_sddmm_gpu(spec, f, default_gpu_sddmm_knobs(spec, f)), gc.g,
                                                   XL, XR, false, &in_f),
                     ::strata::testing::reference_sddmm_add(gc.g, XL, XR), fmt::format("{} {} add H={}", gc.name, fs, H));
      }
    }
  }
}

// The emitted CUDA C of every format's kernels (SpMM default and deterministic, SDDMM
// dot and add, both index widths), compiled for the host in one translation unit
// and run against the SIMT emulation on the edge-case graphs (smaller copies).
TEST(CudaHostEmulation, EveryFormatKernelComputesTheReference) {
  struct Case {
    std::string format, op;
    bool int64;
    SpmmSpec spmm;
    SddmmSpec sddmm;
    GpuSpmmKnobs knobs;
  };
  std::vector<Case> cases;
  std::vector<Kernel> lowered;
  const auto& wv = cuda_testing::kSpmmVariants[3];  // weighted and scaled: edge ids, both scales
  for (bool int64 : {false, true}) {
    const DType idt = int64 ? DType::I64 : DType::I32;
    for (const auto& fs : kFormats) {
      const FormatSpec f = FormatSpec::parse(fs);
      const SpmmSpec spmm = cuda_testing::spmm_spec(wv, 17, idt);
      for (const auto& knobs : spmm_knob_sets(spmm, f)) {
        cases.push_back({fs, "spmm", int64, spmm, {}, knobs});
        lowered.push_back(lower_spmm_gpu(spmm, f, knobs));
      }
      for (const SddmmSpec sd : {SddmmSpec{SddmmKind::Dot, 17, idt}, SddmmSpec{SddmmKind::Add, 3, idt}}) {
        cases.push_back({fs, sd.kind == SddmmKind::Dot ? "sddmm" : "sddmm_add", int64, {}, sd, {}});
        lowered.push_back(lower_sddmm_gpu(sd, f, default_gpu_sddmm_knobs(sd, f)));
      }
    }
  }
  const cuda_testing::HostEmulatedCuda emu(emit_cuda_source(lowered));
  Rng rng(77);
  for (bool int64 : {false, true}) {
    for (const auto& gc : small_edge_case_graphs(int64, rng)) {
      for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        if (c.int64 != int64) continue;
        const FormatSpec f = FormatSpec::parse(c.format);
        const std::string what = fmt::format("{} {} {} {} {}", gc.name, c.format, c.op,
                                             c.op == "spmm" ? c.knobs.str() : "", int64 ? "int64" : "int32");
        one_case(what, [&] {
          const InspectedFormat in_f = inspect_for(gc.g, f, c.knobs);
          KernelArgs a;
          cuda_testing::bind_structure(a, gc.g, &in_f);
          const Kernel& k = emu.source().kernels[i].kernel;
          if (c.op == "spmm") {
            cuda_testing::SpmmInputs in(gc.g, wv, c.spmm.feat, rng);
            Tensor Y = Tensor::full({gc.g.num_rows(), c.spmm.feat}, DType::F32, NAN);
            a.buffer("X", in.X).buffer("Y", Y);
            if (k.find_param("A")) a.buffer("A", gc.g.values());
            if (k.find_param("row_scale")) a.buffer("row_scale", in.kernel_row_scale);
            if (k.find_param("col_scale")) a.buffer("col_scale", in.col_scale);
            emu.run(i, a);
            expect_close(Y, in.reference(gc.g), what);
            return;
          }
          const bool dot = c.sddmm.kind == SddmmKind::Dot;
          const int64_t F = c.sddmm.feat;
          const Tensor X = Tensor::uniform({gc.g.num_rows(), F}, -1, 1, rng);
          const Tensor Y = Tensor::uniform({gc.g.num_cols(), F}, -1, 1, rng);
          Tensor O = dot ? Tensor::full({gc.g.nnz()}, DType::F32, NAN) : Tensor::full({gc.g.nnz(), F}, DType::F32, NAN);
          a.buffer(dot ? "X" : "XL", X).buffer(dot ? "Y" : "XR", Y).buffer("O", O);
          emu.run(i, a);
          expect_close(O, dot ? ::strata::testing::reference_sddmm_dot(gc.g, X, Y)
                              : ::strata::testing::reference_sddmm_add(gc.g, X, Y),
                       what);
        });
      }
    }
  }
}

// The launch plans: a zeroing launch (none for bsr), then every part of the format
// in one launch; atomics exactly where output rows are shared; owner tasks in one
// launch without atomics; SDDMM parts in one launch without atomics.
TEST(CudaEmitter, EveryPartOfAFormatRunsInOneLaunch) {
  SpmmSpec spec;
  spec.feat = 64;
  spec.weighted = true;
  auto kernel_text = [](const CudaSource& src) { return src.source.substr(src.source.find("// kernel ")); };
  struct Expect {
    std::string format;
    size_t launches, parts;  // body launches; parts in the last one
    bool atomics;
  };
  for (const Expect& e : std::vector<Expect>{{"hyb:c=1,B=3", 2, 4, true},
                                             {"hyb:c=3,B=2", 2, 9, true},
                                             {"ell:w=8", 2, 1, true},
                                             {"dcsr", 2, 1, false},
                                             {"bsr:b=4", 1, 1, false},
                                             {"coo", 2, 1, true}}) {
    const FormatSpec f = FormatSpec::parse(e.format);
    const CudaSource src = emit_cuda_source({lower_spmm_gpu(spec, f, default_gpu_spmm_knobs(spec, f))});
    const auto& body = src.kernels[0].body;
    ASSERT_EQ(body.size(), e.launches) << e.format;
    EXPECT_EQ(body.back().parts.size(), e.parts) << e.format << ": every part in the last launch";
    if (e.launches == 2) {
      EXPECT_EQ(body[0].parts.size(), 1u) << e.format << ": the zeroing launch";
    }
    EXPECT_EQ(kernel_text(src).find("strata_atomic_add(&Y[") != std::string::npos, e.atomics) << e.format;
    GpuSpmmKnobs det = default_gpu_spmm_knobs(spec, f);
    det.deterministic = true;
    const CudaSource dsrc = emit_cuda_source({lower_spmm_gpu(spec, f, det)});
    if (gpu_uses_tasks(f, det)) {
      ASSERT_EQ(dsrc.kernels[0].body.size(), 1u) << e.format << ": owner tasks zero and sum in one launch";
      EXPECT_EQ(dsrc.kernels[0].body[0].parts.size(), 1u) << e.format;
    }
    EXPECT_EQ(kernel_text(dsrc).find("strata_atomic_add("), std::string::npos) << e.format << " deterministic";
  }
  // hyb with one column part: only the widest bucket (split rows) adds atomically;
  // the other buckets store, and still share the launch.
  const CudaSource src = emit_cuda_source({lower_spmm_gpu(spec, FormatSpec::parse("hyb:c=1,B=2"), {8, 32, 2, 1, false, 0})});
  const std::string text = kernel_text(src);
  int atomics = 0;
  for (size_t pos = text.find("strata_atomic_add(&Y["); pos != std::string::npos;
       pos = text.find("strata_atomic_add(&Y[", pos + 1)) {
    const std::string line = text.substr(pos, text.find('\n', pos) - pos);
    EXPECT_NE(line.find("p2_rows"), std::string::npos) << "an atomic outside the widest bucket: " << line;
    ++atomics;
  }
  EXPECT_EQ(atomics, 2) << "the widest bucket adds its two coarsened features atomically";
  EXPECT_EQ(src.kernels[0].body.back().parts.size(), 3u);
  for (const auto& fs : kFormats) {
    for (const SddmmSpec sd : {SddmmSpec{SddmmKind::Dot, 64, DType::I32}, SddmmSpec{SddmmKind::Add, 4, DType::I32}}) {
      const FormatSpec f = FormatSpec::parse(fs);
      const CudaSource s2 = emit_cuda_source({lower_sddmm_gpu(sd, f, default_gpu_sddmm_knobs(sd, f))});
      ASSERT_EQ(s2.kernels[0].body.size(), 1u) << fs << " " << sd.name();
      EXPECT_EQ(kernel_text(s2).find("strata_atomic_add("), std::string::npos) << fs;
    }
  }
}

TEST(CudaEmitter, GoldenHybSpmm) {
  SpmmSpec spec;
  spec.feat = 64;
  const FormatSpec f = FormatSpec::parse("hyb:c=1,B=2");
  const std::string source = emit_cuda_source({lower_spmm_gpu(spec, f, default_gpu_spmm_knobs(spec, f))}).source;
  ::strata::testing::expect_golden("sparse_compiler/golden/cuda/spmm_f64_i32_hyb_c1_B2.cu",
                                   source.substr(source.find("// kernel ")));
}

TEST(GpuFormatSchedule, SearchSpacesHoldOnlyValidKnobs) {
  for (const auto& fs : kFormats) {
    const FormatSpec f = FormatSpec::parse(fs);
    for (int64_t F : {1, 17, 64}) {
      SpmmSpec spec;
      spec.feat = F;
      const auto space = gpu_spmm_search_space(spec, f);
      EXPECT_GE(space.size(), 2u) << fs << " F=" << F;
      std::set<std::string> names;
      bool any_det = false;
      for (const auto& k : space) {
        EXPECT_TRUE(names.insert(k.str()).second) << "duplicate " << k.str();
        EXPECT_EQ(k.row_parts, 1) << fs;
        any_det |= k.deterministic;
        EXPECT_NO_THROW(schedule_spmm_gpu(spec, f, k)) << fs << " " << k.str();
      }
      EXPECT_EQ(any_det, f.kind == FormatKind::Ell || f.kind == FormatKind::Hyb || f.kind == FormatKind::Coo) << fs;
      const SddmmSpec sd{SddmmKind::Dot, F, DType::I32};
      for (const auto& k : gpu_sddmm_search_space(sd, f)) EXPECT_NO_THROW(schedule_sddmm_gpu(sd, f, k)) << fs;
    }
  }
  // Equal slots per group: the default gives each group the widest bucket's width.
  SpmmSpec spec;
  const GpuSpmmKnobs k = default_gpu_spmm_knobs(spec, FormatSpec::parse("hyb:c=2,B=5"));
  EXPECT_EQ(gpu_group_slots(FormatSpec::parse("hyb:c=2,B=5"), k), 32);
  EXPECT_EQ(gpu_group_slots(FormatSpec::parse("ell:w=8"), k), 8);
  GpuSpmmKnobs det = k;
  det.deterministic = true;
  EXPECT_EQ(gpu_inspector_grain(FormatSpec::parse("hyb:c=2,B=3"), det, 4096), 32) << "tasks of 32 slots";
  EXPECT_EQ(gpu_inspector_grain(FormatSpec::parse("hyb:c=2,B=3"), k, 4096), 4096) << "no tasks: the CPU grain";
  EXPECT_FALSE(gpu_uses_tasks(FormatSpec::parse("bsr:b=4"), det)) << "bsr has no atomics to avoid";
}

TEST(GpuFormatScheduleErrorTest, KnobsThatDoNotFitAFormatAreRefusedByName) {
  SpmmSpec spec;
  spec.feat = 64;
  ::strata::testing::expect_user_error(
      [&] { schedule_spmm_gpu(spec, FormatSpec::parse("hyb:c=2,B=5"), {8, 32, 2, 3, false, 0}); },
      {"row_parts = 3", "format hyb:c=2,B=5 has its own parts"});
  ::strata::testing::expect_user_error(
      [&] { schedule_spmm_gpu(spec, FormatSpec::csr(), {8, 32, 2, 1, false, 16}); },
      {"group_slots = 16", "not csr"});
  ::strata::testing::expect_user_error(
      [&] { schedule_spmm_gpu(spec, FormatSpec::parse("ell:w=4"), {8, 32, 1, 1, false, -2}); },
      {"group_slots = -2", "must not be negative"});
  ::strata::testing::expect_user_error(
      [&] { schedule_spmm_gpu(spec, FormatSpec::parse("dcsr"), {8, 32, 3, 1, false, 0}); },
      {"coarsen = 3", "divide the feature size 64"});
  ::strata::testing::expect_user_error(
      [&] { schedule_sddmm_gpu({SddmmKind::Dot, 64, DType::I32}, FormatSpec::parse("bsr:b=2"), {8, 12, 1}); },
      {"lanes = 12", "power of two"});
  ::strata::testing::expect_user_error(
      [&] { schedule_spmm_gpu(spec, FormatSpec::parse("dcsr:cols=64"), {8, 32, 1, 1, false, 0}); },
      {"format dcsr:cols=64: column tiles are a CPU format"});
  ::strata::testing::expect_user_error(
      [&] { schedule_sddmm_gpu({SddmmKind::Dot, 64, DType::I32}, FormatSpec::parse("dcsr:cols=64"), {8, 32, 1}); },
      {"column tiles are a CPU format"});
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, GpuFormatSchedule, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "int64" : "int32"; });

}  // namespace
}  // namespace strata::sc
