// R-GCN for entity classification (Schlichtkrull et al. 2018) on a heterogeneous
// graph flattened into one id space (sc::RelationalGraph::from_hetero's order: node
// types one after another).
//
//   input ─ layer 0 (RelGraphConv in -> hidden, relu, dropout) ─ … ─ layer L-1 (hidden -> classes) ─ logits [N, C]
//
// The input is either
//   - one-hot (R-GCN's featureless setting, every node type without features used):
//     layer 0 gathers rows of its weights (relational_embed), in = N; or
//   - X [N, E] stacked per node type: types with features (when model.type_features
//     allows) through a per-type Linear projection to E = embedding_dim (sparse
//     features through the compiler's sparse-feature kernels, never densified), and
//     featureless types through a learned embedding [count, E].
// Parameters: input.<type>.weight / .bias / .embedding, layers.<i>.* (rel_graph_conv.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "layers/graph_kernels.h"
#include "layers/rel_graph_conv.h"
#include "models/gnn.h"

namespace strata::nn {

// One node type's input as the model sees it.
struct RgcnTypeInput {
  std::string name;
  int64_t count = 0;
  int64_t feat_dim = 0;                   // 0: featureless (or features not used)
  Tensor dense;                           // float32 [count, feat_dim] when dense
  const SparseFeatures* sparse = nullptr;  // when sparse
  const GraphKernels* kernels = nullptr;   // the sparse features' product kernels (set by the caller)
};

class RgcnModel {
 public:
  RgcnModel(const ModelConfig& config, const std::vector<RgcnTypeInput>& types, int64_t relations, int64_t classes,
            Rng& init);

  bool one_hot() const { return one_hot_; }
  int64_t num_nodes() const { return nodes_; }
  void request_kernels(RelationalKernelRequests& r) const;
  // Widths of the sparse-feature products type `t` needs (empty for dense / featureless).
  std::vector<int64_t> feature_product_widths(int t) const;
  // Logits [N, classes] for every node of every type.
  ag::Var forward(ag::Tape& tape, const RelationalKernels& k, const std::vector<RgcnTypeInput>& types,
                  uint64_t dropout_seed) const;
  // Inference over part of the graph (a batch's receptive field): `k` runs on the
  // subgraph induced on `nodes` (increasing global ids, so grouped by type;
  // sc::RelationalGraph::induced) and types[t] holds the features of type t's nodes
  // among them (count = how many; featureless types' embeddings are read at those
  // rows here). A one-hot first layer runs `first` instead: the same subgraph with
  // the whole graph's column ids (induced(...).with_column_ids), by which it reads its
  // weight rows. Logits [nodes.size(), classes]; the tape's gradients must be off.
  ag::Var forward_on(ag::Tape& tape, const RelationalKernels& first, const RelationalKernels& k,
                     const std::vector<RgcnTypeInput>& types, const std::vector<int64_t>& nodes) const;

  // With one-hot input and full weights, layer 0's weight [R, N·out] is read, and
  // gets a gradient, only at the rows (r, j) of the sources j of relation r in `g`
  // (AIFB: 26,425 of 745,650 rows): marks that support on the parameter, so that
  // optimizers skip the rest where that changes nothing (nn::GradientSupport).
  // Nothing to mark otherwise.
  void mark_gradient_support(const sc::RelationalGraph& g);

  const std::vector<Parameter>& parameters() const { return params_; }
  int64_t num_parameters() const { return count_parameters(params_); }
  int64_t num_classes() const { return classes_; }
  int num_layers() const { return static_cast<int>(layers_.size()); }
  const RelGraphConv& layer(int i) const { return *layers_[i]; }
  std::string describe() const;

 private:
  ModelConfig config_;
  bool one_hot_ = false;
  int64_t nodes_ = 0, relations_ = 0, classes_ = 0;
  struct TypeParams {
    std::string name;
    int64_t count = 0, feat_dim = 0;
    ag::Var weight, bias, embedding;
  };
  ag::Var run(ag::Tape& tape, const RelationalKernels& first, const RelationalKernels& k,
              const std::vector<RgcnTypeInput>& types, const std::vector<int64_t>* nodes, uint64_t dropout_seed) const;
  std::vector<TypeParams> inputs_;
  std::vector<std::unique_ptr<RelGraphConv>> layers_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
