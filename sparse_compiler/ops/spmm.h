// The SpMM front door: Y = A · X for one bound graph A, through a generated kernel.
//
//   SpmmKernel spmm(A, {.feat = 64, .reduce = Reduce::Mean});
//   Tensor Y = spmm.run(X);           // X: float32 [A.num_cols, 64] -> Y [A.num_rows, 64]
//
// Construction picks the program variant (weighted or not, row/column scales),
// lowers and schedules it by the plan, compiles it through the kernel cache (or
// reuses a kernel compiled in a batch), binds the graph's arrays and runs the
// kernel's preprocess once. run() validates its arguments and names the offending
// one. Backend::Reference runs plain hand-written loops (ops/reference_kernels.h);
// Backend::Interpreter runs the unscheduled kernel in the IR interpreter: slow,
// and the ground truth the compiler's tests compare against.
//
// On a CUDA device (options.device = cuda): the graph's arrays are uploaded once at
// construction; Backend::Generated compiles the GPU schedule (plan.gpu; csr only)
// with NVRTC, Backend::CuSparse binds the cuSPARSE baseline
// (plan.cusparse_algorithm); run() takes and returns device tensors and queues the
// work on the device's default stream. Asking for a device without a usable GPU, or
// for cuSPARSE on the CPU, is a UserError that says why.
#pragma once

#include <optional>
#include <string>

#include "core/graph.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/codegen/cuda_kernel.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/cusparse_baseline.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "sparse_compiler/ops/programs.h"

namespace strata::sc {

enum class Reduce : uint8_t { Sum, Mean };
enum class Backend : uint8_t { Generated, Reference, Interpreter, CuSparse };
const char* backend_name(Backend b);
Backend parse_backend(const std::string& s, const std::string& what);

class CudaOpBinding;
class SharedPairsSpmm;

struct SpmmOptions {
  int64_t feat = 0;
  Reduce reduce = Reduce::Sum;
  bool weighted = false;  // multiply by the edge values (A.values(), or per call)
  Tensor row_scale;       // optional float32 [A.num_rows]
  Tensor col_scale;       // optional float32 [A.num_cols]
  Backend backend = Backend::Generated;
  std::optional<SpmmPlan> plan;  // default: default_plan(spec, A), the untuned plan for the graph
  Device device = Device::cpu();
};

class SpmmKernel {
 public:
  SpmmKernel(const Graph& A, SpmmOptions options);
  // Uses `compiled` (from compile_cpu on lower(spec(A, options), plan)) instead of compiling;
  // options.plan must be that plan.
  SpmmKernel(const Graph& A, SpmmOptions options, CompiledKernel compiled);
  // Uses `compiled` (from compile_cuda on lower_cuda(spec(A, options), plan)) on options.device.
  SpmmKernel(const Graph& A, SpmmOptions options, CompiledCudaKernel compiled);

  // The program variant for A and the options (validates the options).
  static SpmmSpec spec(const Graph& A, const SpmmOptions& options);
  // The scheduled, lowered kernel for a spec and a plan.
  static Kernel lower(const SpmmSpec& spec, const SpmmPlan& plan);
  // The same for the GPU schedule (plan.gpu), ready for the CUDA emitter.
  static Kernel lower_cuda(const SpmmSpec& spec, const SpmmPlan& plan);
  // The plan template for a spec: CSR, the host's vector lanes, no prefetch, plain
  // stores (the tuner's starting point and the [formats] baseline, "plain CSR").
  static SpmmPlan default_plan(const SpmmSpec& spec);
  // The plan a kernel bound to A gets without tuning: the template plus the knobs
  // that pay by A's sizes alone (untuned_knobs.h: streaming stores for a Y larger
  // than the cache, X prefetch for an X larger than twice it).
  static SpmmPlan default_plan(const SpmmSpec& spec, const Graph& A);

  // X in the plan's layout (plan().x_layout; row-major [cols, F] by default).
  Tensor run(const Tensor& X, const Tensor& edge_values = {}) const;
  void run_into(const Tensor& X, Tensor& Y, const Tensor& edge_values = {}) const;

  const SpmmSpec& program_spec() const { return spec_; }
  const SpmmPlan& plan() const { return plan_; }
  // The shared-pairs rewrite the plan asked for (null without pair rounds).
  const SharedPairsSpmm* shared_pairs() const { return shared_pairs_.get(); }
  // The inspected format (null for CSR and the non-generated backends).
  const InspectedFormat* format() const { return format_ ? &*format_ : nullptr; }
  const CompiledKernel* compiled() const { return compiled_ ? &*compiled_ : nullptr; }
  const CompiledCudaKernel* compiled_cuda() const;
  // The cuSPARSE baseline (Backend::CuSparse on a CUDA device), or nullptr.
  const CusparseSpmm* cusparse() const { return cusparse_.get(); }
  const Graph& graph() const { return A_; }
  Device device() const { return opt_.device; }
  // "spmm_f64_i32 csr lanes=16,grain=4096,prefetch=0 (generated)",
  // "spmm_f64_i32 csr gpu r8_l32_c2_p1 (generated, cuda:0)"
  std::string describe() const;

 private:
  void bind();
  void bind_cuda(std::optional<CompiledCudaKernel> compiled);
  void run_cuda(const Tensor& X, Tensor& Y, const Tensor& edge_values) const;
  KernelArgs args(const Tensor& X, const Tensor& Y, const Tensor& edge_values) const;

  Graph A_;
  SpmmOptions opt_;
  SpmmSpec spec_;
  SpmmPlan plan_;
  Tensor row_scale_, col_scale_;
  std::optional<CompiledKernel> compiled_;
  std::optional<InspectedFormat> format_;
  Kernel reference_;  // Backend::Interpreter: the unscheduled stage-III kernel
  std::vector<Tensor> workspaces_;
  PackedArgs packed_;  // the compiled kernel's arguments, the graph's bound once
  std::shared_ptr<CudaOpBinding> cuda_;    // on a CUDA device
  std::shared_ptr<CusparseSpmm> cusparse_;  // Backend::CuSparse
  std::shared_ptr<SharedPairsSpmm> shared_pairs_;  // plan.pair_rounds > 0: runs in place of compiled_
};

}  // namespace strata::sc
