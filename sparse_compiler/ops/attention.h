// GAT's sparse kernels for one bound graph, compiled together at graph load (the
// fused forwards together on first use):
// the unfused forward (score, softmax, aggregation), the fused forward (the
// three fused by the compiler's passes, scores never in memory; two-pass or
// online softmax, GatSpec::fused_softmax), the fused forward that keeps scores
// and attention for training, and the backward (recompute after a
// fused forward, attention gradient, softmax backward, source-score gradient, and
// the aggregation over Aᵀ); for evaluation and inference, the forwards alone
// (GatKernelSet). Shapes: see attention_programs.h. All edge tensors are
// [nnz, H] in A's CSR order.
#pragma once

#include <memory>
#include <optional>

#include "core/graph.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/ops/attention_programs.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::sc {

// The CPU schedule of a row program: rows in nnz-balanced parallel chunks, each
// row's outputs in registers, head and feature loops vectorized (per-edge dot
// products over as many heads as a head's features fill lanes summed by one
// transposing reduction), and rows that edge loops gather through an index
// prefetched `knobs.prefetch` edges ahead.
Kernel schedule_row_program_cpu(const Kernel& loops, const CpuKnobs& knobs);

// Which kernels a GatKernels compiles: the forwards only (evaluation and inference
// run no backward), or the forwards and every backward piece (training), or the
// per-head SDDMM (attention_grad) and the two aggregations alone (products: with one
// feature per head, the element-wise products of node pairs and their gradient,
// layers/pair_scores.h). Calling a piece the set lacks is an error that names it.
enum class GatKernelSet : uint8_t { Inference, Training, Products };
const char* gat_kernel_set_name(GatKernelSet s);  // "inference", "training", "products"

class GatKernels {
 public:
  // Without `knobs`, each kernel gets the untuned ones: the host's vector lanes and
  // prefetch where what it gathers outgrows the cache (untuned_gather_knobs).
  GatKernels(const Graph& A, GatSpec spec, Backend backend = Backend::Generated, std::optional<CpuKnobs> knobs = {},
             GatKernelSet set = GatKernelSet::Training);
  ~GatKernels();

  const GatSpec& spec() const { return spec_; }
  GatKernelSet kernel_set() const { return set_; }
  Backend backend() const { return backend_; }
  const Graph& graph() const { return A_; }
  double compile_ms() const { return compile_ms_; }  // at graph load (not the fused forwards)
  // Whether the fused forwards are compiled yet (generated backend; on first use).
  bool fused_compiled() const;
  std::string describe() const;
  // Identifies the generated code (a hash of every kernel's source, whether this
  // set compiles it or not, so both sets share tuning records; "reference" for the
  // reference backend), so tuning records measured on other code are not reused.
  std::string code_key() const;

  // Forward, unfused: E = score(XL, XR); P, M, S = softmax(E); Y = aggregate(P, X).
  void score(const Tensor& XL, const Tensor& XR, Tensor& E) const;
  void softmax(const Tensor& E, Tensor& P, Tensor& M, Tensor& S) const;
  void aggregate(const Tensor& P, const Tensor& X, Tensor& Y) const;
  // Forward, fused: in `form` (both are compiled), by default the spec's.
  void fused(const Tensor& XL, const Tensor& XR, const Tensor& X, Tensor& Y, Tensor& M, Tensor& S,
             std::optional<FusedSoftmax> form = {}) const;
  // Forward, fused, keeping the scores E and the attention P for the backward.
  void fused_saving(const Tensor& XL, const Tensor& XR, const Tensor& X, Tensor& Y, Tensor& M, Tensor& S, Tensor& E,
                    Tensor& P) const;
  // Backward pieces.
  void recompute(const Tensor& XL, const Tensor& XR, const Tensor& M, const Tensor& S, Tensor& E, Tensor& P) const;
  void attention_grad(const Tensor& dY, const Tensor& X, Tensor& dP) const;
  void softmax_backward(const Tensor& P, const Tensor& dP, const Tensor& E, Tensor& dPre, Tensor& dXL) const;
  void source_grad(const Tensor& dPre, Tensor& dXR) const;       // over Aᵀ
  void aggregate_transposed(const Tensor& P, const Tensor& dY, Tensor& dX) const;  // dX = Aᵀ-aggregation

 private:
  struct Impl;
  void run(int which, KernelArgs& args, bool transposed) const;
  // The fused forwards' common inputs and outputs, checked (messages "<what> XL", ...).
  KernelArgs fused_args(const char* what, const Tensor& XL, const Tensor& XR, const Tensor& X, Tensor& Y, Tensor& M,
                        Tensor& S) const;
  // Bytes of the buffer `name` (attention_programs.h's shapes) for the program over
  // A, or over Aᵀ when `transposed`.
  int64_t buffer_bytes(const std::string& name, bool transposed) const;
  Graph A_, At_;      // At_: Aᵀ, rows = sources
  Tensor At_eid_;     // int64 [nnz]: A's CSR position of every non-zero of Aᵀ
  GatSpec spec_;
  Backend backend_;
  GatKernelSet set_;
  double compile_ms_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::sc
