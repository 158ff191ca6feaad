#include "models/gnn.h"

#include "core/autograd_ops.h"

namespace strata::nn {
namespace {

std::string with_commas(int64_t v) {
  std::string d = std::to_string(v), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

// A per-layer dropout seed from the step's seed (splitmix-style).
uint64_t layer_seed(uint64_t seed, int layer) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(layer + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::GraphSage: return "graphsage";
    case ModelKind::Gcn: return "gcn";
    case ModelKind::Gat: return "gat";
    case ModelKind::Rgcn: return "rgcn";
  }
  return "?";
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Elu: return "elu";
    case Activation::LeakyRelu: return "leaky_relu";
  }
  return "?";
}

GnnModel::GnnModel(const ModelConfig& config, int64_t in_features, int64_t num_classes, Rng& init)
    : config_(config), in_(in_features), classes_(num_classes) {
  STRATA_CHECK(config.kind != ModelKind::Rgcn, "rgcn models are built by models/rgcn.h, not GnnModel");
  STRATA_CHECK(config.layers >= 1, "model.layers must be at least 1, got {}", config.layers);
  STRATA_CHECK(in_features >= 1, "the model needs at least one input feature, got {}", in_features);
  STRATA_CHECK(num_classes >= 2, "node classification needs at least 2 classes, got {}", num_classes);
  int64_t width = in_features;
  for (int i = 0; i < config.layers; ++i) {
    const int64_t out = i + 1 == config.layers ? num_classes : config.hidden;
    if (config.kind == ModelKind::Gat) {  // GAT
      const bool last = i + 1 == config.layers;
      GatConvOptions o;
      o.heads = last ? config.gat.output_heads : config.gat.heads;
      o.concat = last ? false : config.gat.concat;
      o.negative_slope = config.gat.negative_slope;
      o.attn_dropout = config.gat.attn_dropout;
      o.residual = config.gat.residual;
      o.bias = config.bias;
      o.add_self_loops = config.gat.add_self_loops;
      auto layer = std::make_unique<GATConv>(width, out, o, init, i);
      for (const Parameter& p : layer->parameters()) params_.push_back(p);
      width = layer->out_features();
      layers_.push_back(std::move(layer));
      continue;
    }
    if (config.kind == ModelKind::GraphSage)
      layers_.push_back(
          std::make_unique<SAGEConv>(width, out, config.aggregator, config.root_weight, config.bias, init, i));
    else
      layers_.push_back(std::make_unique<GraphConv>(width, out, config.norm, config.bias, init, i));
    for (const Parameter& p : layers_.back()->parameters()) params_.push_back(p);
    width = out;
  }
}

KernelRequests GnnModel::kernel_requests(bool sparse_input) const {
  KernelRequests r;
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->request_kernels(r, i == 0 && sparse_input);
  r.feature_dropout = sparse_input && config_.input_dropout > 0.0f;
  return r;
}

KernelRequests GnnModel::layer_kernel_requests(int i, bool sparse_input) const {
  KernelRequests r;
  layers_[static_cast<size_t>(i)]->request_kernels(r, i == 0 && sparse_input);
  r.feature_dropout = i == 0 && sparse_input && config_.input_dropout > 0.0f;
  return r;
}

ag::Var GnnModel::forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& input,
                          uint64_t dropout_seed) const {
  return run(tape, {&kernels}, {}, input, dropout_seed);
}

ag::Var GnnModel::forward_blocks(ag::Tape& tape, const std::vector<const GraphKernels*>& block_kernels,
                                 const std::vector<int64_t>& num_dst, const NodeFeatures& input,
                                 uint64_t dropout_seed) const {
  STRATA_CHECK(config_.kind == ModelKind::GraphSage || config_.kind == ModelKind::Gcn || config_.kind == ModelKind::Gat,
               "mini-batch training runs GraphSAGE, GCN and GAT, not {}", model_kind_name(config_.kind));
  STRATA_ASSERT(block_kernels.size() == layers_.size() && num_dst.size() == layers_.size(), "{} blocks for {} layers",
                block_kernels.size(), layers_.size());
  return run(tape, block_kernels, num_dst, input, dropout_seed);
}

ag::Var GnnModel::run(ag::Tape& tape, const std::vector<const GraphKernels*>& kernels,
                      const std::vector<int64_t>& keep_rows, const NodeFeatures& input, uint64_t dropout_seed) const {
  NodeFeatures x = input;
  if (x.is_sparse()) {
    x.sparse_dropout = config_.input_dropout;
    x.sparse_seed = layer_seed(dropout_seed, 0);
  } else if (config_.input_dropout > 0.0f) {
    ag::Tape::Scope scope(tape, "input");
    x.dense = ag::dropout(tape, x.dense, config_.input_dropout, layer_seed(dropout_seed, 0));
  }
  ag::Var h;
  for (size_t i = 0; i < layers_.size(); ++i) {
    ag::Tape::Scope scope(tape, fmt::format("layers.{}", i));
    const GraphKernels& k = *kernels[kernels.size() == 1 ? 0 : i];
    if (const auto* gat = dynamic_cast<const GATConv*>(layers_[i].get()))  // GAT: seeded attention dropout
      h = gat->forward(tape, k, x, layer_seed(dropout_seed, 1000 + static_cast<int>(i)));
    else
      h = layers_[i]->forward(tape, k, x);
    // A block's layer computes a row per source; the next layer reads its destinations'.
    if (!keep_rows.empty() && keep_rows[i] < h.dim(0)) h = ag::narrow_rows(tape, h, keep_rows[i]);
    if (i + 1 == layers_.size()) break;
    switch (config_.activation) {
      case Activation::Relu: h = ag::relu(tape, h); break;
      case Activation::Elu: h = ag::elu(tape, h, config_.elu_alpha); break;
      case Activation::LeakyRelu: h = ag::leaky_relu(tape, h, config_.negative_slope); break;
    }
    if (config_.l2_normalize) h = ag::l2_normalize_rows(tape, h);
    h = ag::dropout(tape, h, config_.dropout, layer_seed(dropout_seed, static_cast<int>(i) + 1));
    x = NodeFeatures::from_dense(h);
  }
  return h;
}

std::string GnnModel::describe() const {
  std::string widths = std::to_string(in_);
  for (const auto& l : layers_) widths += " -> " + std::to_string(l->out_features());
  std::string detail;
  if (config_.kind == ModelKind::GraphSage)
    detail = fmt::format("{} aggregator{}", sage_aggregator_name(config_.aggregator),
                         config_.root_weight ? ", root weight" : "");
  else if (config_.kind == ModelKind::Gat)
    detail = fmt::format("{} x {} heads {}, {} output head{}, attention dropout {:g}, slope {:g}{}{}",
                         config_.hidden, config_.gat.heads, config_.gat.concat ? "concat" : "mean",
                         config_.gat.output_heads, config_.gat.output_heads == 1 ? "" : "s", config_.gat.attn_dropout,
                         config_.gat.negative_slope, config_.gat.residual ? ", residual" : "",
                         config_.gat.add_self_loops ? ", self-loops" : "");
  else
    detail = fmt::format("norm {}", gcn_norm_name(config_.norm));
  return fmt::format("{}: {} layer{} {} ({}), {}, dropout {:g}, input dropout {:g}{}, {} parameters",
                     model_kind_name(config_.kind), layers_.size(), layers_.size() == 1 ? "" : "s", widths, detail,
                     activation_name(config_.activation), config_.dropout, config_.input_dropout,
                     config_.l2_normalize ? ", L2-normalised hidden" : "", with_commas(num_parameters()));
}

}  // namespace strata::nn
