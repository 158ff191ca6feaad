#include "sparse_compiler/ops/spmm.h"

#include <fmt/format.h>

#include "core/parallel.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/formats/format_schedule.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/ops/cuda_binding.h"
#include "sparse_compiler/ops/reference_kernels.h"
#include "sparse_compiler/ops/shared_pairs_spmm.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/schedule.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::sc {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Generated: return "generated";
    case Backend::Reference: return "reference";
    case Backend::Interpreter: return "interpreter";
    case Backend::CuSparse: return "cusparse";
  }
  return "?";
}

Backend parse_backend(const std::string& s, const std::string& what) {
  if (s == "generated") return Backend::Generated;
  if (s == "reference") return Backend::Reference;
  if (s == "interpreter") return Backend::Interpreter;
  if (s == "cusparse") return Backend::CuSparse;
  STRATA_FAIL("{}: unknown backend '{}' (expected generated, reference, interpreter or cusparse)", what, s);
}

SpmmSpec SpmmKernel::spec(const Graph& A, const SpmmOptions& o) {
  STRATA_CHECK(!A.empty(), "spmm: the graph is empty (no CSR arrays)");
  STRATA_CHECK(o.feat >= 1, "spmm: feature size must be at least 1, got {}", o.feat);
  if (o.row_scale.defined()) {
    check_tensor(o.row_scale, "spmm row_scale", DType::F32, 1);
    check_on_device(o.row_scale, "spmm row_scale (bound with the graph)", Device::cpu());
    check_shape(o.row_scale, "spmm row_scale", {A.num_rows()});
  }
  if (o.col_scale.defined()) {
    check_tensor(o.col_scale, "spmm col_scale", DType::F32, 1);
    check_on_device(o.col_scale, "spmm col_scale (bound with the graph)", Device::cpu());
    check_shape(o.col_scale, "spmm col_scale", {A.num_cols()});
  }
  SpmmSpec s;
  s.feat = o.feat;
  s.index_dtype = A.index_dtype();
  s.weighted = o.weighted;
  s.row_scale = o.row_scale.defined() || o.reduce == Reduce::Mean;
  s.col_scale = o.col_scale.defined();
  return s;
}

SpmmPlan SpmmKernel::default_plan(const SpmmSpec& spec) {
  SpmmPlan p;
  p.knobs.vector_lanes = host_vector_lanes();
  p.feature_tile = untuned_feature_tile(spec.feat);
  if (spec.feat >= 1) p.gpu = default_gpu_spmm_knobs(spec);  // feat 0: a plan template (the tuner's)
  return p;
}

SpmmPlan SpmmKernel::default_plan(const SpmmSpec& spec, const Graph& A) {
  SpmmPlan p = default_plan(spec);
  // Long rows of one vector each: CSR with accumulator sets (untuned_knobs.h).
  if (p.feature_tile == 0)
    p.knobs.accumulator_sets = untuned_accumulator_sets(spec.feat, p.knobs.vector_lanes, A.num_rows(), A.nnz());
  // Long rows per tile: column tiles of ~64 KiB of X (untuned_knobs.h).
  if (const auto tiles = p.feature_tile == 0 && p.knobs.accumulator_sets == 1
                             ? untuned_column_tiles(A, spec.feat, num_threads(), host_l2_bytes())
                             : std::nullopt) {
    p.format = *tiles;
    p.knobs.grain = column_tile_grain(A.nnz(), num_threads());
    return p;
  }
  p.knobs = untuned_spmm_knobs(p.knobs, spec.feat, p.feature_tile, A.num_rows(), A.num_cols());
  return p;
}

Kernel SpmmKernel::lower_cuda(const SpmmSpec& spec, const SpmmPlan& plan) {
  return lower_spmm_gpu(spec, plan.format, plan.gpu);
}

Kernel SpmmKernel::lower(const SpmmSpec& spec, const SpmmPlan& plan) {
  const std::string suffix =
      fmt::format("_l{}_g{}_p{}{}{}{}", plan.knobs.vector_lanes, plan.knobs.grain, plan.knobs.prefetch,
                  plan.knobs.stream_stores ? "_nt" : "", plan.knobs.static_tasks ? "_st" : "",
                  plan.knobs.accumulator_sets > 1 ? fmt::format("_s{}", plan.knobs.accumulator_sets) : "");
  STRATA_CHECK(!plan.knobs.edge_groups, "spmm plan: edge groups apply to sddmm only (spmm has accumulator sets)");
  if (plan.pair_rounds > 0) {
    // Shared pairs run the plan's CSR kernel over rewritten graphs (shared_pairs_spmm.h),
    // each row's sums gathered from a second operand S (split_gather, below).
    STRATA_CHECK(plan.format.kind == FormatKind::Csr, "spmm plan: shared pairs (pairs=r{}m{}) apply to csr, not {}",
                 plan.pair_rounds, plan.pair_min_rows, plan.format.str());
    STRATA_CHECK(plan.x_layout.is_row(), "spmm plan: shared pairs read X row-major, not in layout {}",
                 plan.x_layout.str());
    // Column scales factor through a sum (cs[u] X[u] + cs[v] X[v] is the same for every row
    // holding u and v); edge values do not.
    STRATA_CHECK(!spec.weighted,
                 "spmm plan: a shared pair sums two edges into one, so it needs an aggregation whose edge weights "
                 "factor into row and column scales; {} has edge values",
                 spec.name());
  }
  if (plan.format.kind != FormatKind::Csr) {
    STRATA_CHECK(plan.knobs.accumulator_sets == 1, "spmm plan: accumulator sets apply to csr only, not {}",
                 plan.format.str());
    STRATA_CHECK(!plan.knobs.stream_stores, "spmm plan: streaming stores apply to csr only, not {}", plan.format.str());
    STRATA_CHECK(plan.feature_tile == 0, "spmm plan: feature tiles apply to csr only, not {}", plan.format.str());
    STRATA_CHECK(plan.x_layout.is_row(), "spmm plan: X layout {} applies to csr only, not {}", plan.x_layout.str(),
                 plan.format.str());
    if (plan.format.kind == FormatKind::Coo) {
      Kernel k = coo_program(spmm_program(spec));
      k.name += suffix;
      return lower_schedule(schedule_coo_spmm_cpu(lower_to_loops(k), plan.knobs));
    }
    Kernel k = decompose_format(spmm_program(spec), plan.format);
    k.name += suffix;
    return lower_schedule(schedule_decomposed_spmm_cpu(lower_to_loops(k), plan.format, plan.knobs));
  }
  plan.x_layout.fits(spec.feat, "spmm plan");
  // Vector stores of whole rows (and tiles) are aligned only when F is a multiple
  // of the vector width (tensors are 64-byte aligned).
  STRATA_CHECK(!plan.knobs.stream_stores || (spec.feat % plan.knobs.vector_lanes == 0 &&
                                             plan.feature_tile % plan.knobs.vector_lanes == 0),
               "spmm plan: streaming stores need the feature size {} (and tile {}) to be a multiple of the {} vector "
               "lanes",
               spec.feat, plan.feature_tile, plan.knobs.vector_lanes);
  STRATA_CHECK(
      plan.knobs.accumulator_sets == 1 || (plan.feature_tile == 0 && plan.x_layout.kind != DenseLayout::Kind::Panel),
      "spmm plan: accumulator sets apply to untiled rows, not to feature tile {} or X layout {}", plan.feature_tile,
      plan.x_layout.str());
  Kernel k = spmm_program(spec, plan.x_layout);
  if (plan.x_layout.kind == DenseLayout::Kind::Panel) {
    // Panel by panel: the panel is the feature tile.
    STRATA_CHECK(plan.feature_tile == 0 || plan.feature_tile == plan.x_layout.param,
                 "spmm plan: X layout {} runs tiles of its panel width; feature tile {} differs", plan.x_layout.str(),
                 plan.feature_tile);
    if (plan.x_layout.param < spec.feat) k = sparse_reorder(k, "spmm", {"f_o", "i", "j", "f_i"});
  } else if (plan.feature_tile > 0 && plan.feature_tile < spec.feat) {
    STRATA_CHECK(spec.feat % plan.feature_tile == 0, "spmm plan: feature tile {} does not divide the feature size {}",
                 plan.feature_tile, spec.feat);
    k = sparse_split(k, "spmm", "f", plan.feature_tile);
    k = sparse_reorder(k, "spmm", {"f_o", "i", "j", "f_i"});
    k.name += fmt::format("_t{}", plan.feature_tile);
  }
  k.name += suffix;
  Kernel scheduled = schedule_spmm_cpu(lower_to_loops(k), plan.knobs);
  if (plan.pair_rounds > 0) {
    // A row's ids before A_split[i] are columns (rows of X), the rest its pair sums (rows of
    // S): no copy of X into one extended operand per call.
    Schedule s(std::move(scheduled));
    // The sums are of scaled columns already: S's rows take no column scale.
    s.split_gather("i", "X", "S", "A_indptr", "A_split",
                   spec.col_scale ? std::vector<std::string>{"col_scale"} : std::vector<std::string>{});
    scheduled = s.kernel();
    scheduled.name += "_pairs";
  }
  return lower_schedule(scheduled);
}

SpmmKernel::SpmmKernel(const Graph& A, SpmmOptions options) : A_(A), opt_(std::move(options)) {
  spec_ = spec(A_, opt_);
  // The untuned CPU knobs do not apply to the GPU schedule (plan.gpu).
  plan_ = opt_.plan ? *opt_.plan : opt_.device.is_cuda() ? default_plan(spec_) : default_plan(spec_, A_);
  plan_.x_layout.fits(spec_.feat, "spmm plan");
  if (opt_.device.is_cuda()) {
    bind_cuda(std::nullopt);
    return;
  }
  STRATA_CHECK(opt_.backend != Backend::CuSparse,
               "spmm: backend cusparse runs on CUDA devices only, but the graph is bound on {}; use --device cuda, or "
               "backend generated or reference on the CPU",
               opt_.device.str());
  if (opt_.backend == Backend::Generated) {
    compiled_ = std::move(compile_cpu({lower(spec_, plan_)}).front());
  } else if (opt_.backend == Backend::Interpreter) {
    reference_ = lower_to_loops(spmm_program(spec_, plan_.x_layout));
  }
  bind();
}

SpmmKernel::SpmmKernel(const Graph& A, SpmmOptions options, CompiledKernel compiled)
    : A_(A), opt_(std::move(options)), compiled_(std::move(compiled)) {
  spec_ = spec(A_, opt_);
  STRATA_ASSERT(opt_.plan.has_value(), "precompiled SpMM without the plan it was lowered with");
  plan_ = *opt_.plan;
  STRATA_ASSERT(opt_.backend == Backend::Generated, "precompiled SpMM with the reference backend");
  STRATA_CHECK(opt_.device.is_cpu(), "spmm: a kernel compiled for the CPU cannot run on {}", opt_.device.str());
  bind();
}

SpmmKernel::SpmmKernel(const Graph& A, SpmmOptions options, CompiledCudaKernel compiled)
    : A_(A), opt_(std::move(options)) {
  spec_ = spec(A_, opt_);
  STRATA_ASSERT(opt_.plan.has_value(), "precompiled CUDA SpMM without the plan it was lowered with");
  plan_ = *opt_.plan;
  STRATA_CHECK(opt_.device.is_cuda() && opt_.backend == Backend::Generated,
               "spmm: a compiled CUDA kernel needs the generated backend on a CUDA device (got {} on {})",
               backend_name(opt_.backend), opt_.device.str());
  bind_cuda(std::move(compiled));
}

const CompiledCudaKernel* SpmmKernel::compiled_cuda() const { return cuda_ ? cuda_->kernel() : nullptr; }

void SpmmKernel::bind_cuda(std::optional<CompiledCudaKernel> compiled) {
  require_cuda_backend("spmm", opt_.device);
  STRATA_CHECK(plan_.pair_rounds == 0, "spmm (cuda): shared pairs (pairs=r{}m{}) are a CPU plan choice",
               plan_.pair_rounds, plan_.pair_min_rows);
  STRATA_CHECK(plan_.x_layout.is_row(), "spmm (cuda): X layout {} is a CPU plan choice; GPU kernels read row-major X",
               plan_.x_layout.str());
  STRATA_CHECK(opt_.backend != Backend::Reference && opt_.backend != Backend::Interpreter,
               "spmm: backend {} runs on the CPU; bind the graph on cpu to use it", backend_name(opt_.backend));
  bind();  // host-side scales
  cuda_ = std::make_shared<CudaOpBinding>(A_, opt_.device);
  if (opt_.backend == Backend::CuSparse) {
#if STRATA_WITH_CUDA
    // Weights and scales folded into one value per non-zero: rs[i] * w[e] * cs[j].
    Tensor folded;
    if (spec_.weighted || spec_.row_scale || spec_.col_scale) {
      folded = Tensor::empty({A_.nnz()}, DType::F32);
      float* v = folded.data<float>();
      for (int64_t r = 0; r < A_.num_rows(); ++r)
        for (int64_t p = A_.row_begin(r); p < A_.row_end(r); ++p) {
          float w = spec_.weighted && A_.has_values() ? A_.values().data<float>()[p] : 1.0f;
          if (spec_.row_scale) w *= row_scale_.data<float>()[r];
          if (spec_.col_scale) w *= col_scale_.data<float>()[A_.column(p)];
          v[p] = w;
        }
    }
    cusparse_ = std::make_shared<CusparseSpmm>(A_, opt_.device, spec_.feat, folded, plan_.cusparse_algorithm);
#endif
    return;
  }
  CompiledCudaKernel k = compiled ? std::move(*compiled)
                                  : std::move(compile_cuda({lower_cuda(spec_, plan_)},
                                                           cuda_target_for_device(opt_.device.index)).front());
  std::vector<std::pair<std::string, Tensor>> extra;
  if (spec_.row_scale) extra.emplace_back("row_scale", row_scale_.to(opt_.device));
  if (spec_.col_scale) extra.emplace_back("col_scale", col_scale_.to(opt_.device));
  // A decomposed format's arrays, in the task grain the GPU schedule asks for.
  std::shared_ptr<const InspectedFormat> format;
  if (needs_inspection(plan_.format))
    format = CudaOpBinding::device_format(A_, plan_.format,
                                          gpu_inspector_grain(plan_.format, plan_.gpu, plan_.knobs.grain), opt_.device);
  cuda_->attach(std::move(k), extra, std::move(format));
}

void SpmmKernel::run_cuda(const Tensor& X, Tensor& Y, const Tensor& values) const {
#if STRATA_WITH_CUDA
  if (cusparse_) {
    STRATA_CHECK(!values.defined() || values.raw_data() == cuda_->values().raw_data() ||
                     (!spec_.row_scale && !spec_.col_scale),
                 "spmm (cusparse): per-call edge values cannot be combined with row or column scales, which are "
                 "folded into the graph's values; bind the values in the graph");
    const bool per_call = values.defined() && values.raw_data() != cuda_->values().raw_data();
    cusparse_->run(X, Y, cuda_->stream(), per_call ? values : Tensor());
    return;
  }
#endif
  KernelArgs a = cuda_->args();
  bind_device_buffer(a, "X", X);
  bind_device_buffer(a, "Y", Y);
  if (spec_.weighted) bind_device_buffer(a, "A", values);
  cuda_->run(a);
}

void SpmmKernel::bind() {
  if (opt_.reduce == Reduce::Mean) {
    // Mean = sum scaled by 1/deg (rows without neighbours stay 0); an explicit row
    // scale multiplies in.
    row_scale_ = Tensor::empty({A_.num_rows()}, DType::F32);
    float* rs = row_scale_.data<float>();
    for (int64_t r = 0; r < A_.num_rows(); ++r) {
      const int64_t d = A_.degree(r);
      rs[r] = d > 0 ? 1.0f / static_cast<float>(d) : 0.0f;
      if (opt_.row_scale.defined()) rs[r] *= opt_.row_scale.data<float>()[r];
    }
  } else {
    row_scale_ = opt_.row_scale;
  }
  col_scale_ = opt_.col_scale;
  if (compiled_ && plan_.pair_rounds > 0) {
    shared_pairs_ = std::make_shared<SharedPairsSpmm>(A_, spec_, plan_, row_scale_, col_scale_, *compiled_);
    return;
  }
  if (compiled_ && needs_inspection(plan_.format)) format_ = inspect_format(A_, plan_.format, plan_.knobs.grain);
  if (compiled_) {
    KernelArgs a = args(Tensor(), Tensor(), Tensor());
    for (const auto& [p, size] : compiled_->workspaces(a)) {
      workspaces_.push_back(Tensor::zeros({std::max<int64_t>(size, 1)}, p.dtype));
      a.buffer(p.name, workspaces_.back());
    }
    if (compiled_->preprocess) {
      // Preprocess reads only structure; bind placeholders for value buffers.
      Tensor dummy = Tensor::zeros({1}, DType::F64);
      for (const auto& p : compiled_->kernel.params)
        if (p.is_buffer() && !a.has_buffer(p.name)) a.buffer(p.name, dummy.raw_data(), p.dtype, 0);
      compiled_->run_preprocess(a);
    }
    packed_ = compiled_->pack(args(Tensor(), Tensor(), Tensor()), {"X", "Y", "A"});
  }
}

KernelArgs SpmmKernel::args(const Tensor& X, const Tensor& Y, const Tensor& edge_values) const {
  KernelArgs a;
  a.buffer("A_indptr", A_.indptr()).buffer("A_indices", A_.indices());
  a.scalar("m", A_.num_rows()).scalar("n", A_.num_cols()).scalar("nnz", A_.nnz());
  if (spec_.weighted && edge_values.defined()) a.buffer("A", edge_values);
  if (spec_.row_scale) a.buffer("row_scale", row_scale_);
  if (spec_.col_scale) a.buffer("col_scale", col_scale_);
  if (X.defined()) a.buffer("X", X);
  if (Y.defined()) a.buffer("Y", Y);
  if (format_) format_->bind(a);
  for (size_t k = 0; compiled_ && k < workspaces_.size(); ++k) {
    size_t w = 0;
    for (const auto& p : compiled_->kernel.params)
      if (p.role == ParamRole::Workspace && w++ == k) a.buffer(p.name, workspaces_[k]);
  }
  return a;
}

Tensor SpmmKernel::run(const Tensor& X, const Tensor& edge_values) const {
  Tensor Y = Tensor::empty({A_.num_rows(), spec_.feat}, DType::F32, opt_.device);
  run_into(X, Y, edge_values);
  return Y;
}

void SpmmKernel::run_into(const Tensor& X, Tensor& Y, const Tensor& edge_values) const {
  const Shape x_shape = plan_.x_layout.storage_shape(A_.num_cols(), spec_.feat);
  const std::string x_what =
      plan_.x_layout.is_row() ? std::string("spmm input X") : "spmm input X (in the plan's layout " + plan_.x_layout.str() + ")";
  check_tensor(X, x_what, DType::F32, static_cast<int>(x_shape.size()));
  check_on_device(X, "spmm input X", opt_.device);
  check_shape(X, x_what, x_shape);
  check_tensor(Y, "spmm output Y", DType::F32, 2);
  check_on_device(Y, "spmm output Y", opt_.device);
  check_shape(Y, "spmm output Y", {A_.num_rows(), spec_.feat});
  STRATA_CHECK(X.raw_data() != Y.raw_data(), "spmm: output Y must not alias input X");
  STRATA_CHECK(!compiled_ || !plan_.knobs.stream_stores || reinterpret_cast<uintptr_t>(Y.raw_data()) % 64 == 0,
               "spmm output Y: the plan streams its stores, which needs Y 64-byte aligned (a fresh tensor is; this "
               "view starts at byte offset {} mod 64)",
               reinterpret_cast<uintptr_t>(Y.raw_data()) % 64);
  Tensor values;
  if (spec_.weighted) {
    values = edge_values.defined() ? edge_values : cuda_ ? cuda_->values() : A_.values();
    STRATA_CHECK(values.defined(), "spmm: weighted aggregation needs edge values, but the graph has none and none "
                                   "were passed");
    check_tensor(values, "spmm edge values", DType::F32, 1);
    check_on_device(values, "spmm edge values", opt_.device);
    check_shape(values, "spmm edge values", {A_.nnz()});
  }
  if (cuda_) {
    run_cuda(X, Y, values);
    return;
  }
  if (opt_.backend == Backend::Reference) {
    const Tensor rows = plan_.x_layout.is_row() ? X : from_layout(X, plan_.x_layout, A_.num_cols(), spec_.feat);
    reference_spmm(A_, rows, values, row_scale_, col_scale_, false, Y);
    return;
  }
  if (shared_pairs_) {
    shared_pairs_->run_into(X, Y);
    return;
  }
  if (compiled_) {
    packed_.run({&X, &Y, &values});
    return;
  }
  KernelArgs a = args(X, Y, values);
  Interpreter interp;
  a.bind(interp, reference_);
  interp.run(reference_);
}

std::string SpmmKernel::describe() const {
#if STRATA_WITH_CUDA
  if (cusparse_)
    return fmt::format("{} csr cusparse {} ({}, {})", spec_.name(), to_string(cusparse_->algorithm()),
                       backend_name(opt_.backend), opt_.device.str());
#endif
  if (cuda_)
    return fmt::format("{} {} gpu {} ({}, {})", spec_.name(), plan_.format.str(), plan_.gpu.str(), backend_name(opt_.backend),
                       opt_.device.str());
  return fmt::format("{} {} ({})", spec_.name(), plan_.str(), backend_name(opt_.backend));
}

}  // namespace strata::sc
