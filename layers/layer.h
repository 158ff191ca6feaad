// The interface every graph layer implements, and the input a layer reads.
//
// A layer declares the sparse kernels it needs (request_kernels) before the graph's
// kernels are built (layers/graph_kernels.h), then runs forward on the tape with
// those kernels. Layers own their parameters; names are stable ("layers.0.weight")
// because checkpoints store parameters by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "layers/graph_kernels.h"
#include "layers/parameter.h"

namespace strata::nn {

// A layer's input: a dense matrix [N, F], or (first layer only) the sparse input
// features S, with the dropout to apply to S's stored entries in training mode.
struct NodeFeatures {
  ag::Var dense;
  const SparseFeatures* sparse = nullptr;
  float sparse_dropout = 0.0f;
  uint64_t sparse_seed = 0;

  static NodeFeatures from_dense(ag::Var x) { return NodeFeatures{std::move(x), nullptr, 0.0f, 0}; }
  bool is_sparse() const { return sparse != nullptr; }
  int64_t rows() const { return is_sparse() ? sparse->rows() : dense.dim(0); }
  int64_t cols() const { return is_sparse() ? sparse->cols() : dense.dim(1); }
};

// x · W for either kind of input (sparse inputs through the feature-product kernels).
ag::Var project(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x, const ag::Var& w);

class GraphLayer {
 public:
  virtual ~GraphLayer() = default;
  // Adds the kernels forward() will use, for an input that is sparse or dense.
  virtual void request_kernels(KernelRequests& requests, bool sparse_input) const = 0;
  virtual ag::Var forward(ag::Tape& tape, const GraphKernels& kernels, const NodeFeatures& x) const = 0;
  virtual const std::vector<Parameter>& parameters() const = 0;
  virtual int64_t in_features() const = 0;
  virtual int64_t out_features() const = 0;
  // "SAGEConv(1433 -> 16, mean, root weight, bias)"
  virtual std::string describe() const = 0;
};

}  // namespace strata::nn
