#include "apps/training/batch_forward.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/autograd_ops.h"

namespace strata::train {
namespace {

bool uses_gcn_norm(const nn::KernelRequests& r) {
  for (const auto& [kind, feat] : r.aggregations)
    if (kind == nn::Aggregation::GcnNorm) return true;
  return false;
}

// Each node's out-degree in A (its column's non-zeros; rows are destinations), or the
// sum of its column's edge weights on a weighted A (GCN with data.edge_weights: use).
std::vector<double> column_degrees(const Graph& A) {
  std::vector<double> degree(static_cast<size_t>(A.num_cols()), 0.0);
  const float* w = A.has_values() ? A.values().data<float>() : nullptr;
  const auto add = [&degree, &A, w](const auto* index) {
    for (int64_t p = 0; p < A.nnz(); ++p) degree[static_cast<size_t>(index[p])] += w ? w[p] : 1.0;
  };
  if (A.index_dtype() == DType::I32)
    add(A.indices().data<int32_t>());
  else
    add(A.indices().data<int64_t>());
  return degree;
}

// Dₒ⁻½ of the nodes `nodes`, as the GcnNorm kernels take it.
Tensor inverse_sqrt_degrees(const std::vector<double>& degree, const std::vector<int64_t>& nodes, bool weighted) {
  Tensor s = Tensor::empty({static_cast<int64_t>(nodes.size())}, DType::F32);
  float* p = s.data<float>();
  for (size_t j = 0; j < nodes.size(); ++j)
    p[j] = nn::gcn_inverse_sqrt_degree(degree[static_cast<size_t>(nodes[j])], weighted);
  return s;
}

}  // namespace

BatchForward::BatchForward(const Context& ctx, const nn::GnnModel& model, const SampledBatch& batch, bool backward,
                           bool whole_graph_degrees) {
  nn::KernelRuntime runtime = ctx.config.runtime.kernels;
  runtime.tuning = false;
  runtime.plan_template = true;
  runtime.plans = nullptr;
  // GAT: a forced forward (fused or unfused) holds; nothing is measured per block.
  if (runtime.attention == nn::AttentionMode::Tuned) runtime.attention = nn::AttentionMode::Auto;
  const TrainingData& d = ctx.data;
  std::optional<std::vector<double>> out_degrees;  // of the whole graph, counted once when needed
  if (d.sparse_features) sparse = d.sparse_features->select_rows(batch.input_nodes());
  kernels.reserve(batch.blocks.size());
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const SampledBlock& block = batch.blocks[l];
    nn::KernelRequests requests = model.layer_kernel_requests(static_cast<int>(l), sparse.has_value());
    requests.backward = backward;
    if (whole_graph_degrees && uses_gcn_norm(requests)) {
      if (!out_degrees) out_degrees = column_degrees(d.graph);
      requests.gcn_source_scale = inverse_sqrt_degrees(*out_degrees, block.src_nodes, d.graph.has_values());
    }
    kernels.push_back(nn::build_graph_kernels(block.graph, l == 0 && sparse ? &*sparse : nullptr, requests, runtime));
    num_dst.push_back(block.num_dst);
  }
  for (const nn::GraphKernels& k : kernels) kernel_ptrs.push_back(&k);
  input = sparse ? nn::NodeFeatures{ag::Var(), &*sparse, 0.0f, 0}
                 : nn::NodeFeatures::from_dense(ag::Var::constant(d.dense_features.gather_rows(batch.input_nodes())));
}

double BatchForward::build_ms() const {
  double ms = 0;
  for (const nn::GraphKernels& k : kernels) ms += k.build_ms();
  return ms;
}
double BatchForward::compile_ms() const {
  double ms = 0;
  for (const nn::GraphKernels& k : kernels) ms += k.compile_ms();
  return ms;
}
double BatchForward::tune_ms() const {
  double ms = 0;
  for (const nn::GraphKernels& k : kernels) ms += k.tune_ms();
  return ms;
}

void print_blocks(const Printer& out, const TrainingConfig& c, const SampledBatch& batch, const BatchForward& bound) {
  for (size_t b = 0; b < bound.kernels.size(); ++b) {
    out(fmt::format("{:<11}layer {}: {} source nodes -> {} destinations, every in-neighbour kept", "block", b + 1,
                    commas(batch.blocks[b].num_src()), commas(batch.blocks[b].num_dst)));
    print_kernels(out, c, bound.kernels[b]);
  }
}

ReceptiveField receptive_field(const Graph& A, const std::vector<int64_t>& nodes, int layers) {
  ReceptiveField f;
  f.rows.resize(nodes.size());
  std::unordered_map<int64_t, int64_t> row_of;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const auto [it, fresh] = row_of.emplace(nodes[k], static_cast<int64_t>(f.seeds.size()));
    if (fresh) f.seeds.push_back(nodes[k]);
    f.rows[k] = it->second;
  }
  Rng unused(0);  // every layer keeps every in-neighbour: nothing is drawn
  f.batch = sample_blocks(A, f.seeds, std::vector<int64_t>(static_cast<size_t>(layers), -1), unused);
  return f;
}

}  // namespace strata::train
