#include "layers/graph_conv.h"

#include "core/autograd_ops.h"
#include "layers/graph_ops.h"

namespace strata::nn {

const char* gcn_norm_name(GcnNorm n) {
  switch (n) {
    case GcnNorm::Both: return "both";
    case GcnNorm::Right: return "right";
    case GcnNorm::None: return "none";
  }
  return "?";
}

GraphConv::GraphConv(int64_t in, int64_t out, GcnNorm norm, bool bias, Rng& rng, int index)
    : in_(in), out_(out), norm_(norm) {
  const std::string prefix = fmt::format("layers.{}.", index);
  weight_ = ag::Var::parameter(glorot_uniform(in, out, rng), prefix + "weight");
  params_.push_back({weight_.name(), weight_, index, false, nullptr});
  if (bias) {
    bias_ = ag::Var::parameter(Tensor::zeros({out}, DType::F32), prefix + "bias");
    params_.push_back({bias_.name(), bias_, index, true, nullptr});
  }
}

Aggregation GraphConv::aggregation() const {
  switch (norm_) {
    case GcnNorm::Both: return Aggregation::GcnNorm;
    case GcnNorm::Right: return Aggregation::Mean;
    case GcnNorm::None: return Aggregation::Sum;
  }
  return Aggregation::GcnNorm;
}

void GraphConv::request_kernels(KernelRequests& requests, bool sparse_input) const {
  const bool first = projects_first(sparse_input);
  requests.add_aggregation(aggregation(), first ? out_ : in_);
  if (sparse_input) requests.add_feature_product(out_);
}

ag::Var GraphConv::forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const {
  STRATA_ASSERT(x.cols() == in_, "{} applied to {} features", describe(), x.cols());
  ag::Var y;
  if (projects_first(x.is_sparse())) {
    y = aggregate(tape, kernels.aggregation(aggregation(), out_), project(tape, kernels, x, weight_));
  } else {
    y = ag::matmul(tape, aggregate(tape, kernels.aggregation(aggregation(), in_), x.dense), weight_);
  }
  return bias_.defined() ? ag::bias_add(tape, y, bias_) : y;
}

std::string GraphConv::describe() const {
  return fmt::format("GraphConv({} -> {}, norm {}{})", in_, out_, gcn_norm_name(norm_), bias_.defined() ? ", bias" : "");
}

}  // namespace strata::nn
