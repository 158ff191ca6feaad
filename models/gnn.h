// GraphSAGE, GCN and GAT stacks built from a ModelConfig (the `model:` section of a
// training config, see apps/training/config.h).
//
//   input ─ dropout(input_dropout) ─ layer 0 ─ act ─ [l2norm] ─ dropout ─ layer 1 ─ … ─ layer L-1 ─ logits
//
// Layer widths: in -> hidden -> … -> hidden -> classes (one layer: in -> classes).
// GraphSAGE stacks SAGEConv (layers/sage_conv.h), GCN stacks GraphConv
// (layers/graph_conv.h), GAT stacks GATConv (layers/gat_conv.h): hidden layers of
// `gat.heads` heads of `hidden` features each (concatenated, or averaged with
// gat.concat false), the last layer `gat.output_heads` heads of `classes` features,
// averaged (the GAT paper's output layer). Parameters are Glorot-initialised from the Rng given to the
// constructor, layer by layer, so a seed fixes the initial model exactly. Sparse
// inputs go to the first layer as S (never densified); input dropout then drops
// S's stored entries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layers/gat_conv.h"
#include "layers/graph_conv.h"
#include "layers/layer.h"
#include "layers/sage_conv.h"

namespace strata::nn {

enum class ModelKind : uint8_t { GraphSage, Gcn, Gat, Rgcn };  // rgcn: models/rgcn.h
enum class Activation : uint8_t { Relu, Elu, LeakyRelu };
const char* model_kind_name(ModelKind k);
const char* activation_name(Activation a);

// ---- rgcn (models/rgcn.h): the model.* keys only R-GCN reads ----------------
enum class RgcnInput : uint8_t { Auto, OneHot, Embedding };
struct RgcnOptions {
  int64_t num_bases = 0;       // 0: a full weight per relation
  bool self_loop = true;       // W_self x_i
  RgcnInput input = RgcnInput::Auto;  // featureless nodes: one-hot (auto when no type has features) or embedding
  int64_t embedding_dim = 16;  // width of embeddings and of projected type features
  bool target_features_only = false;  // only the target type's features are used
};
// ---- end rgcn ------------------------------------------------------------------

struct ModelConfig {
  ModelKind kind = ModelKind::GraphSage;
  int layers = 2;
  int64_t hidden = 16;
  Activation activation = Activation::Relu;
  float negative_slope = 0.01f;  // leaky_relu
  float elu_alpha = 1.0f;        // elu
  float dropout = 0.5f;          // between layers
  float input_dropout = 0.0f;    // on the input features
  SageAggregator aggregator = SageAggregator::Mean;  // graphsage
  bool root_weight = true;                            // graphsage
  GcnNorm norm = GcnNorm::Both;                       // gcn
  bool l2_normalize = false;  // L2-normalise hidden representations (GraphSAGE paper)
  bool bias = true;
  // ---- GAT (model.gat.*) ----
  struct Gat {
    int64_t heads = 8;            // per hidden layer; model.hidden is the width per head
    int64_t output_heads = 1;     // of the last layer (averaged)
    bool concat = true;           // hidden layers: concatenate heads (else average)
    float negative_slope = 0.2f;  // attention scores' LeakyReLU
    float attn_dropout = 0.6f;    // on attention probabilities
    bool residual = false;
    bool add_self_loops = true;
  } gat;
  // ---- end GAT ----
  RgcnOptions rgcn;  // rgcn
  // link prediction's decoder (model.link.*, models/link_predictor.h): the dot product,
  // or an MLP of `layers` Linear maps over the pair's element-wise product.
  struct Link {
    bool mlp = false;
    int layers = 3;
  } link;
};

class GnnModel {
 public:
  GnnModel(const ModelConfig& config, int64_t in_features, int64_t num_classes, Rng& init);

  // The kernels forward() needs for an input that is sparse or dense.
  KernelRequests kernel_requests(bool sparse_input) const;
  // Logits [N, classes]. Dropout draws its masks from `dropout_seed` (training mode).
  ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& input,
                  uint64_t dropout_seed) const;
  // Mini-batch forward over sampled blocks (core/neighbor_sampler.h): layer i runs
  // over block_kernels[i] (kernels bound to block i, see layer_kernel_requests) on
  // the rows of the block's sources and keeps its first num_dst[i] rows, the next
  // block's sources; the result is the logits of the batch's seeds [B, classes].
  // `input` holds the first block's source rows. GraphSAGE, GCN and GAT (whose
  // attention runs over each block's edges, plus the self-loops of A + I: a
  // destination is its own source, at the same index).
  ag::Var forward_blocks(ag::Tape& tape, const std::vector<const GraphKernels*>& block_kernels,
                         const std::vector<int64_t>& num_dst, const NodeFeatures& input, uint64_t dropout_seed) const;
  // The kernels layer i alone needs (a block's kernels serve one layer).
  KernelRequests layer_kernel_requests(int i, bool sparse_input) const;

  const std::vector<Parameter>& parameters() const { return params_; }
  int64_t num_parameters() const { return count_parameters(params_); }
  const ModelConfig& config() const { return config_; }
  int64_t in_features() const { return in_; }
  int64_t num_classes() const { return classes_; }
  int num_layers() const { return static_cast<int>(layers_.size()); }
  const GraphLayer& layer(int i) const { return *layers_[i]; }
  // "graphsage: 2 layers 1433 -> 16 -> 7 (mean aggregator, root weight), relu, dropout 0.5, 46,103 parameters"
  std::string describe() const;

 private:
  ModelConfig config_;
  int64_t in_, classes_;
  // forward() and forward_blocks(): layer i over *kernels[i] (or kernels[0] for all),
  // its output cut to keep_rows[i] rows when given.
  ag::Var run(ag::Tape& tape, const std::vector<const GraphKernels*>& kernels, const std::vector<int64_t>& keep_rows,
              const NodeFeatures& input, uint64_t dropout_seed) const;

  std::vector<std::unique_ptr<GraphLayer>> layers_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
