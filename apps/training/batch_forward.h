// Forward passes over sampled blocks (core/neighbor_sampler.h): the kernels and input
// rows of one batch, as mini-batch training binds them (trainer.cpp), and a batch's
// receptive field for `strata infer --batch`: every in-neighbour within the model's
// layers, so the batch's logits are the whole graph's up to rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/training/trainer.h"
#include "core/neighbor_sampler.h"

namespace strata::train {

// The kernels and input rows of one sampled batch. Every block binds the compiled
// template programs (CSR, one plan for every graph): blocks change every batch, so
// nothing is tuned or sized for one of them. Built in place (input points into
// `sparse`).
struct BatchForward {
  std::optional<nn::SparseFeatures> sparse;
  std::vector<nn::GraphKernels> kernels;
  std::vector<const nn::GraphKernels*> kernel_ptrs;
  std::vector<int64_t> num_dst;
  nn::NodeFeatures input;

  // With `whole_graph_degrees` (inference over a receptive field), GCN's symmetric
  // norm scales each source by its out-degree in the whole graph (its weights' sum on
  // a weighted graph), not in the block; mini-batch training keeps the blocks' own, as
  // DGL's and PyG's sampled GCNs do.
  BatchForward(const Context& ctx, const nn::GnnModel& model, const SampledBatch& batch, bool backward,
               bool whole_graph_degrees = false);
  BatchForward(const BatchForward&) = delete;
  BatchForward& operator=(const BatchForward&) = delete;
  // Kernel build times summed over the blocks.
  double build_ms() const;
  double compile_ms() const;
  double tune_ms() const;
};

// Each block's line ("block  layer 1: 470 source nodes -> 57 destinations") and its
// kernels (print_kernels).
void print_blocks(const Printer& out, const TrainingConfig& c, const SampledBatch& batch, const BatchForward& bound);

// The blocks of `nodes` (repeats allowed) for a model of `layers` layers with every
// in-neighbour kept: `seeds` are the distinct nodes in first-seen order (the rows of
// the logits forward_blocks gives) and rows[k] the seed row of nodes[k].
struct ReceptiveField {
  std::vector<int64_t> seeds, rows;
  SampledBatch batch;
  int64_t nodes() const { return static_cast<int64_t>(batch.input_nodes().size()); }
};
ReceptiveField receptive_field(const Graph& A, const std::vector<int64_t>& nodes, int layers);

}  // namespace strata::train
