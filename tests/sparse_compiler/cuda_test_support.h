// Helpers for the CUDA backend's tests: the SpMM variants every kernel is checked
// on, their random inputs and dense reference, and running a lowered kernel in the
// interpreter on host tensors.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/rng.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/ops/spmm.h"
#include "tests/sparse_compiler/reference_ops.h"

namespace strata::sc::cuda_testing {

struct SpmmVariant {
  std::string name;
  bool weighted = false, mean = false, scales = false;
};
inline const std::vector<SpmmVariant> kSpmmVariants = {
    {"sum", false, false, false}, {"mean", false, true, false}, {"weighted", true, false, false},
    {"weighted_scaled", true, false, true}};

inline SpmmSpec spmm_spec(const SpmmVariant& v, int64_t F, DType index_dtype) {
  SpmmSpec s;
  s.feat = F;
  s.index_dtype = index_dtype;
  s.weighted = v.weighted;
  s.row_scale = v.mean || v.scales;
  s.col_scale = v.scales;
  return s;
}

// X, the scales of a variant (as the user gives them), and the row scale the kernel
// gets (mean folds 1/deg in, as SpmmKernel does).
struct SpmmInputs {
  SpmmVariant v;
  Tensor X, row_scale, col_scale, kernel_row_scale;
  SpmmInputs(const Graph& g, const SpmmVariant& variant, int64_t F, Rng& rng) : v(variant) {
    X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
    if (v.scales) {
      row_scale = Tensor::uniform({g.num_rows()}, 0.5, 2.0, rng);
      col_scale = Tensor::uniform({g.num_cols()}, 0.5, 2.0, rng);
    }
    kernel_row_scale = row_scale;
    if (v.mean) {
      kernel_row_scale = Tensor::empty({g.num_rows()}, DType::F32);
      for (int64_t r = 0; r < g.num_rows(); ++r)
        kernel_row_scale.at<float>(r) = g.degree(r) ? 1.0f / static_cast<float>(g.degree(r)) : 0.0f;
    }
  }
  SpmmOptions options(int64_t F) const {
    SpmmOptions o;
    o.feat = F;
    o.weighted = v.weighted;
    o.reduce = v.mean ? Reduce::Mean : Reduce::Sum;
    o.row_scale = row_scale;
    o.col_scale = col_scale;
    return o;
  }
  Tensor reference(const Graph& g) const {
    return ::strata::testing::reference_spmm(g, X, v.weighted ? g.values() : Tensor(), row_scale, col_scale, v.mean);
  }
};

// Binds a graph's structure and sizes, and an inspected format's arrays when given.
inline void bind_structure(KernelArgs& a, const Graph& g, const InspectedFormat* format) {
  a.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices());
  a.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
  if (format) format->bind(a);
}

// Runs a lowered SpMM kernel (any schedule) in the interpreter; `format` holds the
// inspected arrays of a decomposed format's kernel.
inline Tensor interpret_spmm(const Kernel& k, const Graph& g, const SpmmInputs& in,
                             const InspectedFormat* format = nullptr) {
  const int64_t F = in.X.dim(1);
  Tensor Y = Tensor::full({g.num_rows(), F}, DType::F32, NAN);
  KernelArgs a;
  bind_structure(a, g, format);
  a.buffer("X", in.X).buffer("Y", Y);
  if (k.find_param("A")) a.buffer("A", g.values());
  if (k.find_param("row_scale")) a.buffer("row_scale", in.kernel_row_scale);
  if (k.find_param("col_scale")) a.buffer("col_scale", in.col_scale);
  Interpreter interp;
  a.bind(interp, k);
  interp.run(k);
  return Y;
}

// Runs a lowered SDDMM kernel in the interpreter: dot (X, Y -> O[nnz]) or add
// (XL, XR -> O[nnz, H]).
inline Tensor interpret_sddmm(const Kernel& k, const Graph& g, const Tensor& X, const Tensor& Y, bool dot,
                              const InspectedFormat* format = nullptr) {
  Tensor O = dot ? Tensor::full({g.nnz()}, DType::F32, NAN) : Tensor::full({g.nnz(), X.dim(1)}, DType::F32, NAN);
  KernelArgs a;
  bind_structure(a, g, format);
  a.buffer(dot ? "X" : "XL", X).buffer(dot ? "Y" : "XR", Y).buffer("O", O);
  Interpreter interp;
  a.bind(interp, k);
  interp.run(k);
  return O;
}

// A block-staged copy: each block loads its 64 elements into shared memory, waits,
// and writes them back reversed. The interpreter runs it serially (the barrier does
// nothing there); the emitter must allocate the tile in shared memory.
inline Kernel shared_tile_reverse() {
  Kernel k;
  k.name = "shared_tile_reverse";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("Y", DType::F32, ParamRole::Output), Param::scalar("nb")};
  const Expr b = var("b"), t = var("t"), u = var("u");
  Stmt fill = for_loop("t", make_int(0), make_int(64), ForKind::GpuThreadX,
                       store("tile", t, load(Type::f32(), "X", add(mul(b, make_int(64)), t))));
  Stmt drain = for_loop("u", make_int(0), make_int(64), ForKind::GpuThreadX,
                        store("Y", add(mul(b, make_int(64)), u), load(Type::f32(), "tile", sub(make_int(63), u))));
  k.body = for_loop("b", make_int(0), var("nb"), ForKind::GpuBlockX,
                    allocate("tile", Type::f32(), 64, MemoryScope::Shared, seq({fill, sync_threads(), drain})));
  return k;
}

}  // namespace strata::sc::cuda_testing
