// GAT's sparse steps as stage-I programs (written once, over CSR, lowered and
// compiled like every other op). Shapes: H heads, F features per head; edge
// tensors are [nnz, H] in the graph's CSR position order; node tensors are
// XL [rows, H] (destination scores), XR [cols, H] (source scores), X [cols, H, F].
//
//   gat_score       E[i,j,h] = LeakyReLU(XL[i,h] + XR[j,h])
//   edge_softmax    P[i,j,h] = exp(E[i,j,h] - M[i,h]) / S[i,h] over row i's edges,
//                   with M the row max and S the row sum (written out for backward)
//   gat_aggregate   Y[i,h,f] = sum_j P[i,j,h] X[j,h,f]
//                   (eid variant: P read through an edge-id map, for Aᵀ in backward)
//   gat_fused       all three in one kernel, derived from them by the compiler
//                   (passes/fuse_row_programs.h): scores and attention never go
//                   to memory; M and S out. Two forms (GatSpec::fused_softmax):
//                     two-pass: per row, the max of the scores, then one exp per edge
//                       and head and the weighted sum (the default);
//                     online: one pass with a running max and sum, the sums
//                       rescaled by exp(old max - new max) at every edge
//                       (passes/online_softmax.h).
//                   Measured side by side (2 threads, AMD EPYC): on 8-head layers
//                   two-pass ran 1.5-2.0x faster than online on Cora, Citeseer,
//                   Facebook and R-MAT (online pays a second exp and a multiply per
//                   feature at every edge); on one-head layers 0.93-1.30x. Online
//                   stays selectable for targets where reading a row's source scores
//                   twice costs more (docs/BENCHMARKS.md, GAT).
//   gat_fused_saving
//                   the fusion with E and P kept as outputs (for training: its
//                   backward then needs no recompute)
//   gat_recompute   E and P again from XL, XR, M, S (backward after a fused forward)
//   gat_sddmm       dP[i,j,h] = sum_f dY[i,h,f] X[j,h,f]
//   edge_softmax_backward
//                   dPre[i,j,h] = P (dP - sum_j P dP) * LeakyReLU'(E); dXL[i,h] = sum_j dPre
//   edge_col_sum    dXR[j,h] = sum_i dPre[i,j,h], over Aᵀ through its edge-id map
//   edge_softmax as four single-pass stages (edge_softmax_stage_programs), for
//   formats that may split a row's edges over several parts (hyb's column parts
//   and long rows, BSR's blocks, COO): a row max and a row sum are reductions
//   into the row, the exp and the division maps over edges, and each stage
//   decomposes over any format like SpMM (reductions) or SDDMM (maps):
//     softmax_max   M[i,h] = max_j E[i,j,h] (init -inf)
//     softmax_exp   P[i,j,h] = exp(E[i,j,h] - M[i,h])
//     softmax_sum   S[i,h] = sum_j P[i,j,h] (init 0)
//     softmax_norm  P[i,j,h] = P[i,j,h] / S[i,h]
// Each row program iterates rows outermost with the row's work in nested sparse
// iterations, so one thread owns a row and its M, S, Y in registers.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/formats/format_spec.h"
#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

enum class FusedSoftmax : uint8_t { TwoPass, Online };

struct GatSpec {
  int64_t heads = 1;
  int64_t feat = 8;
  double negative_slope = 0.2;
  DType index_dtype = DType::I32;
  FusedSoftmax fused_softmax = FusedSoftmax::TwoPass;  // gat_fused's form
  std::string suffix() const;  // "h8_f8_s0.2_i32"
};

Kernel gat_score_program(const GatSpec& s);
Kernel edge_softmax_program(const GatSpec& s);
std::vector<Kernel> edge_softmax_stage_programs(const GatSpec& s);  // max, exp, sum, norm
Kernel gat_aggregate_program(const GatSpec& s, bool through_eid);
Kernel gat_fused_program(const GatSpec& s);
Kernel gat_fused_saving_program(const GatSpec& s);
Kernel gat_recompute_program(const GatSpec& s);
Kernel gat_sddmm_program(const GatSpec& s);
Kernel edge_softmax_backward_program(const GatSpec& s);
Kernel edge_col_sum_program(const GatSpec& s);

// The program named `kernel` (score, softmax, softmax_max, softmax_exp,
// softmax_sum, softmax_norm, aggregate, aggregate_eid, fused, fused_online,
// fused_saving, recompute, sddmm, softmax_backward, col_sum), for `strata compile gat`; throws a
// UserError listing the names for any other.
Kernel gat_program(const std::string& kernel, GatSpec s);

// A single-pass GAT program (one sparse iteration over A's rows and edges: score,
// the softmax stages, aggregate, recompute, sddmm) over `format`: decomposed into
// the format's parts (decompose_format; COO: coo_program), edge tensors read and
// written through the parts' edge-id maps. CSR returns the program. Row programs
// (softmax, fused, softmax_backward) are refused with a UserError naming the
// single-pass ones.
Kernel gat_program_over(const Kernel& program, const FormatSpec& format);

}  // namespace strata::sc
