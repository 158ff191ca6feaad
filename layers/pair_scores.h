// Dot-product scores of node pairs, the decoder of link prediction, as an autograd
// op over the compiler's kernels.
//
// The pairs to score form a graph P (row u, column v for the pair (u, v); a pair may
// appear more than once). For node embeddings h [N, F]:
//
//   forward   s[e] = h[u_e] · h[v_e]              one SDDMM (dot) over P
//   backward  dh = P(ds) h  +  Pᵀ(ds) h            two weighted SpMMs, over P and Pᵀ,
//                                                  with the score gradients as edge values
//
// and, for OGB's MLP decoder (models/link_predictor.h), the pairs' element-wise products
//
//   forward   z[e, :] = h[u_e] ⊙ h[v_e]            a per-head SDDMM over P
//   backward  dh[u] += Σ dz[e] ⊙ h[v_e],            per-head weighted aggregations over P
//             dh[v] += Σ dz[e] ⊙ h[u_e]             and over Pᵀ (through its edge-id map)
//
// where each of the F features is one head of one feature: the compiler's GAT programs
// (sparse_compiler/ops/attention_programs.h: gat_sddmm, gat_aggregate and its edge-id
// variant) with H = F heads, bound as sc::GatKernels. Backend::Reference runs plain
// loops instead (each output row one thread's, so they are deterministic).
// Scores and products come in P's CSR position order. The pair graph changes every training
// epoch (fresh negative pairs), so its kernels use the plan templates, which do not
// depend on the graph: after the first epoch a binding reuses the lowered and
// compiled programs from the process's memo (sc::lower_memoized,
// sc::compile_cpu_memoized) and only binds the new arrays.
#pragma once

#include <cstdint>
#include <memory>

#include "core/autograd.h"
#include "core/graph.h"
#include "sparse_compiler/ops/attention.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"

namespace strata::nn {

// What a pair graph is bound for: dot-product scores (the SDDMM and, with backward,
// the two SpMMs), or element-wise products (the per-head SDDMM and aggregations).
enum class PairOp : uint8_t { Dot, Product };

struct PairKernels {
  Graph pairs;    // P: rows u, columns v, N x N, no edge ids (positions are the pairs' order)
  Graph pairs_t;  // Pᵀ; its edge_ids() are positions in P
  int64_t feat = 0;
  PairOp op = PairOp::Dot;
  std::unique_ptr<sc::SddmmKernel> score;          // s = SDDMM(h, h) over P
  std::unique_ptr<sc::SpmmKernel> grad_u, grad_v;  // weighted SpMMs over P and Pᵀ (null without backward)
  // PairOp::Product, generated backend: F heads of one feature over P (null: plain loops).
  std::unique_ptr<sc::GatKernels> products;
  int64_t num_pairs() const { return pairs.nnz(); }
};

// Binds the kernels that score the pairs of `pairs` (square, CSR; its edge ids, if
// any, are dropped) for embeddings of width `feat`. Backend::Generated compiles
// through the memo (a program compiled before in this process is only bound);
// Backend::Reference runs the plain loops. Without `backward` only the SDDMM is
// bound (evaluation). PairOp::Product binds the per-head kernels (forward and backward
// alike, sc::GatKernelSet::Products: they compile once per process) and, with backward,
// Pᵀ for the reference loops.
PairKernels bind_pair_kernels(const Graph& pairs, int64_t feat, sc::Backend backend, bool backward,
                              PairOp op = PairOp::Dot);

// Scores [num_pairs, 1] of the pairs for embeddings h [N, feat] (PairOp::Dot).
ag::Var pair_scores(ag::Tape& tape, const PairKernels& kernels, const ag::Var& h);

// Element-wise products [num_pairs, feat] of the pairs' embeddings (either PairOp).
ag::Var pair_products(ag::Tape& tape, const PairKernels& kernels, const ag::Var& h);

}  // namespace strata::nn
