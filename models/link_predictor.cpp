#include "models/link_predictor.h"

#include <fmt/format.h>

#include "core/autograd_ops.h"
#include "core/error.h"

namespace strata::nn {

// Parameters of the predictor sit after every encoder layer (Parameter::layer), so a
// weight decay on the first layer only (optimizer.decay_scope) never reaches them.
constexpr int kPredictorLayerBase = 1000;

const char* link_predictor_name(LinkPredictorKind k) { return k == LinkPredictorKind::Dot ? "dot" : "mlp"; }

LinkPredictor::LinkPredictor(LinkPredictorKind kind, int64_t width, int layers, float dropout, Rng& init)
    : kind_(kind), width_(width), dropout_(dropout) {
  if (kind_ == LinkPredictorKind::Dot) return;
  STRATA_CHECK(layers >= 1, "link predictor: an MLP needs at least one layer, got {}", layers);
  for (int k = 0; k < layers; ++k) {
    const int64_t out = k + 1 == layers ? 1 : width;
    const std::string prefix = fmt::format("predictor.{}.", k);
    weights_.push_back(ag::Var::parameter(glorot_uniform(width, out, init), prefix + "weight"));
    biases_.push_back(ag::Var::parameter(Tensor::zeros({out}, DType::F32), prefix + "bias"));
    params_.push_back({weights_.back().name(), weights_.back(), kPredictorLayerBase + k, false, nullptr});
    params_.push_back({biases_.back().name(), biases_.back(), kPredictorLayerBase + k, true, nullptr});
  }
}

ag::Var LinkPredictor::forward(ag::Tape& tape, const PairKernels& pairs, const ag::Var& h,
                               uint64_t dropout_seed) const {
  ag::Tape::Scope scope(tape, "predictor");
  if (kind_ == LinkPredictorKind::Dot) return pair_scores(tape, pairs, h);
  ag::Var x = pair_products(tape, pairs, h);
  const size_t layers = weights_.size();
  for (size_t k = 0; k < layers; ++k) {
    x = ag::bias_add(tape, ag::matmul(tape, x, weights_[k]), biases_[k]);
    if (k + 1 < layers) {
      x = ag::relu(tape, x);
      if (dropout_ > 0.0f) x = ag::dropout(tape, x, dropout_, dropout_seed + 0x9e3779b97f4a7c15ULL * (k + 1));
    }
  }
  return x;
}

std::string LinkPredictor::describe() const {
  if (kind_ == LinkPredictorKind::Dot) return "dot product of the two embeddings";
  std::string widths;
  for (size_t k = 0; k < weights_.size(); ++k) widths += fmt::format(" -> {}", weights_[k].dim(1));
  return fmt::format("mlp: (h_u ⊙ h_v) {}{}, relu, dropout {}, {} parameters", width_, widths, dropout_,
                     count_parameters(params_));
}

}  // namespace strata::nn
