#include "sparse_compiler/ops/programs.h"

#include <fmt/format.h>

#include <regex>

#include "core/error.h"

namespace strata::sc {

std::string SpmmSpec::name() const {
  return fmt::format("spmm_f{}_{}{}{}{}", feat, index_dtype == DType::I32 ? "i32" : "i64", weighted ? "_w" : "",
                     row_scale ? "_rs" : "", col_scale ? "_cs" : "");
}

std::optional<SpmmSpec> SpmmSpec::from_name(const std::string& name) {
  // spmm_f<F>_i32|i64[_w][_rs][_cs], the suffixes in name()'s order.
  static const std::regex re(R"(spmm_f([1-9][0-9]{0,8})_(i32|i64)(_w)?(_rs)?(_cs)?)");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  SpmmSpec s;
  s.feat = std::stoll(m[1].str());
  s.index_dtype = m[2].str() == "i32" ? DType::I32 : DType::I64;
  s.weighted = m[3].matched;
  s.row_scale = m[4].matched;
  s.col_scale = m[5].matched;
  return s;
}

std::string SddmmSpec::name() const {
  return kind == SddmmKind::Dot ? fmt::format("sddmm_dot_f{}_{}", feat, index_dtype == DType::I32 ? "i32" : "i64")
                                : fmt::format("sddmm_add_h{}_{}", feat, index_dtype == DType::I32 ? "i32" : "i64");
}

CsrAxes csr_axes(DType index_dtype) {
  CsrAxes a;
  a.I = dense_fixed("I", var("m"));
  a.J = sparse_variable("J", a.I, var("n"), var("nnz"), "A_indptr", "A_indices", index_dtype, true);
  a.J_detach = dense_fixed("J_detach", var("n"));
  return a;
}

void add_structure_params(Kernel& k, DType index_dtype) {
  k.params.push_back(Param::buffer("A_indptr", DType::I64));
  k.params.push_back(Param::buffer("A_indices", index_dtype));
}
void add_size_params(Kernel& k) {
  k.params.push_back(Param::scalar("m"));
  k.params.push_back(Param::scalar("n"));
  k.params.push_back(Param::scalar("nnz"));
}

Kernel spmm_program(const SpmmSpec& s, const DenseLayout& x_layout) {
  STRATA_CHECK(s.feat >= 1, "spmm: feature size must be at least 1, got {}", s.feat);
  x_layout.fits(s.feat, "spmm");
  CsrAxes ax = csr_axes(s.index_dtype);
  Axis F = dense_fixed("F", make_int(s.feat));
  Kernel k;
  k.name = s.name();
  if (!x_layout.is_row()) k.name += fmt::format("_x{}{}", x_layout.kind == DenseLayout::Kind::Panel ? "panel" : "pad",
                                                x_layout.param);
  k.stage = Stage::Coordinate;
  k.axes = {ax.I, ax.J, ax.J_detach, F};
  add_structure_params(k, s.index_dtype);
  SparseBuffer A = sparse_buffer("A", {ax.I, ax.J}, DType::F32);
  SparseBuffer Y = sparse_buffer("Y", {ax.I, F}, DType::F32);

  // The feature iteration: one axis f, or panels f_o x f_i for a panel layout.
  const bool panels = x_layout.kind == DenseLayout::Kind::Panel;
  const int64_t W = panels ? x_layout.param : s.feat;
  Axis F_o = dense_fixed("F_o", make_int(s.feat / W)), F_i = dense_fixed("F_i", make_int(W));
  SparseBuffer X;
  if (panels) {
    k.axes.push_back(F_o);
    k.axes.push_back(F_i);
    X = sparse_buffer("X", {F_o, ax.J_detach, F_i}, DType::F32);
  } else if (x_layout.kind == DenseLayout::Kind::Padded) {
    Axis FX = dense_fixed("FX", make_int(s.feat + x_layout.param));
    k.axes.push_back(FX);
    X = sparse_buffer("X", {ax.J_detach, FX}, DType::F32);
  } else {
    X = sparse_buffer("X", {ax.J_detach, F}, DType::F32);
  }
  k.buffers = {X, Y};

  Expr i = var("i"), j = var("j");
  Expr f = panels ? add(mul(var("f_o"), make_int(W)), var("f_i")) : var("f");
  Expr weight;  // the per-edge multiplier, if any
  auto times = [&](Expr w) { weight = weight.defined() ? mul(weight, w) : w; };
  if (s.weighted) {
    k.params.push_back(Param::buffer("A", DType::F32));
    k.buffers.push_back(A);
    times(sparse_load(A, {i, j}));
  }
  if (s.row_scale) {
    SparseBuffer rs = sparse_buffer("row_scale", {ax.I}, DType::F32);
    k.params.push_back(Param::buffer("row_scale", DType::F32));
    k.buffers.push_back(rs);
    times(sparse_load(rs, {i}));
  }
  if (s.col_scale) {
    SparseBuffer cs = sparse_buffer("col_scale", {ax.J_detach}, DType::F32);
    k.params.push_back(Param::buffer("col_scale", DType::F32));
    k.buffers.push_back(cs);
    times(sparse_load(cs, {j}));
  }
  k.params.push_back(Param::buffer("X", DType::F32));
  k.params.push_back(Param::buffer("Y", DType::F32, ParamRole::Output));
  add_size_params(k);

  Expr x = panels ? sparse_load(X, {var("f_o"), j, var("f_i")}) : sparse_load(X, {j, f});
  Expr msg = weight.defined() ? mul(weight, x) : x;
  Stmt init = sparse_store(Y, {i, f}, make_float(0));
  Stmt body = sparse_store(Y, {i, f}, add(sparse_load(Y, {i, f}), msg));
  if (panels)
    k.body = sparse_iteration("spmm", {{"i", ax.I, false}, {"j", ax.J, true}, {"f_o", F_o, false}, {"f_i", F_i, false}},
                              init, body);
  else
    k.body = sparse_iteration("spmm", {{"i", ax.I, false}, {"j", ax.J, true}, {"f", F, false}}, init, body);
  return k;
}

Kernel sddmm_program(const SddmmSpec& s, const DenseLayout& layout) {
  STRATA_CHECK(s.feat >= 1, "sddmm: feature size must be at least 1, got {}", s.feat);
  STRATA_CHECK(s.kind == SddmmKind::Dot || layout.is_row(),
               "sddmm_add: XL and XR are read by rows (layout {} applies to dot products)", layout.str());
  STRATA_CHECK(layout.kind != DenseLayout::Kind::Padded, "sddmm: layout {}: X and Y are read as rows or panels",
               layout.str());
  layout.fits(s.feat, "sddmm");
  CsrAxes ax = csr_axes(s.index_dtype);
  Kernel k;
  k.name = s.name();
  k.stage = Stage::Coordinate;
  add_structure_params(k, s.index_dtype);
  Expr i = var("i"), j = var("j");
  if (s.kind == SddmmKind::Dot) {
    Axis F = dense_fixed("F", make_int(s.feat));
    k.axes = {ax.I, ax.J, ax.J_detach, F};
    SparseBuffer X, Y;
    SparseBuffer O = sparse_buffer("O", {ax.I, ax.J}, DType::F32);
    Expr x, y;
    std::vector<IterVar> features;
    if (layout.kind == DenseLayout::Kind::Panel) {
      // X and Y panel by panel ([F/W][rows][W]): the dot product is a reduction
      // over both f_o and f_i, so a schedule can run one pass per panel.
      const int64_t W = layout.param;
      Axis F_o = dense_fixed("F_o", make_int(s.feat / W)), F_i = dense_fixed("F_i", make_int(W));
      k.axes.push_back(F_o);
      k.axes.push_back(F_i);
      k.name += fmt::format("_xpanel{}", W);
      X = sparse_buffer("X", {F_o, ax.I, F_i}, DType::F32);
      Y = sparse_buffer("Y", {F_o, ax.J_detach, F_i}, DType::F32);
      x = sparse_load(X, {var("f_o"), i, var("f_i")});
      y = sparse_load(Y, {var("f_o"), j, var("f_i")});
      features = {{"f_o", F_o, true}, {"f_i", F_i, true}};
    } else {
      X = sparse_buffer("X", {ax.I, F}, DType::F32);
      Y = sparse_buffer("Y", {ax.J_detach, F}, DType::F32);
      x = sparse_load(X, {i, var("f")});
      y = sparse_load(Y, {j, var("f")});
      features = {{"f", F, true}};
    }
    k.buffers = {X, Y, O};
    k.params.push_back(Param::buffer("X", DType::F32));
    k.params.push_back(Param::buffer("Y", DType::F32));
    k.params.push_back(Param::buffer("O", DType::F32, ParamRole::Output));
    Stmt init = sparse_store(O, {i, j}, make_float(0));
    Stmt body = sparse_store(O, {i, j}, add(sparse_load(O, {i, j}), mul(x, y)));
    std::vector<IterVar> iters = {{"i", ax.I, false}, {"j", ax.J, false}};
    iters.insert(iters.end(), features.begin(), features.end());
    k.body = sparse_iteration("sddmm", iters, init, body);
  } else {
    Axis H = dense_fixed("H", make_int(s.feat));
    k.axes = {ax.I, ax.J, ax.J_detach, H};
    SparseBuffer XL = sparse_buffer("XL", {ax.I, H}, DType::F32);
    SparseBuffer XR = sparse_buffer("XR", {ax.J_detach, H}, DType::F32);
    SparseBuffer O = sparse_buffer("O", {ax.I, ax.J, H}, DType::F32);
    k.buffers = {XL, XR, O};
    k.params.push_back(Param::buffer("XL", DType::F32));
    k.params.push_back(Param::buffer("XR", DType::F32));
    k.params.push_back(Param::buffer("O", DType::F32, ParamRole::Output));
    Expr h = var("h");
    Stmt body = sparse_store(O, {i, j, h}, add(sparse_load(XL, {i, h}), sparse_load(XR, {j, h})));
    k.body = sparse_iteration("sddmm_add", {{"i", ax.I, false}, {"j", ax.J, false}, {"h", H, false}}, Stmt(), body);
  }
  add_size_params(k);
  return k;
}

}  // namespace strata::sc
