#include "sparse_compiler/ops/attention_programs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/passes/fuse_row_programs.h"

namespace strata::sc {

std::string GatSpec::suffix() const {
  return fmt::format("h{}_f{}_s{}_{}", heads, feat, negative_slope, index_dtype == DType::I32 ? "i32" : "i64");
}

namespace {

// The CSR axes, a head axis H, a feature axis F, a flat edge axis E.
struct Axes {
  CsrAxes csr;
  Axis H, F, E;
};

Axes axes_for(const GatSpec& s) {
  Axes a;
  a.csr = csr_axes(s.index_dtype);
  a.H = dense_fixed("H", make_int(s.heads));
  a.F = dense_fixed("F", make_int(s.feat));
  a.E = dense_fixed("E", var("nnz"));
  return a;
}

// "<name>_<spec suffix>", with the slope's '.' spelled 'p' (an identifier).
std::string kernel_name(const std::string& name, const GatSpec& s) {
  std::string out = name + "_" + s.suffix();
  for (char& c : out)
    if (c == '.') c = 'p';
  return out;
}

Kernel base(const std::string& name, const GatSpec& s, const Axes& a) {
  Kernel k;
  k.name = kernel_name(name, s);
  k.stage = Stage::Coordinate;
  k.axes = {a.csr.I, a.csr.J, a.csr.J_detach, a.H, a.F, a.E};
  add_structure_params(k, s.index_dtype);
  return k;
}

void finish(Kernel& k) { add_size_params(k); }

SparseBuffer buffer(Kernel& k, const std::string& name, std::vector<Axis> axes, ParamRole role) {
  SparseBuffer b = sparse_buffer(name, std::move(axes), DType::F32);
  k.buffers.push_back(b);
  k.params.push_back(Param::buffer(name, DType::F32, role));
  return b;
}

// LeakyReLU as max(x, slope·x) (min for slopes above 1): the same value for every
// x, and no comparison for a scalar loop to branch on (GCC compiled the select
// form as a branch, mispredicted on half the edges of a one-head layer).
Expr leaky(const Expr& x, double slope) {
  const Expr scaled = mul(x, make_float(slope));
  return slope <= 1 ? max(x, scaled) : min(x, scaled);
}
Expr leaky_grad(const Expr& x, double slope) { return select(gt(x, make_float(0)), make_float(1), make_float(slope)); }
Expr neg_inf() { return make_float(-std::numeric_limits<double>::infinity()); }

IterVar it(const std::string& v, const Axis& a, bool red = false) { return {v, a, red}; }

}  // namespace

Kernel gat_score_program(const GatSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("gat_score", s, a);
  SparseBuffer XL = buffer(k, "XL", {a.csr.I, a.H}, ParamRole::Input);
  SparseBuffer XR = buffer(k, "XR", {a.csr.J_detach, a.H}, ParamRole::Input);
  SparseBuffer E = buffer(k, "E", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h");
  k.body = sparse_iteration("gat_score", {it("i", a.csr.I), it("j", a.csr.J), it("h", a.H)}, Stmt(),
                            sparse_store(E, {i, j, h}, leaky(add(sparse_load(XL, {i, h}), sparse_load(XR, {j, h})), s.negative_slope)));
  finish(k);
  return k;
}

Kernel edge_softmax_program(const GatSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("edge_softmax", s, a);
  SparseBuffer E = buffer(k, "E", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
  SparseBuffer P = buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
  SparseBuffer M = buffer(k, "M", {a.csr.I, a.H}, ParamRole::Output);
  SparseBuffer S = buffer(k, "S", {a.csr.I, a.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h"), j2 = var("j2"), h2 = var("h2"), j3 = var("j3"), h3 = var("h3"),
       h0 = var("h0");
  Expr e = sparse_load(E, {i, j, h});
  Stmt body = seq({
      sparse_iteration("softmax_init", {it("h0", a.H)}, Stmt(),
                       seq({sparse_store(M, {i, h0}, neg_inf()), sparse_store(S, {i, h0}, make_float(0))})),
      sparse_iteration("softmax_max", {it("j", a.csr.J, true), it("h", a.H)}, Stmt(),
                       sparse_store(M, {i, h}, max(sparse_load(M, {i, h}), e))),
      // exp once per edge and head: stored unnormalised while summed, then scaled by
      // 1/S (the row's P is still in L1).
      sparse_iteration("softmax_sum", {it("j2", a.csr.J, true), it("h2", a.H)}, Stmt(),
                       let_stmt("p", exp(sub(sparse_load(E, {i, j2, h2}), sparse_load(M, {i, h2}))),
                                seq({sparse_store(P, {i, j2, h2}, var("p", Type::f32())),
                                     sparse_store(S, {i, h2}, add(sparse_load(S, {i, h2}), var("p", Type::f32())))}))),
      sparse_iteration("softmax_norm", {it("j3", a.csr.J), it("h3", a.H)}, Stmt(),
                       sparse_store(P, {i, j3, h3}, div(sparse_load(P, {i, j3, h3}), sparse_load(S, {i, h3})))),
  });
  k.body = sparse_iteration("edge_softmax", {it("i", a.csr.I)}, Stmt(), body);
  finish(k);
  return k;
}

std::vector<Kernel> edge_softmax_stage_programs(const GatSpec& s) {
  Axes a = axes_for(s);
  Expr i = var("i"), j = var("j"), h = var("h");
  std::vector<Kernel> out;
  auto stage = [&](const std::string& name, bool reduce, const std::function<std::pair<Stmt, Stmt>(Kernel&)>& body) {
    Kernel k = base(name, s, a);
    auto [init, update] = body(k);
    k.body = sparse_iteration(name, {it("i", a.csr.I), it("j", a.csr.J, reduce), it("h", a.H)}, init, update);
    finish(k);
    out.push_back(std::move(k));
  };
  stage("edge_softmax_max", true, [&](Kernel& k) {
    SparseBuffer E = buffer(k, "E", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
    SparseBuffer M = buffer(k, "M", {a.csr.I, a.H}, ParamRole::Output);
    return std::pair{sparse_store(M, {i, h}, neg_inf()), sparse_store(M, {i, h}, max(sparse_load(M, {i, h}), sparse_load(E, {i, j, h})))};
  });
  stage("edge_softmax_exp", false, [&](Kernel& k) {
    SparseBuffer E = buffer(k, "E", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
    SparseBuffer M = buffer(k, "M", {a.csr.I, a.H}, ParamRole::Input);
    SparseBuffer P = buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
    return std::pair{Stmt(), sparse_store(P, {i, j, h}, exp(sub(sparse_load(E, {i, j, h}), sparse_load(M, {i, h}))))};
  });
  stage("edge_softmax_sum", true, [&](Kernel& k) {
    SparseBuffer P = buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
    SparseBuffer S = buffer(k, "S", {a.csr.I, a.H}, ParamRole::Output);
    return std::pair{sparse_store(S, {i, h}, make_float(0)), sparse_store(S, {i, h}, add(sparse_load(S, {i, h}), sparse_load(P, {i, j, h})))};
  });
  stage("edge_softmax_norm", false, [&](Kernel& k) {
    // P is read and written in place: declared once, as an output.
    SparseBuffer P = buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
    SparseBuffer S = buffer(k, "S", {a.csr.I, a.H}, ParamRole::Input);
    return std::pair{Stmt(), sparse_store(P, {i, j, h}, div(sparse_load(P, {i, j, h}), sparse_load(S, {i, h})))};
  });
  return out;
}

Kernel gat_program_over(const Kernel& program, const FormatSpec& format) {
  if (format.kind == FormatKind::Csr) return program;
  const auto* top = program.body.as<SparseIterationNode>();
  const bool whole = top && top->iters.size() >= 2;
  STRATA_CHECK(whole, "gat over {}: {} works on a row's edges in several passes (a row program), which needs each "
               "row's edges in one iteration; over other formats than csr, run the single-pass programs (score, "
               "softmax_max, softmax_exp, softmax_sum, softmax_norm, aggregate, recompute, sddmm)",
               format.str(), program.name);
  return format.kind == FormatKind::Coo ? coo_program(program) : decompose_format(program, format);
}

Kernel gat_aggregate_program(const GatSpec& s, bool through_eid) {
  Axes a = axes_for(s);
  Kernel k = base(through_eid ? "gat_aggregate_eid" : "gat_aggregate", s, a);
  SparseBuffer P = through_eid ? buffer(k, "P", {a.E, a.H}, ParamRole::Input)
                               : buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
  SparseBuffer eid;
  if (through_eid) {
    eid = sparse_buffer("eid", {a.csr.I, a.csr.J}, DType::I64);
    k.buffers.push_back(eid);
    k.params.push_back(Param::buffer("eid", DType::I64));
  }
  SparseBuffer X = buffer(k, "X", {a.csr.J_detach, a.H, a.F}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {a.csr.I, a.H, a.F}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h"), f = var("f");
  Expr p = through_eid ? sparse_load(P, {sparse_load(eid, {i, j}), h}) : sparse_load(P, {i, j, h});
  k.body = sparse_iteration("gat_aggregate", {it("i", a.csr.I), it("j", a.csr.J, true), it("h", a.H), it("f", a.F)},
                            sparse_store(Y, {i, h, f}, make_float(0)),
                            sparse_store(Y, {i, h, f}, add(sparse_load(Y, {i, h, f}), mul(p, sparse_load(X, {j, h, f})))));
  finish(k);
  return k;
}

Kernel gat_fused_program(const GatSpec& s) {
  // Derived, not written: the compiler fuses the three programs above (scores
  // inlined where read, the softmax's 1/S moved after the sum, the edge loops of
  // softmax and aggregation fused, the attention weights contracted to per-edge
  // scratch; passes/fuse_row_programs.h), and for the online form merges the max
  // pass into the edge loop with a running max (passes/online_softmax.h).
  RowFusion f;
  const bool online = s.fused_softmax == FusedSoftmax::Online;
  f.name = kernel_name(online ? "gat_fused_online" : "gat_fused", s);
  f.outputs = {"Y", "M", "S"};
  f.online_softmax = online;
  return fuse_row_programs({gat_score_program(s), edge_softmax_program(s), gat_aggregate_program(s, false)}, f);
}

Kernel gat_fused_saving_program(const GatSpec& s) {
  // The same chain fused with the scores and attention kept (training's backward
  // reads them): the edge loops still fuse (scores with the max pass, the
  // division with the aggregation), and E and P are re-read while the row's
  // edges are in L1 instead of by the next kernel.
  RowFusion f;
  f.name = kernel_name("gat_fused_saving", s);
  f.outputs = {"Y", "M", "S", "E", "P"};
  return fuse_row_programs({gat_score_program(s), edge_softmax_program(s), gat_aggregate_program(s, false)}, f);
}

Kernel gat_recompute_program(const GatSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("gat_recompute", s, a);
  SparseBuffer XL = buffer(k, "XL", {a.csr.I, a.H}, ParamRole::Input);
  SparseBuffer XR = buffer(k, "XR", {a.csr.J_detach, a.H}, ParamRole::Input);
  SparseBuffer M = buffer(k, "M", {a.csr.I, a.H}, ParamRole::Input);
  SparseBuffer S = buffer(k, "S", {a.csr.I, a.H}, ParamRole::Input);
  SparseBuffer E = buffer(k, "E", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
  SparseBuffer P = buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h");
  Stmt body = let_stmt("e", leaky(add(sparse_load(XL, {i, h}), sparse_load(XR, {j, h})), s.negative_slope),
                       seq({sparse_store(E, {i, j, h}, var("e", Type::f32())),
                            sparse_store(P, {i, j, h}, div(exp(sub(var("e", Type::f32()), sparse_load(M, {i, h}))),
                                                           sparse_load(S, {i, h})))}));
  k.body = sparse_iteration("gat_recompute", {it("i", a.csr.I), it("j", a.csr.J), it("h", a.H)}, Stmt(), body);
  finish(k);
  return k;
}

Kernel gat_sddmm_program(const GatSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("gat_sddmm", s, a);
  SparseBuffer dY = buffer(k, "dY", {a.csr.I, a.H, a.F}, ParamRole::Input);
  SparseBuffer X = buffer(k, "X", {a.csr.J_detach, a.H, a.F}, ParamRole::Input);
  SparseBuffer dP = buffer(k, "dP", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h"), f = var("f");
  k.body = sparse_iteration("gat_sddmm", {it("i", a.csr.I), it("j", a.csr.J), it("h", a.H), it("f", a.F, true)},
                            sparse_store(dP, {i, j, h}, make_float(0)),
                            sparse_store(dP, {i, j, h}, add(sparse_load(dP, {i, j, h}),
                                                            mul(sparse_load(dY, {i, h, f}), sparse_load(X, {j, h, f})))));
  finish(k);
  return k;
}

Kernel edge_softmax_backward_program(const GatSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("edge_softmax_backward", s, a);
  SparseBuffer P = buffer(k, "P", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
  SparseBuffer dP = buffer(k, "dP", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
  SparseBuffer E = buffer(k, "E", {a.csr.I, a.csr.J, a.H}, ParamRole::Input);
  SparseBuffer dPre = buffer(k, "dPre", {a.csr.I, a.csr.J, a.H}, ParamRole::Output);
  SparseBuffer dXL = buffer(k, "dXL", {a.csr.I, a.H}, ParamRole::Output);
  SparseBuffer D = buffer(k, "D", {a.csr.I, a.H}, ParamRole::Output);  // per-row sum_j P dP (scratch)
  Expr i = var("i"), j = var("j"), h = var("h"), j2 = var("j2"), h2 = var("h2"), h0 = var("h0");
  Stmt body = seq({
      sparse_iteration("bwd_init", {it("h0", a.H)}, Stmt(),
                       seq({sparse_store(D, {i, h0}, make_float(0)), sparse_store(dXL, {i, h0}, make_float(0))})),
      sparse_iteration("bwd_dot", {it("j", a.csr.J, true), it("h", a.H)}, Stmt(),
                       sparse_store(D, {i, h}, add(sparse_load(D, {i, h}),
                                                   mul(sparse_load(P, {i, j, h}), sparse_load(dP, {i, j, h}))))),
      sparse_iteration("bwd_edges", {it("j2", a.csr.J, true), it("h2", a.H)}, Stmt(),
                       let_stmt("g",
                                mul(mul(sparse_load(P, {i, j2, h2}), sub(sparse_load(dP, {i, j2, h2}), sparse_load(D, {i, h2}))),
                                    leaky_grad(sparse_load(E, {i, j2, h2}), s.negative_slope)),
                                seq({sparse_store(dPre, {i, j2, h2}, var("g", Type::f32())),
                                     sparse_store(dXL, {i, h2}, add(sparse_load(dXL, {i, h2}), var("g", Type::f32())))}))),
  });
  k.body = sparse_iteration("edge_softmax_backward", {it("i", a.csr.I)}, Stmt(), body);
  finish(k);
  return k;
}

Kernel edge_col_sum_program(const GatSpec& s) {
  // Runs over Aᵀ: rows are the sources; eid maps each non-zero of Aᵀ to A's CSR position.
  Axes a = axes_for(s);
  Kernel k = base("edge_col_sum", s, a);
  SparseBuffer dPre = buffer(k, "dPre", {a.E, a.H}, ParamRole::Input);
  SparseBuffer eid = sparse_buffer("eid", {a.csr.I, a.csr.J}, DType::I64);
  k.buffers.push_back(eid);
  k.params.push_back(Param::buffer("eid", DType::I64));
  SparseBuffer dXR = buffer(k, "dXR", {a.csr.I, a.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h");
  k.body = sparse_iteration("edge_col_sum", {it("i", a.csr.I), it("j", a.csr.J, true), it("h", a.H)},
                            sparse_store(dXR, {i, h}, make_float(0)),
                            sparse_store(dXR, {i, h}, add(sparse_load(dXR, {i, h}), sparse_load(dPre, {sparse_load(eid, {i, j}), h}))));
  finish(k);
  return k;
}

Kernel gat_program(const std::string& kernel, GatSpec s) {
  if (kernel == "fused_online") s.fused_softmax = FusedSoftmax::Online;
  const std::vector<std::pair<const char*, std::function<Kernel()>>> programs = {
      {"score", [&] { return gat_score_program(s); }},
      {"softmax", [&] { return edge_softmax_program(s); }},
      {"softmax_max", [&] { return edge_softmax_stage_programs(s)[0]; }},
      {"softmax_exp", [&] { return edge_softmax_stage_programs(s)[1]; }},
      {"softmax_sum", [&] { return edge_softmax_stage_programs(s)[2]; }},
      {"softmax_norm", [&] { return edge_softmax_stage_programs(s)[3]; }},
      {"aggregate", [&] { return gat_aggregate_program(s, false); }},
      {"aggregate_eid", [&] { return gat_aggregate_program(s, true); }},
      {"fused", [&] { return gat_fused_program(s); }},
      {"fused_online", [&] { return gat_fused_program(s); }},
      {"fused_saving", [&] { return gat_fused_saving_program(s); }},
      {"recompute", [&] { return gat_recompute_program(s); }},
      {"sddmm", [&] { return gat_sddmm_program(s); }},
      {"softmax_backward", [&] { return edge_softmax_backward_program(s); }},
      {"col_sum", [&] { return edge_col_sum_program(s); }}};
  std::vector<std::string> names;
  for (const auto& [name, make] : programs) {
    if (kernel == name) return make();
    names.emplace_back(name);
  }
  STRATA_FAIL("gat: unknown kernel '{}' (expected one of: {})", kernel, fmt::join(names, ", "));
}

}  // namespace strata::sc
