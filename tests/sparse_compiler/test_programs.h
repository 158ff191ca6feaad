// Small stage-I programs the pass and schedule tests lower: the op programs, a
// fused (COO-style) SDDMM, and a masked gather that reads a second sparse matrix
// by coordinate (which needs a binary search in that matrix's indices).
#pragma once

#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::sc::testing {

inline Kernel spmm_weighted_scaled() {
  SpmmSpec s;
  s.feat = 8;
  s.weighted = true;
  s.row_scale = true;
  s.col_scale = true;
  return spmm_program(s);
}

inline Kernel sddmm_dot() { return sddmm_program({SddmmKind::Dot, 4, DType::I32}); }
inline Kernel sddmm_add() { return sddmm_program({SddmmKind::Add, 2, DType::I32}); }
inline Kernel sddmm_dot_fused() { return sparse_fuse(sddmm_dot(), "sddmm", {"i", "j"}); }

// O[i, j] = B[i, j] for every (i, j) of A, where B has its own CSR structure
// (B_indptr, B_indices over axis K): reading B by A's coordinates needs a search.
inline Kernel masked_gather(bool fused) {
  CsrAxes a = csr_axes(DType::I32);
  Axis K = sparse_variable("K", a.I, var("n"), var("nnz_b"), "B_indptr", "B_indices", DType::I32, true);
  Kernel k;
  k.name = fused ? "masked_gather_fused" : "masked_gather";
  k.stage = Stage::Coordinate;
  k.axes = {a.I, a.J, K};
  SparseBuffer B = sparse_buffer("B", {a.I, K}, DType::F32);
  SparseBuffer O = sparse_buffer("O", {a.I, a.J}, DType::F32);
  k.buffers = {B, O};
  k.params = {Param::buffer("A_indptr", DType::I64),     Param::buffer("A_indices", DType::I32),
              Param::buffer("B_indptr", DType::I64),     Param::buffer("B_indices", DType::I32),
              Param::buffer("B", DType::F32),            Param::buffer("O", DType::F32, ParamRole::Output),
              Param::scalar("m"),                        Param::scalar("n"),
              Param::scalar("nnz"),                      Param::scalar("nnz_b")};
  Expr i = var("i"), j = var("j");
  k.body = sparse_iteration("gather", {{"i", a.I, false}, {"j", a.J, false}}, Stmt(),
                            sparse_store(O, {i, j}, sparse_load(B, {i, j})));
  if (fused) k = sparse_fuse(k, "gather", {"i", "j"});
  return k;
}

}  // namespace strata::sc::testing
