// Trainable parameters of layers and models, and Glorot initialisation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/rng.h"

namespace strata::nn {

// The elements of a parameter that can ever receive a gradient, as sorted, disjoint
// [begin, end) ranges of flat indices; every other element's gradient is zero on
// every step (R-GCN's one-hot first layer: only the weight rows its relations
// read). An optimizer may then leave those elements alone where its update of a
// zero gradient is the identity (no weight decay): the same values, bit for bit.
using GradientSupport = std::vector<std::pair<int64_t, int64_t>>;

struct Parameter {
  std::string name;  // "layers.0.weight_neigh": stable, used by checkpoints
  ag::Var var;
  int layer = 0;     // index of the layer that owns it
  bool is_bias = false;
  std::shared_ptr<const GradientSupport> support{};  // null: every element
};

// Uniform in [-a, a], a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010), for a
// weight of shape [fan_in, fan_out], drawn from `rng`.
Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, Rng& rng);

// The total number of scalars in a parameter list.
int64_t count_parameters(const std::vector<Parameter>& params);

}  // namespace strata::nn
