// Dense autograd ops over float32 tensors (CPU, Eigen for the matrix products).
// Each computes its output now and records its backward on the tape; see
// core/autograd.h. Graph ops (neighbour aggregation through generated SpMM, sparse
// feature products) live in layers/graph_ops.h because they need the compiler.
//
// Shapes: matrices are [rows, cols]; a bias is [cols]; losses are one-element
// tensors [1]. Every op checks its operands and names the op in the message.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/autograd.h"

namespace strata::ag {

// a [n, k] · b [k, m] -> [n, m]. Backward: da = dy·bᵀ, db = aᵀ·dy.
Var matmul(Tape& tape, const Var& a, const Var& b);
// a + b, same shapes.
Var add(Tape& tape, const Var& a, const Var& b);
// x [n, m] + bias [m] broadcast over rows.
Var bias_add(Tape& tape, const Var& x, const Var& bias);
// max(x, 0); the gradient at 0 is 0.
Var relu(Tape& tape, const Var& x);
// x for x > 0, alpha·(exp(x) - 1) otherwise.
Var elu(Tape& tape, const Var& x, float alpha = 1.0f);
// x for x > 0, slope·x otherwise.
Var leaky_relu(Tape& tape, const Var& x, float slope = 0.01f);
// Inverted dropout: each element kept with probability 1 - p and scaled by 1/(1-p).
// The mask is a pure function of (seed, element index) (dropout_keep), so it is
// recomputed in backward instead of stored, and does not depend on the thread
// count. The identity in eval mode or when p == 0.
Var dropout(Tape& tape, const Var& x, float p, uint64_t seed);
// The dropout mask: element `index` survives dropout p under `seed` when its 24
// random bits (a 32-bit integer hash, lowbias32, of the index mixed with the seed)
// reach p·2^24. Pure, so masks are recomputed in backward instead of stored, and
// independent of how loops are split among threads.
inline uint32_t dropout_hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
inline uint32_t dropout_bits(uint64_t seed, int64_t index) {
  const uint32_t hi = static_cast<uint32_t>(seed >> 32) +
                      static_cast<uint32_t>(static_cast<uint64_t>(index) >> 32) * 0x85ebca6bU;
  return dropout_hash(dropout_hash(static_cast<uint32_t>(index) * 0x9e3779b9U + static_cast<uint32_t>(seed)) ^ hi) >> 8;
}
inline uint32_t dropout_threshold(float p) {
  return static_cast<uint32_t>(std::ceil(static_cast<double>(p) * 16777216.0));
}
inline bool dropout_keep(uint64_t seed, int64_t index, float p) {
  return dropout_bits(seed, index) >= dropout_threshold(p);
}
// out[i] = in[i] / (1 - p) where element i survives, else 0 (in == out allowed):
// vectorised and, for large n, parallel.
void apply_dropout(const float* in, float* out, int64_t n, float p, uint64_t seed);
// Column-wise concatenation of matrices with equal row counts.
Var concat_cols(Tape& tape, const std::vector<Var>& xs);
// Columns [begin, begin + width) of x, as a copy.
Var narrow_cols(Tape& tape, const Var& x, int64_t begin, int64_t width);
// Rows [0, count) of x, as a copy (a sampled block's destinations, core/neighbor_sampler.h).
Var narrow_rows(Tape& tape, const Var& x, int64_t count);
// x split into consecutive column blocks of the given widths (summing to x's
// columns): the inverse of concat_cols, with one backward that writes every
// block's gradient into one tensor (zeros only where a block got none).
std::vector<Var> split_cols(Tape& tape, const Var& x, const std::vector<int64_t>& widths);
// Each row divided by its Euclidean norm (rows of norm < eps are divided by eps).
Var l2_normalize_rows(Tape& tape, const Var& x, float eps = 1e-12f);
// Row-wise log(softmax(x)), computed stably (max subtracted).
Var log_softmax(Tape& tape, const Var& x);
// Mean over the rows in `index` (int64) of -log_probs[row, labels[row]]; labels is
// int64 [n] and every indexed row must carry a label in [0, cols).
Var nll_loss(Tape& tape, const Var& log_probs, const Tensor& labels, const Tensor& index);
// Multi-label loss: the mean over the rows in `index` and every column of the binary
// cross-entropy of sigmoid(logits) against labels (int64 [n, cols] of 0/1; every
// indexed row labelled), computed from the logits stably as PyTorch's
// BCEWithLogitsLoss: max(z, 0) - z·y + log(1 + exp(-|z|)).
Var bce_with_logits(Tape& tape, const Var& logits, const Tensor& labels, const Tensor& index);
// coeff/2 · Σ over the parameters of Σ p², the L2 weight-decay term: its gradient
// coeff · p is exactly PyTorch's `weight_decay` for SGD and Adam.
Var l2_penalty(Tape& tape, const std::vector<Var>& params, float coeff);

}  // namespace strata::ag
