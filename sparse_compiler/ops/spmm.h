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
#pragma once

#include <optional>
#include <string>

#include "core/graph.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/programs.h"

namespace strata::sc {

enum class Reduce : uint8_t { Sum, Mean };
enum class Backend : uint8_t { Generated, Reference, Interpreter };
const char* backend_name(Backend b);
Backend parse_backend(const std::string& s, const std::string& what);

struct SpmmOptions {
  int64_t feat = 0;
  Reduce reduce = Reduce::Sum;
  bool weighted = false;  // multiply by the edge values (A.values(), or per call)
  Tensor row_scale;       // optional float32 [A.num_rows]
  Tensor col_scale;       // optional float32 [A.num_cols]
  Backend backend = Backend::Generated;
  std::optional<SpmmPlan> plan;  // default: the default CPU plan for the host
};

class SpmmKernel {
 public:
  SpmmKernel(const Graph& A, SpmmOptions options);
  // Uses `compiled` (from compile_cpu on lower(spec(A, options), plan)) instead of compiling.
  SpmmKernel(const Graph& A, SpmmOptions options, CompiledKernel compiled);

  // The program variant for A and the options (validates the options).
  static SpmmSpec spec(const Graph& A, const SpmmOptions& options);
  // The scheduled, lowered kernel for a spec and a plan.
  static Kernel lower(const SpmmSpec& spec, const SpmmPlan& plan);
  static SpmmPlan default_plan(const SpmmSpec& spec);

  Tensor run(const Tensor& X, const Tensor& edge_values = {}) const;
  void run_into(const Tensor& X, Tensor& Y, const Tensor& edge_values = {}) const;

  const SpmmSpec& program_spec() const { return spec_; }
  const SpmmPlan& plan() const { return plan_; }
  // The inspected format (null for CSR and the non-generated backends).
  const InspectedFormat* format() const { return format_ ? &*format_ : nullptr; }
  const CompiledKernel* compiled() const { return compiled_ ? &*compiled_ : nullptr; }
  const Graph& graph() const { return A_; }
  std::string describe() const;  // "spmm_f64_i32 csr lanes=16,grain=4096,prefetch=0 (generated)"

 private:
  void bind();
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
};

}  // namespace strata::sc
