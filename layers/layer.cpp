#include "layers/layer.h"

#include "core/autograd_ops.h"
#include "layers/graph_ops.h"

namespace strata::nn {

ag::Var project(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x, const ag::Var& w) {
  if (x.is_sparse())
    return sparse_features_matmul(tape, kernels.feature_product(w.dim(1)), w, x.sparse_dropout, x.sparse_seed);
  return ag::matmul(tape, x.dense, w);
}

}  // namespace strata::nn
