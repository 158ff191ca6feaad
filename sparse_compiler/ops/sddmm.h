// The SDDMM front door: per-edge values computed from per-node rows, for one bound
// graph A, through a generated kernel.
//
//   Dot:  O[e] = X[i] · Y[j]           X: float32 [rows, F], Y: [cols, F] -> O: [nnz]
//   Add:  O[e, h] = XL[i, h] + XR[j, h] XL: [rows, H], XR: [cols, H]      -> O: [nnz, H]
// for every stored non-zero e = (i, j) of A, in A's CSR position order. A dot
// product's plan may read X and Y panel by panel (plan.x_layout panel:W): both are
// then passed as [F/W, rows, W] (dense_layout.h, to_layout), and the kernel zeroes O
// and adds one panel's partial products per pass over the edges.
//
// On a CUDA device (options.device = cuda) the graph is uploaded once and run()
// takes and returns device tensors: Backend::Generated compiles the GPU schedule
// (options.gpu, default default_gpu_sddmm_knobs) with NVRTC and runs its hoisted
// row search once at construction; Backend::CuSparse (Dot only) binds cuSPARSE's
// SDDMM with a CSR output.
#pragma once

#include <optional>

#include "core/graph.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::sc {

struct SddmmOptions {
  SddmmKind kind = SddmmKind::Dot;
  int64_t feat = 0;  // Dot: feature length; Add: heads
  Backend backend = Backend::Generated;
  std::optional<KernelPlan> plan{};  // default: default_plan(spec, A), the untuned plan for the graph
  Device device = Device::cpu();
  std::optional<GpuSddmmKnobs> gpu = std::nullopt;  // default: default_gpu_sddmm_knobs(spec)
};

class SddmmKernel {
 public:
  SddmmKernel(const Graph& A, SddmmOptions options);
  SddmmKernel(const Graph& A, SddmmOptions options, CompiledKernel compiled);
  // Uses `compiled` (from compile_cuda on lower_sddmm_gpu) on options.device.
  SddmmKernel(const Graph& A, SddmmOptions options, CompiledCudaKernel compiled);

  static SddmmSpec spec(const Graph& A, const SddmmOptions& options);
  static Kernel lower(const SddmmSpec& spec, const KernelPlan& plan);
  // The plan template: csr with the host's knobs (what a precompiled kernel without a
  // plan was built from).
  static KernelPlan default_plan();
  // The plan an SDDMM bound to A without a plan runs (untuned_knobs.h): for dot
  // products, column tiles where A's rows are long per tile, else prefetch of the
  // gathered Y rows once Y outgrows 32 MiB; the template for per-head sums.
  static KernelPlan default_plan(const SddmmSpec& spec, const Graph& A);

  Tensor run(const Tensor& X, const Tensor& Y) const;
  void run_into(const Tensor& X, const Tensor& Y, Tensor& O) const;

  const SddmmSpec& program_spec() const { return spec_; }
  const KernelPlan& plan() const { return plan_; }
  const InspectedFormat* format() const { return format_ ? &*format_ : nullptr; }
  const CompiledKernel* compiled() const { return compiled_ ? &*compiled_ : nullptr; }
  const CompiledCudaKernel* compiled_cuda() const;
  const GpuSddmmKnobs& gpu_knobs() const { return gpu_; }
  Device device() const { return opt_.device; }
  std::string describe() const;

 private:
  void bind();
  void bind_cuda(std::optional<CompiledCudaKernel> compiled);

  Graph A_;
  SddmmOptions opt_;
  SddmmSpec spec_;
  KernelPlan plan_;
  std::optional<CompiledKernel> compiled_;
  std::optional<InspectedFormat> format_;
  Kernel reference_;
  std::vector<std::pair<std::string, Tensor>> workspaces_;
  PackedArgs packed_;  // the compiled kernel's arguments, the graph's bound once
  GpuSddmmKnobs gpu_;
  std::shared_ptr<CudaOpBinding> cuda_;      // on a CUDA device
  std::shared_ptr<CusparseSddmm> cusparse_;  // Backend::CuSparse
};

}  // namespace strata::sc
