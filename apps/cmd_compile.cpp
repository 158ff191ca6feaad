// strata compile <op> --feat F [--format csr|coo|dcsr|dcsr:cols=..|ell:w=..|bsr:b=..|hyb:c=..,B=..] [--plan plan.json]
//                [rgms: --kernel fused|transform|... --feat-out F]
//                [gat: --heads H --kernel fused|fused_online|score|softmax|softmax_max|...;
//                 over --format other than csr, the single-pass ones]
//                [--device cpu|cuda] --emit stage1|stage2|stage3|scheduled|lowered|source
// Prints an op's program at one stage of the compiler (after format decomposition
// for decomposed formats), or the generated C++ (cpu) or CUDA C (cuda: any format
// with its default GPU schedule, or --deterministic; needs no GPU). A plan file replays a tuned plan exactly: the
// same plan always prints the same code.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "apps/commands.h"
#include "apps/option_checks.h"
#include "core/file_util.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/codegen/cuda_emitter.h"
#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/formats/format_schedule.h"
#include "sparse_compiler/formats/gpu_format_schedule.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/attention.h"
#include "sparse_compiler/ops/gpu_schedules.h"
#include "sparse_compiler/ops/max_aggregation.h"
#include "sparse_compiler/ops/recorded_plans.h"
#include "sparse_compiler/ops/rgms.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/sparse_schedule.h"

namespace strata::apps {
namespace {

struct CompileArgs {
  std::string op;
  int64_t feat = 64;
  std::string format = "csr";
  std::string emit = "source";
  std::string index = "int32";
  std::string reduce = "sum";
  std::string device = "cpu";
  std::string x_layout = "row";
  bool weighted = false;
  bool deterministic = false;
  int lanes = 0;
  int64_t grain = 4096, prefetch = 0, tile = 0;
  int accumulator_sets = 1;
  bool edge_groups = false;
  std::string plan_file;
  std::string role;              // with a run's kernels.json as --plan: which kernel
  std::string kernel = "fused";  // rgms and gat: which of their kernels
  int64_t heads = 8;             // gat: attention heads
  int64_t feat_out = 0;          // rgms: output feature size (0: --feat)
};

int run_compile(const CompileArgs& a) {
  using namespace sc;
  STRATA_CHECK(a.index == "int32" || a.index == "int64", "--index: expected int32 or int64, got '{}'", a.index);
  const DType idt = parse_dtype(a.index, "--index");
  // The plan: from --plan (a JSON file, e.g. written by `strata tune`), else from
  // the individual options.
  KernelPlan plan;
  std::optional<SpmmSpec> recorded_spec;  // --role: the program the run built
  STRATA_CHECK(a.role.empty() || !a.plan_file.empty(),
               "--role: names a kernel of a run's kernels.json given as --plan");
  if (!a.plan_file.empty()) {
    const std::string text = read_file(a.plan_file);
    if (sc::RecordedPlans::looks_like_kernels_json(text)) {
      const sc::RecordedPlans plans = sc::RecordedPlans::read(a.plan_file);
      STRATA_CHECK(!a.role.empty(), "--plan '{}' is a run's kernels.json: name one of its kernels with --role ({})",
                   a.plan_file, fmt::join(plans.roles(), "; "));
      STRATA_CHECK(a.op == "spmm", "--role: a run's kernels.json records SpMM kernels; use op spmm, not {}", a.op);
      const sc::RecordedPlan& r = plans.at(a.role, "--plan");
      recorded_spec = SpmmSpec::from_name(r.program);
      STRATA_CHECK(recorded_spec.has_value(),
                   "--plan '{}': kernel '{}' names program '{}', which is not an SpMM program", a.plan_file, a.role,
                   r.program);
      plan = r.plan;
    } else {
      STRATA_CHECK(a.role.empty(), "--role: '{}' is a single plan, not a run's kernels.json", a.plan_file);
      plan = KernelPlan::from_json(text, a.plan_file);
    }
  } else {
    plan.format = FormatSpec::parse(a.format, "--format");
    plan.knobs.vector_lanes = a.lanes > 0 ? a.lanes : host_vector_lanes();
    plan.knobs.grain = a.grain;
    plan.knobs.prefetch = a.prefetch;
    plan.feature_tile = a.tile;
    plan.knobs.accumulator_sets = a.accumulator_sets;
    plan.knobs.edge_groups = a.edge_groups;
    plan.x_layout = DenseLayout::parse(a.x_layout, "--x-layout");
  }
  const bool scheduled = a.emit == "scheduled" || a.emit == "lowered" || a.emit == "source";
  const bool cuda = parse_device(a.device, "--device").is_cuda();
  STRATA_CHECK(!a.deterministic || cuda, "--deterministic: applies to --device cuda (CPU kernels have no atomics)");
  Kernel program, lowered;
  // Options of one op given to another are refused, not ignored.
  STRATA_CHECK(a.op == "spmm" || a.reduce == "sum", "--reduce {}: applies to spmm only", a.reduce);
  STRATA_CHECK(a.op == "spmm" || a.op == "sddmm" || plan.x_layout.is_row(),
               "--x-layout {}: applies to spmm and sddmm only (X of {} is read by rows)", plan.x_layout.str(), a.op);
  if (a.op == "spmm") {
    SpmmSpec spec;
    spec.feat = a.feat;
    spec.index_dtype = idt;
    spec.weighted = a.weighted;
    STRATA_CHECK(a.reduce == "sum" || a.reduce == "mean", "--reduce: expected sum or mean, got '{}'", a.reduce);
    spec.row_scale = a.reduce == "mean";
    if (recorded_spec) spec = *recorded_spec;  // the run's program (its scalings too), not the options
    program = spmm_program(spec, plan.x_layout);
    if (plan.format.decomposed()) program = decompose_format(program, plan.format);
    else if (plan.format.kind == FormatKind::Coo) program = coo_program(program);
    GpuSpmmKnobs knobs = default_gpu_spmm_knobs(spec, plan.format);
    knobs.deterministic = a.deterministic;
    if (a.deterministic && plan.format.kind == FormatKind::Csr) knobs.row_parts = 2;  // csr: ordered row parts
    if (cuda && a.emit == "scheduled") lowered = schedule_spmm_gpu(spec, plan.format, knobs);
    else if (cuda && scheduled) lowered = lower_spmm_gpu(spec, plan.format, knobs);
    else if (scheduled) lowered = SpmmKernel::lower(spec, plan);
  } else if (a.op == "sddmm" || a.op == "sddmm_add") {
    SddmmSpec spec{a.op == "sddmm" ? SddmmKind::Dot : SddmmKind::Add, a.feat, idt};
    program = sddmm_program(spec, plan.x_layout);
    if (plan.format.decomposed()) program = decompose_format(program, plan.format);
    else if (plan.format.kind == FormatKind::Coo) program = coo_program(program);
    // SDDMM has no atomics on any format: --deterministic changes nothing.
    const GpuSddmmKnobs knobs = default_gpu_sddmm_knobs(spec, plan.format);
    if (cuda && a.emit == "scheduled") lowered = schedule_sddmm_gpu(spec, plan.format, knobs);
    else if (cuda && scheduled) lowered = lower_sddmm_gpu(spec, plan.format, knobs);
    else if (scheduled) lowered = SddmmKernel::lower(spec, plan);
  } else if (a.op == "spmm_max" || a.op == "spmm_max_grad") {
    STRATA_CHECK(!cuda, "--device cuda: the max aggregation kernels are generated for the CPU only");
    STRATA_CHECK(plan.format.kind == FormatKind::Csr,
                 "--format {}: max aggregation runs on csr only (padding slots would take part in a maximum)",
                 plan.format.str());
    const MaxAggregationSpec spec{a.feat, idt};
    program = a.op == "spmm_max" ? max_aggregation_program(spec) : max_aggregation_backward_program(spec);
    if (scheduled) {
      const Kernel s = schedule_row_program_cpu(lower_to_loops(program), plan.knobs);
      lowered = a.emit == "scheduled" ? s : lower_schedule(s);
    }
  } else if (a.op == "rgms") {
    STRATA_CHECK(!cuda, "--device cuda: the RGMS kernels are generated for the CPU only");
    for (const auto& [option, value] : {std::pair<const char*, int64_t>{"--feat", a.feat}, {"--feat-out", a.feat_out}})
      STRATA_CHECK(value <= Schedule::kMaxStagedElements,
                   "{} {}: the RGMS kernels hold a row of at most {} features in registers", option, value,
                   Schedule::kMaxStagedElements);
    RgmsSpec spec;
    spec.fin = a.feat;
    spec.fout = a.feat_out > 0 ? a.feat_out : a.feat;
    spec.index_dtype = idt;
    const RgmsCpuKernel k = rgms_cpu_kernel(a.kernel, spec, plan.knobs);
    program = k.program;
    if (scheduled) lowered = a.emit == "scheduled" ? k.scheduled : lower_schedule(k.scheduled);
  } else if (a.op == "gat") {
    STRATA_CHECK(!cuda, "--device cuda: the GAT kernels are generated for the CPU only");
    // Over another format than CSR, the single-pass programs decompose into its parts.
    program = gat_program_over(gat_program(a.kernel, GatSpec{a.heads, a.feat, 0.2, idt}), plan.format);
    if (scheduled) {
      const Kernel loops = lower_to_loops(program);
      const Kernel s = plan.format.kind == FormatKind::Csr ? schedule_row_program_cpu(loops, plan.knobs)
                                                           : schedule_gat_over_format_cpu(loops, plan.format, plan.knobs);
      lowered = a.emit == "scheduled" ? s : lower_schedule(s);
    }
  } else {
    STRATA_FAIL("unknown op '{}' (expected spmm, sddmm, sddmm_add, spmm_max, spmm_max_grad, rgms or gat)", a.op);
  }
  std::string out;
  if (a.emit == "stage1") out = to_string(program);
  else if (a.emit == "stage2") out = to_string(lower_to_positions(program));
  else if (a.emit == "stage3") out = to_string(lower_to_loops(program));
  else if (a.emit == "scheduled" || a.emit == "lowered") out = to_string(lowered);
  else if (a.emit == "source") out = cuda ? emit_cuda_source({lowered}).source : emit_cpu_source({lowered});
  else STRATA_FAIL("--emit: expected stage1, stage2, stage3, scheduled, lowered or source, got '{}'", a.emit);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

RegisterCommand reg({"compile", "Print an op's program at one compiler stage, or its generated C++",
                     [](CLI::App& app) {
                       auto a = std::make_shared<CompileArgs>();
                       app.add_option("op", a->op, "spmm, sddmm, sddmm_add, spmm_max, spmm_max_grad, rgms or gat")
                           ->required();
                       app.add_option("--feat", a->feat, "feature size (heads for sddmm_add)")
                           ->capture_default_str()
                           ->check(integer_in(1, kMaxFeatureSize));
                       app.add_option("--format", a->format, "sparse format")->capture_default_str();
                       app.add_option("--emit", a->emit, "stage1, stage2, stage3, scheduled, lowered or source")
                           ->capture_default_str();
                       app.add_option("--index", a->index, "index dtype: int32 or int64")->capture_default_str();
                       app.add_option("--device", a->device, "target: cpu (C++) or cuda (CUDA C, the format's default GPU schedule)")
                           ->capture_default_str();
                       app.add_option("--reduce", a->reduce, "spmm: sum or mean")->capture_default_str();
                       app.add_flag("--weighted", a->weighted, "spmm: multiply by edge values");
                       app.add_flag("--deterministic", a->deterministic,
                                    "cuda spmm: the schedule without atomics (owner tasks; csr: ordered row parts)");
                       app.add_option("--lanes", a->lanes,
                                      "vector lanes, a power of two up to 64; 1: scalar code (default: the host's)")
                           ->check(power_of_two_up_to(64));
                       app.add_option("--grain", a->grain, "non-zeros per parallel task")
                           ->capture_default_str()
                           ->check(integer_at_least(1));
                       app.add_option("--prefetch", a->prefetch, "prefetch distance in non-zeros (0: none)")
                           ->capture_default_str()
                           ->check(integer_at_least(0));
                       app.add_option("--tile", a->tile, "spmm feature tile (0: none)")
                           ->capture_default_str()
                           ->check(integer_at_least(0));
                       app.add_option("--x-layout", a->x_layout, "spmm: X layout row, pad:P or panel:W")
                           ->capture_default_str();
                       app.add_option("--accumulator-sets", a->accumulator_sets,
                                      "spmm on csr: accumulator sets a row's non-zeros alternate between")
                           ->capture_default_str()
                           ->check(integer_in(1, 8));
                       app.add_flag("--edge-groups", a->edge_groups,
                                    "sddmm (dot) on csr or coo: a row's edges (coo: consecutive slots, whatever "
                                    "their rows) a vector's lanes at a time, summed by one transposing reduction");
                       app.add_option("--plan", a->plan_file,
                                      "a plan JSON file (replaces --format and the knobs), or a run dir's kernels.json "
                                      "with --role");
                       app.add_option("--role", a->role,
                                      "with a run's kernels.json as --plan: the kernel ('mean f=32 forward'); its "
                                      "program (feature size, index type, scalings) and plan are the run's");
                       app.add_option(
                              "--kernel", a->kernel,
                              "rgms: fused, aggregate, transform, source_transform, gather, weight_grad, "
                              "ell3d, embed, embed_grad, gather_add, basis_rows, pair_sum, basis_grad or "
                              "basis_coeff_grad (--feat: bases); gat: fused, fused_online, score, softmax (or its "
                              "stages softmax_max, softmax_exp, softmax_sum, softmax_norm), aggregate, "
                              "aggregate_eid, recompute, sddmm, softmax_backward or col_sum")
                           ->capture_default_str();
                       app.add_option("--heads", a->heads, "gat: attention heads (--feat: features per head)")
                           ->capture_default_str()
                           ->check(integer_in(1, kMaxHeads));
                       app.add_option("--feat-out", a->feat_out, "rgms: output feature size (default: --feat)")
                           ->check(integer_in(1, kMaxFeatureSize));
                       return [a, &app] {
                         // --role takes the program and plan from the run's record: options
                         // that would choose them are refused rather than ignored.
                         if (!a->role.empty())
                           for (const char* o :
                                {"--feat", "--format", "--index", "--reduce", "--weighted", "--lanes", "--grain",
                                 "--prefetch", "--tile", "--x-layout", "--accumulator-sets", "--edge-groups"})
                             STRATA_CHECK(app.count(o) == 0,
                                          "{}: --role takes the kernel's program and plan from the run's kernels.json; "
                                          "drop {}",
                                          o, o);
                         // Likewise a plan file replaces the format and the knobs, and an
                         // option of another op would do nothing.
                         if (!a->plan_file.empty() && a->role.empty())
                           for (const char* o : {"--format", "--lanes", "--grain", "--prefetch", "--tile", "--x-layout",
                                                 "--accumulator-sets", "--edge-groups"})
                             STRATA_CHECK(app.count(o) == 0,
                                          "{}: --plan replaces the format and the schedule knobs; drop {} (or edit the "
                                          "plan file)",
                                          o, o);
                         const std::pair<const char*, std::vector<std::string>> own[] = {
                             {"--kernel", {"rgms", "gat"}}, {"--heads", {"gat"}}, {"--feat-out", {"rgms"}}};
                         for (const auto& [o, ops] : own)
                           STRATA_CHECK(app.count(o) == 0 || std::find(ops.begin(), ops.end(), a->op) != ops.end(),
                                        "{} applies to {}, not to {}", o, fmt::format("{}", fmt::join(ops, " and ")),
                                        a->op);
                         try {
                           return run_compile(*a);
                         } catch (const UserError& e) {  // a plan the file holds but the op cannot take
                           if (a->plan_file.empty() ||
                               std::string_view(e.what()).find(a->plan_file) != std::string_view::npos)
                             throw;
                           throw UserError(fmt::format("--plan '{}': {}", a->plan_file, e.what()));
                         }
                       };
                     }});

}  // namespace
}  // namespace strata::apps
