// Trainable parameters of layers and models, and Glorot initialisation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/rng.h"

namespace strata::nn {

struct Parameter {
  std::string name;  // "layers.0.weight_neigh": stable, used by checkpoints
  ag::Var var;
  int layer = 0;     // index of the layer that owns it
  bool is_bias = false;
};

// Uniform in [-a, a], a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010), for a
// weight of shape [fan_in, fan_out], drawn from `rng`.
Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, Rng& rng);

// The total number of scalars in a parameter list.
int64_t count_parameters(const std::vector<Parameter>& params);

}  // namespace strata::nn
