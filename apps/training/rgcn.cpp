#include "apps/training/rgcn.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "apps/training/data.h"
#include "apps/training/resume_point.h"
#include "apps/training/run_book.h"
#include "apps/training/run_checkpoint.h"
#include "apps/training/run_dir.h"
#include "apps/training/session_summary.h"
#include "apps/training/split_file.h"
#include "core/autograd_ops.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/parallel.h"
#include "core/timer.h"
#include "datasets/splits.h"

namespace strata::train {
namespace {

using json = nlohmann::ordered_json;

Tensor shifted(const Tensor& ids, int64_t offset) {
  if (!ids.defined()) return ids;
  std::vector<int64_t> v(static_cast<size_t>(ids.numel()));
  for (int64_t i = 0; i < ids.numel(); ++i) v[i] = ids.data<int64_t>()[i] + offset;
  return Tensor::from_vector(v);
}

json meta_graph(const RgcnData& d) {
  json types = json::array();
  for (size_t t = 0; t < d.type_names.size(); ++t)
    types.push_back({{"name", d.type_names[t]}, {"count", d.type_offsets[t + 1] - d.type_offsets[t]}});
  return {{"name", d.name},
          {"nodes", d.num_nodes()},
          {"classes", d.num_classes},
          {"multilabel", d.multilabel()},
          {"target_type", d.type_names[static_cast<size_t>(d.target_type)]},
          {"node_types", types},
          {"relations", d.relation_names}};
}

// Checks a checkpoint's recorded graph against the loaded one, naming what differs.
void check_checkpoint_graph(const json& meta, const RgcnData& d, const std::string& file) {
  const std::string model = meta.value("model", std::string());
  STRATA_CHECK(model == "rgcn",
               "checkpoint '{}' holds a {} model, but the config builds rgcn (model.name); use the config the "
               "checkpoint was trained with",
               file, model.empty() ? "unknown" : model);
  STRATA_CHECK(meta.contains("graph"), "checkpoint '{}' records no graph (not written by an rgcn run)", file);
  const json& g = meta["graph"];
  std::vector<std::string> rels = g.value("relations", std::vector<std::string>{});
  std::vector<std::string> missing, extra;
  for (const auto& r : rels)
    if (std::find(d.relation_names.begin(), d.relation_names.end(), r) == d.relation_names.end()) missing.push_back(r);
  for (const auto& r : d.relation_names)
    if (std::find(rels.begin(), rels.end(), r) == rels.end()) extra.push_back(r);
  auto first = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 3; ++i) s += (i ? ", " : "") + v[i];
    if (v.size() > 3) s += fmt::format(" and {} more", v.size() - 3);
    return s;
  };
  STRATA_CHECK(missing.empty() && extra.empty(),
               "checkpoint '{}' was trained on '{}' with {} relations, the config's graph '{}' has {}: {}{}{}", file,
               g.value("name", std::string("?")), rels.size(), d.name, d.relation_names.size(),
               missing.empty() ? "" : fmt::format("relations in the checkpoint that the graph lacks: {}", first(missing)),
               !missing.empty() && !extra.empty() ? "; " : "",
               extra.empty() ? "" : fmt::format("relations of the graph the checkpoint lacks: {}", first(extra)));
  STRATA_CHECK(rels == d.relation_names, "checkpoint '{}': the graph's relations are in another order than at training",
               file);
  STRATA_CHECK(
      g.value("multilabel", false) == d.multilabel(),
      "checkpoint '{}' was trained on {}-label classes of '{}', but the config's graph '{}' has {}-label classes", file,
      g.value("multilabel", false) ? "multi" : "single", g.value("name", std::string("?")), d.name,
      d.multilabel() ? "multi" : "single");
  STRATA_CHECK(g.value("nodes", int64_t{-1}) == d.num_nodes() && g.value("classes", int64_t{-1}) == d.num_classes,
               "checkpoint '{}' was trained on '{}' ({} nodes, {} classes), but the config loads '{}' ({} nodes, {} "
               "classes)",
               file, g.value("name", std::string("?")), g.value("nodes", int64_t{-1}), g.value("classes", int64_t{-1}),
               d.name, d.num_nodes(), d.num_classes);
}

}  // namespace

RgcnData prepare_rgcn_data(const DataConfig& c, const nn::ModelConfig& m, const std::string& config_source) {
  RgcnData d;
  data::Dataset ds = load_configured_dataset(c, config_source, &d.load);
  d.name = ds.name;
  d.source = ds.source;
  d.eval_metric = ds.eval_metric;
  d.notes = ds.notes;
  STRATA_CHECK(ds.is_hetero(),
               "{}: model.name is rgcn, but dataset '{}' is not a heterograph (no typed relations; loaded as {}); use "
               "graphsage, gcn or gat, or an RDF / HGB dataset",
               config_source, c.dataset, ds.format);
  STRATA_CHECK((ds.task == data::Task::NodeClassification || ds.task == data::Task::MultiLabelNodeClassification) &&
                   ds.labels.defined(),
               "{}: dataset '{}' has no node classes (task: {}); rgcn trains entity classifiers", config_source,
               c.dataset, data::task_name(ds.task));
  const HeteroGraph& h = *ds.hetero;
  d.type_offsets.push_back(0);
  for (const NodeType& t : h.node_types()) {
    d.type_names.push_back(t.name);
    d.type_offsets.push_back(d.type_offsets.back() + t.count);
  }
  d.target_type = ds.target_node_type;
  STRATA_CHECK(d.target_type >= 0 && d.target_type < h.num_node_types(), "{}: dataset '{}' names no target node type",
               config_source, c.dataset);
  d.graph = sc::RelationalGraph::from_hetero(h, sc::RgmsNormalization::RightByRelation);
  d.relation_names = d.graph->relation_names;

  // Per-type input.
  for (int t = 0; t < h.num_node_types(); ++t) {
    nn::RgcnTypeInput in;
    in.name = d.type_names[t];
    in.count = h.node_types()[t].count;
    const bool use = !m.rgcn.target_features_only || t == d.target_type;
    if (t < static_cast<int>(ds.type_features.size()) && ds.type_features[t].defined() && use) {
      const data::FeatureMatrix& f = ds.type_features[t];
      in.feat_dim = f.cols();
      // Stored as data.feature_storage and data.normalize_features say, as for the GNNs.
      StoredFeatures sf = store_features(f, c);
      if (sf.sparse) {
        d.sparse.push_back(std::move(*sf.sparse));
        in.sparse = &d.sparse.back();
      } else {
        in.dense = sf.dense;
      }
      d.notes.push_back(fmt::format("type {}: {} features ({}{}), projected", in.name, f.cols(),
                                    in.sparse ? "sparse" : "dense", c.normalize_features ? ", row-normalized" : ""));
    } else if (t < static_cast<int>(ds.type_features.size()) && ds.type_features[t].defined()) {
      d.notes.push_back(fmt::format("type {}: features ignored (model.type_features: target)", in.name));
    }
    d.types.push_back(std::move(in));
  }
  // Labels and the split in the global id space.
  const int64_t off = d.target_offset(), n = d.num_nodes();
  d.num_classes = ds.num_classes;
  const int64_t width = ds.multilabel() ? d.num_classes : 1;  // label entries per node
  std::vector<int64_t> labels(static_cast<size_t>(n * width), -1);
  std::copy(ds.labels.data<int64_t>(), ds.labels.data<int64_t>() + ds.labels.numel(), labels.begin() + off * width);
  d.labels = ds.multilabel() ? Tensor::from_vector(labels, {n, width}) : Tensor::from_vector(labels);
  d.class_names = ds.class_names;
  if (static_cast<int64_t>(ds.node_names.size()) == n)
    d.target_names.assign(ds.node_names.begin() + off, ds.node_names.begin() + off + d.target_count());
  else if (static_cast<int64_t>(ds.node_names.size()) == d.target_count())
    d.target_names = ds.node_names;
  STRATA_CHECK(c.split.kind != SplitKind::Planetoid,
               "{}: data.split.kind 'planetoid' (20 per class) applies to GraphSAGE, GCN and GAT; rgcn trains on the "
               "dataset's split (data.split.kind: dataset or auto) or a random one (random)",
               config_source);
  STRATA_CHECK(c.node_features == NodeFeatureSource::Auto,
               "{}: data.node_features applies to GraphSAGE, GCN and GAT; rgcn reads each node type's own features "
               "(model.type_features) and embeds featureless types (model.embedding_dim)",
               config_source);
  STRATA_CHECK(c.split.kind != SplitKind::File,
               "{}: data.split.kind 'file' applies to GraphSAGE, GCN and GAT; rgcn trains on the dataset's split (or "
               "data.split.kind: random)",
               config_source);
  STRATA_CHECK(!ds.splits.empty() || c.split.kind == SplitKind::Random,
               "{}: dataset '{}' comes without a split; rgcn uses the dataset's split (or data.split.kind: random)",
               config_source, c.dataset);
  STRATA_CHECK(!c.split.per_run,
               "{}: data.split.per_run (a new split for every run) is not supported for rgcn, which trains every run "
               "on one split; set it to false",
               config_source);
  data::Splits s = ds.splits;
  if (c.split.kind == SplitKind::Random) {
    s = data::random_split(labelled_nodes(d.labels, off, d.target_count()), c.split.train_ratio, c.split.val_ratio,
                           c.split.seed);
  } else if (s.val_size() == 0) {
    std::vector<int64_t> tr(s.train.data<int64_t>(), s.train.data<int64_t>() + s.train_size());
    auto [keep, val] = data::holdout(tr, c.split.holdout, c.split.seed);
    STRATA_CHECK(!val.empty(), "{}: data.split.holdout {} leaves no validation node out of {} training nodes",
                 config_source, c.split.holdout, tr.size());
    s.train = Tensor::from_vector(keep);
    s.val = Tensor::from_vector(val);
    s.origin += fmt::format("; validation: {:g}% of the training nodes (seed {})", 100 * c.split.holdout, c.split.seed);
  }
  d.splits.train = shifted(s.train, off);
  d.splits.val = shifted(s.val, off);
  d.splits.test = shifted(s.test, off);
  d.splits.origin = s.origin;
  const std::pair<const char*, const Tensor*> parts[] = {
      {"train", &d.splits.train}, {"validation", &d.splits.val}, {"test", &d.splits.test}};
  for (const auto& [what, t] : parts) {
    STRATA_CHECK(data::Splits::size_of(*t) > 0, "{}: the {} split of '{}' is empty ({})", config_source, what, c.dataset,
                 d.splits.origin);
    for (int64_t i = 0; i < t->numel(); ++i) {
      const int64_t node = t->data<int64_t>()[i];
      STRATA_CHECK(node >= 0 && node < n && is_labelled(d.labels, node),
                   "{}: the {} split of '{}' holds node {}, which has no label", config_source, what, c.dataset,
                   node - off);
    }
  }
  return d;
}

std::unique_ptr<nn::RgcnModel> RgcnContext::make_model(uint64_t seed) const {
  const int64_t relations = data.graph->relations;
  STRATA_CHECK(config.model.rgcn.num_bases <= relations,
               "model.num_bases {} exceeds the {} relations of '{}': a basis decomposition has at most one basis per "
               "relation (0: a full weight per relation)",
               config.model.rgcn.num_bases, relations, data.name);
  Rng base(seed);
  Rng init = base.fork(1);
  auto model = std::make_unique<nn::RgcnModel>(config.model, data.types, data.graph->relations, data.num_classes, init);
  model->mark_gradient_support(*data.graph);
  return model;
}

void RgcnContext::build_kernels(const nn::RgcnModel& model, bool backward) {
  Timer t;
  // A receptive field's one-hot first layer runs on its own graph (data.first_layer_graph).
  nn::RelationalKernelRequests req, first;
  for (int i = 0; i < model.num_layers(); ++i)
    model.layer(i).request_kernels(i == 0 && data.first_layer_graph ? first : req);
  req.backward = first.backward = backward;
  first_layer_kernels.reset();
  if (data.first_layer_graph)
    first_layer_kernels =
        std::make_unique<nn::RelationalKernels>(*data.first_layer_graph, first, config.runtime.kernels);
  kernels = std::make_unique<nn::RelationalKernels>(*data.graph, req, config.runtime.kernels);
  feature_kernels.clear();
  for (size_t i = 0; i < data.types.size(); ++i) {
    nn::RgcnTypeInput& in = data.types[i];
    in.kernels = nullptr;
    const std::vector<int64_t> widths = model.feature_product_widths(static_cast<int>(i));
    if (!in.sparse || widths.empty()) continue;
    nn::KernelRequests r;
    r.backward = backward;
    for (int64_t w : widths) r.add_feature_product(w);
    const Graph none = Graph::from_coo(in.count, in.count, Tensor::from_vector(std::vector<int64_t>{}),
                                       Tensor::from_vector(std::vector<int64_t>{}));
    nn::KernelRuntime runtime = config.runtime.kernels;
    if (runtime.plans)  // kernels.json names a type's feature kernels "<type> <role>" (kernels_json below)
      runtime.plans = std::make_shared<const sc::RecordedPlans>(runtime.plans->scoped(in.name + " "));
    feature_kernels.push_back(std::make_unique<nn::GraphKernels>(nn::build_graph_kernels(none, in.sparse, r, runtime)));
    in.kernels = feature_kernels.back().get();
  }
  build_ms = t.ms();
}

Evaluation evaluate_rgcn(const RgcnContext& ctx, const nn::RgcnModel& model) {
  Timer t;
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  const ag::Var logits = model.forward(tape, *ctx.kernels, ctx.data.types, 0);
  Evaluation e;
  const RgcnData& d = ctx.data;
  const NodeScores scores(logits.value(), d.labels, d.num_classes, ctx.metric);
  std::tie(e.train_acc, e.train_loss) = scores.accuracy_and_loss(d.splits.train);
  std::tie(e.val_acc, e.val_loss) = scores.accuracy_and_loss(d.splits.val);
  std::tie(e.test_acc, e.test_loss) = scores.accuracy_and_loss(d.splits.test);
  e.test_macro_f1 = scores.macro_f1(d.splits.test);
  e.test_logits_hash = logits_hash(logits.value(), d.splits.test);
  e.ms = t.ms();
  return e;
}

namespace {

void print_kernels(const std::function<void(const std::string&)>& out, const RgcnContext& ctx) {
  const nn::RelationalKernels& k = *ctx.kernels;
  const nn::RelationalKernels* first = ctx.first_layer_kernels.get();
  out(
      fmt::format("{:<11}{} rgms kernel sets on {} relations ({} pairs, {} non-zeros, {} indices): compile {:.1f} ms, "
                  "tune {:.1f} ms, total with feature kernels {:.1f} ms",
                  "kernels", k.records().size() + (first ? first->records().size() : 0), k.graph().relations,
                  commas(k.graph().pairs), commas(k.graph().nnz), dtype_name(k.graph().index_dtype),
                  k.compile_ms() + (first ? first->compile_ms() : 0), k.tune_ms(), ctx.build_ms));
  for (const nn::RelationalKernels* set : {first, &k})
    if (set)
      for (const auto& r : set->records())
        out(fmt::format("{:<11}{:<32} {:<3} {:<22} {:<34} compile {:.1f} ms{}", "", r.role, r.graph, r.order,
                        r.describe, r.compile_ms, r.origin == "-" || r.origin == "default" ? "" : ", " + r.origin));
  for (size_t i = 0; i < ctx.data.types.size(); ++i) {
    const nn::GraphKernels* g = ctx.data.types[i].kernels;
    if (!g) continue;
    for (const nn::KernelRecord& r : g->records())
      out(fmt::format("{:<11}{:<32} {:<3} {:<22} {}", "", ctx.data.types[i].name + " " + r.role, r.graph, r.program,
                      r.plan.str()));
  }
}

json kernels_json(const RgcnContext& ctx) {
  json list = json::array();
  for (const auto& r : ctx.kernels->records())
    list.push_back({{"role", r.role}, {"graph", r.graph}, {"order", r.order}, {"kernel", r.describe},
                    {"origin", r.origin}, {"compile_ms", r.compile_ms}, {"tune_ms", r.tune_ms}});
  for (size_t i = 0; i < ctx.data.types.size(); ++i)
    if (const nn::GraphKernels* g = ctx.data.types[i].kernels)
      for (const nn::KernelRecord& r : g->records())
        list.push_back({{"role", ctx.data.types[i].name + " " + r.role}, {"graph", r.graph}, {"program", r.program},
                        {"plan", json::parse(r.plan.to_json())}, {"plan_text", r.plan.str()}, {"cache", r.cache}});
  // Replayed orders and plans (runtime.plans) take the place of tuning: the kernels were not tuned.
  const auto& plans = ctx.config.runtime.kernels.plans;
  return {{"backend", sc::backend_name(ctx.config.runtime.kernels.backend)},
          {"tuning", ctx.config.runtime.kernels.tuning && !plans},
          {"plans", plans ? json(plans->file()) : json(nullptr)},
          {"compile_ms", ctx.kernels->compile_ms()},
          {"tune_ms", ctx.kernels->tune_ms()},
          {"build_ms", ctx.build_ms},
          {"kernels", list}};
}

void print_data(const std::function<void(const std::string&)>& out, const Config& config, const RgcnContext& ctx) {
  const RgcnData& d = ctx.data;
  std::string types;
  for (size_t t = 0; t < d.type_names.size(); ++t)
    types += fmt::format("{}{} {}", t ? ", " : "", d.type_names[t], commas(d.type_offsets[t + 1] - d.type_offsets[t]));
  out(fmt::format("{:<11}{} ({}), loaded in {:.1f} ms (cache: {})", "dataset", d.name, d.source, d.load.seconds * 1e3,
                  data::cache_status_name(d.load.cache)));
  out(fmt::format("{:<11}{} nodes ({}), {} relations, {} edges; target type {}, {} classes{}", "",
                  commas(d.num_nodes()), types, d.relation_names.size(), commas(d.graph->nnz),
                  d.type_names[static_cast<size_t>(d.target_type)], d.num_classes,
                  d.multilabel() ? " (multi-label: a sigmoid per class, binary cross-entropy)" : ""));
  out(fmt::format("{:<11}split {}: {} train / {} val / {} test; scored by {}{}", "", d.splits.origin,
                  commas(d.splits.train_size()), commas(d.splits.val_size()), commas(d.splits.test_size()),
                  metric_name(ctx.metric), metric_note(config, ctx.metric, d.eval_metric)));
  for (const std::string& note : d.notes) out(fmt::format("{:<11}{}", "", note));
}

}  // namespace

Summary run_rgcn_training(const Config& config, const std::string& config_name, const Printer& print, bool resume,
                          LoopPosition& position) {
  RgcnContext ctx;
  ctx.config = typed(config);
  const TrainingConfig& c = ctx.config;
  Console out{print};
  OpenedRunDir opened = start_training_session(config, c, config_name, out, resume);
  RunDirectory& dir = *opened.dir;
  std::optional<ResumePoint>& resumed = opened.resumed;
  ctx.data = prepare_rgcn_data(c.data, c.model, config.source());
  position.nodes = ctx.data.num_nodes();
  ctx.metric = configured_metric(config, ctx.data.labels, ctx.data.eval_metric, ctx.data.name);
  check_metric_defined(ctx.metric, ctx.data.labels, ctx.data.splits, metric_origin(config, ctx.data.eval_metric),
                       ctx.data.name);
  std::unique_ptr<nn::RgcnModel> first = ctx.make_model(c.training.seed);
  const bool replay_tuned = replay_interrupted_session_plans(dir, ctx.config.runtime.kernels, resumed.has_value());
  ctx.build_kernels(*first);
  print_config_lines(out.printer(), config);
  print_data(out.printer(), config, ctx);
  out(fmt::format("{:<11}{}", "model", first->describe()));
  out(fmt::format("{:<11}{}{}", "optimizer", nn::make_optimizer(c.optimizer, first->parameters())->describe(),
                  c.optimizer.schedule.describe(c.training.epochs)));
  print_runtime([&out](const std::string& line) { out(line); }, c);
  print_kernels(out.printer(), ctx);
  if (replay_tuned) out(fmt::format("{:<11}{}", "", replayed_plans_note("orders and plans")));
  out(fmt::format("{:<11}{}", "run dir", dir.final_path().string()));
  write_kernels_json(dir, kernels_json(ctx), replay_tuned);
  dir.write("split.json", split_json(ctx.data.splits));  // ids in the flattened graph
  const std::string model_text = first->describe();
  const int64_t model_parameters = first->num_parameters();

  Summary summary;
  summary.run_dir = dir.final_path().string();
  json runs = json::array();
  ResumeRecorder recorder(dir, config, out, c.output.resume_every);
  std::optional<RunProgress> current;  // the run in progress at the resume point
  if (resumed) {
    ResumedRuns from = resumed_runs(*resumed);
    for (const json& entry : from.finished) {
      STRATA_CHECK(entry.contains("result") && entry.contains("row"),
                   "resume point '{}' is malformed: a finished run has no result", resumed->file);
      RunResult rr = run_result_from_state(entry["result"], resumed->file);
      runs.push_back(entry["row"]);
      summary.runs.push_back(std::move(rr));
    }
    recorder.restore_finished(std::move(from.finished));
    current = std::move(from.current);
  }
  for (int run = static_cast<int>(summary.runs.size()) + 1; run <= c.training.runs; ++run) {
    const uint64_t seed = c.training.seed + static_cast<uint64_t>(run - 1);
    position.run = run;
    position.epoch = 0;
    std::unique_ptr<nn::RgcnModel> model = run == 1 ? std::move(first) : ctx.make_model(seed);
    std::unique_ptr<nn::Optimizer> opt = nn::make_optimizer(c.optimizer, model->parameters());
    Rng dropout = Rng(seed).fork(2);
    const bool continuing = current.has_value();
    if (c.training.runs > 1 && !continuing) out(fmt::format("Run {}/{} (seed {})", run, c.training.runs, seed));
    RunBook book(c, run, seed);
    Evaluation best, last;
    if (continuing) {  // the run in progress at the resume point, restored
      best = evaluation_from_state(current->best, resumed->file);
      last = evaluation_from_state(current->last, resumed->file);
      book.resume(*current, *resumed, dropout, nullptr, model->parameters(), *opt, out);
      current.reset();
    }
    for (int64_t epoch = book.first_epoch(); epoch <= c.training.epochs; ++epoch) {
      position.epoch = epoch;
      position.phase = "training";
      ag::Tape& tape = book.tape();
      Timer t;
      opt->set_lr(c.optimizer.schedule.lr_at(c.optimizer.lr, epoch, c.training.epochs));
      tape.clear();
      tape.set_training(true);
      const ag::Var logits = model->forward(tape, *ctx.kernels, ctx.data.types, dropout.next_u64());
      ag::Var loss;
      {
        ag::Tape::Scope scope(tape, "loss");
        loss = classification_loss(tape, logits, ctx.data.labels, ctx.data.splits.train);
      }
      const float value = loss.value().data<float>()[0];
      STRATA_CHECK(std::isfinite(value), "training diverged: run {}, epoch {}: the loss is not finite; lower optimizer.lr (now {})",
                   run, epoch_str(epoch), c.optimizer.lr);
      tape.backward(loss);
      Timer step;
      opt->step();
      opt->zero_grad();
      const double optimizer_ms = step.ms();
      tape.clear();
      const double ms = t.ms();
      book.add_epoch(ms, optimizer_ms);
      json m = {{"run", run}, {"epoch", epoch}, {"loss", value}, {"epoch_ms", ms}};
      const bool eval_now = book.evaluates_after(epoch);
      if (eval_now) {
        position.phase = "evaluation";
        last = evaluate_rgcn(ctx, *model);
        m["train_acc"] = last.train_acc;
        m["val_acc"] = last.val_acc;
        m["test_acc"] = last.test_acc;
        m["val_loss"] = last.val_loss;
        // R-GCN checkpoints hold no optimizer state, so no snapshot of it is taken.
        if (book.offer(epoch, last.val_acc, last.val_loss, model->parameters(), nullptr)) best = last;
      }
      dir.append_metrics(m.dump());
      log_epoch(c.output, out.printer(), epoch, value, last.train_acc, last.val_acc, ms);
      if (book.end_epoch(epoch, eval_now, out.printer())) break;
      book.save_if_due(recorder, epoch, evaluation_state(best), evaluation_state(last), dropout, nullptr,
                       model->parameters(), *opt);
    }
    RunResult rr;
    book.fill(rr);
    rr.best = best;
    if (c.output.checkpoint != CheckpointPolicy::None) {
      const bool use_best = c.output.checkpoint == CheckpointPolicy::Best;
      const Evaluation& at = use_best ? best : last;
      nn::Checkpoint ck;
      ck.meta = checkpoint_meta(
          config, c.runtime.kernels.backend,
          {"rgcn", model->describe(),
           {{"name", ctx.data.name}, {"nodes", ctx.data.num_nodes()}, {"classes", ctx.data.num_classes}}, run, seed,
           use_best, use_best ? rr.best_epoch : rr.epochs,
           {{"train_acc", at.train_acc}, {"val_acc", at.val_acc}, {"test_acc", at.test_acc},
            {"test_macro_f1", at.test_macro_f1}, {"test_logits_hash", at.test_logits_hash}}});
      ck.meta["graph"] = meta_graph(ctx.data);
      ck.meta["metric"] = metric_key(ctx.metric);  // what test_acc holds
      ck.model = use_best ? book.best_params() : nn::snapshot_parameters(model->parameters());
      rr.checkpoint = write_run_checkpoint(dir, run, ck);
    }
    out(
        fmt::format("Run {}/{}: best epoch {} | train {:.4f} | val {:.4f} | test {:.4f} (macro-F1 {:.4f}) | {} "
                    "epochs, {:.2f} ms/epoch (median; {})",
                    run, c.training.runs, epoch_str(rr.best_epoch), best.train_acc, best.val_acc, best.test_acc,
                    best.test_macro_f1, rr.epochs, rr.median_epoch_ms, time_shares(rr.profile, rr.train_ms)));
    runs.push_back({{"run", run},
                    {"seed", seed},
                    {"best_epoch", rr.best_epoch},
                    {"epochs", rr.epochs},
                    {"train_acc", best.train_acc},
                    {"val_acc", best.val_acc},
                    {"test_acc", best.test_acc},
                    {"test_macro_f1", best.test_macro_f1},
                    {"mean_epoch_ms", rr.mean_epoch_ms},
                    {"median_epoch_ms", rr.median_epoch_ms},
                    {"time", profile_json(rr.profile, rr.optimizer_ms, rr.train_ms)},
                    {"checkpoint", rr.checkpoint}});
    recorder.finish_run({{"result", run_result_state(rr)}, {"row", runs.back()}});
    summary.runs.push_back(std::move(rr));
  }
  summarize_runs(summary);
  out(fmt::format(
      "Test {} over {} run{}: {:.4f} ± {:.4f}; macro-F1 {:.4f} ± {:.4f} (val {:.4f} ± "
      "{:.4f}); {:.2f} ms/epoch (median)",
      ctx.metric == Metric::Accuracy && !ctx.data.multilabel() ? "accuracy (micro-F1)" : metric_name(ctx.metric),
      summary.runs.size(), summary.runs.size() == 1 ? "" : "s", summary.test_mean, summary.test_std,
      summary.test_macro_f1_mean, summary.test_macro_f1_std, summary.val_mean, summary.val_std,
      summary.median_epoch_ms));
  finish_session(dir, out,
                 summary_json(config, summary,
                              {.dataset = meta_graph(ctx.data),
                               .model = model_text,
                               .num_parameters = model_parameters,
                               .runs = runs,
                               .metric = metric_key(ctx.metric),
                               .kernels = {{"compile_ms", ctx.kernels->compile_ms()},
                                           {"tune_ms", ctx.kernels->tune_ms()},
                                           {"build_ms", ctx.build_ms},
                                           {"file", "kernels.json"}}}));
  return summary;
}

namespace {

// Data, model and kernels for a checkpoint: what eval and infer share.
struct Loaded {
  RgcnContext ctx;
  std::unique_ptr<nn::RgcnModel> model;
  nn::Checkpoint ck;
};

void load_for(Loaded& l, const Config& config, const fs::path& checkpoint) {
  l.ctx.config = typed(config);
  apply_runtime(l.ctx.config.runtime);
  const std::string file = checkpoint.string();
  l.ck = read_training_checkpoint(checkpoint);
  STRATA_CHECK(l.ck.meta.value("model", std::string()) == "rgcn",
               "checkpoint '{}' holds a {} model; strata infer / rgcn configs need an rgcn checkpoint (strata train "
               "configs/rgcn_*.yaml)",
               file, l.ck.meta.value("model", std::string("unknown")));
  check_config_matches_checkpoint(config, l.ck.meta, file);
  l.ctx.data = prepare_rgcn_data(l.ctx.config.data, l.ctx.config.model, config.source());
  check_checkpoint_graph(l.ck.meta, l.ctx.data, file);
  l.ctx.metric = configured_metric(config, l.ctx.data.labels, l.ctx.data.eval_metric, l.ctx.data.name);
  check_metric_defined(l.ctx.metric, l.ctx.data.labels, l.ctx.data.splits,
                       metric_origin(config, l.ctx.data.eval_metric), l.ctx.data.name);
  l.model = l.ctx.make_model(l.ctx.config.training.seed);
  nn::load_parameters(l.ck, l.model->parameters(), file);
}

}  // namespace

EvalReport run_rgcn_evaluation(const Config& config, const fs::path& checkpoint, const Printer& print) {
  Loaded l;
  load_for(l, config, checkpoint);
  l.ctx.build_kernels(*l.model, /*backward=*/false);
  print(fmt::format("strata eval {} --checkpoint {}", config.source(), checkpoint.string()));
  print_data(print, config, l.ctx);
  print(fmt::format("{:<11}{}", "model", l.model->describe()));
  EvalReport r;
  const Evaluation e = evaluate_rgcn(l.ctx, *l.model);
  r.eval.train_acc = e.train_acc;
  r.eval.val_acc = e.val_acc;
  r.eval.test_acc = e.test_acc;
  r.eval.val_loss = e.val_loss;
  r.eval.test_logits_hash = e.test_logits_hash;
  r.recorded_test_acc = l.ck.meta.value("test_acc", -1.0);
  r.recorded_logits_hash = l.ck.meta.value("test_logits_hash", std::string());
  const Metric recorded = recorded_metric(l.ck.meta, l.ctx.data.multilabel());
  r.identical =
      (recorded != l.ctx.metric || e.test_acc == r.recorded_test_acc) && e.test_logits_hash == r.recorded_logits_hash;
  const char* metric = metric_name(l.ctx.metric);
  print(
      fmt::format("Train {} {:.4f} | val {} {:.4f} (loss {:.4f})", metric, e.train_acc, metric, e.val_acc, e.val_loss));
  print(fmt::format(
      "Test {} {:.4f} ({}), macro-F1 {:.4f}: {}", metric, e.test_acc,
      recorded_score_text(recorded, l.ctx.metric, r.recorded_test_acc), e.test_macro_f1,
      r.identical ? "reproduced bit for bit (test logits XXH3 " + e.test_logits_hash.substr(0, 16) + ")"
                  : "DIFFERS from the recorded run (other threads, backend, feature storage, dataset or build?)"));
  return r;
}

namespace {

// R-GCN over a batch's receptive field: the subgraph induced on the seeds' L-hop
// in-neighbourhood (every relation), holding the non-zeros of the rows within L - 1
// hops, all of them, with their whole-graph normalisation (sc::RelationalGraph::
// induced); so the seeds' logits are the whole graph's. The outermost nodes enter
// as inputs only. Kernels get the default orders: nothing is tuned for one batch.
struct RgcnField {
  std::vector<int64_t> nodes, inner;  // global ids, increasing
  int64_t nnz = 0;                    // the inner rows' non-zeros
  RgcnContext ctx;                    // data: the field's graph and per-type inputs
};

// Why the whole graph runs rather than the field ("" when the field does): a field
// of more than half the nodes, or of more than an eighth of the non-zeros, where
// building its subgraph costs about what the forward saves (10 papers of ACM: 29% of
// the non-zeros, 13.4 ms over the field against 11.7 ms over the whole graph; 10
// entities of AIFB: 23%, 3.4 ms against 1.6 ms).
std::string whole_graph_reason(const RgcnField& f, const RgcnData& d, int layers) {
  const int64_t n = static_cast<int64_t>(f.nodes.size());
  if (2 * n > d.num_nodes())
    return fmt::format("the batch's {}-hop in-neighbourhood holds {} of the {} nodes", layers, commas(n),
                       commas(d.num_nodes()));
  if (8 * f.nnz > d.graph->nnz)
    return fmt::format("the batch's {}-hop in-neighbourhood holds {} of the {} non-zeros", layers, commas(f.nnz),
                       commas(d.graph->nnz));
  return "";
}

// The field's subgraph and its nodes' inputs, once it is worth running
// (whole_graph_reason); the kernels are built by the caller (ctx.build_kernels).
void build_field_inputs(RgcnField& f, const RgcnContext& whole, const nn::RgcnModel& model) {
  const RgcnData& d = whole.data;
  f.ctx.config = whole.config;
  f.ctx.config.runtime.kernels.tuning = false;
  f.ctx.config.runtime.kernels.plans = nullptr;
  f.ctx.metric = whole.metric;
  RgcnData& fd = f.ctx.data;
  fd.name = d.name;
  fd.type_names = d.type_names;
  fd.relation_names = d.relation_names;
  fd.target_type = d.target_type;
  fd.type_offsets.push_back(0);
  auto node = f.nodes.begin();
  for (size_t t = 0; t < d.types.size(); ++t) {
    const int64_t offset = d.type_offsets[t];
    std::vector<int64_t> rows;  // the type's nodes in the field, as rows of the type
    for (; node != f.nodes.end() && *node < d.type_offsets[t + 1]; ++node) rows.push_back(*node - offset);
    nn::RgcnTypeInput in = d.types[t];
    in.count = static_cast<int64_t>(rows.size());
    in.kernels = nullptr;
    if (in.sparse) {
      fd.sparse.push_back(in.sparse->select_rows(rows));
      in.sparse = &fd.sparse.back();
    } else if (in.dense.defined()) {
      in.dense = in.dense.gather_rows(rows);
    }
    fd.types.push_back(std::move(in));
    fd.type_offsets.push_back(fd.type_offsets.back() + static_cast<int64_t>(rows.size()));
  }
  fd.graph = d.graph->induced(f.nodes, f.inner);
  if (model.one_hot()) fd.first_layer_graph = fd.graph->with_column_ids(f.nodes, d.graph->cols);
}

}  // namespace

InferReport run_rgcn_inference(const Config& config, const InferOptions& o, const Printer& print) {
  Loaded l;
  load_for(l, config, o.checkpoint);
  const RgcnData& d = l.ctx.data;
  // The batch: target-type node ids.
  const int64_t count = d.target_count();
  const std::string tname = d.type_names[static_cast<size_t>(d.target_type)];
  const std::vector<int64_t> batch =
      read_node_batch(o.batch, count, fmt::format("the target type '{}'", tname), o.names, d.target_names);
  const nn::RgcnModel& model = *l.model;
  InferReport rep;
  // A batch file: the forward over the batch's receptive field alone, unless the
  // field is most of the graph.
  Timer t;
  std::optional<RgcnField> field;
  std::string whole_graph = o.batch == "all" ? "every node" : o.full_graph ? "--full-graph" : "";
  if (whole_graph.empty()) {
    std::vector<int64_t> seeds(batch);
    for (int64_t& v : seeds) v += d.target_offset();
    field.emplace();
    field->nodes = d.graph->in_neighbourhood(seeds, model.num_layers(), &field->inner, &field->nnz);
    whole_graph = whole_graph_reason(*field, d, model.num_layers());
    if (whole_graph.empty()) {
      build_field_inputs(*field, l.ctx, model);
      rep.forward = fmt::format("the batch's {}-hop in-neighbourhood, {} of {} nodes", model.num_layers(),
                                commas(field->nodes.size()), commas(d.num_nodes()));
    } else {
      field.reset();
    }
  }
  RgcnContext& run = field ? field->ctx : l.ctx;
  run.build_kernels(model, /*backward=*/false);
  print(fmt::format("strata infer {} --checkpoint {} --batch {}{}{}", config.source(), o.checkpoint.string(), o.batch,
                    o.names ? " --names" : "", o.full_graph ? " --full-graph" : ""));
  print_data(print, config, l.ctx);
  print(fmt::format("{:<11}{}", "model", model.describe()));
  print(fmt::format("{:<11}run {}, seed {}, epoch {}, recorded test {} {:.4f}", "checkpoint", l.ck.meta.value("run", 0),
                    l.ck.meta.value("seed", uint64_t{0}), epoch_str(l.ck.meta.value("epoch", int64_t{0})),
                    metric_name(recorded_metric(l.ck.meta, d.multilabel())), l.ck.meta.value("test_acc", -1.0)));
  print_runtime(print, l.ctx.config);
  if (field)
    print(fmt::format("{:<11}{}: {} non-zeros of {} (the rows within {} hop{}, every in-edge kept)", "forward",
                      rep.forward, commas(run.data.graph->nnz), commas(d.graph->nnz), model.num_layers() - 1,
                      model.num_layers() == 2 ? "" : "s"));
  else if (o.batch != "all")
    print(fmt::format("{:<11}over the whole graph: {}", "forward", whole_graph));
  print_kernels(print, run);
  // One forward pass in eval mode, no warm-up.
  ag::Tape tape;
  tape.set_training(false);
  tape.set_grad_enabled(false);
  tape.set_profiling(false);
  Timer forward;
  const nn::RelationalKernels& first = run.first_layer_kernels ? *run.first_layer_kernels : *run.kernels;
  const Tensor logits = field ? model.forward_on(tape, first, *run.kernels, run.data.types, field->nodes).value()
                              : model.forward(tape, *run.kernels, run.data.types, 0).value();
  // Field: finding it, gathering its inputs and the forward; kernel builds apart.
  rep.infer_ms = field ? t.ms() - run.build_ms : forward.ms();
  rep.build_ms = run.build_ms;
  rep.compile_ms = run.kernels->compile_ms() + (run.first_layer_kernels ? run.first_layer_kernels->compile_ms() : 0);
  rep.tune_ms = run.kernels->tune_ms();
  if (!field) {
    predict_batch(batch, d.target_offset(), NodeScores(logits, d.labels, d.num_classes, l.ctx.metric).predictions(),
                  d.labels, d.splits.test, d.target_names, d.class_names, o.out, rep);
  } else {
    // The field's rows: the batch's, its nodes' labels, and its test nodes.
    const std::vector<int64_t>& nodes = field->nodes;
    const auto row_of = [&nodes](int64_t v) -> int64_t {
      const auto it = std::lower_bound(nodes.begin(), nodes.end(), v);
      return it != nodes.end() && *it == v ? it - nodes.begin() : -1;
    };
    std::vector<int64_t> rows, tests;
    for (int64_t v : batch) rows.push_back(row_of(d.target_offset() + v));
    for (int64_t k = 0; k < d.splits.test.numel(); ++k)
      if (const int64_t r = row_of(d.splits.test.data<int64_t>()[k]); r >= 0) tests.push_back(r);
    const Tensor labels = d.labels.gather_rows(nodes);
    predict_batch(batch, rows, NodeScores(logits, labels, d.num_classes, l.ctx.metric).predictions(), labels,
                  Tensor::from_vector(tests), d.target_names, d.class_names, o.out, rep);
  }
  print_inference(print, rep, " of type " + tname, d.num_nodes(), o.out);
  return rep;
}

}  // namespace strata::train
