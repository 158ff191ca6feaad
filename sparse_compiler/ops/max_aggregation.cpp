#include "sparse_compiler/ops/max_aggregation.h"

#include <fmt/format.h>

#include <limits>

#include "core/timer.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ops/attention.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/passes/lowering_memo.h"
#include "sparse_compiler/passes/pipeline.h"

namespace strata::sc {

std::string MaxAggregationSpec::suffix() const {
  return fmt::format("f{}_{}", feat, index_dtype == DType::I32 ? "i32" : "i64");
}

namespace {

Kernel base(const std::string& name, const MaxAggregationSpec& s, const CsrAxes& ax, const Axis& F) {
  STRATA_CHECK(s.feat >= 1, "max aggregation: feature size must be at least 1, got {}", s.feat);
  Kernel k;
  k.name = name + "_" + s.suffix();
  k.stage = Stage::Coordinate;
  k.axes = {ax.I, ax.J, ax.J_detach, F};
  add_structure_params(k, s.index_dtype);
  return k;
}

SparseBuffer buffer(Kernel& k, const std::string& name, std::vector<Axis> axes, ParamRole role) {
  SparseBuffer b = sparse_buffer(name, std::move(axes), DType::F32);
  k.buffers.push_back(b);
  k.params.push_back(Param::buffer(name, DType::F32, role));
  return b;
}

}  // namespace

Kernel max_aggregation_program(const MaxAggregationSpec& s) {
  const CsrAxes ax = csr_axes(s.index_dtype);
  const Axis F = dense_fixed("F", make_int(s.feat));
  Kernel k = base("spmm_max", s, ax, F);
  SparseBuffer X = buffer(k, "X", {ax.J_detach, F}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {ax.I, F}, ParamRole::Output);
  SparseBuffer C = buffer(k, "C", {ax.I, F}, ParamRole::Output);
  const Expr i = var("i"), j = var("j"), f = var("f"), f0 = var("f0"), f3 = var("f3");
  const Expr neg_inf = make_float(-std::numeric_limits<double>::infinity());
  // One pass over the neighbours keeps the running maximum and how many attain it:
  // a larger value restarts the count at 1, an equal one adds 1 (C is updated from
  // the old maximum, then Y). A NaN is taken like a larger value, and then kept (no
  // value compares larger than or equal to it): the maximum of a row with a NaN is
  // NaN, wherever the NaN stands (torch.scatter_reduce "amax" and PyG's aggr="max"),
  // with C = 1 so the row is not taken for an empty one. No gradient flows through a
  // NaN maximum (no input equals it).
  const Expr x = sparse_load(X, {j, f}), y = sparse_load(Y, {i, f}), c = sparse_load(C, {i, f});
  const Expr take = logical_or(gt(x, y), ne(x, x));
  const Stmt body = seq({
      sparse_iteration("max_init", {{"f0", F, false}}, Stmt(),
                       seq({sparse_store(Y, {i, f0}, neg_inf), sparse_store(C, {i, f0}, make_float(0))})),
      sparse_iteration(
          "max_reduce", {{"j", ax.J, true}, {"f", F, false}}, Stmt(),
          seq({sparse_store(C, {i, f}, select(take, make_float(1), select(eq(x, y), add(c, make_float(1)), c))),
               sparse_store(Y, {i, f}, select(take, x, y))})),
      // A row without neighbours: 0, not -inf.
      sparse_iteration("max_empty", {{"f3", F, false}}, Stmt(),
                       sparse_store(
                           Y, {i, f3},
                           select(gt(sparse_load(C, {i, f3}), make_float(0)), sparse_load(Y, {i, f3}), make_float(0)))),
  });
  k.body = sparse_iteration("spmm_max", {{"i", ax.I, false}}, Stmt(), body);
  add_size_params(k);
  return k;
}

Kernel max_aggregation_backward_program(const MaxAggregationSpec& s) {
  // Over Aᵀ: row j is a source, its non-zeros the destinations i it feeds.
  const CsrAxes ax = csr_axes(s.index_dtype);
  const Axis F = dense_fixed("F", make_int(s.feat));
  Kernel k = base("spmm_max_grad", s, ax, F);
  SparseBuffer X = buffer(k, "X", {ax.I, F}, ParamRole::Input);
  SparseBuffer Y = buffer(k, "Y", {ax.J_detach, F}, ParamRole::Input);
  SparseBuffer G = buffer(k, "G", {ax.J_detach, F}, ParamRole::Input);  // dY / C
  SparseBuffer dX = buffer(k, "dX", {ax.I, F}, ParamRole::Output);
  const Expr j = var("i"), i = var("j"), f = var("f");  // the iteration's row is the source
  const Expr share = select(eq(sparse_load(X, {j, f}), sparse_load(Y, {i, f})), sparse_load(G, {i, f}), make_float(0));
  k.body = sparse_iteration("spmm_max_grad", {{"i", ax.I, false}, {"j", ax.J, true}, {"f", F, false}},
                            sparse_store(dX, {j, f}, make_float(0)),
                            sparse_store(dX, {j, f}, add(sparse_load(dX, {j, f}), share)));
  add_size_params(k);
  return k;
}

struct MaxAggregationKernels::Impl {
  std::vector<CompiledKernel> compiled;  // generated: forward, backward
  std::vector<Kernel> loops;             // reference / interpreter: unscheduled
  std::vector<std::string> names;
  std::vector<CpuKnobs> knobs;  // generated: each kernel's schedule knobs
};

MaxAggregationKernels::MaxAggregationKernels(const Graph& A, int64_t feat, Backend backend, bool backward,
                                             std::optional<CpuKnobs> knobs)
    : A_(A), backend_(backend), has_backward_(backward), impl_(std::make_unique<Impl>()) {
  STRATA_CHECK(!A.empty(), "max aggregation: the graph is empty (no CSR arrays)");
  STRATA_CHECK(backend == Backend::Generated || backend == Backend::Reference || backend == Backend::Interpreter,
               "max aggregation: backend {} is not available (generated, "
               "reference or interpreter)",
               backend_name(backend));
  spec_.feat = feat;
  spec_.index_dtype = A.index_dtype();
  std::vector<Kernel> programs = {max_aggregation_program(spec_)};
  if (backward) {
    At_ = A.transpose();
    MaxAggregationSpec st = spec_;
    st.index_dtype = At_.index_dtype();
    programs.push_back(max_aggregation_backward_program(st));
  }
  Timer t;
  for (const Kernel& p : programs) impl_->names.push_back(p.name);
  if (backend == Backend::Generated) {
    CpuKnobs base = knobs ? *knobs : CpuKnobs{};
    if (!knobs) base.vector_lanes = host_vector_lanes();
    std::vector<Kernel> lowered;
    std::vector<std::string> keys;
    for (size_t w = 0; w < programs.size(); ++w) {
      // Untuned: prefetch where the gathered rows outgrow the cache (X forward; Y
      // and G backward).
      const int64_t gathered = (w == 0 ? A.num_cols() : 2 * A.num_rows()) * feat * int64_t{sizeof(float)};
      const CpuKnobs kw = knobs ? base : untuned_gather_knobs(base, gathered);
      impl_->knobs.push_back(kw);
      keys.push_back(fmt::format("max|{}|{}", programs[w].name, kw.str()));  // the name holds the spec
      lowered.push_back(lower_memoized(
          keys.back(), [&] { return lower_schedule(schedule_row_program_cpu(lower_to_loops(programs[w]), kw)); }));
    }
    impl_->compiled = compile_cpu_memoized(keys, lowered);
    for (const CompiledKernel& c : impl_->compiled) outcome_ = std::max(outcome_, c.outcome);
  } else {
    for (const Kernel& p : programs) impl_->loops.push_back(lower_to_loops(p));
  }
  compile_ms_ = t.ms();
}

MaxAggregationKernels::~MaxAggregationKernels() = default;

const std::string& MaxAggregationKernels::forward_name() const { return impl_->names[0]; }
CpuKnobs MaxAggregationKernels::knobs(bool backward) const {
  const size_t w = backward ? 1 : 0;
  return w < impl_->knobs.size() ? impl_->knobs[w] : CpuKnobs{};
}
const std::string& MaxAggregationKernels::backward_name() const {
  static const std::string none;
  return has_backward_ ? impl_->names[1] : none;
}

std::string MaxAggregationKernels::describe() const {
  return fmt::format("spmm_max {} csr row program ({})", spec_.suffix(), backend_name(backend_));
}

void MaxAggregationKernels::run(bool backward, KernelArgs& args) const {
  const Graph& g = backward ? At_ : A_;
  args.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices());
  args.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
  const size_t w = backward ? 1 : 0;
  if (backend_ == Backend::Generated) {
    impl_->compiled[w].run(args);
    return;
  }
  Interpreter interp;
  args.bind(interp, impl_->loops[w]);
  interp.run(impl_->loops[w]);
}

void MaxAggregationKernels::forward(const Tensor& X, Tensor& Y, Tensor& C) const {
  const int64_t F = spec_.feat;
  check_host_f32(X, "max aggregation X", {A_.num_cols(), F});
  check_host_f32(Y, "max aggregation Y", {A_.num_rows(), F});
  check_host_f32(C, "max aggregation C", {A_.num_rows(), F});
  KernelArgs a;
  a.buffer("X", X).buffer("Y", Y).buffer("C", C);
  run(false, a);
}

void MaxAggregationKernels::backward(const Tensor& X, const Tensor& Y, const Tensor& C, const Tensor& dY, Tensor& dX,
                                     Tensor* shares) const {
  STRATA_CHECK(has_backward_,
               "max aggregation: these kernels were built "
               "without a backward (evaluation)");
  const int64_t F = spec_.feat;
  check_host_f32(X, "max aggregation backward X", {A_.num_cols(), F});
  check_host_f32(Y, "max aggregation backward Y", {A_.num_rows(), F});
  check_host_f32(C, "max aggregation backward C", {A_.num_rows(), F});
  check_host_f32(dY, "max aggregation backward dY", {A_.num_rows(), F});
  check_host_f32(dX, "max aggregation backward dX", {A_.num_cols(), F});
  // Each maximum's share of its gradient, once per (row, feature) rather than once
  // per edge: the backward then gathers Y and G, not Y, C and dY. C is 0 only on rows
  // without neighbours, which no edge reads.
  Tensor G = shares ? *shares : Tensor::empty({A_.num_rows(), F}, DType::F32);
  if (shares) check_host_f32(G, "max aggregation backward shares", {A_.num_rows(), F});
  const float* c = C.data<float>();
  const float* dy = dY.data<float>();
  float* g = G.data<float>();
  const int64_t total = A_.num_rows() * F;
#pragma omp parallel for schedule(static) if (total > (int64_t{1} << 16))
  for (int64_t k = 0; k < total; ++k) g[k] = c[k] > 0 ? dy[k] / c[k] : 0.0f;
  KernelArgs a;
  a.buffer("X", X).buffer("Y", Y).buffer("G", G).buffer("dX", dX);
  run(true, a);
}

}  // namespace strata::sc
