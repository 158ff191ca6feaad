// Linear: y = x·W + b, W [in, out] Glorot-initialised, b zero-initialised. Layer
// `index` names its parameters "layers.<index>.weight" and ".bias". Accepts
// dense or sparse inputs (sparse through the feature-product kernels).
#pragma once

#include "layers/layer.h"

namespace strata::nn {

class Linear final : public GraphLayer {
 public:
  Linear(int64_t in, int64_t out, bool bias, Rng& rng, int index);

  void request_kernels(KernelRequests& requests, bool sparse_input) const override;
  ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const override;
  const std::vector<Parameter>& parameters() const override { return params_; }
  int64_t in_features() const override { return in_; }
  int64_t out_features() const override { return out_; }
  std::string describe() const override;

 private:
  int64_t in_, out_;
  ag::Var weight_, bias_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
