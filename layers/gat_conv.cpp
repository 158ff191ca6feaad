#include "layers/gat_conv.h"

#include <string>

#include "core/autograd_ops.h"

namespace strata::nn {
namespace {

uint64_t mix(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

GATConv::GATConv(int64_t in, int64_t out, const GatConvOptions& o, Rng& rng, int index)
    : in_(in), out_(out), options_(o) {
  STRATA_CHECK(in >= 1 && out >= 1, "GATConv: input and output widths must be at least 1, got {} and {}", in, out);
  STRATA_CHECK(o.heads >= 1, "GATConv: heads must be at least 1, got {}", o.heads);
  STRATA_CHECK(o.negative_slope >= 0.0f, "GATConv: negative_slope must be >= 0, got {}", o.negative_slope);
  STRATA_CHECK(o.feat_dropout >= 0.0f && o.feat_dropout < 1.0f, "GATConv: feature dropout must be in [0, 1), got {}",
               o.feat_dropout);
  STRATA_CHECK(o.attn_dropout >= 0.0f && o.attn_dropout < 1.0f,
               "GATConv: attention dropout must be in [0, 1), got {}", o.attn_dropout);
  const std::string prefix = fmt::format("layers.{}.", index);
  const int64_t H = o.heads;
  weight_ = ag::Var::parameter(glorot_uniform(in, H * out, rng), prefix + "weight");
  params_.push_back({weight_.name(), weight_, index, false, nullptr});
  att_src_ = ag::Var::parameter(glorot_uniform(H, out, rng), prefix + "att_src");
  params_.push_back({att_src_.name(), att_src_, index, false, nullptr});
  att_dst_ = ag::Var::parameter(glorot_uniform(H, out, rng), prefix + "att_dst");
  params_.push_back({att_dst_.name(), att_dst_, index, false, nullptr});
  if (o.residual) {
    res_weight_ = ag::Var::parameter(glorot_uniform(in, out_features(), rng), prefix + "res_weight");
    params_.push_back({res_weight_.name(), res_weight_, index, false, nullptr});
  }
  if (o.bias) {
    bias_ = ag::Var::parameter(Tensor::zeros({out_features()}, DType::F32), prefix + "bias");
    params_.push_back({bias_.name(), bias_, index, true, nullptr});
  }
}

AttentionRequest GATConv::attention_request() const {
  AttentionRequest r;
  r.heads = options_.heads;
  r.feat = out_;
  // The float slope's shortest decimal (0.2f -> 0.2), so kernel names read "s0.2".
  r.negative_slope = std::stod(fmt::format("{}", options_.negative_slope));
  r.self_loops = options_.add_self_loops;
  return r;
}

void GATConv::request_kernels(KernelRequests& requests, bool sparse_input) const {
  requests.add_attention(attention_request());
  if (sparse_input) {
    requests.add_feature_product(options_.heads * out_);
    if (options_.residual) requests.add_feature_product(out_features());
    if (options_.feat_dropout > 0.0f) requests.feature_dropout = true;
  }
}

ag::Var GATConv::forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& input, uint64_t seed) const {
  STRATA_ASSERT(input.cols() == in_, "{} applied to {} features", describe(), input.cols());
  NodeFeatures x = input;
  if (options_.feat_dropout > 0.0f) {
    if (x.is_sparse()) {
      // Two independent droppings of S's entries are one with the combined probability.
      x.sparse_dropout = 1.0f - (1.0f - x.sparse_dropout) * (1.0f - options_.feat_dropout);
      x.sparse_seed = mix(x.sparse_seed ^ seed, 0);
    } else {
      x.dense = ag::dropout(tape, x.dense, options_.feat_dropout, mix(seed, 0));
    }
  }
  const ag::Var h = project(tape, kernels, x, weight_);
  AttentionPath path;
  ag::Var y = gat_attention(tape, kernels.attention(attention_request()), h, att_dst_, att_src_, options_.attn_dropout,
                            mix(seed, 1), &path);
  last_path_ = path;
  if (!options_.concat) y = head_mean(tape, y, options_.heads);
  if (res_weight_.defined()) y = ag::add(tape, y, project(tape, kernels, x, res_weight_));
  return bias_.defined() ? ag::bias_add(tape, y, bias_) : y;
}

std::string GATConv::describe() const {
  return fmt::format("GATConv({} -> {} x {} heads, {}, slope {:g}{}{}{}{}{})", in_, out_, options_.heads,
                     options_.concat ? "concat" : "mean", options_.negative_slope,
                     options_.feat_dropout > 0 ? fmt::format(", feature dropout {:g}", options_.feat_dropout) : "",
                     options_.attn_dropout > 0 ? fmt::format(", attention dropout {:g}", options_.attn_dropout) : "",
                     options_.residual ? ", residual" : "", options_.bias ? ", bias" : "",
                     options_.add_self_loops ? ", self-loops" : "");
}

}  // namespace strata::nn
