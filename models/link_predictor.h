// The decoder of link prediction: a score per node pair from the pair's two node
// embeddings h [N, F] (the encoder's output, models/gnn.h).
//
//   dot: s = h_u · h_v, through the compiler's SDDMM (layers/pair_scores.h);
//   mlp: OGB's LinkPredictor, s = MLP(h_u ⊙ h_v): `layers` Linear maps F -> F -> … -> 1
//        with relu and dropout between them (dropout = model.dropout), Glorot weights and
//        zero biases, parameters "predictor.<k>.weight" / ".bias".
// Scores come as [pairs, 1] in the pair graph's CSR position order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "layers/pair_scores.h"
#include "layers/parameter.h"

namespace strata::nn {

enum class LinkPredictorKind : uint8_t { Dot, Mlp };
const char* link_predictor_name(LinkPredictorKind k);  // "dot", "mlp"

class LinkPredictor {
 public:
  LinkPredictor(LinkPredictorKind kind, int64_t width, int layers, float dropout, Rng& init);

  // What the pair graphs must be bound for (PairOp::Dot or PairOp::Product).
  PairOp pair_op() const { return kind_ == LinkPredictorKind::Dot ? PairOp::Dot : PairOp::Product; }
  // Scores [pairs, 1]; dropout (training mode) draws its masks from `dropout_seed`.
  ag::Var forward(ag::Tape& tape, const PairKernels& pairs, const ag::Var& h, uint64_t dropout_seed) const;
  const std::vector<Parameter>& parameters() const { return params_; }
  std::string describe() const;  // "dot product" / "mlp: (h_u ⊙ h_v) 256 -> 256 -> 256 -> 1, relu, dropout 0.5"

 private:
  LinkPredictorKind kind_;
  int64_t width_;
  float dropout_;
  std::vector<ag::Var> weights_, biases_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
