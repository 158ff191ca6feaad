#include "apps/training/link_prediction.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "apps/training/batch_forward.h"
#include "apps/training/data.h"
#include "apps/training/inference.h"
#include "apps/training/link_split.h"
#include "apps/training/resume_point.h"
#include "apps/training/roc_auc.h"
#include "apps/training/run_book.h"
#include "apps/training/run_checkpoint.h"
#include "apps/training/run_dir.h"
#include "apps/training/session_summary.h"
#include "core/autograd_ops.h"
#include "core/file_util.h"
#include "core/timer.h"
#include "datasets/text_fields.h"
#include "layers/pair_scores.h"
#include "models/link_predictor.h"

namespace strata::train {
namespace {

using json = nlohmann::ordered_json;

// What every run of a link-prediction session shares: the data (its num_classes is
// the embedding width, model.hidden: the encoder's output), the split, the
// metric, the full-graph kernels and the held-out pairs' kernels.
struct LinkContext {
  Context ctx;
  LinkSplit split;
  int64_t hits_k = 20;
  bool by_rocauc = false;  // training.metric: rocauc (else Hits@K)
  LabelledPairs val, test;
  std::unique_ptr<nn::PairKernels> val_kernels, test_kernels;
  std::unique_ptr<EdgeSet> training_edges;  // what training non-edges avoid

  int64_t width() const { return ctx.config.model.hidden; }
  std::string metric_name() const { return by_rocauc ? "ROC-AUC" : fmt::format("Hits@{}", hits_k); }
  std::string metric_key() const { return by_rocauc ? "rocauc" : fmt::format("hits@{}", hits_k); }
};

// A run's model (encoder and predictor), its optimizer over both, and its dropout and
// sampling streams.
struct LinkState {
  std::unique_ptr<nn::GnnModel> encoder;
  std::unique_ptr<nn::LinkPredictor> predictor;
  std::unique_ptr<nn::Optimizer> optimizer;
  Rng dropout{0};
  Rng sampler{0};  // step order and training non-edges

  LinkState(const Context& ctx, uint64_t seed) {
    const nn::ModelConfig& m = ctx.config.model;
    Rng base(seed);
    Rng init = base.fork(1);
    dropout = base.fork(2);
    sampler = base.fork(3);
    Rng predictor_init = base.fork(4);
    encoder = std::make_unique<nn::GnnModel>(m, ctx.data.in_features(), ctx.data.num_classes, init);
    predictor =
        std::make_unique<nn::LinkPredictor>(m.link.mlp ? nn::LinkPredictorKind::Mlp : nn::LinkPredictorKind::Dot,
                                            m.hidden, m.link.layers, m.dropout, predictor_init);
    optimizer = nn::make_optimizer(ctx.config.optimizer, parameters());
  }
  // The encoder's parameters, then the predictor's (the checkpoint's order).
  std::vector<nn::Parameter> parameters() const {
    std::vector<nn::Parameter> all = encoder->parameters();
    const auto& p = predictor->parameters();
    all.insert(all.end(), p.begin(), p.end());
    return all;
  }
  int64_t num_parameters() const { return encoder->num_parameters() + nn::count_parameters(predictor->parameters()); }
};

// training.link.hits_k, or the dataset's own K ("hits@20" from OGB's master.csv), else 20.
int64_t resolve_hits_k(int64_t configured, const std::string& eval_metric) {
  if (configured > 0) return configured;
  if (eval_metric.starts_with("hits@")) {
    try {
      const int64_t k = std::stoll(eval_metric.substr(5));
      if (k > 0) return k;
    } catch (const std::exception&) {
    }
  }
  return 20;
}

LinkContext prepare(const Config& config) {
  LinkContext lc;
  Context& ctx = lc.ctx;
  ctx.config = typed(config);
  const TrainingConfig& c = ctx.config;
  ctx.data = prepare_link_data(c.data, c.model.kind, config.source(), lc.split);
  ctx.data.num_classes = c.model.hidden;  // the encoder's output: embeddings of width model.hidden
  lc.hits_k = resolve_hits_k(c.training.link_hits_k, ctx.data.eval_metric);
  lc.by_rocauc = c.training.metric == "rocauc";
  if (!lc.by_rocauc)
    STRATA_CHECK(lc.split.val_negative.size() >= lc.hits_k && lc.split.test_negative.size() >= lc.hits_k,
                 "{}: Hits@{} ranks each held-out edge against the {}-th best non-edge, but the split has {} "
                 "validation and {} test non-edges; lower training.link.hits_k or raise data.link.val_ratio and "
                 "test_ratio",
                 config.source(), lc.hits_k, lc.hits_k, lc.split.val_negative.size(), lc.split.test_negative.size());
  const int64_t n = ctx.data.num_nodes();
  lc.training_edges = std::make_unique<EdgeSet>(ctx.data.graph);
  lc.val = labelled_pair_graph(n, lc.split.val, lc.split.val_negative);
  lc.test = labelled_pair_graph(n, lc.split.test, lc.split.test_negative);
  return lc;
}

void bind_held_out(LinkContext& lc, const nn::LinkPredictor& predictor) {
  const sc::Backend backend = lc.ctx.config.runtime.kernels.backend;
  lc.val_kernels = std::make_unique<nn::PairKernels>(
      nn::bind_pair_kernels(lc.val.pairs, lc.width(), backend, /*backward=*/false, predictor.pair_op()));
  lc.test_kernels = std::make_unique<nn::PairKernels>(
      nn::bind_pair_kernels(lc.test.pairs, lc.width(), backend, /*backward=*/false, predictor.pair_op()));
}

Tensor label_column(const std::vector<int64_t>& labels) {
  return Tensor::from_vector(labels).reshape({static_cast<int64_t>(labels.size()), 1});
}

// The scores of one held-out set of pairs, ranked.
struct PairEvaluation {
  double hits = 0, rocauc = 0, loss = 0;
  std::string hash;  // XXH3 of the scores in pair order
};

PairEvaluation rank_pairs(const nn::PairKernels& k, const LabelledPairs& lp, const nn::LinkPredictor& predictor,
                          const ag::Var& h, int64_t hits_k) {
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  const ag::Var scores = predictor.forward(tape, k, h, 0);
  const Tensor& s = scores.value();
  const float* sp = s.data<float>();
  std::vector<float> pos, neg;
  for (int64_t q = 0; q < k.num_pairs(); ++q) (lp.labels[q] == 1 ? pos : neg).push_back(sp[q]);
  PairEvaluation e;
  e.hits = static_cast<int64_t>(neg.size()) >= hits_k ? hits_at_k(pos, neg, hits_k) : 0.0;
  const Tensor index = Tensor::arange(k.num_pairs());
  const Tensor labels = label_column(lp.labels);
  e.rocauc = mean_roc_auc(s, labels, index).mean;
  e.loss = ag::bce_with_logits(tape, scores, labels, index).value().data<float>()[0];
  e.hash = logits_hash(s, index);
  return e;
}

struct LinkEvaluation {
  PairEvaluation val, test;
  double ms = 0;
};

LinkEvaluation evaluate_links(const LinkContext& lc, const LinkState& state) {
  Timer t;
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  const ag::Var h = state.encoder->forward(tape, *lc.ctx.kernels, lc.ctx.input(), 0);
  LinkEvaluation e;
  e.val = rank_pairs(*lc.val_kernels, lc.val, *state.predictor, h, lc.hits_k);
  e.test = rank_pairs(*lc.test_kernels, lc.test, *state.predictor, h, lc.hits_k);
  e.ms = t.ms();
  return e;
}

double score_of(const LinkContext& lc, const PairEvaluation& e) { return lc.by_rocauc ? e.rocauc : e.hits; }
// The score beside the selected one: "ROC-AUC 0.9285", or "Hits@20 0.0155" when runs select by ROC-AUC.
std::string other_score(const LinkContext& lc, const PairEvaluation& e) {
  return lc.by_rocauc ? fmt::format("Hits@{} {:.4f}", lc.hits_k, e.hits) : fmt::format("ROC-AUC {:.4f}", e.rocauc);
}

// One epoch: the training edges in steps, each with fresh non-edges.
StepResult train_link_epoch(const LinkContext& lc, LinkState& state, ag::Tape& tape, int run, int64_t epoch,
                            const std::string& where) {
  Timer t;
  const TrainingConfig& c = lc.ctx.config;
  const NodePairs& edges = lc.split.train;
  const int64_t m = edges.size();
  const int64_t step_edges = c.training.link_batch_pairs > 0 ? std::min(c.training.link_batch_pairs, m) : m;
  std::vector<int64_t> order;
  if (step_edges < m) order = state.sampler.permutation(m);
  StepResult r;
  double loss_sum = 0;
  for (int64_t begin = 0; begin < m; begin += step_edges) {
    const int64_t count = std::min(step_edges, m - begin);
    Timer sampling;
    NodePairs positive;
    positive.u.reserve(static_cast<size_t>(count));
    positive.v.reserve(static_cast<size_t>(count));
    for (int64_t k = begin; k < begin + count; ++k) {
      const int64_t e = order.empty() ? k : order[k];
      positive.push(edges.u[e], edges.v[e]);
    }
    const NodePairs negative =
        sample_non_edges(*lc.training_edges, count * c.training.link_negatives, state.sampler, where);
    const LabelledPairs lp = labelled_pair_graph(lc.ctx.data.num_nodes(), positive, negative);
    const nn::PairKernels pk = nn::bind_pair_kernels(lp.pairs, lc.width(), c.runtime.kernels.backend,
                                                     /*backward=*/true, state.predictor->pair_op());
    r.sample_ms += sampling.ms();
    tape.clear();
    tape.set_training(true);
    tape.set_grad_enabled(true);
    const uint64_t seed = state.dropout.next_u64();
    const ag::Var h = state.encoder->forward(tape, *lc.ctx.kernels, lc.ctx.input(), seed);
    const ag::Var s = state.predictor->forward(tape, pk, h, seed ^ 0x5bd1e995ULL);
    ag::Var loss;
    {
      ag::Tape::Scope scope(tape, "loss");
      loss = ag::bce_with_logits(tape, s, label_column(lp.labels), Tensor::arange(pk.num_pairs()));
    }
    const std::string batch = step_edges < m ? fmt::format(", step {}", begin / step_edges + 1) : "";
    loss_sum +=
        static_cast<double>(finite_loss(tape, loss, *state.optimizer, run, epoch, batch)) * static_cast<double>(count);
    r.optimizer_ms += step_optimizer(tape, loss, *state.optimizer);
    ++r.batches;
  }
  r.loss = loss_sum / static_cast<double>(m);
  r.ms = t.ms();
  return r;
}

void print_link_header(Console& out, const Config& config, const LinkContext& lc, const LinkState& state) {
  const TrainingConfig& c = lc.ctx.config;
  const TrainingData& d = lc.ctx.data;
  print_config_lines(out.printer(), config);
  out(fmt::format("{:<11}{} ({}), loaded in {:.1f} ms (cache: {})", "dataset", d.name, d.source, d.load.seconds * 1e3,
                  data::cache_status_name(d.load.cache)));
  const DegreeStats deg = d.graph.degree_stats();
  out(
      fmt::format("{:<11}{} nodes, {} message-passing edges; degree min {} / median {} / mean {:.2f} / max {}, {} "
                  "without edges",
                  "", commas(d.num_nodes()), commas(d.graph.nnz()), deg.min, deg.median, deg.mean, deg.max,
                  commas(deg.empty_rows)));
  out(fmt::format("{:<11}features {}; embeddings of width {}", "", d.features_text, lc.width()));
  out(fmt::format("{:<11}{}; {} non-edges per training edge every epoch; scored by {}{}", "", lc.split.origin(),
                  c.training.link_negatives, lc.metric_name(),
                  !lc.by_rocauc && c.training.link_hits_k == 0 && d.eval_metric.starts_with("hits@")
                      ? " (the dataset's own: OGB's master.csv)"
                      : ""));
  for (const std::string& note : d.notes) out(fmt::format("{:<11}{}", "", note));
  out(fmt::format("{:<11}{}", "model", state.encoder->describe()));
  out(fmt::format("{:<11}{}", "predictor", state.predictor->describe()));
  out(fmt::format("{:<11}{}{}", "optimizer", nn::make_optimizer(c.optimizer, state.parameters())->describe(),
                  c.optimizer.schedule.describe(c.training.epochs)));
  print_runtime([&out](const std::string& line) { out(line); }, c);
  print_kernels([&out](const std::string& line) { out(line); }, c, *lc.ctx.kernels);
  out(fmt::format("{:<11}{}", "",
                  c.model.link.mlp
                      ? (c.runtime.kernels.backend == sc::Backend::Generated
                             ? "pair products: a per-head SDDMM (one head per feature) and, for training, two "
                               "per-head aggregations over each step's pairs and their transpose, bound per step"
                             : "pair products: plain loops over each step's pairs and their transpose (reference)")
                      : "pair scores: the SDDMM (dot) and, for training, two weighted SpMMs over each step's pairs "
                        "and their transpose, plan templates bound per step"));
}

// link_split.json: the held-out edges and non-edges (the training edges are the
// graph's other undirected edges), so another implementation can score the same pairs
// (benchmarks/reference/link_pyg.py).
std::string split_json(const LinkSplit& s) {
  auto pairs = [](const NodePairs& p) { return json{{"u", p.u}, {"v", p.v}}; };
  const json j = {{"seed", s.seed},        {"train_edges", s.train.size()},
                  {"val", pairs(s.val)},   {"val_negative", pairs(s.val_negative)},
                  {"test", pairs(s.test)}, {"test_negative", pairs(s.test_negative)}};
  return j.dump() + "\n";
}

json evaluation_json(const PairEvaluation& e) { return {{"hits", e.hits}, {"rocauc", e.rocauc}, {"loss", e.loss}}; }

struct LinkRun {
  int run = 0;
  uint64_t seed = 0;
  int64_t best_epoch = 0, epochs = 0;
  bool stopped_early = false;
  LinkEvaluation best;
  double mean_epoch_ms = 0, median_epoch_ms = 0, train_ms = 0, optimizer_ms = 0, sample_ms = 0;
  ag::OpProfile profile;
  std::string checkpoint;
};

// A run as summary.json's "runs" and the console's summary read it.
RunResult run_result(const LinkContext& lc, const LinkRun& rr) {
  RunResult r;
  r.run = rr.run;
  r.seed = rr.seed;
  r.split_seed = lc.split.seed;
  r.best_epoch = rr.best_epoch;
  r.epochs = rr.epochs;
  r.stopped_early = rr.stopped_early;
  r.best.val_acc = score_of(lc, rr.best.val);
  r.best.test_acc = score_of(lc, rr.best.test);
  r.best.val_loss = rr.best.val.loss;
  r.best.test_logits_hash = rr.best.test.hash;
  r.mean_epoch_ms = rr.mean_epoch_ms;
  r.median_epoch_ms = rr.median_epoch_ms;
  r.profile = rr.profile;
  r.optimizer_ms = rr.optimizer_ms;
  r.train_ms = rr.train_ms;
  r.checkpoint = rr.checkpoint;
  return r;
}

// Evaluations and finished runs as a resume point keeps them (resume_point.h), and back.
json pair_evaluation_state(const PairEvaluation& e) {
  return {
      {"hits", exact_json(e.hits)}, {"rocauc", exact_json(e.rocauc)}, {"loss", exact_json(e.loss)}, {"hash", e.hash}};
}

PairEvaluation pair_evaluation_from_state(const nlohmann::json& j, const std::string& file) {
  PairEvaluation e;
  e.hits = exact_double(j, "hits", file);
  e.rocauc = exact_double(j, "rocauc", file);
  e.loss = exact_double(j, "loss", file);
  STRATA_CHECK(j.contains("hash") && j["hash"].is_string(), "resume point '{}': a link evaluation has no 'hash'", file);
  e.hash = j["hash"].get<std::string>();
  return e;
}

json link_evaluation_state(const LinkEvaluation& e) {
  return {{"val", pair_evaluation_state(e.val)}, {"test", pair_evaluation_state(e.test)}, {"ms", exact_json(e.ms)}};
}

LinkEvaluation link_evaluation_from_state(const nlohmann::json& j, const std::string& file) {
  STRATA_CHECK(j.is_object() && j.contains("val") && j.contains("test"),
               "resume point '{}': a link evaluation is malformed (expected 'val' and 'test')", file);
  LinkEvaluation e;
  e.val = pair_evaluation_from_state(j["val"], file);
  e.test = pair_evaluation_from_state(j["test"], file);
  e.ms = exact_double(j, "ms", file);
  return e;
}

// A finished run: what node runs keep (run_result_state), its link evaluations and its sampling time.
json link_run_state(const LinkContext& lc, const LinkRun& rr) {
  return {{"result", run_result_state(run_result(lc, rr))},
          {"best", link_evaluation_state(rr.best)},
          {"sample_ms", exact_json(rr.sample_ms)}};
}

LinkRun link_run_from_state(const nlohmann::json& j, const std::string& file) {
  STRATA_CHECK(j.is_object() && j.contains("result") && j.contains("best"),
               "resume point '{}' is malformed: a finished link run has no result", file);
  const RunResult r = run_result_from_state(j["result"], file);
  LinkRun rr;
  rr.run = r.run;
  rr.seed = r.seed;
  rr.best_epoch = r.best_epoch;
  rr.epochs = r.epochs;
  rr.stopped_early = r.stopped_early;
  rr.best = link_evaluation_from_state(j["best"], file);
  rr.mean_epoch_ms = r.mean_epoch_ms;
  rr.median_epoch_ms = r.median_epoch_ms;
  rr.train_ms = r.train_ms;
  rr.optimizer_ms = r.optimizer_ms;
  rr.sample_ms = exact_double(j, "sample_ms", file);
  rr.profile = r.profile;
  rr.checkpoint = r.checkpoint;
  return rr;
}

}  // namespace

Summary run_link_training(const Config& config, const std::string& config_name, const Printer& print, bool resume,
                          LoopPosition& position) {
  TrainingConfig typed_config = typed(config);
  Console out{print};
  OpenedRunDir opened = start_training_session(config, typed_config, config_name, out, resume);
  RunDirectory& dir = *opened.dir;
  std::optional<ResumePoint>& resumed = opened.resumed;
  LinkContext lc = prepare(config);
  position.nodes = lc.ctx.data.num_nodes();
  position.remedy = ", or score fewer pairs per step (training.link.batch_pairs)";
  const TrainingConfig& c = lc.ctx.config;
  const std::string where = config.source();
  LinkState first(lc.ctx, c.training.seed);
  const bool replay_tuned = replay_interrupted_session_plans(dir, lc.ctx.config.runtime.kernels, resumed.has_value());
  lc.ctx.build_kernels(*first.encoder, /*backward=*/true);
  if (replay_tuned)
    lc.ctx.kernels->set_note(replayed_plans_note(fmt::format("{} plans", lc.ctx.kernels->records().size())));
  bind_held_out(lc, *first.predictor);
  print_link_header(out, config, lc, first);
  const std::string model_text = first.encoder->describe() + "; predictor " + first.predictor->describe();
  const int64_t model_parameters = first.num_parameters();
  out(fmt::format("{:<11}{}", "run dir", dir.final_path().string()));
  write_kernels_json(dir, kernels_json(*lc.ctx.kernels), replay_tuned);
  dir.write("link_split.json", split_json(lc.split));

  Summary summary;
  summary.run_dir = dir.final_path().string();
  std::vector<LinkRun> runs;
  ResumeRecorder recorder(dir, config, out, c.output.resume_every);
  std::optional<RunProgress> current;  // the run in progress at the resume point
  auto finished = [&](LinkRun rr) {
    summary.runs.push_back(run_result(lc, rr));
    runs.push_back(std::move(rr));
  };
  if (resumed) {
    ResumedRuns from = resumed_runs(*resumed);
    for (const json& entry : from.finished) finished(link_run_from_state(entry, resumed->file));
    recorder.restore_finished(std::move(from.finished));
    current = std::move(from.current);
  }

  for (int run = static_cast<int>(runs.size()) + 1; run <= c.training.runs; ++run) {
    const uint64_t seed = c.training.seed + static_cast<uint64_t>(run - 1);
    position.run = run;
    position.epoch = 0;
    LinkState state = run == 1 ? std::move(first) : LinkState(lc.ctx, seed);
    const bool continuing = current.has_value();
    if (c.training.runs > 1 && !continuing) out(fmt::format("Run {}/{} (seed {})", run, c.training.runs, seed));
    RunBook book(c, run, seed);
    LinkEvaluation best, last;
    if (continuing) {  // the run in progress at the resume point, restored
      best = link_evaluation_from_state(current->best, resumed->file);
      last = link_evaluation_from_state(current->last, resumed->file);
      book.resume(*current, *resumed, state.dropout, &state.sampler, state.parameters(), *state.optimizer, out);
      current.reset();
    }
    for (int64_t epoch = book.first_epoch(); epoch <= c.training.epochs; ++epoch) {
      state.optimizer->set_lr(c.optimizer.schedule.lr_at(c.optimizer.lr, epoch, c.training.epochs));
      position.epoch = epoch;
      position.phase = "training";
      const StepResult step = train_link_epoch(lc, state, book.tape(), run, epoch, where);
      book.add_epoch(step.ms, step.optimizer_ms, step.sample_ms);
      json m = {{"run", run},          {"epoch", epoch},        {"loss", step.loss},
                {"epoch_ms", step.ms}, {"steps", step.batches}, {"sample_ms", step.sample_ms}};
      if (c.optimizer.schedule.kind != nn::LrScheduleKind::Constant) m["lr"] = state.optimizer->lr();
      const bool eval_now = book.evaluates_after(epoch);
      if (eval_now) {
        position.phase = "evaluation";
        last = evaluate_links(lc, state);
        m["val"] = evaluation_json(last.val);
        m["test"] = evaluation_json(last.test);
        m["eval_ms"] = last.ms;
        if (book.offer(epoch, score_of(lc, last.val), last.val.loss, state.parameters(), state.optimizer.get()))
          best = last;
      }
      dir.append_metrics(m.dump());
      if (c.output.log_every > 0 && epoch % c.output.log_every == 0)
        out(fmt::format("Epoch {} | loss {:.4f} | {} | {:.2f} ms", epoch_str(epoch), step.loss,
                        book.best_epoch() == 0 ? "not evaluated yet"  // the first evaluation comes at eval_period
                                               : fmt::format("val {} {:.4f} ({})", lc.metric_name(),
                                                             score_of(lc, last.val), other_score(lc, last.val)),
                        step.ms));
      if (book.end_epoch(epoch, eval_now, out.printer())) break;
      book.save_if_due(recorder, epoch, link_evaluation_state(best), link_evaluation_state(last), state.dropout,
                       &state.sampler, state.parameters(), *state.optimizer);
    }
    LinkRun rr;
    book.fill(rr);
    rr.sample_ms = book.sample_ms();
    rr.best = best;
    if (c.output.checkpoint != CheckpointPolicy::None) {
      const bool use_best = c.output.checkpoint == CheckpointPolicy::Best;
      const LinkEvaluation& at = use_best ? best : last;
      nn::Checkpoint ck;
      ck.meta = checkpoint_meta(config, c.runtime.kernels.backend,
                                {nn::model_kind_name(c.model.kind),
                                 model_text,
                                 {{"name", lc.ctx.data.name},
                                  {"nodes", lc.ctx.data.num_nodes()},
                                  {"in_features", lc.ctx.data.in_features()},
                                  {"embedding", lc.width()}},
                                 run,
                                 seed,
                                 use_best,
                                 use_best ? rr.best_epoch : rr.epochs,
                                 {{"val_acc", score_of(lc, at.val)},
                                  {"test_acc", score_of(lc, at.test)},
                                  {"val_loss", at.val.loss},
                                  {"val_rocauc", at.val.rocauc},
                                  {"test_rocauc", at.test.rocauc},
                                  {"test_scores_hash", at.test.hash}}});
      ck.meta["task"] = "link";
      ck.meta["metric"] = lc.metric_key();  // what val_acc and test_acc hold
      ck.meta["split_seed"] = lc.split.seed;
      ck.model = use_best ? book.best_params() : nn::snapshot_parameters(state.parameters());
      ck.optimizer = use_best ? book.best_optimizer() : state.optimizer->state();
      rr.checkpoint = write_run_checkpoint(dir, run, ck);
    }
    out(fmt::format(
        "Run {}/{}: best epoch {} | val {} {:.4f} | test {} {:.4f} ({}) | {} epochs{}, "
        "{:.2f} ms/epoch (median; {}; sampling and binding {:.0f} ms in all)",
        run, c.training.runs, epoch_str(rr.best_epoch), lc.metric_name(), score_of(lc, rr.best.val), lc.metric_name(),
        score_of(lc, rr.best.test), other_score(lc, rr.best.test), rr.epochs, rr.stopped_early ? " (early stop)" : "",
        rr.median_epoch_ms, time_shares(rr.profile, rr.train_ms), rr.sample_ms));
    recorder.finish_run(link_run_state(lc, rr));
    finished(std::move(rr));
  }
  summarize_runs(summary);
  std::vector<double> aucs;
  for (const LinkRun& r : runs) aucs.push_back(r.best.test.rocauc);
  const auto [auc_mean, auc_std] = mean_std(aucs);
  out(fmt::format("Test {} over {} run{}: {:.4f} ± {:.4f}{} (val {:.4f} ± {:.4f}); {:.2f} ms/epoch (median)",
                  lc.metric_name(), runs.size(), runs.size() == 1 ? "" : "s", summary.test_mean, summary.test_std,
                  lc.by_rocauc ? "" : fmt::format("; ROC-AUC {:.4f} ± {:.4f}", auc_mean, auc_std), summary.val_mean,
                  summary.val_std, summary.median_epoch_ms));

  json run_list = json::array();
  for (const LinkRun& r : runs)
    run_list.push_back({{"run", r.run},
                        {"seed", r.seed},
                        {"best_epoch", r.best_epoch},
                        {"epochs", r.epochs},
                        {"stopped_early", r.stopped_early},
                        {"val", evaluation_json(r.best.val)},
                        {"test", evaluation_json(r.best.test)},
                        {"test_scores_hash", r.best.test.hash},
                        {"mean_epoch_ms", r.mean_epoch_ms},
                        {"median_epoch_ms", r.median_epoch_ms},
                        {"sample_ms", r.sample_ms},
                        {"time", profile_json(r.profile, r.optimizer_ms, r.train_ms)},
                        {"checkpoint", r.checkpoint}});
  const TrainingData& d = lc.ctx.data;
  finish_session(dir, out,
                 summary_json(config, summary,
                              {.task = "link",
                               .dataset = {{"name", d.name},
                                           {"source", d.source},
                                           {"nodes", d.num_nodes()},
                                           {"message_passing_edges", d.graph.nnz()},
                                           {"features", d.features_text},
                                           {"split",
                                            {{"seed", lc.split.seed},
                                             {"train_edges", lc.split.train.size()},
                                             {"val_edges", lc.split.val.size()},
                                             {"test_edges", lc.split.test.size()}}}},
                               .model = model_text,
                               .num_parameters = model_parameters,
                               .runs = run_list,
                               .metric = lc.metric_key(),
                               .kernels = kernels_summary_json(*lc.ctx.kernels),
                               .second_score = SummaryParts::Score{"test_rocauc", auc_mean, auc_std}}));
  return summary;
}

namespace {

// A link-prediction checkpoint restored for `strata eval` and `strata infer`: the config's
// data with the checkpoint's split, its encoder and predictor, the forward kernels and
// the held-out pairs' kernels bound, after every check that the checkpoint belongs to
// the config; the lines both commands print after their command line. Filled in place:
// the bound kernels point into the data, which must not move afterwards.
struct RestoredLink {
  LinkContext lc;
  std::unique_ptr<LinkState> state;
  nn::Checkpoint ck;
};

// With `whole_graph_kernels`, the encoder's kernels for the whole graph and the
// held-out pairs' kernels are built (and printed); `strata infer` may build blocks'
// kernels instead.
void restore_link(RestoredLink& r, const Config& config, const std::filesystem::path& checkpoint,
                  const std::string& command, const Printer& print, bool whole_graph_kernels = true) {
  TrainingConfig c = typed(config);
  apply_runtime(c.runtime);
  r.ck = read_training_checkpoint(checkpoint);
  const std::string file = checkpoint.string();
  const json& meta = r.ck.meta;
  STRATA_CHECK(meta.value("task", std::string()) == "link",
               "checkpoint '{}' holds a node classifier, but the config trains link prediction (data.task: link); "
               "{} it with the config it was trained with (its run dir's config.yaml)",
               file, command);
  check_config_matches_checkpoint(config, meta, file);
  const uint64_t trained_seed = meta.value("split_seed", uint64_t{0});
  STRATA_CHECK(trained_seed == c.data.split.seed,
               "checkpoint '{}' was trained and tested on the link split of seed {}, but the config gives seed {} "
               "(data.split.seed, {}); use the config the run dir holds (config.yaml)",
               file, trained_seed, c.data.split.seed, config.origin("data.split.seed"));
  r.lc = prepare(config);
  LinkContext& lc = r.lc;
  const std::string trained_model = meta.value("model", std::string());
  STRATA_CHECK(trained_model == nn::model_kind_name(c.model.kind),
               "architecture mismatch: checkpoint '{}' holds a {} model, but the config builds {} (model.name)", file,
               trained_model.empty() ? "unknown" : trained_model, nn::model_kind_name(c.model.kind));
  const json& d = meta.contains("dataset") ? meta["dataset"] : json::object();
  STRATA_CHECK(d.value("nodes", int64_t{-1}) == lc.ctx.data.num_nodes(),
               "checkpoint '{}' was trained on '{}' ({} nodes), but the config loads '{}' ({} nodes)", file,
               d.value("name", std::string("?")), d.value("nodes", int64_t{-1}), lc.ctx.data.name,
               lc.ctx.data.num_nodes());
  r.state = std::make_unique<LinkState>(lc.ctx, c.training.seed);
  const LinkState& state = *r.state;
  nn::load_parameters(r.ck, state.parameters(), file);
  if (whole_graph_kernels) {
    lc.ctx.build_kernels(*state.encoder, /*backward=*/false);
    bind_held_out(lc, *state.predictor);
  }
  print(fmt::format("strata {} {} --checkpoint {}", command, config.source(), file));
  print(fmt::format("{:<11}{}: {} nodes, {} message-passing edges, features {}; {}", "dataset", lc.ctx.data.name,
                    commas(lc.ctx.data.num_nodes()), commas(lc.ctx.data.graph.nnz()), lc.ctx.data.features_text,
                    lc.split.origin()));
  print(fmt::format("{:<11}{}", "model", state.encoder->describe()));
  print(fmt::format("{:<11}{}", "predictor", state.predictor->describe()));
  print(fmt::format("{:<11}run {}, seed {}, {} epoch {}, backend {}", "checkpoint", meta.value("run", 0),
                    meta.value("seed", uint64_t{0}), meta.value("policy", std::string("best")),
                    epoch_str(meta.value("epoch", int64_t{0})), meta.value("backend", std::string("?"))));
  print_runtime(print, lc.ctx.config);
  if (lc.ctx.kernels) print_kernels(print, lc.ctx.config, *lc.ctx.kernels);
}

}  // namespace

EvalReport run_link_evaluation(const Config& config, const std::filesystem::path& checkpoint, const Printer& print) {
  RestoredLink restored;
  restore_link(restored, config, checkpoint, "eval", print);
  const LinkContext& lc = restored.lc;
  const LinkState& state = *restored.state;
  const json& meta = restored.ck.meta;
  const LinkEvaluation e = evaluate_links(lc, state);
  EvalReport r;
  r.eval.val_acc = score_of(lc, e.val);
  r.eval.test_acc = score_of(lc, e.test);
  r.eval.val_loss = e.val.loss;
  r.eval.test_loss = e.test.loss;
  r.eval.test_logits_hash = e.test.hash;
  r.eval.ms = e.ms;
  r.recorded_test_acc = meta.value("test_acc", -1.0);
  r.recorded_logits_hash = meta.value("test_scores_hash", std::string());
  const bool same_metric = meta.value("metric", std::string()) == lc.metric_key();
  r.identical =
      (!same_metric || r.eval.test_acc == r.recorded_test_acc) && r.eval.test_logits_hash == r.recorded_logits_hash;
  print(fmt::format("Val {} {:.4f} ({}, loss {:.4f})", lc.metric_name(), r.eval.val_acc, other_score(lc, e.val),
                    e.val.loss));
  print(fmt::format("Test {} {:.4f} ({}; {}): {}", lc.metric_name(), r.eval.test_acc, other_score(lc, e.test),
                    same_metric ? fmt::format("recorded {:.4f}", r.recorded_test_acc)
                                : fmt::format("the run recorded {} {:.4f}", meta.value("metric", std::string("?")),
                                              r.recorded_test_acc),
                    r.identical ? "reproduced bit for bit (test scores XXH3 " + e.test.hash.substr(0, 16) + ")"
                                : "DIFFERS from the recorded run (other threads, backend, dataset or build?)"));
  return r;
}

namespace {

// The pairs of a --pairs file: "u v" or "u,v" per line, '#' starts a comment, blank
// lines skipped; with `by_name`, node names (as the dataset writes them: DrugBank
// ids) instead of ids. A bad line is a UserError naming the file and line.
NodePairs read_pairs(const std::string& file, int64_t nodes, bool by_name, const std::vector<std::string>& names) {
  STRATA_CHECK(!by_name || !names.empty(),
               "--names: the graph has no node names (its files number the nodes 0..{}); list node ids in '{}'",
               nodes - 1, file);
  std::unordered_map<std::string, int64_t> id_of;
  if (by_name)
    for (size_t i = 0; i < names.size(); ++i) id_of.emplace(names[i], static_cast<int64_t>(i));
  const char* hint = names.empty() ? "" : "; --names reads node names (DrugBank ids, paper ids) instead";
  std::error_code ec;
  STRATA_CHECK(!fs::is_directory(file, ec), "--pairs '{}' is a folder (expected a file of node pairs 'u v' or 'u,v')",
               file);
  std::ifstream in(file);
  STRATA_CHECK(in.good(), "--pairs '{}': cannot read the file (expected node pairs 'u v' or 'u,v', one per line)",
               file);
  NodePairs pairs;
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    if (lineno == 1) line = std::string(data::without_byte_order_mark(line));
    if (const size_t h = line.find('#'); h != std::string::npos) line.resize(h);
    STRATA_CHECK(std::count(line.begin(), line.end(), ',') <= 1,
                 "{}:{}: expected a node pair 'u v' or 'u,v' (one comma at most), got '{}'", file, lineno,
                 data::excerpt(line));
    for (char& ch : line)
      if (ch == ',' || ch == '\t' || ch == '\r') ch = ' ';
    std::vector<std::string> tokens;
    for (size_t at = 0; at < line.size();) {
      while (at < line.size() && line[at] == ' ') ++at;
      if (at == line.size()) break;
      const size_t end = std::min(line.find(' ', at), line.size());
      tokens.push_back(line.substr(at, end - at));
      at = end;
    }
    if (tokens.empty()) continue;
    STRATA_CHECK(tokens.size() == 2, "{}:{}: expected a node pair 'u v' or 'u,v' (two {}), got '{}'", file, lineno,
                 by_name ? "names" : "integers", data::excerpt(line));
    int64_t ids[2];
    for (int k = 0; k < 2; ++k) {
      const std::string& t = tokens[static_cast<size_t>(k)];
      if (by_name) {
        const auto it = id_of.find(t);
        STRATA_CHECK(it != id_of.end(), "{}:{}: no node of the graph is named '{}'", file, lineno, data::excerpt(t));
        ids[k] = it->second;
        continue;
      }
      const auto r = std::from_chars(t.data(), t.data() + t.size(), ids[k]);
      STRATA_CHECK(r.ec == std::errc() && r.ptr == t.data() + t.size(),
                   "{}:{}: expected a node pair 'u v' or 'u,v' (two integers), got '{}'{}", file, lineno,
                   data::excerpt(line), hint);
      STRATA_CHECK(ids[k] >= 0 && ids[k] < nodes,
                   "{}:{}: node id {} is out of range: the graph has {} nodes (ids 0..{}){}", file, lineno, ids[k],
                   nodes, nodes - 1, hint);
    }
    pairs.push(ids[0], ids[1]);
  }
  STRATA_CHECK(pairs.size() > 0, "{}: no node pairs ('u v' or 'u,v' per line; '#' starts a comment)", file);
  return pairs;
}

}  // namespace

InferReport run_link_inference(const Config& config, const InferOptions& o, const Printer& print) {
  STRATA_CHECK(!o.pairs.empty(),
               "strata infer: {} trains link prediction (data.task: link): name the node pairs to score with --pairs "
               "FILE ('u v' per line)",
               config.source());
  STRATA_CHECK(o.batch == "all",
               "strata infer: --batch names nodes to classify, but {} trains link prediction; --pairs names the "
               "pairs to score",
               config.source());
  RestoredLink restored;
  restore_link(restored, config, o.checkpoint, "infer", print, /*whole_graph_kernels=*/false);
  LinkContext& lc = restored.lc;
  const LinkState& state = *restored.state;
  const nn::GnnModel& encoder = *state.encoder;
  const int64_t n = lc.ctx.data.num_nodes();
  const NodePairs pairs = read_pairs(o.pairs, n, o.names, lc.ctx.data.node_names);
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  InferReport report;
  // The pairs' endpoints need embeddings, which their receptive field gives (every
  // in-neighbour within the encoder's layers) unless it is most of the graph.
  std::string whole_graph_reason = o.full_graph ? "--full-graph" : "";
  std::optional<ReceptiveField> field;
  std::optional<BatchForward> bound;
  Timer t;
  if (whole_graph_reason.empty()) {
    std::vector<int64_t> endpoints;
    endpoints.reserve(static_cast<size_t>(2 * pairs.size()));
    for (int64_t i = 0; i < pairs.size(); ++i) {
      endpoints.push_back(pairs.u[i]);
      endpoints.push_back(pairs.v[i]);
    }
    field.emplace(receptive_field(lc.ctx.data.graph, endpoints, encoder.num_layers()));
    if (2 * field->nodes() > n) {
      whole_graph_reason = fmt::format("the pairs' {}-hop in-neighbourhood holds {} of the {} nodes",
                                       encoder.num_layers(), commas(field->nodes()), commas(n));
      field.reset();
    }
  }
  ag::Var h;
  NodePairs scored = pairs;  // in the embeddings' rows
  int64_t rows = n;
  if (field) {
    bound.emplace(lc.ctx, encoder, field->batch, /*backward=*/false, /*whole_graph_degrees=*/true);
    print_blocks(print, lc.ctx.config, field->batch, *bound);
    h = encoder.forward_blocks(tape, bound->kernel_ptrs, bound->num_dst, bound->input, 0);
    for (int64_t i = 0; i < pairs.size(); ++i) {
      scored.u[i] = field->rows[static_cast<size_t>(2 * i)];
      scored.v[i] = field->rows[static_cast<size_t>(2 * i + 1)];
    }
    rows = static_cast<int64_t>(field->seeds.size());
    report.build_ms = bound->build_ms();
    report.compile_ms = bound->compile_ms();
    report.forward = fmt::format("the pairs' {}-hop in-neighbourhood, {} of {} nodes", encoder.num_layers(),
                                 commas(field->nodes()), commas(n));
  } else {
    lc.ctx.build_kernels(encoder, /*backward=*/false);
    print_kernels(print, lc.ctx.config, *lc.ctx.kernels);
    print(fmt::format("{:<11}over the whole graph: {}", "forward", whole_graph_reason));
    t.reset();  // the whole graph's kernels are built apart
    h = encoder.forward(tape, *lc.ctx.kernels, lc.ctx.input(), 0);
    report.build_ms = lc.ctx.kernels->build_ms();
    report.compile_ms = lc.ctx.kernels->compile_ms();
    report.forward = fmt::format("all {} nodes", commas(n));
  }
  // One pair graph of the pairs in file order: CSR positions map back through the edge ids.
  CooOptions co;
  co.source = o.pairs;
  const Graph g = Graph::from_coo(rows, rows, Tensor::from_vector(scored.u), Tensor::from_vector(scored.v), co);
  const Tensor position_of = g.edge_ids();  // file index of each CSR position
  const nn::PairKernels k =
      nn::bind_pair_kernels(g, lc.width(), lc.ctx.config.runtime.kernels.backend, false, state.predictor->pair_op());
  const Tensor s = state.predictor->forward(tape, k, h, 0).value();
  std::vector<float> score(static_cast<size_t>(pairs.size()));
  for (int64_t q = 0; q < k.num_pairs(); ++q) score[position_of.data<int64_t>()[q]] = s.data<float>()[q];
  report.infer_ms = t.ms() - (field ? report.build_ms : 0.0);  // the blocks' kernels are bound inside
  report.predicted = pairs.size();
  // What the pair is in the run's split: a training edge, a held-out edge, or neither.
  const EdgeSet val(symmetric_pair_graph(n, lc.split.val)), test(symmetric_pair_graph(n, lc.split.test));
  int64_t known[4] = {0, 0, 0, 0};  // train, val, test, none
  double probability_sum = 0;
  const std::vector<std::string>& names = lc.ctx.data.node_names;
  const auto name_of = [&names](int64_t v) {
    return v < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(v)] : std::string();
  };
  std::string csv = "u,v,score,probability,known,u_name,v_name\n";
  for (int64_t i = 0; i < pairs.size(); ++i) {
    const int64_t u = pairs.u[i], v = pairs.v[i];
    const int kind = u != v && lc.training_edges->has(u, v) ? 0 : val.has(u, v) ? 1 : test.has(u, v) ? 2 : 3;
    ++known[kind];
    const double z = score[i];
    const double p = z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
    probability_sum += p;
    static const char* kKnown[] = {"train", "val", "test", ""};
    csv += fmt::format("{},{},{:.6g},{:.6f},{},{},{}\n", u, v, score[i], p, kKnown[kind], csv_quote(name_of(u)),
                       csv_quote(name_of(v)));
  }
  write_csv_output(o.out, csv);
  print(fmt::format(
      "Scored {} pairs in {:.1f} ms (forward over {}; kernels built in {:.1f} ms, compiler {:.1f} ms): {} training "
      "edges, {} validation and {} test edges, {} others; mean probability {:.4f}",
      commas(pairs.size()), report.infer_ms, report.forward, report.build_ms, report.compile_ms, commas(known[0]),
      commas(known[1]), commas(known[2]), commas(known[3]), probability_sum / static_cast<double>(pairs.size())));
  print(o.out.empty() ? std::string("Scores not written (--out FILE writes u,v,score,probability,known,u_name,v_name)")
                      : fmt::format("Scores written to {}", o.out == "-" ? "standard output" : o.out));
  return report;
}

}  // namespace strata::train
