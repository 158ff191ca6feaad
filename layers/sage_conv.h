// SAGEConv (Hamilton et al. 2017, as in DGL and PyG):
//   y_i = W_selfᵀ x_i + W_neighᵀ agg_{j -> i}(x_j) + b
// with the aggregator mean (D⁻¹A), sum (A), gcn (D̃⁻¹(A + I): the mean over the
// node and its in-neighbours, usually without the root weight) or max (the
// feature-wise maximum over in-neighbours, 0 without any: PyG's aggr="max"). The
// root (self) weight and the bias are optional.
//
// Like DGL, the layer projects before aggregating when that makes the aggregation
// narrower (in > out), and always for sparse inputs (S is never aggregated); except
// with max, which does not commute with a projection: it aggregates the input
// itself, so a max layer takes dense inputs only.
#pragma once

#include "layers/layer.h"

namespace strata::nn {

enum class SageAggregator : uint8_t { Mean, Sum, Gcn, Max };
const char* sage_aggregator_name(SageAggregator a);

class SAGEConv final : public GraphLayer {
 public:
  SAGEConv(int64_t in, int64_t out, SageAggregator aggregator, bool root_weight, bool bias, Rng& rng,
           int index);

  void request_kernels(KernelRequests& requests, bool sparse_input) const override;
  ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const override;
  const std::vector<Parameter>& parameters() const override { return params_; }
  int64_t in_features() const override { return in_; }
  int64_t out_features() const override { return out_; }
  std::string describe() const override;

  Aggregation aggregation() const;
  bool projects_first(bool sparse_input) const {
    return sparse_input || (in_ > out_ && aggregator_ != SageAggregator::Max);
  }

 private:
  int64_t in_, out_;
  SageAggregator aggregator_;
  ag::Var weight_self_, weight_neigh_, bias_;
  std::vector<Parameter> params_;
};

}  // namespace strata::nn
