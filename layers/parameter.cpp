#include "layers/parameter.h"

#include <cmath>

namespace strata::nn {

Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, Rng& rng) {
  STRATA_ASSERT(fan_in > 0 && fan_out > 0, "glorot_uniform of shape [{}, {}]", fan_in, fan_out);
  const double a = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return Tensor::uniform({fan_in, fan_out}, -a, a, rng, DType::F32);
}

int64_t count_parameters(const std::vector<Parameter>& params) {
  int64_t n = 0;
  for (const Parameter& p : params) n += p.var.value().numel();
  return n;
}

}  // namespace strata::nn
