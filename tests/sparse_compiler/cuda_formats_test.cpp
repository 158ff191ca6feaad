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
    for (const auto& [F, knobs] : std::vector<std::pair<int64_t, GpuSpmmKnobs>>{
             {66, {4, 33, 2, 1, false, 0}}, {128, {2, 16, 4, 1, false, 0}}, {128, {2, 16, 4, 1, true, 16}}}) {
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

INSTANTIATE_TEST_SUITE_P(IndexWidth, GpuFormatSchedule, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "int64" : "int32"; });

}  // namespace
}  // namespace strata::sc
