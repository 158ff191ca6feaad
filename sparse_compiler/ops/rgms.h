// The RGMS front door: a relational graph in the relation-major 3-level format
// (built once per graph by a native inspector) and the generated kernels over it.
//
//   RelationalGraph g = RelationalGraph::from_hetero(hetero, Normalization::RightByRelation);
//   RgmsKernels k(g, {.fin = 16, .fout = 16}, RgmsOrder::Fused);
//   k.forward(X, W, Y);        // Y[i] = sum_r sum_j a_r(i,j) X[j] W_r
//
// Every output row has one owner task (task_rows / rel_tasks), so forward runs are
// deterministic and use no atomics. The input gradient is forward() of the kernels
// built on g.reversed() with W_r transposed; the weight gradient is weight_grad()
// from H = aggregate(X). Featureless (one-hot) input gathers weight rows instead
// (forward_embed); with bases W_r = sum_b C[r,b] V_b, only the rows each relation
// reads are composed (basis_rows on the reversed graph, then gather). An object
// compiles the kernel set it is asked for (RgmsKernelSet): the layers ask for the
// chosen order's kernels only, the tuner for every order's.
#pragma once

#include <memory>
#include <vector>

#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/relational_graph.h"
#include "sparse_compiler/ops/rgms_programs.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::sc {

// AggregateFirstEll3d aggregates over the ELL3D decomposition (formats/ell3d.h).
// Mixed picks per relation (rgms_mixed_split): fused for the relations that reach
// fewer rows than they have sources, transform-first for the others, as two parts
// of the relational graph whose kernels write one Y.
enum class RgmsOrder : uint8_t { Fused, AggregateFirst, TransformFirst, AggregateFirstEll3d, Mixed };
const char* rgms_order_name(RgmsOrder o);
RgmsOrder parse_rgms_order(const std::string& s, const std::string& what);

// The mixed order's choice per relation: true where transform-first costs fewer
// multiply-adds than the fused order, counted on the graph (fused: its (relation,
// row) pairs times fin x fout, plus nnz x fin to aggregate; transform-first: its
// sources times fin x fout, plus nnz x fout to gather, plus writing T).
std::vector<bool> rgms_mixed_split(const RelationalGraph& g, const RgmsSpec& spec);
// The order a graph gets without tuning, from that count: fused where every
// relation is cheaper fused, transform-first where every one is cheaper that way,
// mixed otherwise.
RgmsOrder rgms_default_order(const RelationalGraph& g, const RgmsSpec& spec);

// Which kernels an RgmsKernels object compiles: all of them (every order, the
// gradients), or only the one-hot input's pair (embed, embed_grad), which is all a
// featureless first layer runs: its kernels for fin = 1 serve nothing else. A
// one-hot layer with a basis decomposition (spec.fin = the number of bases) runs
// BasisPairs on the reversed graph (the weight rows the relations read, and all
// the gradients) and BasisGather on the graph (the gather of those rows).
// A layer compiles less: Forward (the kernels forward() of the object's order runs,
// nothing of the other orders: the input gradient's set on the reversed graph, and
// inference's), Training (Forward plus aggregate and weight_grad, for dW), Embed
// (embed alone) and BasisRows (basis_rows alone) for inference.
enum class RgmsKernelSet : uint8_t { All, OneHot, BasisGather, BasisPairs, Forward, Training, Embed, BasisRows };
const char* rgms_kernel_set_name(RgmsKernelSet set);  // "one-hot set (embed, embed_grad)", ...

class RgmsKernels {
 public:
  RgmsKernels(const RelationalGraph& g, RgmsSpec spec, RgmsOrder order, Backend backend = Backend::Generated,
              std::optional<CpuKnobs> knobs = {}, RgmsKernelSet set = RgmsKernelSet::All);
  ~RgmsKernels();

  // X [cols, fin], W [relations, fin, fout] -> Y [rows, fout].
  void forward(const Tensor& X, const Tensor& W, Tensor& Y) const;
  // H [pairs, fin]: the per-(relation, row) aggregation of X.
  void aggregate(const Tensor& X, Tensor& H) const;
  // dW [relations, fin, fout] from H and dY [rows, fout].
  void weight_grad(const Tensor& H, const Tensor& dY, Tensor& dW) const;
  // One-hot input (spec.fin unused): W [relations, cols, fout] -> Y [rows, fout].
  void forward_embed(const Tensor& W, Tensor& Y) const;
  // Built on the reversed graph: dY [cols, fout] -> dW [relations, rows, fout],
  // the weight gradient of forward_embed on the original graph.
  void embed_grad(const Tensor& dY, Tensor& dW) const;
  // One-hot input with bases, W_r = sum_b C[r, b] V_b (spec.fin = B). On the
  // reversed graph (set BasisPairs; rows = the forward's sources): C [relations, B],
  // V [B, rows, fout] -> T [pairs, fout], the rows of W_r that relation r reads,
  // pair q of the reversed graph being source slot q of the graph.
  void basis_rows(const Tensor& C, const Tensor& V, Tensor& T) const;
  // On the graph (set BasisGather or All): T [sources, fout] -> Y [rows, fout],
  // Y[i] = sum_r sum_j a_r(i, j) T[slot of (r, j)] (transform-first's gather).
  void gather(const Tensor& T, Tensor& Y) const;
  // Set BasisPairs, on the reversed graph: dY [cols, fout] (the forward's rows) ->
  // dC [relations, B], dV [B, rows, fout], the gradients of gather(basis_rows(C, V)).
  void basis_embed_grad(const Tensor& C, const Tensor& V, const Tensor& dY, Tensor& dC, Tensor& dV) const;

  RgmsOrder order() const { return order_; }
  static constexpr int kEll3dMaxBucket = 4;  // buckets of 1, 2, 4, 8, 16 slots
  double compile_ms() const { return compile_ms_; }
  std::string describe() const;
  // Identifies the generated code (a hash of the set's kernel sources; "reference"
  // for the reference backend): tuning records key on it, so a choice measured on
  // code that has since changed is measured again.
  std::string code_key() const;

 private:
  struct Impl;
  void run(int which, KernelArgs& a) const { run_on(g_, which, a); }
  // Runs kernel `which` with `part`'s arrays bound (g_, or a part of the mixed order).
  void run_on(const RelationalGraph& part, int which, KernelArgs& a) const;
  // Transform-first over `part` (W holds its relations' blocks): the source
  // transform into T, then kernel `gather` (gather, or gather_add into Y).
  void transform_first_on(const RelationalGraph& part, const Tensor& X, const Tensor& W, Tensor& Y, int gather) const;
  RelationalGraph g_;
  RgmsSpec spec_;
  RgmsOrder order_;
  Backend backend_;
  double compile_ms_ = 0;
  std::unique_ptr<Impl> impl_;
};

// One RGMS kernel as RgmsKernels compiles it for the CPU, by name (rgms_kernel_names():
// fused, aggregate, transform, source_transform, gather, weight_grad, ell3d, embed,
// embed_grad, gather_add, pair_sum, basis_grad, basis_coeff_grad,
// basis_rows): its stage-I program (with the task parameters its schedule uses) and
// its scheduled loops before lower_schedule; `block` is the rows per register block
// of the transforms (1: unblocked). `strata compile rgms` prints them.
struct RgmsCpuKernel {
  Kernel program;
  Kernel scheduled;
  int block = 1;
};
const std::vector<std::string>& rgms_kernel_names();
RgmsCpuKernel rgms_cpu_kernel(const std::string& name, const RgmsSpec& spec, const CpuKnobs& knobs);

// Plain loops over the same format: the reference path.
void reference_rgms(const RelationalGraph& g, const Tensor& X, const Tensor& W, Tensor& Y);

}  // namespace strata::sc
