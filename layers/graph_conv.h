// GraphConv (Kipf & Welling 2017, as DGL's GraphConv): y = norm(A)·x·W + b with
//   norm both  D⁻½ A Dₒ⁻½ (the GCN normalisation; with self-loops in A it is Â)
//        right D⁻¹ A (mean over in-neighbours)
//        none  A
// Self-loops are a property of the graph the layer runs on: training adds them to
// A for GCN (data.self_loops: auto). Projects first when in > out or the input is
// sparse, so the aggregation runs at the narrower width.
#pragma once

#include "layers/layer.h"

namespace strata::nn {

enum class GcnNorm : uint8_t { Both, Right, None };
const char* gcn_norm_name(GcnNorm n);

class GraphConv final : public GraphLayer {
 public:
  GraphConv(int64_t in, int64_t out, GcnNorm norm, bool bias, Rng& rng, int index);

  void request_kernels(KernelRequests& requests, bool sparse_input) const override;
  ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const override;
  const std::vector<Parameter>& parameters() const override { return params_; }
  int64_t in_features() const override { return in_; }
  int64_t out_features() const override { return out_; }
  std::string describe() const override;

  Aggregation aggregation() const;
  bool projects_first(bool sparse_input) const { return sparse_input || in_ > out_; }

 private:
  int64_t in_, out_;
  GcnNorm norm_;
  ag::Var weight_, bias_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
