#include "sparse_compiler/ops/sddmm.h"

#include <fmt/format.h>

#include "core/parallel.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/formats/format_schedule.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/ops/cuda_binding.h"
#include "sparse_compiler/ops/reference_kernels.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::sc {

SddmmSpec SddmmKernel::spec(const Graph& A, const SddmmOptions& o) {
  STRATA_CHECK(!A.empty(), "sddmm: the graph is empty (no CSR arrays)");
  STRATA_CHECK(o.feat >= 1, "sddmm: {} must be at least 1, got {}", o.kind == SddmmKind::Dot ? "feature size" : "heads",
               o.feat);
  SddmmSpec s;
  s.kind = o.kind;
  s.feat = o.feat;
  s.index_dtype = A.index_dtype();
  return s;
}

KernelPlan SddmmKernel::default_plan() {
  KernelPlan p;
  p.knobs.vector_lanes = host_vector_lanes();
  return p;
}

KernelPlan SddmmKernel::default_plan(const SddmmSpec& spec, const Graph& A) {
  KernelPlan p = default_plan();
  if (spec.kind != SddmmKind::Dot) return p;
  // One vector of features (or two, over short rows and a Y that L2 holds): edge
  // groups over COO slots (untuned_knobs.h).
  if (untuned_slot_groups(spec.feat, p.knobs.vector_lanes, A.num_rows(), A.nnz(),
                          A.num_cols() * spec.feat * static_cast<int64_t>(sizeof(float)))) {
    p.format = FormatSpec::parse("coo");
    p.knobs.grain = slot_group_grain(A.nnz(), num_threads());
    p.knobs.static_tasks = true;
    p.knobs.edge_groups = true;
    return p;
  }
  // Long rows of a few vectors each: CSR with edge groups (untuned_knobs.h).
  if (untuned_edge_groups(spec.feat, p.knobs.vector_lanes, A.num_rows(), A.nnz())) {
    p.knobs = untuned_sddmm_knobs(p.knobs, spec.feat, A.num_cols());
    p.knobs.edge_groups = true;
    return p;
  }
  if (const auto tiles = untuned_column_tiles(A, spec.feat, num_threads(), host_l2_bytes())) {
    p.format = *tiles;
    p.knobs.grain = column_tile_grain(A.nnz(), num_threads());
    return p;
  }
  p.knobs = untuned_sddmm_knobs(p.knobs, spec.feat, A.num_cols());
  return p;
}

Kernel SddmmKernel::lower(const SddmmSpec& spec, const KernelPlan& plan) {
  const bool panels = plan.x_layout.kind == DenseLayout::Kind::Panel && plan.x_layout.param < spec.feat;
  STRATA_CHECK(plan.feature_tile == 0 || (panels && plan.feature_tile == plan.x_layout.param),
               "sddmm plan: feature tiles come from X and Y's panel layout (x_layout panel:W), got tile {} with X "
               "layout {}",
               plan.feature_tile, plan.x_layout.str());
  STRATA_CHECK(plan.x_layout.is_row() || (plan.format.kind == FormatKind::Csr && spec.kind == SddmmKind::Dot),
               "sddmm plan: X and Y layout {} applies to dot products on csr only, not {} on {}", plan.x_layout.str(),
               spec.name(), plan.format.str());
  STRATA_CHECK(plan.knobs.accumulator_sets == 1, "sddmm plan: accumulator sets apply to spmm only, got {}",
               plan.knobs.accumulator_sets);
  STRATA_CHECK(
      !plan.knobs.edge_groups ||
          ((plan.format.kind == FormatKind::Csr || plan.format.kind == FormatKind::Coo) && spec.kind == SddmmKind::Dot),
      "sddmm plan: edge groups apply to dot products on csr or coo only, not {} on {}", spec.name(), plan.format.str());
  STRATA_CHECK(!plan.knobs.edge_groups || !panels,
               "sddmm plan: edge groups apply to row-major X and Y, not X and Y layout {}", plan.x_layout.str());
  const std::string suffix =
      fmt::format("_l{}_g{}_p{}{}{}", plan.knobs.vector_lanes, plan.knobs.grain, plan.knobs.prefetch,
                  plan.knobs.static_tasks ? "_st" : "", plan.knobs.edge_groups ? "_eg" : "");
  if (plan.format.kind == FormatKind::Coo) {
    Kernel k = coo_program(sddmm_program(spec));
    k.name += suffix;
    return lower_schedule(schedule_coo_sddmm_cpu(lower_to_loops(k), plan.knobs));
  }
  if (plan.format.decomposed()) {
    Kernel k = decompose_format(sddmm_program(spec), plan.format);
    k.name += suffix;
    return lower_schedule(schedule_decomposed_sddmm_cpu(lower_to_loops(k), plan.format, plan.knobs));
  }
  Kernel k = sddmm_program(spec, plan.x_layout);
  // Panel by panel: one pass over the edges per panel of X and Y, each adding its
  // partial dot products into O.
  if (panels) k = sparse_reorder(k, "sddmm", {"f_o", "i", "j", "f_i"});
  k.name += suffix;
  return lower_schedule(schedule_sddmm_cpu(lower_to_loops(k), plan.knobs));
}

SddmmKernel::SddmmKernel(const Graph& A, SddmmOptions options) : A_(A), opt_(std::move(options)) {
  spec_ = spec(A_, opt_);
  plan_ = opt_.plan ? *opt_.plan : opt_.device.is_cuda() ? default_plan() : default_plan(spec_, A_);
  plan_.x_layout.fits(spec_.feat, "sddmm plan");
  // Every backend reads the plan's layout; only dot products have one other than rows.
  STRATA_CHECK(spec_.kind == SddmmKind::Dot || plan_.x_layout.is_row(),
               "sddmm plan: X and Y layout {} applies to dot products, not {}", plan_.x_layout.str(), spec_.name());
  gpu_ = opt_.gpu ? *opt_.gpu : default_gpu_sddmm_knobs(spec_);
  if (opt_.device.is_cuda()) {
    bind_cuda(std::nullopt);
    return;
  }
  STRATA_CHECK(opt_.backend != Backend::CuSparse,
               "sddmm: backend cusparse runs on CUDA devices only, but the graph is bound on {}; use --device cuda, "
               "or backend generated or reference on the CPU",
               opt_.device.str());
  if (opt_.backend == Backend::Generated) {
    compiled_ = std::move(compile_cpu({lower(spec_, plan_)}).front());
  } else if (opt_.backend == Backend::Interpreter) {
    reference_ = lower_to_loops(sddmm_program(spec_, plan_.x_layout));
  }
  bind();
}

SddmmKernel::SddmmKernel(const Graph& A, SddmmOptions options, CompiledKernel compiled)
    : A_(A), opt_(std::move(options)), compiled_(std::move(compiled)) {
  spec_ = spec(A_, opt_);
  plan_ = opt_.plan ? *opt_.plan : default_plan();
  STRATA_CHECK(opt_.device.is_cpu(), "sddmm: a kernel compiled for the CPU cannot run on {}", opt_.device.str());
  bind();
}

SddmmKernel::SddmmKernel(const Graph& A, SddmmOptions options, CompiledCudaKernel compiled)
    : A_(A), opt_(std::move(options)) {
  spec_ = spec(A_, opt_);
  plan_ = opt_.plan ? *opt_.plan : default_plan();
  gpu_ = opt_.gpu ? *opt_.gpu : default_gpu_sddmm_knobs(spec_);
  STRATA_CHECK(opt_.device.is_cuda() && opt_.backend == Backend::Generated,
               "sddmm: a compiled CUDA kernel needs the generated backend on a CUDA device (got {} on {})",
               backend_name(opt_.backend), opt_.device.str());
  bind_cuda(std::move(compiled));
}

const CompiledCudaKernel* SddmmKernel::compiled_cuda() const { return cuda_ ? cuda_->kernel() : nullptr; }

void SddmmKernel::bind_cuda(std::optional<CompiledCudaKernel> compiled) {
  require_cuda_backend("sddmm", opt_.device);
  STRATA_CHECK(plan_.x_layout.is_row(),
               "sddmm (cuda): X and Y layout {} is a CPU plan choice; GPU kernels read row-major X and Y",
               plan_.x_layout.str());
  STRATA_CHECK(!plan_.knobs.edge_groups,
               "sddmm (cuda): edge groups (transposing lane sums) are a CPU plan choice; GPU kernels sum across "
               "threads");
  STRATA_CHECK(opt_.backend != Backend::Reference && opt_.backend != Backend::Interpreter,
               "sddmm: backend {} runs on the CPU; bind the graph on cpu to use it", backend_name(opt_.backend));
  cuda_ = std::make_shared<CudaOpBinding>(A_, opt_.device);
  if (opt_.backend == Backend::CuSparse) {
    STRATA_CHECK(spec_.kind == SddmmKind::Dot,
                 "sddmm: backend cusparse computes dot products only (cusparseSDDMM); sddmm_add needs backend "
                 "generated");
#if STRATA_WITH_CUDA
    cusparse_ = std::make_shared<CusparseSddmm>(A_, opt_.device, spec_.feat);
#endif
    return;
  }
  CompiledCudaKernel k = compiled ? std::move(*compiled)
                                  : std::move(compile_cuda({lower_sddmm_gpu(spec_, plan_.format, gpu_)},
                                                           cuda_target_for_device(opt_.device.index)).front());
  std::shared_ptr<const InspectedFormat> format;
  if (needs_inspection(plan_.format))
    format = CudaOpBinding::device_format(A_, plan_.format, plan_.knobs.grain, opt_.device);
  cuda_->attach(std::move(k), {}, std::move(format));
}

void SddmmKernel::bind() {
  if (!compiled_) return;
  if (needs_inspection(plan_.format)) format_ = inspect_format(A_, plan_.format, plan_.knobs.grain);
  KernelArgs a;
  a.buffer("A_indptr", A_.indptr()).buffer("A_indices", A_.indices());
  a.scalar("m", A_.num_rows()).scalar("n", A_.num_cols()).scalar("nnz", A_.nnz());
  if (format_) format_->bind(a);
  for (const auto& [p, size] : compiled_->workspaces(a)) {
    workspaces_.emplace_back(p.name, Tensor::zeros({std::max<int64_t>(size, 1)}, p.dtype));
    a.buffer(p.name, workspaces_.back().second);
  }
  if (compiled_->preprocess) {
    Tensor dummy = Tensor::zeros({1}, DType::F64);
    for (const auto& p : compiled_->kernel.params)
      if (p.is_buffer() && !a.has_buffer(p.name)) a.buffer(p.name, dummy.raw_data(), p.dtype, 0);
    compiled_->run_preprocess(a);
  }
  const bool dot = spec_.kind == SddmmKind::Dot;
  packed_ = compiled_->pack(a, {dot ? "X" : "XL", dot ? "Y" : "XR", "O"});
}

Tensor SddmmKernel::run(const Tensor& X, const Tensor& Y) const {
  Tensor O = spec_.kind == SddmmKind::Dot ? Tensor::empty({A_.nnz()}, DType::F32, opt_.device)
                                          : Tensor::empty({A_.nnz(), spec_.feat}, DType::F32, opt_.device);
  run_into(X, Y, O);
  return O;
}

void SddmmKernel::run_into(const Tensor& X, const Tensor& Y, Tensor& O) const {
  const bool dot = spec_.kind == SddmmKind::Dot;
  const std::string xn = dot ? "sddmm input X" : "sddmm input XL";
  const std::string yn = dot ? "sddmm input Y" : "sddmm input XR";
  // X and Y in the plan's layout (row-major, or panels).
  const DenseLayout& layout = plan_.x_layout;
  const std::string in = layout.is_row() ? "" : " (in the plan's layout " + layout.str() + ")";
  const Shape x_shape = layout.storage_shape(A_.num_rows(), spec_.feat);
  const Shape y_shape = layout.storage_shape(A_.num_cols(), spec_.feat);
  check_tensor(X, xn + in, DType::F32, static_cast<int>(x_shape.size()));
  check_shape(X, xn + in, x_shape);
  check_tensor(Y, yn + in, DType::F32, static_cast<int>(y_shape.size()));
  check_shape(Y, yn + in, y_shape);
  check_on_device(X, xn, opt_.device);
  check_on_device(Y, yn, opt_.device);
  if (dot) {
    check_tensor(O, "sddmm output O", DType::F32, 1);
    check_shape(O, "sddmm output O", {A_.nnz()});
  } else {
    check_tensor(O, "sddmm output O", DType::F32, 2);
    check_shape(O, "sddmm output O", {A_.nnz(), spec_.feat});
  }
  check_on_device(O, "sddmm output O", opt_.device);
#if STRATA_WITH_CUDA
  if (cusparse_) {
    cusparse_->run(X, Y, O, cuda_->stream());
    return;
  }
#endif
  if (cuda_) {
    KernelArgs a = cuda_->args();
    bind_device_buffer(a, dot ? "X" : "XL", X);
    bind_device_buffer(a, dot ? "Y" : "XR", Y);
    bind_device_buffer(a, "O", O);
    cuda_->run(a);
    return;
  }
  if (opt_.backend == Backend::Reference) {
    const Tensor x = layout.is_row() ? X : from_layout(X, layout, A_.num_rows(), spec_.feat);
    const Tensor y = layout.is_row() ? Y : from_layout(Y, layout, A_.num_cols(), spec_.feat);
    if (dot)
      reference_sddmm_dot(A_, x, y, O);
    else
      reference_sddmm_add(A_, x, y, O);
    return;
  }
  if (compiled_) {
    packed_.run({&X, &Y, &O});
    return;
  }
  KernelArgs a;
  a.buffer("A_indptr", A_.indptr()).buffer("A_indices", A_.indices());
  a.scalar("m", A_.num_rows()).scalar("n", A_.num_cols()).scalar("nnz", A_.nnz());
  a.buffer(dot ? "X" : "XL", X).buffer(dot ? "Y" : "XR", Y).buffer("O", O);
  Interpreter interp;
  a.bind(interp, reference_);
  interp.run(reference_);
}

std::string SddmmKernel::describe() const {
  if (cusparse_) return fmt::format("{} csr cusparse ({}, {})", spec_.name(), backend_name(opt_.backend), opt_.device.str());
  if (cuda_)
    return fmt::format("{} {} gpu {} ({}, {})", spec_.name(), plan_.format.str(), gpu_.str(), backend_name(opt_.backend),
                       opt_.device.str());
  return fmt::format("{} {} ({})", spec_.name(), plan_.str(), backend_name(opt_.backend));
}

}  // namespace strata::sc
