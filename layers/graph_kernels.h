// The sparse kernels a model runs over one graph, built together at graph-load time.
//
// A model states what it needs (KernelRequests: which aggregations at which feature
// sizes, which widths of sparse-feature products); build_graph_kernels() then makes
// every forward kernel and the kernel its backward needs, lowers them all and
// compiles them as one batch (sc::SpmmKernel::lower + sc::compile_cpu, in a
// translation unit per thread at most), and binds each to its graph. The feature size is compiled into a kernel, so
// each (aggregation, width) pair is its own kernel; identical programs (say a sum over A and a sum over Aᵀ at the same
// width) are compiled once and bound twice.
//
// Aggregation over A (rows = destinations, see core/graph.h) and its backward:
//
//   kind     forward Y =                     backward dX =
//   Sum      A X                             Aᵀ dY
//   Mean     D⁻¹ A X                         Aᵀ (D⁻¹ dY)       SpMM over Aᵀ, col_scale 1/deg
//   GcnNorm  D⁻½ A Dₒ⁻½ X                    Dₒ⁻½ Aᵀ D⁻½ dY    row/col scales swapped over Aᵀ
//   SageGcn  D̃⁻¹ (A X + X)                   Aᵀ (D̃⁻¹ dY) + D̃⁻¹ dY
//
// D = in-degrees (A's row lengths), Dₒ = out-degrees (Aᵀ's row lengths), D̃ = D + I.
// Mean gives 0 on rows without in-neighbours; GcnNorm clamps degrees to at least 1
// (as DGL's GraphConv does), which matters only for isolated nodes. The graph is
// never assumed symmetric.
//
// Sparse input features S [N, F] (bag-of-words, MUSAE's binary vectors) are treated
// as a graph too: the first layer's S·W is an SpMM over S with W as the dense
// operand, and the weight gradient Sᵀ·dY an SpMM over Sᵀ, so S is never densified.
// With input dropout the kernels are weighted and take per-call values (the kept
// entries of S, scaled by 1/(1-p)).
//
// Plans: with tuning off every kernel uses sc::SpmmKernel::default_plan for its graph
// (streaming stores and X prefetch where the sizes say they pay); with tuning
// on, each (graph, program, width) gets sc::tune_spmm's choice (format and schedule
// measured on this graph, row-major X), and a tuning record makes the next load of
// the same graph reuse it without measuring.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "sparse_compiler/ops/attention.h"
#include "sparse_compiler/ops/max_aggregation.h"
#include "sparse_compiler/ops/recorded_plans.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/tune/gat_tuner.h"

namespace strata::nn {

// Max: the feature-wise maximum over in-neighbours (0 without any), through the
// compiler's max row programs (sparse_compiler/ops/max_aggregation.h).
enum class Aggregation : uint8_t { Sum, Mean, GcnNorm, SageGcn, Max };

// GcnNorm's scale of a node of degree d: d^-1/2, counted degrees clamped to at least 1,
// a weighted degree (a sum of edge weights) of 0 scaling by 0 as in PyG's gcn_norm.
inline float gcn_inverse_sqrt_degree(double d, bool weighted) {
  if (weighted) return d > 0 ? static_cast<float>(1.0 / std::sqrt(d)) : 0.0f;
  return static_cast<float>(1.0 / std::sqrt(std::max(d, 1.0)));
}
const char* aggregation_name(Aggregation a);

// ---- GAT attention (layers/gat_conv.h) ----
// How GAT's forward runs: Tuned = the tuner's measured choice (sc::tune_gat, reused
// from a tuning record when there is one); Auto = Tuned when runtime tuning is on,
// else the default (unfused: faster than fused for every graph strata_bench_gat
// measured on CPU, docs/BENCHMARKS.md "GAT"); Fused / Unfused force one.
enum class AttentionMode : uint8_t { Auto, Tuned, Fused, Unfused };
const char* attention_mode_name(AttentionMode m);
// ---- end GAT ----

// Which kernels to build and how.
struct KernelRuntime {
  sc::Backend backend = sc::Backend::Generated;  // Generated or Reference
  bool tuning = false;
  // Without tuning: every SpMM kernel gets the plan template (CSR, no prefetch,
  // plain stores, no column tiles) instead of the untuned plan for its graph; the
  // plain-CSR baseline of benchmarks/bench_train.cpp.
  bool plan_template = false;
  AttentionMode attention = AttentionMode::Auto;  // GAT only
  // runtime.plans: every SpMM kernel runs the plan an earlier run recorded for its
  // role (sparse_compiler/ops/recorded_plans.h), instead of tuning or the size rules.
  std::shared_ptr<const sc::RecordedPlans> plans{};
};

// ---- GAT attention kernels ----
// One GAT attention configuration: heads H, features per head F, LeakyReLU slope,
// and whether the kernels run over A + I (self-loops added as PyG's GATConv does;
// existing loops are kept once) or over A itself.
struct AttentionRequest {
  int64_t heads = 1, feat = 1;
  double negative_slope = 0.2;
  bool self_loops = true;
  bool operator==(const AttentionRequest& o) const {
    return heads == o.heads && feat == o.feat && negative_slope == o.negative_slope && self_loops == o.self_loops;
  }
};

// sc::GatKernels for one AttentionRequest, bound to the graph the attention runs
// over, with the forward chosen for it: fused (online softmax) or unfused (score,
// softmax, aggregate). The backward always uses the backward pieces; after a fused
// forward it recomputes the scores and probabilities from the saved row max and sum.
struct AttentionKernels {
  AttentionRequest request;
  Graph graph;  // A or A + I
  std::unique_ptr<sc::GatKernels> kernels;
  // The forward each pass runs (attention dropout always runs unfused): forward-only
  // passes (evaluation, inference) and training passes, whose backward recomputes
  // what a fused forward did not keep, are chosen apart.
  bool fused = true;
  bool fused_training = true;
  sc::FusedSoftmax fused_form = sc::FusedSoftmax::TwoPass;  // the fused forward's softmax
  // Training passes run the fused forward that keeps scores and attention (no
  // recompute in the backward); takes precedence over fused_training.
  bool saving_training = false;
  std::string choice;  // "fused; training: unfused (tuned in 41 ms: ...)", "unfused (forced)", ...
  std::optional<sc::GatTuneResult> tune;
};
// ---- end GAT ----

struct KernelRequests {
  std::vector<std::pair<Aggregation, int64_t>> aggregations;  // (kind, feature width)
  std::vector<int64_t> feature_products;                      // widths of S·W
  bool feature_dropout = false;  // S·W takes per-call values (input dropout on S)
  std::vector<AttentionRequest> attention;  // GAT
  // Whether the backward kernels are built too (training). Without them (evaluation,
  // inference) a kernel's backward slot is empty and GAT compiles its forwards only.
  bool backward = true;
  // GcnNorm: Dₒ⁻½ per column of A when A is a block of a larger graph whose sources'
  // out-degrees the scale must use (exact inference over a receptive field); empty:
  // A's own out-degrees.
  Tensor gcn_source_scale;
  void add_aggregation(Aggregation kind, int64_t feat);
  void add_feature_product(int64_t feat);
  void add_attention(const AttentionRequest& r);  // GAT
};

// Sparse input features S [N, F] as a graph (rows = nodes, columns = feature ids),
// with its transpose; Sᵀ's edge ids are positions in S (S is built without edge ids).
struct SparseFeatures {
  Graph S, St;
  // CSR arrays (int64 indptr, int32 indices, optional float32 values) of a feature matrix.
  static SparseFeatures from_csr(int64_t rows, int64_t cols, const Tensor& indptr, const Tensor& indices,
                                 const Tensor& values);
  int64_t rows() const { return S.num_rows(); }
  int64_t cols() const { return S.num_cols(); }
  // The rows `rows` (repeats allowed) as their own matrix: a batch's or a receptive
  // field's input nodes.
  SparseFeatures select_rows(const std::vector<int64_t>& rows) const;
};

// One aggregation at one width: the forward kernel over A and the backward over Aᵀ
// (null when the requests asked for no backward).
struct AggregationKernels {
  Aggregation kind = Aggregation::Sum;
  int64_t feat = 0;
  std::unique_ptr<sc::SpmmKernel> forward, backward;
  Tensor self_scale;  // SageGcn: D̃⁻¹ per node (the self term's weight)
  std::unique_ptr<sc::MaxAggregationKernels> max;  // Max: forward and backward in one (forward, backward unset)
  int64_t rows() const;                            // A's rows (the output's)
  int64_t cols() const;                            // A's columns (the input's)
};

// S·W at one width: forward over S, weight gradient over Sᵀ (null without backward).
struct FeatureProductKernels {
  int64_t feat = 0;
  bool weighted = false;  // the kernels multiply by per-call edge values
  const SparseFeatures* features = nullptr;
  std::unique_ptr<sc::SpmmKernel> forward, backward;
  Tensor values;     // S's values (all ones for binary features) when weighted
  Tensor transpose;  // int64 [nnz]: position in S of each of Sᵀ's non-zeros
};

// What the run header and the run dir's kernels.json show for one kernel.
struct KernelRecord {
  std::string role;      // "mean f=16 forward"
  std::string graph;     // "A", "Aᵀ", "S" (features), "Sᵀ"
  std::string program;   // the op program's name, "spmm_f16_i32_rs"
  sc::SpmmPlan plan;
  std::string backend;   // "generated" | "reference"
  std::string cache;     // "compiled" | "disk hit" | "memory hit" | "shared" | "-"
  std::string describe;  // sc::SpmmKernel::describe()
};

class GraphKernels {
 public:
  const AggregationKernels& aggregation(Aggregation kind, int64_t feat) const;
  const FeatureProductKernels& feature_product(int64_t feat) const;
  bool has_aggregation(Aggregation kind, int64_t feat) const;
  // GAT: the attention kernels built for `r` (asserts they were requested), and one
  // line per attention configuration for the run header ("gat h8 f8 ...: fused ...").
  const AttentionKernels& attention(const AttentionRequest& r) const;
  std::vector<std::string> attention_lines() const;

  const std::vector<KernelRecord>& records() const { return records_; }
  double build_ms() const { return build_ms_; }      // everything, from requests to bound kernels
  double compile_ms() const { return compile_ms_; }  // the compiler's time for the batch (0: all cached)
  double lower_ms() const { return lower_ms_; }      // lowering and scheduling
  double tune_ms() const { return tune_ms_; }        // choosing plans (0 without tuning)
  int64_t distinct_programs() const { return distinct_programs_; }
  const std::string& cache_outcome() const { return cache_outcome_; }
  const std::string& note() const { return note_; }  // e.g. how many plans came from tuning records
  void set_note(std::string note) { note_ = std::move(note); }  // when the caller knows better where plans came from
  const KernelRuntime& runtime() const { return runtime_; }

 private:
  friend GraphKernels build_graph_kernels(const Graph&, const SparseFeatures*, const KernelRequests&,
                                          const KernelRuntime&);
  KernelRuntime runtime_;
  std::map<std::pair<int, int64_t>, std::shared_ptr<AggregationKernels>> aggregations_;
  std::map<int64_t, std::shared_ptr<FeatureProductKernels>> products_;
  std::vector<std::shared_ptr<AttentionKernels>> attention_;  // GAT
  std::vector<KernelRecord> records_;
  double build_ms_ = 0, compile_ms_ = 0, lower_ms_ = 0, tune_ms_ = 0;
  int64_t distinct_programs_ = 0;
  std::string cache_outcome_;
  std::string note_;
};

// Builds, compiles in one batch, and binds every kernel `requests` names for the
// graph A (square, rows = destinations) and, when given, the sparse features.
// `features` must outlive the result.
GraphKernels build_graph_kernels(const Graph& A, const SparseFeatures* features, const KernelRequests& requests,
                                 const KernelRuntime& runtime);

}  // namespace strata::nn
