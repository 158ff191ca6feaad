#include "layers/sage_conv.h"

#include "core/autograd_ops.h"
#include "layers/graph_ops.h"

namespace strata::nn {

const char* sage_aggregator_name(SageAggregator a) {
  switch (a) {
    case SageAggregator::Mean: return "mean";
    case SageAggregator::Sum: return "sum";
    case SageAggregator::Gcn: return "gcn";
    case SageAggregator::Max:
      return "max";
  }
  return "?";
}

SAGEConv::SAGEConv(int64_t in, int64_t out, SageAggregator aggregator, bool root_weight, bool bias, Rng& rng,
                   int index)
    : in_(in), out_(out), aggregator_(aggregator) {
  const std::string prefix = fmt::format("layers.{}.", index);
  if (root_weight) {
    weight_self_ = ag::Var::parameter(glorot_uniform(in, out, rng), prefix + "weight_self");
    params_.push_back({weight_self_.name(), weight_self_, index, false, nullptr});
  }
  weight_neigh_ = ag::Var::parameter(glorot_uniform(in, out, rng), prefix + "weight_neigh");
  params_.push_back({weight_neigh_.name(), weight_neigh_, index, false, nullptr});
  if (bias) {
    bias_ = ag::Var::parameter(Tensor::zeros({out}, DType::F32), prefix + "bias");
    params_.push_back({bias_.name(), bias_, index, true, nullptr});
  }
}

Aggregation SAGEConv::aggregation() const {
  switch (aggregator_) {
    case SageAggregator::Mean: return Aggregation::Mean;
    case SageAggregator::Sum: return Aggregation::Sum;
    case SageAggregator::Gcn: return Aggregation::SageGcn;
    case SageAggregator::Max:
      return Aggregation::Max;
  }
  return Aggregation::Mean;
}

void SAGEConv::request_kernels(KernelRequests& requests, bool sparse_input) const {
  STRATA_CHECK(!(sparse_input && aggregator_ == SageAggregator::Max),
               "{}: the max aggregator takes the maximum of the neighbours' input features, so the first layer needs "
               "them dense (set data.feature_storage: dense)",
               describe());
  const bool first = projects_first(sparse_input);
  requests.add_aggregation(aggregation(), first ? out_ : in_);
  if (sparse_input) requests.add_feature_product(out_);
}

ag::Var SAGEConv::forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const {
  STRATA_ASSERT(x.cols() == in_, "{} applied to {} features", describe(), x.cols());
  const bool root = weight_self_.defined();
  ag::Var y;
  if (projects_first(x.is_sparse())) {
    ag::Var self, neigh;
    if (root && !x.is_sparse()) {
      // Dense inputs: one GEMM X·[W_self | W_neigh], so X is packed once and the
      // weight gradient is one Xᵀ·[dY_self | dY_neigh] (Facebook's 22,470 x 4,714
      // input: 1.2x faster than two products, docs/BENCHMARKS.md "Epoch time").
      const std::vector<ag::Var> parts = ag::split_cols(
          tape, ag::matmul(tape, x.dense, ag::concat_cols(tape, {weight_self_, weight_neigh_})), {out_, out_});
      self = parts[0];
      neigh = parts[1];
    } else {
      // Sparse inputs: S·W_self and S·W_neigh are two products through the same
      // kernel, as many multiply-adds as one product with [W_self | W_neigh],
      // without concatenating the weights and splitting the result (and back)
      // every step, which measured slower.
      if (root) self = project(tape, kernels, x, weight_self_);
      neigh = project(tape, kernels, x, weight_neigh_);
    }
    y = aggregate(tape, kernels.aggregation(aggregation(), out_), neigh);
    if (root) y = ag::add(tape, self, y);
  } else {
    ag::Var agg = aggregate(tape, kernels.aggregation(aggregation(), in_), x.dense);
    y = ag::matmul(tape, agg, weight_neigh_);
    if (root) y = ag::add(tape, ag::matmul(tape, x.dense, weight_self_), y);
  }
  return bias_.defined() ? ag::bias_add(tape, y, bias_) : y;
}

std::string SAGEConv::describe() const {
  return fmt::format("SAGEConv({} -> {}, {}{}{})", in_, out_, sage_aggregator_name(aggregator_),
                     weight_self_.defined() ? ", root weight" : "", bias_.defined() ? ", bias" : "");
}

}  // namespace strata::nn
