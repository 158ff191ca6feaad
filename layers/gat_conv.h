// GATConv (Veličković et al. 2018, as PyG's GATConv with DGL's feature dropout):
//   x' = feat_drop(x);  h = x'·W  [N, H·F]  (W Glorot-initialised, [in, H·F])
//   y  = gat_attention(h, att_dst, att_src) over A + I (layers/gat_ops.h), with
//        LeakyReLU(negative_slope) scores and attention dropout on the probabilities
//   y  = concat of the H heads [N, H·F], or their mean [N, F]
//   y += x'·W_res (residual, optional: a Glorot-initialised projection, no bias)
//   y += b (optional, zero-initialised)
// Self-loops: by default the attention runs over A + I, as PyG's GATConv does
// (add_self_loops=True: existing loops are kept once, every node gets one), so
// every node attends at least to itself. Without self-loops a node without
// in-edges gets zero from the attention.
//
// Parameters: layers.<i>.weight [in, H·F], .att_src [H, F], .att_dst [H, F],
// .res_weight [in, out] (residual), .bias [out] (out = H·F or F). att_src and
// att_dst are Glorot-initialised over (H, F) like PyG's (fan_in H, fan_out F).
#pragma once

#include "layers/gat_ops.h"
#include "layers/layer.h"

namespace strata::nn {

struct GatConvOptions {
  int64_t heads = 1;
  bool concat = true;            // false: mean over heads
  float negative_slope = 0.2f;   // of the attention scores' LeakyReLU
  float feat_dropout = 0.0f;     // on the layer's input
  float attn_dropout = 0.0f;     // on the attention probabilities
  bool residual = false;
  bool bias = true;
  bool add_self_loops = true;
};

class GATConv final : public GraphLayer {
 public:
  // `out` is the width per head.
  GATConv(int64_t in, int64_t out, const GatConvOptions& options, Rng& rng, int index);

  void request_kernels(KernelRequests& requests, bool sparse_input) const override;
  // Dropout masks (feature and attention) from seed 0; use the seeded overload in training.
  ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const override {
    return forward(tape, kernels, x, 0);
  }
  ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x, uint64_t seed) const;
  const std::vector<Parameter>& parameters() const override { return params_; }
  int64_t in_features() const override { return in_; }
  // H·F when concatenating heads, F when averaging them.
  int64_t out_features() const override { return options_.concat ? options_.heads * out_ : out_; }
  std::string describe() const override;

  const GatConvOptions& options() const { return options_; }
  AttentionRequest attention_request() const;
  // The forward the last call ran (fused or unfused), for tests and benchmarks.
  AttentionPath last_path() const { return last_path_; }

 private:
  int64_t in_, out_;
  GatConvOptions options_;
  ag::Var weight_, att_src_, att_dst_, res_weight_, bias_;
  std::vector<Parameter> params_;
  mutable AttentionPath last_path_ = AttentionPath::Unfused;
};

}  // namespace strata::nn
