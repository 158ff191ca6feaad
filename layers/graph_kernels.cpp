#include "layers/graph_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <map>

#include "core/autograd.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/timer.h"
#include "sparse_compiler/passes/lowering_memo.h"
#include "sparse_compiler/tune/tuner.h"

namespace strata::nn {
namespace {

// SpmmKernel::lower is a function of (program, plan) alone, and so is the code
// emitted for it: this key names both (sc::lower_memoized, sc::compile_cpu_memoized).
std::string program_key(const sc::SpmmSpec& spec, const sc::SpmmPlan& plan) {
  return "spmm\n" + spec.name() + "\n" + plan.to_json();
}

// A kernel to build: graph, options, and where the result goes.
struct Job {
  const Graph* graph;
  sc::SpmmOptions options;
  std::unique_ptr<sc::SpmmKernel>* slot;
  KernelRecord record;
};

// 1 / deg (0 for empty rows), deg^-1/2 (deg clamped to >= 1), or 1 / (deg + 1) per row.
enum class DegreeFn { Inverse, InverseSqrtClamped, InversePlusOne };

// Degrees count a row's non-zeros, or sum their values on a weighted graph (GCN with
// edge weights), where a zero degree scales by 0 as in PyG's gcn_norm.
Tensor degree_scale(const Graph& g, DegreeFn fn) {
  Tensor s = Tensor::empty({g.num_rows()}, DType::F32);
  float* p = s.data<float>();
  const int64_t* indptr = g.indptr_data();
  const float* w = g.has_values() ? g.values().data<float>() : nullptr;
  for (int64_t r = 0; r < g.num_rows(); ++r) {
    double d = static_cast<double>(indptr[r + 1] - indptr[r]);
    if (w) {
      d = 0;
      for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) d += w[k];
    }
    switch (fn) {
      case DegreeFn::Inverse: p[r] = d > 0 ? static_cast<float>(1.0 / d) : 0.0f; break;
      case DegreeFn::InverseSqrtClamped:
        p[r] = gcn_inverse_sqrt_degree(d, w != nullptr);
        break;
      case DegreeFn::InversePlusOne: p[r] = static_cast<float>(1.0 / (d + 1.0)); break;
    }
  }
  return s;
}

}  // namespace

const char* aggregation_name(Aggregation a) {
  switch (a) {
    case Aggregation::Sum: return "sum";
    case Aggregation::Mean: return "mean";
    case Aggregation::GcnNorm: return "gcn-norm";
    case Aggregation::SageGcn: return "sage-gcn";
    case Aggregation::Max:
      return "max";
  }
  return "?";
}

void KernelRequests::add_aggregation(Aggregation kind, int64_t feat) {
  const auto key = std::make_pair(kind, feat);
  if (std::find(aggregations.begin(), aggregations.end(), key) == aggregations.end()) aggregations.push_back(key);
}

void KernelRequests::add_feature_product(int64_t feat) {
  if (std::find(feature_products.begin(), feature_products.end(), feat) == feature_products.end())
    feature_products.push_back(feat);
}

// ---- GAT attention ----
const char* attention_mode_name(AttentionMode m) {
  switch (m) {
    case AttentionMode::Auto: return "auto";
    case AttentionMode::Tuned: return "tuned";
    case AttentionMode::Fused: return "fused";
    case AttentionMode::Unfused: return "unfused";
  }
  return "?";
}

void KernelRequests::add_attention(const AttentionRequest& r) {
  if (std::find(attention.begin(), attention.end(), r) == attention.end()) attention.push_back(r);
}

const AttentionKernels& GraphKernels::attention(const AttentionRequest& r) const {
  for (const auto& k : attention_)
    if (k->request == r) return *k;
  STRATA_ASSERT(false, "no GAT attention kernels for {} heads x {} features (slope {}, self-loops {}) were built",
                r.heads, r.feat, r.negative_slope, r.self_loops);
  return *attention_.front();
}

std::vector<std::string> GraphKernels::attention_lines() const {
  std::vector<std::string> out;
  for (const auto& k : attention_)
    out.push_back(fmt::format("{:<31} {:<3} {:<22} {}", fmt::format("gat attention h={} f={}", k->request.heads, k->request.feat),
                              k->request.self_loops ? "A+I" : "A", k->kernels->describe(), k->choice));
  return out;
}

namespace {
// GAT layers whose kernels are being built, each with the future that delivers them.
using PendingAttention =
    std::vector<std::pair<std::shared_ptr<AttentionKernels>, std::future<std::unique_ptr<sc::GatKernels>>>>;

// Starts building (lowering and compiling, or preparing to interpret) the GAT
// kernels of every attention request, each on its own thread: separate compiler
// invocations, so with cores to spare a load waits for the slowest, not the sum.
PendingAttention start_attention(const Graph& A, const KernelRequests& requests, const KernelRuntime& runtime) {
  PendingAttention out;
  std::optional<Graph> with_loops;
  for (const AttentionRequest& r : requests.attention) {
    auto k = std::make_shared<AttentionKernels>();
    k->request = r;
    if (r.self_loops && !with_loops) with_loops = A.with_self_loops();
    k->graph = r.self_loops ? *with_loops : A;
    sc::GatSpec spec;
    spec.heads = r.heads;
    spec.feat = r.feat;
    spec.negative_slope = r.negative_slope;
    const sc::Backend backend = runtime.backend == sc::Backend::Generated ? sc::Backend::Generated : sc::Backend::Reference;
    const sc::GatKernelSet set = requests.backward ? sc::GatKernelSet::Training : sc::GatKernelSet::Inference;
    const Graph* g = &k->graph;  // owned by k, which outlives the future
    const int threads = num_threads();  // OpenMP's count is per thread: the builder takes this one's
    // Template plans (a mini-batch's blocks, the plain-CSR baseline) bind kernels lowered
    // and compiled before: built on this thread, when finish_attention asks, with no
    // thread (and OpenMP team) started per layer for work that takes microseconds.
    out.emplace_back(k, std::async(runtime.plan_template ? std::launch::deferred : std::launch::async,
                                   [g, spec, backend, set, threads] {
                                     set_num_threads(threads);
                                     return std::make_unique<sc::GatKernels>(*g, spec, backend, std::nullopt, set);
                                   }));
  }
  return out;
}

// Waits for the GAT kernels start_attention began and picks each layer's forward:
// forced by runtime.attention, else tune_gat's measured choice (attention: tuned, or
// auto with tuning on), else unfused (the faster one on every graph measured, see
// graph_kernels.h). The reference backend has nothing to tune: unfused unless
// forced. Tuning measures one layer at a time, after every build has finished.
void finish_attention(PendingAttention started, const KernelRequests& requests, const KernelRuntime& runtime,
                      std::vector<std::shared_ptr<AttentionKernels>>& out) {
  for (auto& [k, built] : started) k->kernels = built.get();
  for (auto& pending : started) {
    const std::shared_ptr<AttentionKernels>& k = pending.first;
    const AttentionRequest& r = k->request;
    const sc::Backend backend = k->kernels->backend();
    const std::string compiled = fmt::format("built in {:.0f} ms", k->kernels->compile_ms());
    const bool tune = runtime.attention == AttentionMode::Tuned || (runtime.attention == AttentionMode::Auto && runtime.tuning);
    if (runtime.attention == AttentionMode::Fused || runtime.attention == AttentionMode::Unfused) {
      k->fused = k->fused_training = runtime.attention == AttentionMode::Fused;
      k->choice = fmt::format("{} (forced), {}", k->fused ? "fused" : "unfused", compiled);
    } else if (tune && backend == sc::Backend::Generated) {
      {
        // Measured in the threading regime the layers run it in (ag::SerialIfSmall):
        // on a busy 2-core machine small kernels timed with two threads measure
        // scheduler waits, not the kernels.
        ag::SerialIfSmall serial(k->graph.nnz() * r.heads * r.feat);
        k->tune = sc::tune_gat(*k->kernels);
      }
      k->fused = k->tune->fused;
      // Without a backward there are no training passes to choose for (a training
      // record read by an inference set still carries that choice).
      k->fused_training = requests.backward && k->tune->fused_training;
      k->fused_form = k->tune->fused_form;
      k->saving_training = requests.backward && k->tune->saving_training;
      const std::string fused = fmt::format("fused ({})", sc::fused_form_name(k->fused_form));
      const std::string training = k->saving_training ? "fused, keeping scores and attention"
                                   : k->fused_training ? fused
                                                       : "unfused";
      const std::string picked = requests.backward
                                     ? fmt::format("{}; training: {}", k->fused ? fused : "unfused", training)
                                     : std::string(k->fused ? fused : "unfused");
      const std::string training_times =
          requests.backward
              ? fmt::format(", backward's recompute after fused {:.3f} ms, fused keeping scores {:.3f} ms",
                            k->tune->recompute_ms, k->tune->saving_ms)
              : "";
      k->choice = k->tune->from_record
                      ? fmt::format("{} (tuning record), {}", picked, compiled)
                      : fmt::format(
                            "{} (tuned in {:.0f} ms: fused two-pass {:.3f} ms, online {:.3f} ms, unfused "
                            "{:.3f} ms{}), {}",
                            picked, k->tune->tune_ms, k->tune->two_pass_ms, k->tune->online_ms, k->tune->unfused_ms,
                            training_times, compiled);
    } else {
      k->fused = k->fused_training = false;
      k->choice = fmt::format("unfused (default; tuning off), {}", compiled);
    }
    out.push_back(k);
  }
}
}  // namespace
// ---- end GAT ----

SparseFeatures SparseFeatures::from_csr(int64_t rows, int64_t cols, const Tensor& indptr, const Tensor& indices,
                                        const Tensor& values) {
  SparseFeatures f;
  f.S = Graph::from_csr(rows, cols, indptr, indices, values);
  f.St = f.S.transpose();
  return f;
}

SparseFeatures SparseFeatures::select_rows(const std::vector<int64_t>& rows) const {
  std::vector<int64_t> indptr(1, 0);
  indptr.reserve(rows.size() + 1);
  for (int64_t r : rows) indptr.push_back(indptr.back() + S.degree(r));
  const int64_t nnz = indptr.back();
  const size_t width = dtype_size(S.index_dtype());
  Tensor indices = Tensor::empty({nnz}, S.index_dtype());
  Tensor values = S.has_values() ? Tensor::empty({nnz}, DType::F32) : Tensor();
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t from = S.row_begin(rows[i]), n = indptr[i + 1] - indptr[i];
    std::memcpy(static_cast<char*>(indices.raw_data()) + static_cast<size_t>(indptr[i]) * width,
                static_cast<const char*>(S.indices().raw_data()) + static_cast<size_t>(from) * width,
                static_cast<size_t>(n) * width);
    if (values.defined()) std::copy_n(S.values().data<float>() + from, n, values.data<float>() + indptr[i]);
  }
  return from_csr(static_cast<int64_t>(rows.size()), S.num_cols(), Tensor::from_vector(indptr), indices, values);
}

bool GraphKernels::has_aggregation(Aggregation kind, int64_t feat) const {
  return aggregations_.count({static_cast<int>(kind), feat}) > 0;
}

const AggregationKernels& GraphKernels::aggregation(Aggregation kind, int64_t feat) const {
  auto it = aggregations_.find({static_cast<int>(kind), feat});
  STRATA_ASSERT(it != aggregations_.end(), "no {} aggregation kernel of width {} was built for this graph",
                aggregation_name(kind), feat);
  return *it->second;
}

int64_t AggregationKernels::rows() const { return forward ? forward->graph().num_rows() : max->rows(); }
int64_t AggregationKernels::cols() const { return forward ? forward->graph().num_cols() : max->cols(); }

const FeatureProductKernels& GraphKernels::feature_product(int64_t feat) const {
  auto it = products_.find(feat);
  STRATA_ASSERT(it != products_.end(), "no sparse-feature product kernel of width {} was built", feat);
  return *it->second;
}

GraphKernels build_graph_kernels(const Graph& A, const SparseFeatures* features, const KernelRequests& requests,
                                 const KernelRuntime& runtime) {
  Timer total;
  STRATA_CHECK(runtime.backend == sc::Backend::Generated || runtime.backend == sc::Backend::Reference,
               "kernels: backend '{}' cannot train (expected generated or reference)", sc::backend_name(runtime.backend));
  STRATA_ASSERT(A.num_rows() == A.num_cols(), "message passing over a non-square graph {}", A.describe());
  GraphKernels out;
  out.runtime_ = runtime;
  const bool tuning = runtime.tuning && runtime.backend == sc::Backend::Generated;

  std::vector<Job> jobs;
  std::vector<KernelRecord> max_records;  // max aggregations (not SpMM jobs)
  const bool any_aggregation = !requests.aggregations.empty();
  // Shared by every aggregation: the transpose and the degree scales.
  Graph At;
  Tensor inv_deg, inv_sqrt_in, inv_sqrt_out, inv_deg_plus_one;
  if (any_aggregation) {
    At = A.transpose();
    inv_deg = degree_scale(A, DegreeFn::Inverse);
    inv_sqrt_in = degree_scale(A, DegreeFn::InverseSqrtClamped);
    inv_sqrt_out = degree_scale(At, DegreeFn::InverseSqrtClamped);
    if (requests.gcn_source_scale.defined()) {
      STRATA_ASSERT(requests.gcn_source_scale.numel() == A.num_cols(),
                    "a GCN source scale of {} values for a graph of {} columns", requests.gcn_source_scale.numel(),
                    A.num_cols());
      inv_sqrt_out = requests.gcn_source_scale;
    }
    inv_deg_plus_one = degree_scale(A, DegreeFn::InversePlusOne);
  }
  for (const auto& [kind, feat] : requests.aggregations) {
    STRATA_CHECK(!A.has_values() || kind == Aggregation::GcnNorm,
                 "kernels: the graph has edge weights, which only the gcn-norm aggregation uses; {} aggregates "
                 "without them (drop the weights)",
                 aggregation_name(kind));
    auto k = std::make_shared<AggregationKernels>();
    k->kind = kind;
    k->feat = feat;
    if (kind == Aggregation::Max) {  // row programs of their own, compiled here
      k->max = std::make_unique<sc::MaxAggregationKernels>(A, feat, runtime.backend, requests.backward);
      const std::string what = fmt::format("max f={}", feat);
      const std::string cache =
          runtime.backend == sc::Backend::Generated ? sc::to_string(k->max->cache_outcome()) : "-";
      auto csr_with = [&](bool backward) {  // the row programs' CSR schedule, as a plan for the records
        sc::KernelPlan p;
        p.knobs = k->max->knobs(backward);
        return p;
      };
      max_records.push_back({what + " forward", "A", k->max->forward_name(), csr_with(false),
                             sc::backend_name(runtime.backend), cache, k->max->describe()});
      if (requests.backward)
        max_records.push_back({what + " backward", "Aᵀ", k->max->backward_name(), csr_with(true),
                               sc::backend_name(runtime.backend), cache, k->max->describe()});
      out.compile_ms_ = std::max(out.compile_ms_, k->max->compile_ms());
      out.aggregations_[{static_cast<int>(kind), feat}] = std::move(k);
      continue;
    }
    sc::SpmmOptions fwd, bwd;
    fwd.feat = bwd.feat = feat;
    fwd.backend = bwd.backend = runtime.backend;
    switch (kind) {
      case Aggregation::Sum: break;
      case Aggregation::Max:
        break;  // built above
      case Aggregation::Mean:
        fwd.reduce = sc::Reduce::Mean;
        bwd.col_scale = inv_deg;
        break;
      case Aggregation::GcnNorm:
        fwd.row_scale = inv_sqrt_in;
        fwd.col_scale = inv_sqrt_out;
        bwd.row_scale = inv_sqrt_out;
        bwd.col_scale = inv_sqrt_in;
        // A weighted graph (data.edge_weights: use): each edge scaled by its weight,
        // the degrees above summed over weights; Aᵀ carries the same weights.
        fwd.weighted = bwd.weighted = A.has_values();
        break;
      case Aggregation::SageGcn:
        fwd.row_scale = inv_deg_plus_one;
        bwd.col_scale = inv_deg_plus_one;
        k->self_scale = inv_deg_plus_one;
        break;
    }
    const std::string what = fmt::format("{} f={}", aggregation_name(kind), feat);
    jobs.push_back({&A, fwd, &k->forward, {what + " forward", "A", "", {}, "", "", ""}});
    if (requests.backward) jobs.push_back({&At, bwd, &k->backward, {what + " backward", "Aᵀ", "", {}, "", "", ""}});
    out.aggregations_[{static_cast<int>(kind), feat}] = std::move(k);
  }
  if (!requests.feature_products.empty()) {
    STRATA_ASSERT(features != nullptr, "sparse-feature product kernels requested without sparse features");
    STRATA_ASSERT(features->rows() == A.num_rows(), "sparse features with {} rows for a graph of {} nodes",
                  features->rows(), A.num_rows());
  }
  for (int64_t feat : requests.feature_products) {
    auto k = std::make_shared<FeatureProductKernels>();
    k->feat = feat;
    k->features = features;
    k->weighted = requests.feature_dropout || features->S.has_values();
    if (k->weighted) {
      k->values = features->S.has_values() ? features->S.values() : Tensor::full({features->S.nnz()}, DType::F32, 1.0);
      k->transpose = features->St.edge_ids();
    }
    sc::SpmmOptions fwd, bwd;
    fwd.feat = bwd.feat = feat;
    fwd.backend = bwd.backend = runtime.backend;
    fwd.weighted = bwd.weighted = k->weighted;
    const std::string what = fmt::format("features f={}", feat);
    jobs.push_back({&features->S, fwd, &k->forward, {what + " forward", "S", "", {}, "", "", ""}});
    if (requests.backward)
      jobs.push_back({&features->St, bwd, &k->backward, {what + " weight gradient", "Sᵀ", "", {}, "", "", ""}});
    out.products_[feat] = std::move(k);
  }

  // Plans: tuned per (graph, program, width) when asked — a recorded choice is
  // reused without measuring — else the default plan. Then one compiler batch for
  // every distinct generated program.
  int tuned = 0, from_records = 0;
  Timer tuning_timer;
  for (Job& j : jobs) {
    const sc::SpmmSpec spec = sc::SpmmKernel::spec(*j.graph, j.options);
    if (runtime.plans && runtime.backend == sc::Backend::Generated) {
      j.options.plan = runtime.plans->plan_for(j.record.role, spec.name(), "runtime.plans");
      continue;
    }
    if (!tuning) {
      j.options.plan =
          runtime.plan_template ? sc::SpmmKernel::default_plan(spec) : sc::SpmmKernel::default_plan(spec, *j.graph);
      continue;
    }
    sc::TuneOptions to;  // row-major X: the layers hold activations row-major
    const sc::TuneResult r = sc::tune_spmm(*j.graph, spec, to);
    j.options.plan = r.chosen;
    ++tuned;
    from_records += r.from_record ? 1 : 0;
  }
  out.tune_ms_ = tuning && !runtime.plans ? tuning_timer.ms() : 0;
  if (runtime.plans && runtime.backend == sc::Backend::Generated)
    out.note_ = fmt::format("{} plans replayed from '{}' (runtime.plans)", jobs.size(), runtime.plans->file());
  else if (tuning)
    out.note_ = fmt::format("tuned {} kernels in {:.0f} ms ({} from tuning records)", tuned, out.tune_ms_, from_records);
  Timer lowering;
  std::vector<sc::Kernel> batch;
  std::vector<std::string> batch_keys;        // program_key of each kernel in batch
  std::map<std::string, size_t> batch_index;  // lowered kernel name -> position in batch
  std::vector<size_t> job_program(jobs.size(), 0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    Job& j = jobs[i];
    const sc::SpmmSpec spec = sc::SpmmKernel::spec(*j.graph, j.options);
    j.record.program = spec.name();
    j.record.plan = *j.options.plan;
    j.record.backend = sc::backend_name(runtime.backend);
    if (runtime.backend != sc::Backend::Generated) continue;
    sc::Kernel lowered;
    try {
      lowered = sc::lower_memoized(program_key(spec, *j.options.plan),
                                   [&] { return sc::SpmmKernel::lower(spec, *j.options.plan); });
    } catch (const UserError& e) {
      if (!runtime.plans) throw;
      STRATA_FAIL("runtime.plans '{}': the plan for '{}' does not fit this run's kernel: {}", runtime.plans->file(),
                  j.record.role, e.what());
    }
    auto [it, fresh] = batch_index.emplace(lowered.name, batch.size());
    if (fresh) {
      batch.push_back(std::move(lowered));
      batch_keys.push_back(program_key(spec, *j.options.plan));
    }
    job_program[i] = it->second;
  }
  out.lower_ms_ = lowering.ms();
  out.distinct_programs_ = static_cast<int64_t>(batch.size());
  // GAT's kernels compile while this batch does (after the SpMM tuning above, whose
  // measurements they would disturb).
  auto attention = start_attention(A, requests, runtime);
  std::vector<sc::CompiledKernel> compiled;
  if (!batch.empty()) {
    // In up to one translation unit per thread, compiled at once (a cold load waits
    // for the largest unit, not the whole batch). The units run side by side, so the
    // compiler's time is the longest unit's, and the outcome the costliest one.
    // Kernels this process compiled before (every batch's blocks) come from the memo.
    compiled = sc::compile_cpu_memoized(batch_keys, batch, num_threads());
    sc::CacheOutcome outcome = sc::CacheOutcome::MemoryHit;
    for (const sc::CompiledKernel& c : compiled) {
      out.compile_ms_ = std::max(out.compile_ms_, c.compile_ms);
      outcome = std::max(outcome, c.outcome);
    }
    out.cache_outcome_ = sc::to_string(outcome);
  } else {
    out.cache_outcome_ = "-";
  }

  std::vector<bool> used(batch.size(), false);
  for (size_t i = 0; i < jobs.size(); ++i) {
    Job& j = jobs[i];
    if (runtime.backend == sc::Backend::Generated) {
      const size_t p = job_program[i];
      *j.slot = std::make_unique<sc::SpmmKernel>(*j.graph, j.options, compiled[p]);
      j.record.cache = used[p] ? "shared" : sc::to_string(compiled[p].outcome);
      used[p] = true;
    } else {
      *j.slot = std::make_unique<sc::SpmmKernel>(*j.graph, j.options);
      j.record.cache = "-";
    }
    j.record.describe = (*j.slot)->describe();
    out.records_.push_back(std::move(j.record));
  }
  for (KernelRecord& r : max_records) out.records_.push_back(std::move(r));
  finish_attention(std::move(attention), requests, runtime, out.attention_);  // GAT
  out.build_ms_ = total.ms();
  return out;
}

}  // namespace strata::nn
