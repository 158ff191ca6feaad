#include "layers/pair_scores.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/passes/lowering_memo.h"

namespace strata::nn {
namespace {

// The memo keys: a program and its plan fix the lowered and emitted code
// (sparse_compiler/passes/lowering_memo.h).
std::string sddmm_key(const sc::SddmmSpec& spec, const sc::KernelPlan& plan) {
  return "sddmm\n" + spec.name() + "\n" + plan.to_json();
}
std::string spmm_key(const sc::SpmmSpec& spec, const sc::SpmmPlan& plan) {
  return "spmm\n" + spec.name() + "\n" + plan.to_json();
}

// a += b, element-wise (the two halves of a pair gradient: over P and over Pᵀ).
void add_in_place(Tensor& a, const Tensor& b) {
  float* x = a.data<float>();
  const float* y = b.data<float>();
  const int64_t total = a.numel();
#pragma omp parallel for schedule(static) if (total >= ag::kParallelWork)
  for (int64_t i = 0; i < total; ++i) x[i] += y[i];
}

std::unique_ptr<sc::SpmmKernel> bind_weighted_spmm(const Graph& g, int64_t feat, sc::Backend backend) {
  sc::SpmmOptions o;
  o.feat = feat;
  o.weighted = true;
  o.backend = backend;
  const sc::SpmmSpec spec = sc::SpmmKernel::spec(g, o);
  o.plan = sc::SpmmKernel::default_plan(spec);  // the template: the same program for every pair graph
  if (backend != sc::Backend::Generated) return std::make_unique<sc::SpmmKernel>(g, o);
  const std::string key = spmm_key(spec, *o.plan);
  sc::Kernel lowered = sc::lower_memoized(key, [&] { return sc::SpmmKernel::lower(spec, *o.plan); });
  std::vector<sc::CompiledKernel> compiled = sc::compile_cpu_memoized({key}, {std::move(lowered)});
  return std::make_unique<sc::SpmmKernel>(g, o, std::move(compiled[0]));
}

}  // namespace

PairKernels bind_pair_kernels(const Graph& pairs, int64_t feat, sc::Backend backend, bool backward, PairOp op) {
  STRATA_CHECK(pairs.num_rows() == pairs.num_cols(), "pair scores: the pair graph must be square, got {}",
               pairs.describe());
  STRATA_CHECK(feat > 0, "pair scores: embedding width must be positive, got {}", feat);
  PairKernels k;
  k.feat = feat;
  // Positions in P are the pairs' identity: drop any edge ids so Pᵀ's edge ids are P's positions.
  k.pairs = Graph::from_csr(pairs.num_rows(), pairs.num_cols(), pairs.indptr(), pairs.indices());
  k.op = op;
  if (op == PairOp::Product) {
    if (backward) k.pairs_t = k.pairs.transpose();
    if (backend == sc::Backend::Generated && k.pairs.nnz() > 0) {
      sc::GatSpec spec;  // F heads of one feature: z[e, h] = h[u, h] h[v, h]
      spec.heads = feat;
      spec.feat = 1;
      k.products = std::make_unique<sc::GatKernels>(k.pairs, spec, backend, std::nullopt, sc::GatKernelSet::Products);
    }
    return k;
  }
  sc::SddmmOptions so;
  so.kind = sc::SddmmKind::Dot;
  so.feat = feat;
  so.backend = backend;
  so.plan = sc::SddmmKernel::default_plan();
  if (backend == sc::Backend::Generated) {
    const sc::SddmmSpec spec = sc::SddmmKernel::spec(k.pairs, so);
    const std::string key = sddmm_key(spec, *so.plan);
    sc::Kernel lowered = sc::lower_memoized(key, [&] { return sc::SddmmKernel::lower(spec, *so.plan); });
    std::vector<sc::CompiledKernel> compiled = sc::compile_cpu_memoized({key}, {std::move(lowered)});
    k.score = std::make_unique<sc::SddmmKernel>(k.pairs, so, std::move(compiled[0]));
  } else {
    k.score = std::make_unique<sc::SddmmKernel>(k.pairs, so);
  }
  if (backward) {
    k.pairs_t = k.pairs.transpose();
    k.grad_u = bind_weighted_spmm(k.pairs, feat, backend);
    k.grad_v = bind_weighted_spmm(k.pairs_t, feat, backend);
  }
  return k;
}

ag::Var pair_scores(ag::Tape& tape, const PairKernels& k, const ag::Var& h) {
  Timer t;
  STRATA_ASSERT(k.score, "pair_scores: the pair graph was bound for products, not dot-product scores");
  STRATA_ASSERT(h.value().ndim() == 2 && h.dim(0) == k.pairs.num_rows() && h.dim(1) == k.feat,
                "pair_scores: embeddings {} for {} nodes of width {}", shape_str(h.shape()), k.pairs.num_rows(),
                k.feat);
  const int64_t n = k.num_pairs();
  Tensor s = ag::empty({n});
  {
    ag::SerialIfSmall serial(n * k.feat);
    k.score->run_into(h.value(), h.value(), s);
  }
  ag::Var out = ag::Var::result(s.reshape({n, 1}), tape.needs_grad({&h}));
  STRATA_CHECK(!out.requires_grad() || k.grad_u,
               "pair_scores: a pass that needs gradients over pair kernels bound without their backward (for "
               "evaluation); bind them with backward to train");
  std::function<void()> back;
  if (out.requires_grad()) {
    const PairKernels* kp = &k;
    back = [kp, h, out, n] {
      const Tensor ds = out.grad().reshape({n});
      // Pᵀ's values: the score gradients in Pᵀ's position order.
      Tensor ds_t = ag::empty({n});
      const float* g = ds.data<float>();
      const int64_t* perm = kp->pairs_t.edge_ids().data<int64_t>();
      float* d = ds_t.data<float>();
#pragma omp parallel for schedule(static) if (n >= ag::kParallelWork)
      for (int64_t q = 0; q < n; ++q) d[q] = g[perm[q]];
      Tensor dh = ag::empty({kp->pairs.num_rows(), kp->feat});
      Tensor dh_v = ag::empty({kp->pairs.num_rows(), kp->feat});
      {
        ag::SerialIfSmall serial(n * kp->feat);
        kp->grad_u->run_into(h.value(), dh, ds);      // dh[u] = Σ_e ds[e] h[v_e]
        kp->grad_v->run_into(h.value(), dh_v, ds_t);  // dh[v] = Σ_e ds[e] h[u_e]
      }
      add_in_place(dh, dh_v);
      h.accumulate_grad(dh, true);
    };
  }
  tape.record("pair_scores", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

namespace {

// The reference path's loops (Backend::Reference, or a pair graph without pairs).

// out[q] = x[r] ⊙ y[column q] for every stored pair q of row r of g, rows in parallel.
template <typename Index>
void product_rows(const Graph& g, const float* x, const float* y, int64_t f, float* out) {
  const int64_t* indptr = g.indptr_data();
  const Index* col = g.indices().data<Index>();
  const int64_t rows = g.num_rows();
#pragma omp parallel for schedule(dynamic, 64) if (g.nnz() * f >= ag::kParallelWork)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = indptr[r]; q < indptr[r + 1]; ++q) {
      const float* a = x + r * f;
      const float* b = y + static_cast<int64_t>(col[q]) * f;
      float* o = out + q * f;
      for (int64_t j = 0; j < f; ++j) o[j] = a[j] * b[j];
    }
}

// out[r] += Σ over row r's stored pairs q of w[p(q)] ⊙ y[column q], where p(q) is
// positions[q] (or q when positions is null); each row one thread's.
template <typename Index>
void gather_rows(const Graph& g, const float* w, const int64_t* positions, const float* y, int64_t f, float* out) {
  const int64_t* indptr = g.indptr_data();
  const Index* col = g.indices().data<Index>();
  const int64_t rows = g.num_rows();
#pragma omp parallel for schedule(dynamic, 64) if (g.nnz() * f >= ag::kParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * f;
    for (int64_t q = indptr[r]; q < indptr[r + 1]; ++q) {
      const float* a = w + (positions ? positions[q] : q) * f;
      const float* b = y + static_cast<int64_t>(col[q]) * f;
      for (int64_t j = 0; j < f; ++j) o[j] += a[j] * b[j];
    }
  }
}

}  // namespace

ag::Var pair_products(ag::Tape& tape, const PairKernels& k, const ag::Var& h) {
  Timer t;
  STRATA_ASSERT(h.value().ndim() == 2 && h.dim(0) == k.pairs.num_rows() && h.dim(1) == k.feat,
                "pair_products: embeddings {} for {} nodes of width {}", shape_str(h.shape()), k.pairs.num_rows(),
                k.feat);
  const int64_t n = k.num_pairs(), f = k.feat, nodes = k.pairs.num_rows();
  Tensor z = ag::empty({n, f});
  const float* hp = h.value().data<float>();
  if (k.products) {
    ag::SerialIfSmall serial(n * f);
    const Tensor h3 = h.value().reshape({nodes, f, 1});  // F heads of one feature
    k.products->attention_grad(h3, h3, z);
  } else if (k.pairs.index_dtype() == DType::I32) {
    product_rows<int32_t>(k.pairs, hp, hp, f, z.data<float>());
  } else {
    product_rows<int64_t>(k.pairs, hp, hp, f, z.data<float>());
  }
  ag::Var out = ag::Var::result(std::move(z), tape.needs_grad({&h}));
  STRATA_CHECK(!out.requires_grad() || !k.pairs_t.empty(),
               "pair_products: a pass that needs gradients over a pair graph bound without its backward (for "
               "evaluation); bind it with backward to train");
  std::function<void()> back;
  if (out.requires_grad()) {
    const PairKernels* kp = &k;
    back = [kp, h, out, n, f, nodes] {
      if (kp->products) {
        // dh[u] = Σ dz[e] ⊙ h[v_e] over P, dh[v] = Σ dz[e] ⊙ h[u_e] over Pᵀ, then their sum.
        const Tensor h3 = h.value().reshape({nodes, f, 1});
        Tensor dh = ag::empty({nodes, f, 1}), dh_v = ag::empty({nodes, f, 1});
        {
          ag::SerialIfSmall serial(n * f);
          kp->products->aggregate(out.grad(), h3, dh);
          kp->products->aggregate_transposed(out.grad(), h3, dh_v);
        }
        add_in_place(dh, dh_v);
        h.accumulate_grad(dh.reshape({nodes, f}), true);
        return;
      }
      Tensor dh = ag::zeros({kp->pairs.num_rows(), f});
      const float* g = out.grad().data<float>();
      const float* hv = h.value().data<float>();
      const int64_t* to_p = kp->pairs_t.edge_ids().data<int64_t>();
      // dh[u] += Σ dz[e] ⊙ h[v_e] over P's rows, then dh[v] += Σ dz[e] ⊙ h[u_e] over Pᵀ's rows.
      if (kp->pairs.index_dtype() == DType::I32) {
        gather_rows<int32_t>(kp->pairs, g, nullptr, hv, f, dh.data<float>());
        gather_rows<int32_t>(kp->pairs_t, g, to_p, hv, f, dh.data<float>());
      } else {
        gather_rows<int64_t>(kp->pairs, g, nullptr, hv, f, dh.data<float>());
        gather_rows<int64_t>(kp->pairs_t, g, to_p, hv, f, dh.data<float>());
      }
      h.accumulate_grad(dh, true);
    };
  }
  tape.record("pair_products", k.products ? ag::OpCategory::Sparse : ag::OpCategory::Other, out, t.ms(),
              std::move(back));
  return out;
}

}  // namespace strata::nn
