// RelGraphConv (Schlichtkrull et al. 2018, R-GCN), as DGL's RelGraphConv:
//
//   h_i = act( Σ_r Σ_{j ∈ N_r(i)} a_r(i, j) x_j W_r  +  x_i W_self  +  b ),  then dropout
//
// a_r(i, j) is the graph's normalisation (R-GCN: 1 / |N_r(i)|, built into the
// relational graph). Weights per relation are either full (W [R, in, out]) or a basis
// decomposition W_r = Σ_b c_rb V_b (V [B, in·out], c [R, B]: W = c·V is an ag::matmul,
// so V and c get dense gradients). With `one_hot` input (featureless nodes, R-GCN's
// first layer) x is the identity: in = the graph's column count, the layer gathers
// weight rows (relational_embed) and the self-loop weight is a per-node embedding.
// Parameters: layers.<i>.weight | layers.<i>.basis + layers.<i>.coeff, .weight_self, .bias.
#pragma once

#include <vector>

#include "layers/parameter.h"
#include "layers/relational_ops.h"

namespace strata::nn {

enum class RelActivation : uint8_t { None, Relu };

struct RelGraphConvOptions {
  int64_t in = 0, out = 0, relations = 0;
  int64_t num_bases = 0;  // 0: full weights; otherwise the basis size (1 <= B)
  bool self_loop = true, bias = true, one_hot = false;
  RelActivation activation = RelActivation::None;
  float dropout = 0.0f;  // on the output, training mode only
};

class RelGraphConv {
 public:
  RelGraphConv(const RelGraphConvOptions& o, Rng& rng, int index);

  void request_kernels(RelationalKernelRequests& r) const;
  // x: [cols, in] (undefined for one-hot input) -> [rows, out].
  ag::Var forward(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x, uint64_t dropout_seed) const;
  // Inference over part of the graph: k's graph is the subgraph induced on `nodes`
  // (sc::RelationalGraph::induced; the ids of its rows in the whole graph), x has a
  // row per node of it. A one-hot layer's subgraph keeps the whole graph's column ids
  // (induced(...).with_column_ids), by which it reads its weight rows. No gradients
  // flow (the tape's must be off).
  ag::Var forward_on(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x, const std::vector<int64_t>& nodes,
                     uint64_t dropout_seed) const;
  // The per-relation weights [R, in·out] (computed from the basis when decomposed).
  ag::Var relation_weights(ag::Tape& tape) const;

  const std::vector<Parameter>& parameters() const { return params_; }
  const RelGraphConvOptions& options() const { return o_; }
  std::string describe() const;

 private:
  RelGraphConvOptions o_;
  ag::Var propagate(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x, const std::vector<int64_t>* nodes,
                    uint64_t dropout_seed) const;
  ag::Var weight_, basis_, coeff_, weight_self_, bias_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
