// GAT's autograd ops (Veličković et al. 2018), on the tape of core/autograd.h,
// running the compiler's GAT kernels (sc::GatKernels, bound in AttentionKernels of
// layers/graph_kernels.h). Rows of the graph are destinations.
//
// gat_attention, for H heads of F features, x [N, H·F] (head h = columns h·F..h·F+F-1):
//   el[i,h] = Σ_f x[i,h,f]·att_dst[h,f]        (destination score, "XL")
//   er[j,h] = Σ_f x[j,h,f]·att_src[h,f]        (source score, "XR")
//   e[i,j,h] = LeakyReLU(el[i,h] + er[j,h])    over the edges j -> i
//   p[i,·,h] = softmax over row i's edges of e[i,·,h]
//   y[i,h,f] = Σ_j drop(p[i,j,h])·x[j,h,f]     -> y [N, H·F]
// drop() is attention dropout: in training mode with p > 0 each edge probability
// is kept with probability 1-p and scaled by 1/(1-p); the mask is ag::dropout_keep
// of (seed, edge position·H + head), so it is recomputed, not stored.
//
// Forward: fused (one kernel: the row max of the scores, then the weights and the
// weighted sum; e and p never in memory, the row max and sum are kept) when the
// kernels' choice is fused and no attention dropout applies (dropout needs p in
// memory); else unfused (score, softmax, aggregate).
// Backward (both forwards): after a fused forward, e and p are recomputed from the
// saved row max and sum; then dp = SDDMM(dy, x), the dropout mask, the softmax
// backward (LeakyReLU' included) giving d(el) as row sums and d(er) as column sums
// over Aᵀ, dx = Aᵀ-aggregation of dy with the (dropped) probabilities plus the
// score terms d(el)·att_dst + d(er)·att_src, and d(att) = Σ_i d(el or er)[i,h]·x[i,h,f].
// The dense head-wise dot products are plain loops (not sparse kernels).
#pragma once

#include <cstdint>

#include "core/autograd.h"
#include "layers/graph_kernels.h"

namespace strata::nn {

// Which forward gat_attention ran last (for tests and benchmarks).
enum class AttentionPath : uint8_t { Fused, FusedSaving, Unfused };

ag::Var gat_attention(ag::Tape& tape, const AttentionKernels& kernels, const ag::Var& x, const ag::Var& att_dst,
                      const ag::Var& att_src, float attn_dropout, uint64_t seed, AttentionPath* path = nullptr);

// The mean over H heads of x [N, H·F] -> [N, F].
ag::Var head_mean(ag::Tape& tape, const ag::Var& x, int64_t heads);

}  // namespace strata::nn
