// Autograd ops over a graph, running the kernels of layers/graph_kernels.h. Their
// time is profiled as the Sparse category.
#pragma once

#include <cstdint>

#include "core/autograd.h"
#include "layers/graph_kernels.h"

namespace strata::nn {

// Y = agg(X) over the graph (see the table in graph_kernels.h); the backward runs
// the kernel over Aᵀ built with the forward one.
ag::Var aggregate(ag::Tape& tape, const AggregationKernels& kernels, const ag::Var& x);

// S · W for the sparse input features S [N, F] and a weight W [F, width]. With
// dropout p > 0 in training mode, each stored entry of S is kept with probability
// 1 - p (ag::dropout_keep on its position) and scaled by 1/(1-p), exactly as dense
// dropout on the densified S would do. The backward gives dW = Sᵀ·dY.
ag::Var sparse_features_matmul(ag::Tape& tape, const FeatureProductKernels& kernels, const ag::Var& w, float dropout,
                               uint64_t seed);

}  // namespace strata::nn
