#include "sparse_compiler/ops/rgms_programs.h"

#include <fmt/format.h>

namespace strata::sc {

std::string RgmsSpec::suffix() const {
  return fmt::format("i{}_o{}_{}", fin, fout, index_dtype == DType::I32 ? "i32" : "i64");
}

namespace {

struct Axes {
  Axis R, I, J, Idense, Jdense, FI, FO, S;
};

Axes axes_for(const RgmsSpec& s) {
  Axes a;
  a.R = dense_fixed("R", var("rels"));
  a.I = sparse_variable("I", a.R, var("m"), var("pairs"), "rel_ptr", "rel_rows", s.index_dtype, true);
  a.J = sparse_variable("J", a.I, var("n"), var("nnz"), "row_ptr", "cols", s.index_dtype, true);
  a.Idense = dense_fixed("I_dense", var("m"));
  a.Jdense = dense_fixed("J_dense", var("n"));
  a.FI = dense_fixed("FI", make_int(s.fin));
  a.FO = dense_fixed("FO", make_int(s.fout));
  // Per-relation source lists: a ragged axis whose positions are the sources.
  a.S = dense_variable("S", a.R, var("n"), var("sources"), "src_ptr");
  return a;
}

Kernel base(const std::string& name, const RgmsSpec& s, const Axes& a, bool sources) {
  Kernel k;
  k.name = name + "_" + s.suffix();
  k.stage = Stage::Coordinate;
  k.axes = {a.R, a.I, a.J, a.Idense, a.Jdense, a.FI, a.FO};
  if (sources) k.axes.push_back(a.S);
  k.params = {Param::buffer("rel_ptr", DType::I64), Param::buffer("rel_rows", s.index_dtype),
              Param::buffer("row_ptr", DType::I64), Param::buffer("cols", s.index_dtype)};
  return k;
}

void finish(Kernel& k, bool sources) {
  for (const char* n : {"m", "n", "rels", "pairs", "nnz"}) k.params.push_back(Param::scalar(n));
  if (sources) k.params.push_back(Param::scalar("sources"));
}

SparseBuffer buffer(Kernel& k, const std::string& name, std::vector<Axis> axes, ParamRole role, DType dt = DType::F32) {
  SparseBuffer b = sparse_buffer(name, std::move(axes), dt);
  k.buffers.push_back(b);
  k.params.push_back(Param::buffer(name, dt, role));
  return b;
}

IterVar it(const std::string& v, const Axis& a, bool red = false) { return {v, a, red}; }

// out[at] += a * b: the accumulation every RGMS program's reduction performs.
Stmt add_product(const SparseBuffer& out, const std::vector<Expr>& at, Expr a, Expr b) {
  return sparse_store(out, at, add(sparse_load(out, at), mul(std::move(a), std::move(b))));
}

Stmt init_y(const Axes& a, const SparseBuffer& Y) {
  return sparse_iteration("rgms_init", {it("iy", a.Idense), it("fy", a.FO)}, Stmt(),
                          sparse_store(Y, {var("iy"), var("fy")}, make_float(0)));
}

// H[r,i,fi] = sum_j A[r,i,j] X[j,fi]
// (over features `F`, named `fv`: the basis gradient's G[r,i,fo] is the same sum of dY)
Stmt pair_sums(const std::string& name, const Axes& a, const Axis& F, const std::string& fv, const SparseBuffer& A,
               const SparseBuffer& X, const SparseBuffer& H) {
  Expr r = var("r"), i = var("i"), j = var("j"), f = var(fv);
  return sparse_iteration(name, {it("r", a.R), it("i", a.I), it("j", a.J, true), it(fv, F)},
                          sparse_store(H, {r, i, f}, make_float(0)),
                          add_product(H, {r, i, f}, sparse_load(A, {r, i, j}), sparse_load(X, {j, f})));
}

Stmt aggregate(const Axes& a, const SparseBuffer& A, const SparseBuffer& X, const SparseBuffer& H) {
  return pair_sums("rgms_aggregate", a, a.FI, "fi", A, X, H);
}

// Y[i,fo] += sum_fi H[r,i,fi] W[r,fi,fo]
Stmt transform(const Axes& a, const SparseBuffer& H, const SparseBuffer& W, const SparseBuffer& Y) {
  Expr r = var("r2"), i = var("i2"), fo = var("fo"), fi = var("fi2");
  return sparse_iteration("rgms_transform", {it("r2", a.R, true), it("i2", a.I), it("fi2", a.FI, true), it("fo", a.FO)},
                          Stmt(), add_product(Y, {i, fo}, sparse_load(H, {r, i, fi}), sparse_load(W, {r, fi, fo})));
}

}  // namespace

Kernel rgms_aggregate_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_aggregate", s, a, false);
  SparseBuffer A = buffer(k, "A", {a.R, a.I, a.J}, ParamRole::Input);
  SparseBuffer X = buffer(k, "X", {a.Jdense, a.FI}, ParamRole::Input);
  SparseBuffer H = buffer(k, "H", {a.R, a.I, a.FI}, ParamRole::Output);
  k.body = aggregate(a, A, X, H);
  finish(k, false);
  return k;
}

Kernel rgms_transform_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_transform", s, a, false);
  SparseBuffer H = buffer(k, "H", {a.R, a.I, a.FI}, ParamRole::Input);
  SparseBuffer W = buffer(k, "W", {a.R, a.FI, a.FO}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {a.Idense, a.FO}, ParamRole::Output);
  k.body = seq({init_y(a, Y), transform(a, H, W, Y)});
  finish(k, false);
  return k;
}

Kernel rgms_fused_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_fused", s, a, false);
  SparseBuffer A = buffer(k, "A", {a.R, a.I, a.J}, ParamRole::Input);
  SparseBuffer X = buffer(k, "X", {a.Jdense, a.FI}, ParamRole::Input);
  SparseBuffer W = buffer(k, "W", {a.R, a.FI, a.FO}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {a.Idense, a.FO}, ParamRole::Output);
  // H is an intermediate the schedule keeps in registers (fuse_nests + cache).
  SparseBuffer H = sparse_buffer("H", {a.R, a.I, a.FI}, DType::F32);
  k.buffers.push_back(H);
  k.params.push_back(Param::workspace("H", DType::F32, mul(var("pairs"), make_int(s.fin))));
  k.body = seq({init_y(a, Y), aggregate(a, A, X, H), transform(a, H, W, Y)});
  finish(k, false);
  return k;
}

Kernel rgms_source_transform_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_source_transform", s, a, true);
  k.params.push_back(Param::buffer("src_ptr", DType::I64));
  SparseBuffer src = buffer(k, "src_ids", {a.R, a.S}, ParamRole::Input, s.index_dtype);
  SparseBuffer X = buffer(k, "X", {a.Jdense, a.FI}, ParamRole::Input);
  SparseBuffer W = buffer(k, "W", {a.R, a.FI, a.FO}, ParamRole::Input);
  SparseBuffer T = buffer(k, "T", {a.R, a.S, a.FO}, ParamRole::Output);
  Expr r = var("r"), sv = var("s"), fo = var("fo"), fi = var("fi");
  k.body = sparse_iteration(
      "rgms_source_transform", {it("r", a.R), it("s", a.S), it("fi", a.FI, true), it("fo", a.FO)},
      sparse_store(T, {r, sv, fo}, make_float(0)),
      add_product(T, {r, sv, fo}, sparse_load(X, {sparse_load(src, {r, sv}), fi}), sparse_load(W, {r, fi, fo})));
  finish(k, true);
  return k;
}

namespace {
Kernel gather_program(const RgmsSpec& s, bool init) {
  Axes a = axes_for(s);
  Kernel k = base(init ? "rgms_gather" : "rgms_gather_add", s, a, true);
  k.params.push_back(Param::buffer("src_ptr", DType::I64));
  SparseBuffer A = buffer(k, "A", {a.R, a.I, a.J}, ParamRole::Input);
  SparseBuffer jloc = buffer(k, "jloc", {a.R, a.I, a.J}, ParamRole::Input, s.index_dtype);
  SparseBuffer T = buffer(k, "T", {a.R, a.S, a.FO}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {a.Idense, a.FO}, ParamRole::Output);
  Expr r = var("r"), i = var("i"), j = var("j"), fo = var("fo");
  Stmt body = sparse_iteration(
      "rgms_gather", {it("r", a.R, true), it("i", a.I), it("j", a.J, true), it("fo", a.FO)}, Stmt(),
      add_product(Y, {i, fo}, sparse_load(A, {r, i, j}), sparse_load(T, {r, sparse_load(jloc, {r, i, j}), fo})));
  k.body = init ? seq({init_y(a, Y), body}) : body;
  finish(k, true);
  return k;
}
}  // namespace

Kernel rgms_gather_program(const RgmsSpec& s) { return gather_program(s, true); }
Kernel rgms_gather_add_program(const RgmsSpec& s) { return gather_program(s, false); }

Kernel rgms_weight_grad_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_weight_grad", s, a, false);
  SparseBuffer H = buffer(k, "H", {a.R, a.I, a.FI}, ParamRole::Input);
  SparseBuffer dY = buffer(k, "dY", {a.Idense, a.FO}, ParamRole::Input);
  SparseBuffer dW = buffer(k, "dW", {a.R, a.FI, a.FO}, ParamRole::Output);
  Expr r = var("r"), i = var("i"), fi = var("fi"), fo = var("fo");
  k.body = sparse_iteration("rgms_weight_grad", {it("r", a.R), it("i", a.I, true), it("fi", a.FI), it("fo", a.FO)},
                            sparse_store(dW, {r, fi, fo}, make_float(0)),
                            add_product(dW, {r, fi, fo}, sparse_load(H, {r, i, fi}), sparse_load(dY, {i, fo})));
  finish(k, false);
  return k;
}

Kernel rgms_embed_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_embed", s, a, false);
  SparseBuffer A = buffer(k, "A", {a.R, a.I, a.J}, ParamRole::Input);
  SparseBuffer W = buffer(k, "W", {a.R, a.Jdense, a.FO}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {a.Idense, a.FO}, ParamRole::Output);
  Expr r = var("r"), i = var("i"), j = var("j"), fo = var("fo");
  Stmt body = sparse_iteration("rgms_embed", {it("r", a.R, true), it("i", a.I), it("j", a.J, true), it("fo", a.FO)},
                               Stmt(), add_product(Y, {i, fo}, sparse_load(A, {r, i, j}), sparse_load(W, {r, j, fo})));
  k.body = seq({init_y(a, Y), body});
  finish(k, false);
  return k;
}

Kernel rgms_embed_grad_program(const RgmsSpec& s) {
  // Runs on the reversed relational graph: rows are sources, columns destinations.
  Axes a = axes_for(s);
  Kernel k = base("rgms_embed_grad", s, a, false);
  SparseBuffer A = buffer(k, "A", {a.R, a.I, a.J}, ParamRole::Input);
  SparseBuffer dY = buffer(k, "dY", {a.Jdense, a.FO}, ParamRole::Input);
  SparseBuffer dW = buffer(k, "dW", {a.R, a.Idense, a.FO}, ParamRole::Output);
  Expr r = var("r"), i = var("i"), j = var("j"), fo = var("fo");
  Stmt init = sparse_iteration("embed_grad_init", {it("rz", a.R), it("iz", a.Idense), it("fz", a.FO)}, Stmt(),
                               sparse_store(dW, {var("rz"), var("iz"), var("fz")}, make_float(0)));
  Stmt body =
      sparse_iteration("rgms_embed_grad", {it("r", a.R), it("i", a.I), it("j", a.J, true), it("fo", a.FO)}, Stmt(),
                       add_product(dW, {r, i, fo}, sparse_load(A, {r, i, j}), sparse_load(dY, {j, fo})));
  k.body = seq({init, body});
  finish(k, false);
  return k;
}

Kernel rgms_basis_rows_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_basis_rows", s, a, false);
  SparseBuffer C = buffer(k, "C", {a.R, a.FI}, ParamRole::Input);
  SparseBuffer V = buffer(k, "V", {a.FI, a.Idense, a.FO}, ParamRole::Input);
  SparseBuffer T = buffer(k, "T", {a.R, a.I, a.FO}, ParamRole::Output);
  Expr r = var("r"), i = var("i"), b = var("fi"), fo = var("fo");
  k.body = sparse_iteration("rgms_basis_rows", {it("r", a.R), it("i", a.I), it("fi", a.FI, true), it("fo", a.FO)},
                            sparse_store(T, {r, i, fo}, make_float(0)),
                            add_product(T, {r, i, fo}, sparse_load(C, {r, b}), sparse_load(V, {b, i, fo})));
  finish(k, false);
  return k;
}

Kernel rgms_pair_sum_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_pair_sum", s, a, false);
  SparseBuffer A = buffer(k, "A", {a.R, a.I, a.J}, ParamRole::Input);
  SparseBuffer dY = buffer(k, "dY", {a.Jdense, a.FO}, ParamRole::Input);
  SparseBuffer G = buffer(k, "G", {a.R, a.I, a.FO}, ParamRole::Output);
  k.body = pair_sums("rgms_pair_sum", a, a.FO, "fo", A, dY, G);
  finish(k, false);
  return k;
}

Kernel rgms_basis_grad_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_basis_grad", s, a, false);
  SparseBuffer C = buffer(k, "C", {a.R, a.FI}, ParamRole::Input);
  SparseBuffer G = buffer(k, "G", {a.R, a.I, a.FO}, ParamRole::Input);
  SparseBuffer dV = buffer(k, "dV", {a.FI, a.Idense, a.FO}, ParamRole::Output);
  // Row-major over the rows, as Y's init, so that each row's owner task zeroes it.
  Stmt init = sparse_iteration("basis_grad_init", {it("iy", a.Idense), it("bz", a.FI), it("fy", a.FO)}, Stmt(),
                               sparse_store(dV, {var("bz"), var("iy"), var("fy")}, make_float(0)));
  Expr r = var("r2"), i = var("i2"), b = var("fi2"), fo = var("fo");
  Stmt body = sparse_iteration("rgms_basis_grad", {it("r2", a.R, true), it("i2", a.I), it("fi2", a.FI), it("fo", a.FO)},
                               Stmt(), add_product(dV, {b, i, fo}, sparse_load(C, {r, b}), sparse_load(G, {r, i, fo})));
  k.body = seq({init, body});
  finish(k, false);
  return k;
}

Kernel rgms_basis_coeff_grad_program(const RgmsSpec& s) {
  Axes a = axes_for(s);
  Kernel k = base("rgms_basis_coeff_grad", s, a, false);
  SparseBuffer G = buffer(k, "G", {a.R, a.I, a.FO}, ParamRole::Input);
  SparseBuffer V = buffer(k, "V", {a.FI, a.Idense, a.FO}, ParamRole::Input);
  SparseBuffer dC = buffer(k, "dC", {a.R, a.FI}, ParamRole::Output);
  Expr r = var("r"), i = var("i"), b = var("fi"), fo = var("fo");
  k.body = sparse_iteration(
      // Bases outside the pairs: one basis's rows of V are read in row order, and the
      // sum over (pair, feature) can stay in vector lanes until its end.
      "rgms_basis_coeff_grad", {it("r", a.R), it("fi", a.FI), it("i", a.I, true), it("fo", a.FO, true)},
      sparse_store(dC, {r, b}, make_float(0)),
      add_product(dC, {r, b}, sparse_load(G, {r, i, fo}), sparse_load(V, {b, i, fo})));
  finish(k, false);
  return k;
}

}  // namespace strata::sc
