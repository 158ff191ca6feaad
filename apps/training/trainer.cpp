#include "apps/training/trainer.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "apps/training/batch_forward.h"
#include "apps/training/link_prediction.h"
#include "apps/training/resume_point.h"
#include "apps/training/rgcn.h"
#include "apps/training/run_book.h"
#include "apps/training/run_checkpoint.h"
#include "apps/training/run_dir.h"
#include "apps/training/session_summary.h"
#include "apps/training/split_file.h"
#include "core/autograd_ops.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/neighbor_sampler.h"
#include "core/parallel.h"
#include "core/timer.h"
#include "models/checkpoint.h"

namespace strata::train {
namespace {

using json = nlohmann::ordered_json;

}  // namespace

void print_kernels(const Printer& out, const TrainingConfig& c, const nn::GraphKernels& k) {
  if (c.runtime.kernels.backend == sc::Backend::Generated)
    out(fmt::format(
        "{:<11}{} kernel{}, {} program{} compiled in one batch: compiler {:.1f} ms, lowering {:.1f} ms, "
        "total {:.1f} ms ({})",
        "kernels", k.records().size(), k.records().size() == 1 ? "" : "s", k.distinct_programs(),
        k.distinct_programs() == 1 ? "" : "s", k.compile_ms(), k.lower_ms(), k.build_ms(), k.cache_outcome()));
  else
    out(fmt::format("{:<11}{} kernels on the reference path (plain loops, nothing compiled): {:.1f} ms", "kernels",
                    k.records().size(), k.build_ms()));
  if (!k.note().empty()) out(fmt::format("{:<11}{}", "", k.note()));
  for (const nn::KernelRecord& r : k.records())
    out(fmt::format("{:<11}{:<31} {:<3} {:<22} {:<36} {}", "", r.role, r.graph, r.program, r.plan.str(), r.cache));
  for (const std::string& line : k.attention_lines()) out(fmt::format("{:<11}{}", "", line));  // GAT
}

namespace {

void print_header(Console& out, const Config& config, const Context& ctx, const nn::GnnModel& model) {
  const TrainingConfig& c = ctx.config;
  const TrainingData& d = ctx.data;
  print_config_lines(out.printer(), config);
  out(fmt::format("{:<11}{} ({}), loaded in {:.1f} ms (cache: {})", "dataset", d.name, d.source, d.load.seconds * 1e3,
                  data::cache_status_name(d.load.cache)));
  const DegreeStats deg = d.graph.degree_stats();
  out(fmt::format("{:<11}{} nodes, {} edges; in-degree min {} / median {} / mean {:.2f} / max {}, {} without "
                  "in-edges",
                  "", commas(d.num_nodes()), commas(d.graph.nnz()), deg.min, deg.median, deg.mean, deg.max,
                  commas(deg.empty_rows)));
  out(fmt::format("{:<11}features {}; {} classes{}", "", d.features_text, d.num_classes,
                  d.multilabel() ? " (multi-label: a sigmoid per class, binary cross-entropy)" : ""));
  out(fmt::format("{:<11}split {}: {} train / {} val / {} test; scored by {}{}", "", d.splits.origin,
                  commas(d.splits.train_size()), commas(d.splits.val_size()), commas(d.splits.test_size()),
                  metric_name(ctx.metric), metric_note(config, ctx.metric, d.eval_metric)));
  if (c.data.split.per_run && c.training.runs > 1)
    out(fmt::format("{:<11}a new split for every run (data.split.per_run): run k from seed {} + k - 1", "",
                    c.data.split.seed));
  for (const std::string& note : d.notes) out(fmt::format("{:<11}{}", "", note));
  out(fmt::format("{:<11}{}", "model", model.describe()));
  out(fmt::format("{:<11}{}{}", "optimizer", nn::make_optimizer(c.optimizer, model.parameters())->describe(),
                  c.optimizer.schedule.describe(c.training.epochs)));
  print_runtime([&out](const std::string& line) { out(line); }, c);
  // Through a reference: a Printer made from `out` itself would hold a copy of it.
  print_kernels([&out](const std::string& line) { out(line); }, c, *ctx.kernels);
}

}  // namespace

nlohmann::ordered_json kernels_json(const nn::GraphKernels& k) {
  json list = json::array();
  for (const nn::KernelRecord& r : k.records()) {
    list.push_back({{"role", r.role},
                    {"graph", r.graph},
                    {"program", r.program},
                    {"backend", r.backend},
                    {"plan", json::parse(r.plan.to_json())},  // replayable: strata compile --plan
                    {"plan_text", r.plan.str()},
                    {"cache", r.cache},
                    {"kernel", r.describe}});
  }
  // Replayed plans (runtime.plans) take the place of tuning: the kernels were not tuned.
  const auto& plans = k.runtime().plans;
  return {{"backend", sc::backend_name(k.runtime().backend)},
          {"tuning", k.runtime().tuning && !plans},
          {"plans", plans ? json(plans->file()) : json(nullptr)},
          {"note", k.note()},
          {"programs", k.distinct_programs()},
          {"compile_ms", k.compile_ms()},
          {"lower_ms", k.lower_ms()},
          {"tune_ms", k.tune_ms()},
          {"build_ms", k.build_ms()},
          {"cache", k.cache_outcome()},
          {"kernels", list},
          {"attention", k.attention_lines()}};  // GAT
}

nlohmann::ordered_json kernels_summary_json(const nn::GraphKernels& k) {
  return {{"programs", k.distinct_programs()},
          {"compile_ms", k.compile_ms()},
          {"build_ms", k.build_ms()},
          {"file", "kernels.json"}};
}

namespace {

json dataset_json(const TrainingData& d) {
  return {{"name", d.name},
          {"source", d.source},
          {"nodes", d.num_nodes()},
          {"edges", d.graph.nnz()},
          {"features", d.features_text},
          {"in_features", d.in_features()},
          {"classes", d.num_classes},
          {"multilabel", d.multilabel()},
          {"split",
           {{"origin", d.splits.origin},
            {"train", d.splits.train_size()},
            {"val", d.splits.val_size()},
            {"test", d.splits.test_size()}}},
          {"notes", d.notes}};
}

}  // namespace

void apply_runtime(const RuntimeConfig& runtime) {
  // 0 keeps OpenMP's default, so OMP_NUM_THREADS still applies.
  if (runtime.threads > 0) set_num_threads(runtime.threads);
  if (!runtime.cache_dir.empty()) {
    const std::string why = create_directories_problem(runtime.cache_dir);
    STRATA_CHECK(why.empty(), "runtime.cache_dir '{}' cannot be created: {}", runtime.cache_dir, why);
    ::setenv("STRATA_CACHE_DIR", runtime.cache_dir.c_str(), 1);
  }
}

std::pair<double, double> mean_std(const std::vector<double>& v) {
  if (v.empty()) return {0, 0};
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  if (v.size() < 2) return {m, 0};
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return {m, std::sqrt(s / static_cast<double>(v.size() - 1))};
}

nn::NodeFeatures Context::input() const {
  if (data.sparse_features) return nn::NodeFeatures{ag::Var(), &*data.sparse_features, 0.0f, 0};
  return nn::NodeFeatures::from_dense(ag::Var::constant(data.dense_features));
}

void Context::build_kernels(const nn::GnnModel& model, bool backward) {
  nn::KernelRequests requests = model.kernel_requests(data.sparse_input());
  requests.backward = backward;
  kernels = std::make_unique<nn::GraphKernels>(nn::build_graph_kernels(
      data.graph, data.sparse_features ? &*data.sparse_features : nullptr, requests, config.runtime.kernels));
}

RunState::RunState(const Context& ctx, uint64_t seed) {
  Rng base(seed);
  Rng init = base.fork(1);
  dropout = base.fork(2);
  sampler = base.fork(3);
  model = std::make_unique<nn::GnnModel>(ctx.config.model, ctx.data.in_features(), ctx.data.num_classes, init);
  optimizer = nn::make_optimizer(ctx.config.optimizer, model->parameters());
}

namespace {
// "model.hidden = 64" (GAT: "× model.gat.heads = 8"): the width of a layer's rows.
std::string hidden_width(const Config& config) {
  return fmt::format("model.hidden = {}{}", config.text("model.hidden"),
                     config.get_string("model.name") == "gat"
                         ? fmt::format(" × model.gat.heads = {}", config.text("model.gat.heads"))
                         : "");
}

// Out of host memory in `strata eval` / `strata infer` (`command`) of `checkpoint`:
// the whole graph's forward pass, whose width the checkpoint fixes.
[[noreturn]] void rethrow_restored_out_of_memory(const OutOfMemoryError& e, const Config& config,
                                                 const std::string& command, const fs::path& checkpoint) {
  throw UserError(fmt::format(
      "{}: strata {} --checkpoint {}: {}; the forward pass holds a row per node of {} floats in each layer, and the "
      "checkpoint fixes that width: free memory, or run where more is available{}",
      config.source(), command, checkpoint.string(), e.fact(), hidden_width(config),
      command == "infer" ? ", or infer a --batch of nodes, whose forward covers their receptive field only" : ""));
}
}  // namespace

void rethrow_out_of_memory(const OutOfMemoryError& e, const Config& config, const LoopPosition& at) {
  const std::string hidden = hidden_width(config);
  if (at.run == 0)
    throw UserError(fmt::format(
        "{}: before the first epoch (data, parameters, kernels): {}; {} ({}) sets the width of the weights and of "
        "each layer's buffers: lower it",
        config.source(), e.fact(), hidden, config.origin("model.hidden")));
  throw UserError(fmt::format(
      "{}: run {}, epoch {} ({}): {}; a layer's buffers hold a row per node ({} nodes) of {} floats (model.hidden: "
      "{}): lower it{}",
      config.source(), at.run, epoch_str(at.epoch), at.phase, e.fact(), commas(at.nodes), hidden,
      config.origin("model.hidden"), at.remedy));
}

float finite_loss(ag::Tape& tape, const ag::Var& loss, const nn::Optimizer& optimizer, int run, int64_t epoch,
                  const std::string& batch) {
  const float value = loss.value().data<float>()[0];
  if (std::isfinite(value)) return value;
  const auto bad = tape.first_nonfinite();
  std::string where =
      bad ? fmt::format("the first non-finite values appeared in layer '{}' ({}: {} of {} values)",
                        bad->label.empty() ? "(outside any layer)" : bad->label, bad->op, bad->count, bad->total)
          : "every layer's output was finite, the loss itself overflowed";
  tape.clear();
  STRATA_FAIL(
      "training diverged: run {}, epoch {}{}: the loss is {}; {}. Lower optimizer.lr (now {}) or check the "
      "input features",
      run, epoch_str(epoch), batch, std::isnan(value) ? "NaN" : "infinite", where, optimizer.lr());
}

double step_optimizer(ag::Tape& tape, const ag::Var& loss, nn::Optimizer& optimizer) {
  tape.backward(loss);
  Timer opt;
  optimizer.step();
  optimizer.zero_grad();
  const double ms = opt.ms();
  tape.clear();
  return ms;
}

namespace {

// A mini-batch epoch (training.batch_size > 0).
StepResult train_sampled_epoch(const Context& ctx, RunState& state, ag::Tape& tape, int run, int64_t epoch) {
  Timer t;
  const TrainingData& d = ctx.data;
  const LoopConfig& loop = ctx.config.training;
  const int64_t n = data::Splits::size_of(d.splits.train);
  const int64_t* train = n > 0 ? d.splits.train.data<int64_t>() : nullptr;
  const int64_t* labels = d.labels.data<int64_t>();
  const std::vector<int64_t> order = state.sampler.permutation(n);
  StepResult r;
  double loss_sum = 0;
  for (int64_t b0 = 0; b0 < n; b0 += loop.batch_size) {
    const int64_t b1 = std::min(n, b0 + loop.batch_size);
    Timer sampling;
    std::vector<int64_t> seeds;
    for (int64_t i = b0; i < b1; ++i) seeds.push_back(train[order[static_cast<size_t>(i)]]);
    const SampledBatch batch = sample_blocks(d.graph, seeds, loop.fanouts, state.sampler);
    const BatchForward bound(ctx, *state.model, batch, /*backward=*/true);
    // The seeds' labels (a row of C for multi-label) and the batch's rows 0..B-1.
    const int64_t width = d.multilabel() ? d.labels.dim(1) : 1;
    std::vector<int64_t> batch_labels, all;
    for (size_t i = 0; i < seeds.size(); ++i) {
      batch_labels.insert(batch_labels.end(), labels + seeds[i] * width, labels + (seeds[i] + 1) * width);
      all.push_back(static_cast<int64_t>(i));
    }
    const int64_t batch_size = static_cast<int64_t>(seeds.size());
    const Tensor batch_label_tensor =
        d.multilabel() ? Tensor::from_vector(batch_labels, {batch_size, width}) : Tensor::from_vector(batch_labels);
    r.sample_ms += sampling.ms();

    tape.clear();
    tape.set_training(true);
    tape.set_grad_enabled(true);
    const ag::Var logits =
        state.model->forward_blocks(tape, bound.kernel_ptrs, bound.num_dst, bound.input, state.dropout.next_u64());
    ag::Var loss;
    {
      ag::Tape::Scope scope(tape, "loss");
      loss = classification_loss(tape, logits, batch_label_tensor, Tensor::from_vector(all));
    }
    const float value =
        finite_loss(tape, loss, *state.optimizer, run, epoch,
                    fmt::format(", batch {} of {}", r.batches + 1, (n + loop.batch_size - 1) / loop.batch_size));
    r.optimizer_ms += step_optimizer(tape, loss, *state.optimizer);
    loss_sum += static_cast<double>(value) * static_cast<double>(b1 - b0);
    ++r.batches;
  }
  r.loss = n > 0 ? loss_sum / static_cast<double>(n) : 0.0;
  r.ms = t.ms();
  return r;
}

}  // namespace

StepResult train_step(const Context& ctx, RunState& state, ag::Tape& tape, int run, int64_t epoch) {
  if (ctx.sampling()) return train_sampled_epoch(ctx, state, tape, run, epoch);
  Timer t;
  tape.clear();
  tape.set_training(true);
  tape.set_grad_enabled(true);
  ag::Var logits = state.model->forward(tape, *ctx.kernels, ctx.input(), state.dropout.next_u64());
  ag::Var loss;
  {
    ag::Tape::Scope scope(tape, "loss");
    // Weight decay is applied by the optimizer (models/optimizer.h).
    loss = classification_loss(tape, logits, ctx.data.labels, ctx.data.splits.train);
  }
  StepResult r;
  r.loss = finite_loss(tape, loss, *state.optimizer, run, epoch, "");
  r.optimizer_ms = step_optimizer(tape, loss, *state.optimizer);
  r.batches = 1;
  r.ms = t.ms();
  return r;
}

Evaluation evaluate(const Context& ctx, const nn::GnnModel& model) {
  Timer t;
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  const ag::Var logits = model.forward(tape, *ctx.kernels, ctx.input(), 0);
  const NodeScores scores(logits.value(), ctx.data.labels, ctx.data.num_classes, ctx.metric);
  Evaluation e;
  std::tie(e.train_acc, e.train_loss) = scores.accuracy_and_loss(ctx.data.splits.train);
  std::tie(e.val_acc, e.val_loss) = scores.accuracy_and_loss(ctx.data.splits.val);
  std::tie(e.test_acc, e.test_loss) = scores.accuracy_and_loss(ctx.data.splits.test);
  e.test_macro_f1 = scores.macro_f1(ctx.data.splits.test);
  e.test_logits_hash = logits_hash(logits.value(), ctx.data.splits.test);
  e.ms = t.ms();
  return e;
}

namespace {

Summary run_node_training(const Config& config, const std::string& config_name, const Printer& print, bool resume,
                          LoopPosition& position) {
  Context ctx;
  ctx.config = typed(config);
  const TrainingConfig& c = ctx.config;
  Console out{print};
  OpenedRunDir opened = start_training_session(config, c, config_name, out, resume);
  RunDirectory& dir = *opened.dir;
  std::optional<ResumePoint>& resumed = opened.resumed;

  ctx.data = prepare_data(c.data, c.model.kind, config.source());
  position.nodes = ctx.data.num_nodes();
  position.remedy = ctx.sampling() ? ", or sample smaller mini-batches (training.batch_size, training.fanouts)"
                             : ", or train on sampled mini-batches (training.batch_size)";
  ctx.metric = configured_metric(config, ctx.data.labels, ctx.data.eval_metric, ctx.data.name);
  check_metric_defined(ctx.metric, ctx.data.labels, ctx.data.splits, metric_origin(config, ctx.data.eval_metric),
                       ctx.data.name);
  // data.split.per_run: every run's split is drawn from its seed alone, so a split a
  // later run could not use is refused now, not after the runs before it trained.
  if (c.data.split.per_run && !ctx.data.split_is_fixed())
    for (int run = 2; run <= c.training.runs; ++run)
      check_metric_defined(ctx.metric, ctx.data.labels, split_for_run(ctx.data, c.data, config.source(), run),
                           metric_origin(config, ctx.data.eval_metric), ctx.data.name);
  RunState first(ctx, c.training.seed);
  const bool replay_tuned = replay_interrupted_session_plans(dir, ctx.config.runtime.kernels, resumed.has_value());
  ctx.build_kernels(*first.model, /*backward=*/!ctx.sampling());  // mini-batches train over their blocks' kernels
  if (replay_tuned) ctx.kernels->set_note(replayed_plans_note(fmt::format("{} plans", ctx.kernels->records().size())));
  print_header(out, config, ctx, *first.model);
  if (ctx.sampling()) {
    const LoopConfig& l = c.training;
    std::string fanouts;
    for (int64_t f : l.fanouts)
      fanouts += fmt::format("{}{}", fanouts.empty() ? "" : ",", f < 0 ? "all" : std::to_string(f));
    const int64_t n = data::Splits::size_of(ctx.data.splits.train);
    const bool generated = c.runtime.kernels.backend == sc::Backend::Generated;
    const bool block_degrees = c.model.kind == nn::ModelKind::Gcn && c.model.norm == nn::GcnNorm::Both;
    std::string block_kernels = generated ? "bind the template (CSR) programs" : "run on the reference path";
    if (generated && c.model.kind == nn::ModelKind::Gat) {
      const nn::AttentionMode a = c.runtime.kernels.attention;
      const bool forced = a == nn::AttentionMode::Fused || a == nn::AttentionMode::Unfused;
      block_kernels +=
          fmt::format(" and the {} attention forward ({})", a == nn::AttentionMode::Fused ? "fused" : "unfused",
                      forced ? "runtime.attention" : "not tuned per block");
    }
    out(
        fmt::format("{:<11}mini-batches of {} training nodes ({} per epoch), in-neighbours sampled per layer {} (input "
                    "layer first); each batch's blocks {}, the full-graph kernels above evaluate{}",
                    "sampling", l.batch_size, (n + l.batch_size - 1) / l.batch_size, fanouts, block_kernels,
                    block_degrees ? "; GCN normalises by each block's degrees (as DGL's GraphConv and PyG's GCNConv on "
                                    "sampled graphs), so a batch is not a full-graph step"
                                  : ""));
  }
  const std::string model_text = first.model->describe();
  const int64_t model_parameters = first.model->num_parameters();
  out(fmt::format("{:<11}{}", "run dir", dir.final_path().string()));
  write_kernels_json(dir, kernels_json(*ctx.kernels), replay_tuned);
  dir.write("split.json", split_json(ctx.data.splits));

  Summary summary;
  summary.run_dir = dir.final_path().string();
  ResumeRecorder recorder(dir, config, out, c.output.resume_every);
  std::optional<RunProgress> current;  // the run in progress at the resume point
  if (resumed) {
    ResumedRuns from = resumed_runs(*resumed);
    for (const json& entry : from.finished) {
      summary.runs.push_back(run_result_from_state(entry, resumed->file));
    }
    recorder.restore_finished(std::move(from.finished));
    current = std::move(from.current);
  }

  for (int run = static_cast<int>(summary.runs.size()) + 1; run <= c.training.runs; ++run) {
    const uint64_t seed = c.training.seed + static_cast<uint64_t>(run - 1);
    position.run = run;
    position.epoch = 0;
    RunState state = run == 1 ? std::move(first) : RunState(ctx, seed);
    const bool new_split = run > 1 && c.data.split.per_run && !ctx.data.split_is_fixed();
    if (new_split) {
      ctx.data.splits = split_for_run(ctx.data, c.data, config.source(), run);
      check_metric_defined(ctx.metric, ctx.data.labels, ctx.data.splits, metric_origin(config, ctx.data.eval_metric),
                           ctx.data.name);
      dir.write(fmt::format("split_run{}.json", run), split_json(ctx.data.splits));
    }
    const bool continuing = current.has_value();
    if (c.training.runs > 1 && !continuing)
      out(fmt::format("Run {}/{} (seed {}{})", run, c.training.runs, seed,
                      c.data.split.per_run ? fmt::format(", split {}", ctx.data.splits.origin) : ""));
    RunBook book(c, run, seed);
    Evaluation best, last;
    if (continuing) {  // the run in progress at the resume point, restored
      best = evaluation_from_state(current->best, resumed->file);
      last = evaluation_from_state(current->last, resumed->file);
      book.resume(*current, *resumed, state.dropout, &state.sampler, state.model->parameters(), *state.optimizer, out);
      current.reset();
    }
    for (int64_t epoch = book.first_epoch(); epoch <= c.training.epochs; ++epoch) {
      state.optimizer->set_lr(c.optimizer.schedule.lr_at(c.optimizer.lr, epoch, c.training.epochs));
      position.epoch = epoch;
      position.phase = "training";
      const StepResult step = train_step(ctx, state, book.tape(), run, epoch);
      book.add_epoch(step.ms, step.optimizer_ms);
      json m = {{"run", run}, {"epoch", epoch}, {"loss", step.loss}, {"epoch_ms", step.ms}};
      if (ctx.sampling()) {
        m["batches"] = step.batches;
        m["sample_ms"] = step.sample_ms;
      }
      if (c.optimizer.schedule.kind != nn::LrScheduleKind::Constant) m["lr"] = state.optimizer->lr();
      const bool eval_now = book.evaluates_after(epoch);
      if (eval_now) {
        position.phase = "evaluation";
        last = evaluate(ctx, *state.model);
        m["train_acc"] = last.train_acc;
        m["val_acc"] = last.val_acc;
        m["test_acc"] = last.test_acc;
        m["train_loss"] = last.train_loss;
        m["val_loss"] = last.val_loss;
        m["eval_ms"] = last.ms;
        if (book.offer(epoch, last.val_acc, last.val_loss, state.model->parameters(), state.optimizer.get()))
          best = last;
      }
      dir.append_metrics(m.dump());
      log_epoch(c.output, out.printer(), epoch, step.loss, last.train_acc, last.val_acc, step.ms);
      if (book.end_epoch(epoch, eval_now, out.printer())) break;
      book.save_if_due(recorder, epoch, evaluation_state(best), evaluation_state(last), state.dropout, &state.sampler,
                       state.model->parameters(), *state.optimizer);
    }
    RunResult rr;
    book.fill(rr);
    rr.split_seed = c.data.split.seed_for_run(run);
    rr.best = best;

    if (c.output.checkpoint != CheckpointPolicy::None) {
      const bool use_best = c.output.checkpoint == CheckpointPolicy::Best;
      const Evaluation& at = use_best ? best : last;
      nn::Checkpoint ck;
      ck.meta = checkpoint_meta(config, c.runtime.kernels.backend,
                                {nn::model_kind_name(c.model.kind),
                                 state.model->describe(),
                                 {{"name", ctx.data.name},
                                  {"nodes", ctx.data.num_nodes()},
                                  {"in_features", ctx.data.in_features()},
                                  {"classes", ctx.data.num_classes},
                                  {"multilabel", ctx.data.multilabel()}},
                                 run,
                                 seed,
                                 use_best,
                                 use_best ? rr.best_epoch : rr.epochs,
                                 {{"train_acc", at.train_acc},
                                  {"val_acc", at.val_acc},
                                  {"test_acc", at.test_acc},
                                  {"test_macro_f1", at.test_macro_f1},
                                  {"val_loss", at.val_loss},
                                  {"test_logits_hash", at.test_logits_hash}}});
      ck.meta["metric"] = metric_key(ctx.metric);  // what test_acc holds
      if (!ctx.data.split_is_fixed()) ck.meta["split_seed"] = rr.split_seed;
      if (ctx.data.split_kind == SplitKind::File) ck.meta["split_origin"] = ctx.data.splits.origin;  // names its hash
      ck.model = use_best ? book.best_params() : nn::snapshot_parameters(state.model->parameters());
      ck.optimizer = use_best ? book.best_optimizer() : state.optimizer->state();
      rr.checkpoint = write_run_checkpoint(dir, run, ck);
    }
    // Multi-label runs add macro-F1, as HGB reports them (single-label lines stay as they were).
    const std::string macro =
        ctx.data.multilabel() ? fmt::format(" (macro-F1 {:.4f})", rr.best.test_macro_f1) : std::string();
    out(fmt::format(
        "Run {}/{}: best epoch {} | train {:.4f} | val {:.4f} | test {:.4f}{} | {} epochs{}, {:.2f} ms/epoch "
        "(median; {})",
        run, c.training.runs, epoch_str(rr.best_epoch), rr.best.train_acc, rr.best.val_acc, rr.best.test_acc, macro,
        rr.epochs, rr.stopped_early ? " (early stop)" : "", rr.median_epoch_ms, time_shares(rr.profile, rr.train_ms)));
    recorder.finish_run(run_result_state(rr));
    summary.runs.push_back(std::move(rr));
  }
  // summary.json names the last run's split; a session resumed after its last run trained none.
  if (c.data.split.per_run && !ctx.data.split_is_fixed() && c.training.runs > 1)
    ctx.data.splits = split_for_run(ctx.data, c.data, config.source(), c.training.runs);
  summarize_runs(summary);
  out(fmt::format("Test {} over {} run{}: {:.4f} ± {:.4f}{} (val {:.4f} ± {:.4f}); {:.2f} ms/epoch (median)",
                  metric_name(ctx.metric), summary.runs.size(), summary.runs.size() == 1 ? "" : "s", summary.test_mean,
                  summary.test_std,
                  ctx.data.multilabel()
                      ? fmt::format("; macro-F1 {:.4f} ± {:.4f}", summary.test_macro_f1_mean, summary.test_macro_f1_std)
                      : "",
                  summary.val_mean, summary.val_std, summary.median_epoch_ms));

  json runs = json::array();
  for (const RunResult& r : summary.runs)
    runs.push_back({{"run", r.run},
                    {"seed", r.seed},
                    {"split_seed", r.split_seed},
                    {"best_epoch", r.best_epoch},
                    {"epochs", r.epochs},
                    {"stopped_early", r.stopped_early},
                    {"train_acc", r.best.train_acc},
                    {"val_acc", r.best.val_acc},
                    {"val_loss", r.best.val_loss},
                    {"test_acc", r.best.test_acc},
                    {"test_macro_f1", r.best.test_macro_f1},
                    {"mean_epoch_ms", r.mean_epoch_ms},
                    {"median_epoch_ms", r.median_epoch_ms},
                    {"time", profile_json(r.profile, r.optimizer_ms, r.train_ms)},
                    {"checkpoint", r.checkpoint}});
  finish_session(dir, out,
                 summary_json(config, summary,
                              {.dataset = dataset_json(ctx.data),
                               .model = model_text,
                               .num_parameters = model_parameters,
                               .runs = runs,
                               .metric = metric_key(ctx.metric),
                               .kernels = kernels_summary_json(*ctx.kernels)}));
  return summary;
}

}  // namespace

Summary run_training(const Config& config, const std::string& config_name, const Printer& print, bool resume) {
  LoopPosition at;  // each driver's position, for an out-of-memory error
  try {
    // rgcn: its own loop over heterographs (apps/training/rgcn.h).
    if (config.get_string("model.name") == "rgcn") return run_rgcn_training(config, config_name, print, resume, at);
    // link prediction: its own loop over edge pairs (apps/training/link_prediction.h).
    if (config.get_string("data.task") == "link") return run_link_training(config, config_name, print, resume, at);
    return run_node_training(config, config_name, print, resume, at);
  } catch (const OutOfMemoryError& e) {
    rethrow_out_of_memory(e, config, at);
  }
}

namespace {

// A checkpoint's run restored for `strata eval` and `strata infer`: the config's data
// with the split of the checkpoint's run, and its model and optimizer state, after
// every check that the checkpoint belongs to this config (the model, the dataset's
// sizes, the split's seed). The caller builds the forward kernels.
struct RestoredRun {
  Context ctx;
  std::unique_ptr<RunState> state;
  nn::Checkpoint ck;
};

void restore_run(RestoredRun& l, const Config& config, const fs::path& checkpoint) {
  Context& ctx = l.ctx;
  ctx.config = typed(config);
  apply_runtime(ctx.config.runtime);
  l.ck = read_training_checkpoint(checkpoint);
  const std::string file = checkpoint.string();
  check_config_matches_checkpoint(config, l.ck.meta, file);
  try {
    ctx.data = prepare_data(ctx.config.data, ctx.config.model.kind, config.source());
    ctx.metric = configured_metric(config, ctx.data.labels, ctx.data.eval_metric, ctx.data.name);
  } catch (const UserError&) {
    // A dataset of the other label kind may fail its split first (multi-label: no
    // Planetoid split); the label kind is the error to name then.
    const bool trained_multilabel = l.ck.meta.contains("dataset") && l.ck.meta["dataset"].value("multilabel", false);
    const data::Dataset ds = load_configured_dataset(ctx.config.data, config.source(), nullptr);
    STRATA_CHECK(ds.multilabel() == trained_multilabel,
                 "checkpoint '{}' was trained on {}-label classes, but the config's dataset '{}' has {}-label classes",
                 file, trained_multilabel ? "multi" : "single", ds.name, ds.multilabel() ? "multi" : "single");
    throw;
  }
  l.state = std::make_unique<RunState>(ctx, ctx.config.training.seed);
  RunState& state = *l.state;
  const json& meta = l.ck.meta;
  const std::string trained_model = meta.value("model", std::string());
  STRATA_CHECK(trained_model == nn::model_kind_name(ctx.config.model.kind),
               "architecture mismatch: checkpoint '{}' holds a {} model, but the config builds {} (model.name)", file,
               trained_model.empty() ? "unknown" : trained_model, nn::model_kind_name(ctx.config.model.kind));
  if (meta.contains("dataset")) {
    const json& d = meta["dataset"];
    STRATA_CHECK(d.value("multilabel", false) == ctx.data.multilabel(),
                 "checkpoint '{}' was trained on {}-label classes of '{}', but the config's dataset '{}' has {}-label "
                 "classes",
                 file, d.value("multilabel", false) ? "multi" : "single", d.value("name", std::string("?")),
                 ctx.data.name, ctx.data.multilabel() ? "multi" : "single");
    STRATA_CHECK(d.value("nodes", int64_t{-1}) == ctx.data.num_nodes() && d.value("classes", int64_t{-1}) == ctx.data.num_classes,
                 "checkpoint '{}' was trained on '{}' ({} nodes, {} classes), but the config loads '{}' ({} nodes, {} "
                 "classes)",
                 file, d.value("name", std::string("?")), d.value("nodes", int64_t{-1}), d.value("classes", int64_t{-1}),
                 ctx.data.name, ctx.data.num_nodes(), ctx.data.num_classes);
  }
  // The split the checkpoint's run was evaluated on (data.split.per_run: its own).
  const int run = meta.value("run", 1);
  ctx.data.splits = split_for_run(ctx.data, ctx.config.data, config.source(), run);
  check_metric_defined(ctx.metric, ctx.data.labels, ctx.data.splits, metric_origin(config, ctx.data.eval_metric),
                       ctx.data.name);
  if (meta.contains("split_seed") && !ctx.data.split_is_fixed()) {
    const uint64_t trained = meta["split_seed"].get<uint64_t>();
    const uint64_t here = ctx.config.data.split.seed_for_run(run);
    STRATA_CHECK(trained == here,
                 "checkpoint '{}' (run {}) was trained and tested on the split of seed {}, but the config gives run {} "
                 "the split of seed {} (data.split.seed {}, data.split.per_run {}); evaluate with the config the run "
                 "dir holds (config.yaml)",
                 file, run, trained, run, here, ctx.config.data.split.seed, ctx.config.data.split.per_run);
  }
  // A split file edited since training would silently evaluate other nodes.
  if (meta.contains("split_origin") && ctx.data.split_kind == SplitKind::File)
    STRATA_CHECK(meta["split_origin"].get<std::string>() == ctx.data.splits.origin,
                 "checkpoint '{}' was trained on the split of {}, but data.split.file now gives {} (the file changed); "
                 "evaluate on the run dir's split.json",
                 file, meta["split_origin"].get<std::string>(), ctx.data.splits.origin);
  nn::load_parameters(l.ck, state.model->parameters(), file);
  state.optimizer->load_state(l.ck.optimizer, file);
}

// The lines eval and infer print after their command line: data, model, checkpoint,
// runtime, kernels.
void print_restored(const Printer& print, const RestoredRun& l) {
  const Context& ctx = l.ctx;
  const RunState& state = *l.state;
  const json& meta = l.ck.meta;
  print(fmt::format("{:<11}{}: {} nodes, {} edges, features {}; split {}", "dataset", ctx.data.name,
                    commas(ctx.data.num_nodes()), commas(ctx.data.graph.nnz()), ctx.data.features_text,
                    ctx.data.splits.origin));
  print(fmt::format("{:<11}{}", "model", state.model->describe()));
  print(fmt::format("{:<11}run {}, seed {}, {} epoch {} ({} optimizer steps), backend {}", "checkpoint",
                    meta.value("run", 0), meta.value("seed", uint64_t{0}), meta.value("policy", std::string("best")),
                    epoch_str(meta.value("epoch", int64_t{0})), state.optimizer->steps(),
                    meta.value("backend", std::string("?"))));
  print_runtime(print, ctx.config);
  if (ctx.kernels) print_kernels(print, ctx.config, *ctx.kernels);
}

}  // namespace

namespace {
EvalReport evaluate_checkpoint(const Config& config, const fs::path& checkpoint, const Printer& print) {
  if (config.get_string("model.name") == "rgcn") return run_rgcn_evaluation(config, checkpoint, print);  // rgcn
  if (config.get_string("data.task") == "link") return run_link_evaluation(config, checkpoint, print);
  RestoredRun l;
  restore_run(l, config, checkpoint);
  l.ctx.build_kernels(*l.state->model, /*backward=*/false);
  print(fmt::format("strata eval {} --checkpoint {}", config.source(), checkpoint.string()));
  print_restored(print, l);
  const json& meta = l.ck.meta;
  EvalReport r;
  r.eval = evaluate(l.ctx, *l.state->model);
  r.recorded_test_acc = meta.value("test_acc", -1.0);
  r.recorded_logits_hash = meta.value("test_logits_hash", std::string());
  const Metric recorded = recorded_metric(meta, l.ctx.data.multilabel());
  r.identical = (recorded != l.ctx.metric || r.eval.test_acc == r.recorded_test_acc) &&
                r.eval.test_logits_hash == r.recorded_logits_hash;
  const char* metric = metric_name(l.ctx.metric);
  print(fmt::format("Train {} {:.4f} | val {} {:.4f} (loss {:.4f})", metric, r.eval.train_acc, metric, r.eval.val_acc,
                    r.eval.val_loss));
  print(fmt::format(
      "Test {} {:.4f} ({}): {}", metric, r.eval.test_acc,
      recorded_score_text(recorded, l.ctx.metric, r.recorded_test_acc),
      r.identical ? "reproduced bit for bit (test logits XXH3 " + r.eval.test_logits_hash.substr(0, 16) + ")"
                  : "DIFFERS from the recorded run (other threads, backend, feature storage, dataset or build?)"));
  return r;
}

InferReport infer_checkpoint(const Config& config, const InferOptions& o, const Printer& print) {
  if (config.get_string("model.name") == "rgcn") return run_rgcn_inference(config, o, print);  // rgcn
  if (config.get_string("data.task") == "link") return run_link_inference(config, o, print);
  STRATA_CHECK(o.pairs.empty(),
               "strata infer: --pairs scores node pairs with a link-prediction model, but {} trains a node "
               "classifier (data.task: {}); --batch names the nodes to classify",
               config.source(), config.get_string("data.task"));
  RestoredRun l;
  restore_run(l, config, o.checkpoint);
  const TrainingData& d = l.ctx.data;
  const std::vector<int64_t> batch = read_node_batch(o.batch, d.num_nodes(), "the graph", o.names, d.node_names);
  const nn::GnnModel& model = *l.state->model;
  print(fmt::format("strata infer {} --checkpoint {} --batch {}{}{}", config.source(), o.checkpoint.string(), o.batch,
                    o.names ? " --names" : "", o.full_graph ? " --full-graph" : ""));
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  InferReport rep;
  // A batch file: the forward over the batch's receptive field alone (its L-hop
  // in-neighbourhood, every in-neighbour kept), whose logits for the batch are the
  // whole graph's up to rounding, unless the field is most of the graph.
  std::string whole_graph_reason = o.batch == "all" ? "every node" : o.full_graph ? "--full-graph" : "";
  if (whole_graph_reason.empty()) {
    Timer t;
    const ReceptiveField field = receptive_field(d.graph, batch, model.num_layers());
    if (2 * field.nodes() > d.num_nodes()) {
      whole_graph_reason = fmt::format("the batch's {}-hop in-neighbourhood holds {} of the {} nodes",
                                       model.num_layers(), commas(field.nodes()), commas(d.num_nodes()));
    } else {
      const BatchForward bound(l.ctx, model, field.batch, /*backward=*/false, /*whole_graph_degrees=*/true);
      print_restored(print, l);
      print_blocks(print, l.ctx.config, field.batch, bound);
      const Tensor logits = model.forward_blocks(tape, bound.kernel_ptrs, bound.num_dst, bound.input, 0).value();
      rep.build_ms = bound.build_ms();
      rep.compile_ms = bound.compile_ms();
      rep.tune_ms = bound.tune_ms();
      rep.infer_ms = t.ms() - rep.build_ms;  // sampling, gathering the input rows and the forward
      rep.forward = fmt::format("the batch's {}-hop in-neighbourhood, {} of {} nodes", model.num_layers(),
                                commas(field.nodes()), commas(d.num_nodes()));
      // The seeds' labels and test membership, in the logits' rows (a scan of the
      // test split against the seeds, not a flag per node of the graph).
      std::unordered_map<int64_t, int64_t> seed_row;
      for (size_t i = 0; i < field.seeds.size(); ++i) seed_row.emplace(field.seeds[i], static_cast<int64_t>(i));
      std::vector<int64_t> tests;
      for (int64_t k = 0; k < d.splits.test.numel(); ++k)
        if (const auto it = seed_row.find(d.splits.test.data<int64_t>()[k]); it != seed_row.end())
          tests.push_back(it->second);
      const Tensor seed_labels = d.labels.gather_rows(field.seeds);
      predict_batch(batch, field.rows, NodeScores(logits, seed_labels, d.num_classes, l.ctx.metric).predictions(),
                    seed_labels, Tensor::from_vector(tests), d.node_names, d.class_names, o.out, rep);
      print_inference(print, rep, "", d.num_nodes(), o.out);
      return rep;
    }
  }
  l.ctx.build_kernels(model, /*backward=*/false);
  print_restored(print, l);
  if (o.batch != "all") print(fmt::format("{:<11}over the whole graph: {}", "forward", whole_graph_reason));
  // One forward pass over the whole graph in eval mode, as `strata eval` runs it;
  // predictions are what its accuracy counts (the argmax; multi-label, positive logits).
  Timer t;
  const Tensor logits = model.forward(tape, *l.ctx.kernels, l.ctx.input(), 0).value();
  rep.infer_ms = t.ms();
  rep.build_ms = l.ctx.kernels->build_ms();
  rep.compile_ms = l.ctx.kernels->compile_ms();
  rep.tune_ms = l.ctx.kernels->tune_ms();
  predict_batch(batch, 0, NodeScores(logits, d.labels, d.num_classes, l.ctx.metric).predictions(), d.labels,
                d.splits.test, d.node_names, d.class_names, o.out, rep);
  print_inference(print, rep, "", d.num_nodes(), o.out);
  return rep;
}

// Options that cannot work together, refused before anything is loaded: --names and
// --full-graph without a file to apply to, and an --out path that is one of the
// command's own inputs (it would be replaced by the CSV).
void check_infer_options(const Config& config, const InferOptions& o) {
  const bool listed = o.batch != "all" || !o.pairs.empty();
  STRATA_CHECK(listed || !o.names,
               "strata infer: --names says how a --batch or --pairs file names its nodes, but neither is given "
               "(--batch all predicts every node)");
  STRATA_CHECK(listed || !o.full_graph,
               "strata infer: --full-graph runs a --batch or --pairs file over the whole graph, but neither is given "
               "(--batch all runs over the whole graph already)");
  if (o.out.empty() || o.out == "-") return;  // "-": standard output
  const fs::path out = output_file_path(o.out);
  const std::pair<fs::path, const char*> inputs[] = {{config.source(), "the config"},
                                                     {o.checkpoint, "the checkpoint"},
                                                     {o.batch == "all" ? "" : o.batch, "the --batch file"},
                                                     {o.pairs, "the --pairs file"}};
  for (const auto& [input, what] : inputs) {
    std::error_code ec;
    STRATA_CHECK(input.empty() || !fs::exists(out, ec) || !fs::equivalent(out, input, ec),
                 "strata infer: --out '{}' is {} ('{}'), which the predictions would replace; choose another path",
                 o.out, what, input.string());
  }
}

}  // namespace

EvalReport run_evaluation(const Config& config, const fs::path& checkpoint, const Printer& print) {
  EvalReport r;
  try {
    r = evaluate_checkpoint(config, checkpoint, print);
  } catch (const OutOfMemoryError& e) {
    rethrow_restored_out_of_memory(e, config, "eval", checkpoint);
  }
  if (!r.identical) {  // the runtime settings the run recorded, against this evaluation's
    const nlohmann::ordered_json meta = read_training_checkpoint(checkpoint).meta;
    std::vector<std::string> changes;
    const std::string backend = config.get_string("runtime.backend");
    if (meta.contains("backend") && meta["backend"] != backend)
      changes.push_back(fmt::format("backend {} (the run: {})", backend, meta["backend"].get<std::string>()));
    if (meta.contains("threads") && meta["threads"] != num_threads())
      changes.push_back(fmt::format("{} threads (the run: {})", num_threads(), meta["threads"].get<int>()));
    r.runtime_changes = fmt::format("{}", fmt::join(changes, ", "));
  }
  return r;
}

InferReport run_inference(const Config& config, const InferOptions& o, const Printer& print) {
  check_infer_options(config, o);
  try {
    return infer_checkpoint(config, o, print);
  } catch (const OutOfMemoryError& e) {
    rethrow_restored_out_of_memory(e, config, "infer", o.checkpoint);
  }
}

}  // namespace strata::train
