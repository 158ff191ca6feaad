#include "models/rgcn.h"

#include <algorithm>

#include "core/autograd_ops.h"
#include "layers/layer.h"

namespace strata::nn {
namespace {

uint64_t mix_seed(uint64_t seed, int k) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

RgcnModel::RgcnModel(const ModelConfig& config, const std::vector<RgcnTypeInput>& types, int64_t relations,
                     int64_t classes, Rng& init)
    : config_(config), relations_(relations), classes_(classes) {
  STRATA_CHECK(config.layers >= 1, "model.layers must be at least 1, got {}", config.layers);
  STRATA_CHECK(classes >= 2, "node classification needs at least 2 classes, got {}", classes);
  STRATA_CHECK(relations >= 1, "rgcn needs at least one relation");
  bool any_features = false;
  for (const RgcnTypeInput& t : types) {
    nodes_ += t.count;
    any_features = any_features || t.feat_dim > 0;
  }
  const RgcnOptions& o = config.rgcn;
  one_hot_ = o.input == RgcnInput::OneHot || (o.input == RgcnInput::Auto && !any_features);
  STRATA_CHECK(!one_hot_ || !any_features,
               "model.input is one_hot, but node types have features ({}); use model.input: embedding (featureless "
               "types get a learned embedding, featured ones a projection)",
               [&] {
                 std::string s;
                 for (const auto& t : types)
                   if (t.feat_dim > 0) s += (s.empty() ? "" : ", ") + t.name;
                 return s;
               }());
  int64_t width = nodes_;
  if (!one_hot_) {
    width = o.embedding_dim;
    for (const RgcnTypeInput& t : types) {
      TypeParams p;
      p.name = t.name;
      p.count = t.count;
      p.feat_dim = t.feat_dim;
      const std::string prefix = "input." + t.name + ".";
      if (t.feat_dim > 0) {
        p.weight = ag::Var::parameter(glorot_uniform(t.feat_dim, width, init), prefix + "weight");
        params_.push_back({p.weight.name(), p.weight, -1, false});
        if (config.bias) {
          p.bias = ag::Var::parameter(Tensor::zeros({width}, DType::F32), prefix + "bias");
          params_.push_back({p.bias.name(), p.bias, -1, true});
        }
      } else {
        p.embedding = ag::Var::parameter(glorot_uniform(t.count, width, init), prefix + "embedding");
        params_.push_back({p.embedding.name(), p.embedding, -1, false});
      }
      inputs_.push_back(std::move(p));
    }
  }
  for (int i = 0; i < config.layers; ++i) {
    RelGraphConvOptions lo;
    lo.in = width;
    lo.out = i + 1 == config.layers ? classes : config.hidden;
    lo.relations = relations;
    lo.num_bases = o.num_bases;
    lo.self_loop = o.self_loop;
    lo.bias = config.bias;
    lo.one_hot = one_hot_ && i == 0;
    lo.activation = i + 1 == config.layers ? RelActivation::None : RelActivation::Relu;
    lo.dropout = i + 1 == config.layers ? 0.0f : config.dropout;
    layers_.push_back(std::make_unique<RelGraphConv>(lo, init, i));
    for (const Parameter& p : layers_.back()->parameters()) params_.push_back(p);
    width = lo.out;
  }
}

void RgcnModel::request_kernels(RelationalKernelRequests& r) const {
  for (const auto& l : layers_) l->request_kernels(r);
}

std::vector<int64_t> RgcnModel::feature_product_widths(int t) const {
  if (one_hot_ || inputs_.at(t).feat_dim == 0) return {};
  return {config_.rgcn.embedding_dim};
}

ag::Var RgcnModel::forward(ag::Tape& tape, const RelationalKernels& k, const std::vector<RgcnTypeInput>& types,
                           uint64_t dropout_seed) const {
  return run(tape, k, k, types, nullptr, dropout_seed);
}

ag::Var RgcnModel::forward_on(ag::Tape& tape, const RelationalKernels& first, const RelationalKernels& k,
                              const std::vector<RgcnTypeInput>& types, const std::vector<int64_t>& nodes) const {
  STRATA_ASSERT(!tape.grad_enabled(), "rgcn: a forward over part of the graph is for inference (gradients off)");
  return run(tape, first, k, types, &nodes, 0);
}

ag::Var RgcnModel::run(ag::Tape& tape, const RelationalKernels& first, const RelationalKernels& k,
                       const std::vector<RgcnTypeInput>& types, const std::vector<int64_t>* nodes,
                       uint64_t dropout_seed) const {
  ag::Var x;
  if (!one_hot_) {
    ag::Tape::Scope scope(tape, "input");
    STRATA_ASSERT(types.size() == inputs_.size(), "rgcn: {} node types given to a model of {}", types.size(),
                  inputs_.size());
    std::vector<ag::Var> parts;
    auto node = nodes ? nodes->begin() : std::vector<int64_t>::const_iterator();
    int64_t offset = 0;  // of type t in the whole graph
    for (size_t t = 0; t < inputs_.size(); ++t) {
      const TypeParams& p = inputs_[t];
      // Over a subgraph: the type's nodes in it, as rows of the type (nodes are increasing).
      std::vector<int64_t> local;
      if (nodes) {
        for (; node != nodes->end() && *node < offset + p.count; ++node) local.push_back(*node - offset);
        STRATA_ASSERT(types[t].count == static_cast<int64_t>(local.size()),
                      "rgcn: type {} has {} of the subgraph's nodes, its input {} rows", p.name, local.size(),
                      types[t].count);
      }
      offset += p.count;
      if (p.feat_dim == 0) {
        parts.push_back(nodes ? ag::Var::constant(p.embedding.value().gather_rows(local)) : p.embedding);
        continue;
      }
      const RgcnTypeInput& in = types[t];
      STRATA_ASSERT((nodes || in.count == p.count) && in.feat_dim == p.feat_dim, "rgcn: type {} input changed", p.name);
      ag::Var h;
      if (in.sparse) {
        STRATA_ASSERT(in.kernels != nullptr, "rgcn: type {} has sparse features but no kernels", p.name);
        h = project(tape, *in.kernels, NodeFeatures{ag::Var(), in.sparse, 0.0f, 0}, p.weight);
      } else {
        h = ag::matmul(tape, ag::Var::constant(in.dense), p.weight);
      }
      if (p.bias.defined()) h = ag::bias_add(tape, h, p.bias);
      parts.push_back(h);
    }
    STRATA_ASSERT(!nodes || node == nodes->end(), "rgcn: subgraph node {} is past the model's {} nodes",
                  nodes && node != nodes->end() ? *node : 0, nodes_);
    x = parts.size() == 1 ? parts[0] : concat_rows(tape, parts);
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    ag::Tape::Scope scope(tape, fmt::format("layers.{}", i));
    const uint64_t seed = mix_seed(dropout_seed, static_cast<int>(i));
    const RelationalKernels& ki = i == 0 && one_hot_ ? first : k;
    x = nodes ? layers_[i]->forward_on(tape, ki, x, *nodes, seed) : layers_[i]->forward(tape, ki, x, seed);
  }
  return x;
}

void RgcnModel::mark_gradient_support(const sc::RelationalGraph& g) {
  if (!one_hot_ || config_.rgcn.num_bases > 0) return;
  const RelGraphConvOptions& o = layers_.front()->options();
  STRATA_CHECK(g.relations == o.relations && g.cols == o.in, "{}: a relational graph of {} relations and {} columns",
               layers_.front()->describe(), g.relations, g.cols);
  const int64_t* ptr = g.src_ptr.data<int64_t>();
  auto support = std::make_shared<GradientSupport>();
  for (int64_t r = 0; r < g.relations; ++r) {
    std::vector<int64_t> rows;
    for (int64_t s = ptr[r]; s < ptr[r + 1]; ++s)
      rows.push_back(g.index_dtype == DType::I32 ? g.src_ids.data<int32_t>()[s] : g.src_ids.data<int64_t>()[s]);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (int64_t j : rows) {
      const int64_t begin = (r * o.in + j) * o.out, end = begin + o.out;
      if (!support->empty() && support->back().second == begin)
        support->back().second = end;  // the next row: one range
      else
        support->push_back({begin, end});
    }
  }
  for (Parameter& p : params_)
    if (p.name == "layers.0.weight") p.support = support;
}

std::string RgcnModel::describe() const {
  std::string widths = one_hot_ ? fmt::format("one-hot {}", nodes_) : fmt::format("{}", config_.rgcn.embedding_dim);
  for (const auto& l : layers_) widths += " -> " + std::to_string(l->options().out);
  std::string input;
  if (!one_hot_) {
    int proj = 0, emb = 0;
    for (const auto& p : inputs_) (p.feat_dim > 0 ? proj : emb) += 1;
    input = fmt::format(", input: {} projected type{}, {} embedded", proj, proj == 1 ? "" : "s", emb);
  }
  std::string commas = std::to_string(num_parameters());
  for (int i = static_cast<int>(commas.size()) - 3; i > 0; i -= 3) commas.insert(static_cast<size_t>(i), ",");
  return fmt::format("rgcn: {} layer{} {} ({} relations, {}{}{}), relu, dropout {:g}, {} parameters", layers_.size(),
                     layers_.size() == 1 ? "" : "s", widths, relations_,
                     config_.rgcn.num_bases > 0 ? fmt::format("{} bases", config_.rgcn.num_bases) : "full weights",
                     config_.rgcn.self_loop ? ", self loop" : "", input, config_.dropout, commas);
}

}  // namespace strata::nn
