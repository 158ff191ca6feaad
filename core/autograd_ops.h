// Dense autograd ops over float32 tensors (CPU, Eigen for the matrix products).
// Each computes its output now and records its backward on the tape; see
// core/autograd.h. Graph ops (neighbour aggregation through generated SpMM, sparse
// feature products) live in layers/graph_ops.h because they need the compiler.
//
// Shapes: matrices are [rows, cols]; a bias is [cols]; losses are one-element
// tensors [1]. Every op checks its operands and names the op in the message.
#pragma once

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
// Whether element `index` survives dropout p under `seed`: the index-th output of
// SplitMix64 started at `seed`, its top 24 bits against p·2^24. Inline and
// branch-free so mask loops vectorise.
inline bool dropout_keep(uint64_t seed, int64_t index, float p) {
  uint64_t z = seed + static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) >= p * 16777216.0f;
}
// Column-wise concatenation of matrices with equal row counts.
Var concat_cols(Tape& tape, const std::vector<Var>& xs);
// Columns [begin, begin + width) of x, as a copy.
Var narrow_cols(Tape& tape, const Var& x, int64_t begin, int64_t width);
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
// coeff/2 · Σ over the parameters of Σ p², the L2 weight-decay term: its gradient
// coeff · p is exactly PyTorch's `weight_decay` for SGD and Adam.
Var l2_penalty(Tape& tape, const std::vector<Var>& params, float coeff);

}  // namespace strata::ag
