#include "layers/linear.h"

#include "core/autograd_ops.h"

namespace strata::nn {

Linear::Linear(int64_t in, int64_t out, bool bias, Rng& rng, int index) : in_(in), out_(out) {
  const std::string prefix = fmt::format("layers.{}.", index);
  weight_ = ag::Var::parameter(glorot_uniform(in, out, rng), prefix + "weight");
  params_.push_back({weight_.name(), weight_, index, false, nullptr});
  if (bias) {
    bias_ = ag::Var::parameter(Tensor::zeros({out}, DType::F32), prefix + "bias");
    params_.push_back({bias_.name(), bias_, index, true, nullptr});
  }
}

void Linear::request_kernels(KernelRequests& requests, bool sparse_input) const {
  if (sparse_input) requests.add_feature_product(out_);
}

ag::Var Linear::forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const {
  STRATA_ASSERT(x.cols() == in_, "Linear({} -> {}) applied to {} features", in_, out_, x.cols());
  ag::Var y = project(tape, kernels, x, weight_);
  return bias_.defined() ? ag::bias_add(tape, y, bias_) : y;
}

std::string Linear::describe() const {
  return fmt::format("Linear({} -> {}{})", in_, out_, bias_.defined() ? ", bias" : "");
}

}  // namespace strata::nn
