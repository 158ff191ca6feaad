// Relational aggregation (R-GCN's message passing) on the autograd tape, running
// the compiler's RGMS kernels (sparse_compiler/ops/rgms.h).
//
//   Y[i] = Σ_r Σ_{j ∈ N_r(i)} a_r(i, j) · X[j] · W_r        (relational_matmul)
//   Y[i] = Σ_r Σ_{j ∈ N_r(i)} a_r(i, j) · W_r[j]            (relational_embed: one-hot X)
//   the same with W_r = Σ_b c_rb V_b                         (relational_basis_embed)
//
// Backward:
//   dX = Σ_r A_rᵀ dY W_rᵀ: the forward kernels built on the reversed graph, with each
//        W_r transposed;
//   dW_r = H_rᵀ dY with H = aggregate(X) (per (relation, row) pair): the forward
//        kernels' aggregate + weight_grad;
//   one-hot: dW_r[j] = Σ_i a_r(i, j) dY[i]: embed_grad on the reversed graph;
//   one-hot with bases: dV_b = Σ_r c_rb dW_r and dc_rb = <dW_r, V_b>, with dW_r
//        formed only at the rows relation r reads (the basis embedding kernels).
// W is a Var of shape [R, fin, fout] or [R, fin·fout] (the latter is what a basis
// decomposition W = c·V produces with ag::matmul, whose backward then gives the
// dense gradients of V and c).
//
// RelationalKernels builds, once per graph, every kernel the layers ask for: per
// (fin, fout) the forward kernels on g and the backward ones on g.reversed(); per
// one-hot width the embedding kernels; per (bases, width) the basis embedding's. Each matmul kernel set gets the order
// runtime.plans recorded for its role; else, with tuning on, sc::tune_rgms's order (measured on this graph,
// recorded); otherwise sc::rgms_default_order's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "layers/graph_kernels.h"
#include "sparse_compiler/ops/rgms.h"

namespace strata::nn {

struct RelationalKernelRequests {
  std::vector<std::pair<int64_t, int64_t>> matmuls;  // (fin, fout)
  std::vector<int64_t> embeds;                       // fout of one-hot layers
  std::vector<std::pair<int64_t, int64_t>> basis_embeds;  // (bases, fout) of one-hot layers with bases
  bool backward = true;                                   // false (inference): compile only what the forward passes run
  void add_matmul(int64_t fin, int64_t fout);
  void add_embed(int64_t fout);
  void add_basis_embed(int64_t bases, int64_t fout);
};

// What the header / infer print for one kernel set.
struct RelationalKernelRecord {
  std::string role;      // "rgms 16->4 forward"
  std::string graph;     // "G" or "Gᵀ"
  std::string order;     // "fused", ...
  std::string describe;  // RgmsKernels::describe()
  std::string origin;    // "default" (rgms_default_order) | "tuned (fused 1.2 ms, ...)" | "tuning record" | "replayed"
  double compile_ms = 0, tune_ms = 0;
};

class RelationalKernels {
 public:
  RelationalKernels(sc::RelationalGraph g, const RelationalKernelRequests& requests, const KernelRuntime& runtime,
                    std::optional<sc::RgmsOrder> force_order = {});

  const sc::RelationalGraph& graph() const { return g_; }
  const sc::RelationalGraph& reversed() const { return rev_; }
  const sc::RgmsKernels& forward(int64_t fin, int64_t fout) const;
  const sc::RgmsKernels& backward(int64_t fin, int64_t fout) const;  // built on reversed(), spec (fout, fin)
  const sc::RgmsKernels& embed(int64_t fout) const;
  const sc::RgmsKernels& embed_backward(int64_t fout) const;
  // One-hot layers with bases: the gather on g, the weight rows and gradients on reversed().
  const sc::RgmsKernels& basis_gather(int64_t bases, int64_t fout) const;
  const sc::RgmsKernels& basis_pairs(int64_t bases, int64_t fout) const;
  bool has_matmul(int64_t fin, int64_t fout) const { return mm_.count({fin, fout}) > 0; }

  const std::vector<RelationalKernelRecord>& records() const { return records_; }
  double compile_ms() const { return compile_ms_; }  // wall time: the sets compile concurrently
  double tune_ms() const { return tune_ms_; }
  double build_ms() const { return build_ms_; }
  const KernelRuntime& runtime() const { return runtime_; }

 private:
  struct Pair {
    std::unique_ptr<sc::RgmsKernels> fwd, bwd;
  };
  sc::RgmsOrder choose(const sc::RelationalGraph& g, const sc::RgmsSpec& spec, RelationalKernelRecord& rec);
  sc::RelationalGraph g_, rev_;
  KernelRuntime runtime_;
  std::optional<sc::RgmsOrder> force_;
  std::map<std::pair<int64_t, int64_t>, Pair> mm_;
  std::map<int64_t, Pair> emb_;
  std::map<std::pair<int64_t, int64_t>, Pair> basis_;
  std::vector<RelationalKernelRecord> records_;
  double compile_ms_ = 0, tune_ms_ = 0, build_ms_ = 0;
};

// Rewrites the graph's index arrays as int64 (graphs past 2^31 get int64 by
// themselves; tests and benchmarks use this to run the int64 kernels on small ones).
void widen_indices(sc::RelationalGraph& g);

// Y [rows, fout] = Σ_r A_r X W_r; x [cols, fin], w [R, fin, fout] or [R, fin·fout].
ag::Var relational_matmul(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x, const ag::Var& w,
                          int64_t fout);
// Y [rows, fout] = Σ_r A_r W_r (one-hot input); w [R, cols, fout] or [R, cols·fout].
ag::Var relational_embed(ag::Tape& tape, const RelationalKernels& k, const ag::Var& w, int64_t fout);
// Y [rows, fout] = Σ_r A_r W_r with W_r = Σ_b coeff[r, b] basis[b] (one-hot input);
// coeff [R, B], basis [B, cols·fout]. Never forms W: only the rows each relation
// reads are composed, in the forward and in the gradients.
ag::Var relational_basis_embed(ag::Tape& tape, const RelationalKernels& k, const ag::Var& coeff, const ag::Var& basis,
                               int64_t fout);
// The rows of the inputs stacked (equal column counts).
ag::Var concat_rows(ag::Tape& tape, const std::vector<ag::Var>& xs);

}  // namespace strata::nn
