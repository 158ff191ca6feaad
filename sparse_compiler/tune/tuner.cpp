#include "sparse_compiler/tune/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/log.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/jit_compiler.h"
#include "sparse_compiler/ops/reference_kernels.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/tune/cost_model.h"
#include "sparse_compiler/tune/graph_fingerprint.h"
#include "sparse_compiler/tune/interleaved_timing.h"
#include "sparse_compiler/tune/search_space.h"

namespace strata::sc {

KernelPlan default_cpu_plan(int64_t feat) {
  SpmmSpec s;
  s.feat = feat;
  return SpmmKernel::default_plan(s);
}

std::string cpu_target() { return fmt::format("cpu lanes={} threads={}", host_vector_lanes(), num_threads()); }

namespace {

struct OpHooks {
  std::string op_name;
  std::vector<KernelPlan> space;
  std::function<double(const KernelPlan&)> predict;
  std::function<Kernel(const KernelPlan&)> lower;
  // Binds a compiled candidate, runs it, returns (max error report, a timer body).
  std::function<std::pair<CloseReport, std::function<void()>>(const KernelPlan&, const CompiledKernel&, double&)> bind;
  // Kinds of plan the cost model cannot rank reliably on this graph: the
  // best-ranked plan of each is measured in the first batch, whatever its rank.
  std::vector<std::function<bool(const KernelPlan&)>> families;
  // The plan the op runs untuned, when it is not the plan template (SpMM:
  // default_plan(spec, A)). It and the template are measured and held in the final
  // round whatever their rank, so the choice is never one the untuned kernel beats,
  // and it stays the choice unless beaten by TuneOptions::min_gain.
  std::optional<KernelPlan> untuned;
};

// The fastest of many noisy medians is biased low (the winner's curse), and a
// machine's load drifts between candidates. So the few fastest candidates and the
// anchors (the plan template, the untuned plan) are timed again, interleaved round
// by round (interleaved_timing.h: each sample a batch of calls of at least ~0.5 ms,
// after one untimed call of its own), and their final medians decide.
void final_round(std::vector<MeasuredCandidate>& ranked,
                 const std::vector<std::pair<size_t, std::function<void()>>>& timed,
                 const std::vector<KernelPlan>& anchors, const TuneOptions& o) {
  std::vector<size_t> order(timed.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ranked[timed[a].first].measured_ms < ranked[timed[b].first].measured_ms;
  });
  std::vector<size_t> finalists;
  for (size_t i : order)
    if (static_cast<int>(finalists.size()) < o.finalists ||
        std::find(anchors.begin(), anchors.end(), ranked[timed[i].first].plan) != anchors.end())
      finalists.push_back(i);
  // Streaming stores' speed swings with the memory's state more than any other
  // knob's (Pubmed at F = 128, one process: 0.21 ms in one stretch, 0.33 ms in the
  // next, plain stores 0.20 ms in both), so a fast stretch can fill the final round
  // with them: the fastest plan of the other store kind always joins it.
  for (bool stream : {false, true}) {
    auto has = [&](size_t i) { return ranked[timed[i].first].plan.knobs.stream_stores == stream; };
    if (std::none_of(finalists.begin(), finalists.end(), has)) {
      auto best = std::find_if(order.begin(), order.end(), has);
      if (best != order.end()) finalists.push_back(*best);
    }
  }
  if (finalists.size() < 2) return;
  std::vector<std::function<void()>> runs;
  std::vector<double> estimates;
  for (size_t f : finalists) {
    runs.push_back(timed[f].second);
    estimates.push_back(ranked[timed[f].first].measured_ms);
  }
  const std::vector<double> ms = time_interleaved(runs, estimates, {o.final_rounds, 0.5});
  for (size_t f = 0; f < finalists.size(); ++f) {
    MeasuredCandidate& c = ranked[timed[finalists[f]].first];
    c.measured_ms = ms[f];
    c.final_round = true;
  }
}

TuneResult tune(const Graph& A, const OpHooks& hooks, const TuneOptions& o, const std::string& fingerprint) {
  Timer total;
  TuneResult res;
  const std::string compiler = compiler_identity(default_compiler())->digest;
  const std::string key = record_key(fingerprint, hooks.op_name + (o.exhaustive ? "/exhaustive" : ""), cpu_target(), compiler);
  res.record_file = record_path(key).string();
  if (o.use_records) {
    std::optional<TuningRecord> r = load_record(key);
    // A record whose plan does not fit this op (edited, or from a build with other
    // plan semantics) is stale: searched again and rewritten, not run.
    if (r) {
      try {
        (void)hooks.lower(r->chosen);
      } catch (const UserError& e) {
        log_warn("tuning record '{}' holds a plan that does not fit {} ({}); tuning again", res.record_file,
                 hooks.op_name, e.what());
        r.reset();
      }
    }
    if (r) {
      res.chosen = r->chosen;
      res.candidates = r->candidates;
      res.from_record = true;
      res.tune_ms = total.ms();
      for (const auto& c : r->candidates)
        if (c.plan == r->chosen) res.chosen_ms = c.measured_ms;
      return res;
    }
  }
  // Rank, then pick what to measure.
  std::vector<MeasuredCandidate> ranked;
  for (const auto& p : hooks.space) ranked.push_back({p, hooks.predict(p), -1, 0, "not measured"});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.predicted_ms < b.predicted_ms; });
  const KernelPlan baseline = [&] {
    KernelPlan p = default_cpu_plan(0);
    p.knobs.vector_lanes = hooks.space.empty() ? host_vector_lanes() : hooks.space.front().knobs.vector_lanes;
    return p;
  }();
  std::vector<size_t> measure;
  for (size_t k = 0; k < ranked.size(); ++k)
    if (o.exhaustive || static_cast<int>(measure.size()) < o.top_k) measure.push_back(k);
  // Each such kind is sampled at every task grain it is offered at: the grain
  // interacts with the transformation in ways the model prices no better.
  for (const auto& in_family : o.exhaustive ? decltype(hooks.families){} : hooks.families) {
    std::set<int64_t> sampled;
    for (size_t k : measure)
      if (in_family(ranked[k].plan)) sampled.insert(ranked[k].plan.knobs.grain);
    for (size_t k = 0; k < ranked.size(); ++k)
      if (in_family(ranked[k].plan) && sampled.insert(ranked[k].plan.knobs.grain).second) measure.push_back(k);
  }
  const KernelPlan untuned = hooks.untuned.value_or(baseline);
  std::vector<KernelPlan> anchors{baseline};
  if (!(untuned == baseline)) anchors.push_back(untuned);
  for (const KernelPlan& p : anchors) {
    bool have = false;
    for (size_t k : measure) have |= ranked[k].plan == p;
    if (have) continue;
    auto same = std::find_if(ranked.begin(), ranked.end(), [&](const auto& c) { return c.plan == p; });
    if (same == ranked.end()) {
      ranked.push_back({p, hooks.predict(p), -1, 0, "not measured"});
      same = ranked.end() - 1;
    }
    measure.push_back(static_cast<size_t>(same - ranked.begin()));
  }
  // Lowers, compiles (one batch), checks and times the candidates at these ranks.
  std::vector<std::pair<size_t, std::function<void()>>> timed;  // (ranked index, runner)
  auto measure_batch = [&](const std::vector<size_t>& which) {
    std::vector<Kernel> lowered;
    std::vector<size_t> ok;
    for (size_t k : which) {
      try {
        lowered.push_back(hooks.lower(ranked[k].plan));
        ok.push_back(k);
      } catch (const UserError& e) {
        ranked[k].status = std::string("not lowerable: ") + e.what();
      }
    }
    Timer compile_timer;
    // One translation unit per core: the batch is needed now, and its compile is
    // most of a default search's time.
    const std::vector<CompiledKernel> compiled = compile_cpu(lowered, num_threads());
    res.compile_ms += compile_timer.ms();
    // Checked one by one, then timed interleaved, round by round (interleaved_timing.h):
    // timed one after another, a candidate measured in a slow spell of the machine
    // lost its place to one measured in a quiet spell, and could miss the final round
    // (uniform graph, F = 128: the panel plans, 1.4x plain CSR in three tunings, were
    // left out of a fourth).
    std::vector<size_t> checked;
    std::vector<std::function<void()>> runs;
    for (size_t q = 0; q < ok.size(); ++q) {
      MeasuredCandidate& c = ranked[ok[q]];
      double padding = 0;
      std::pair<CloseReport, std::function<void()>> bound;
      try {
        bound = hooks.bind(c.plan, compiled[q], padding);
      } catch (const UserError& e) {
        // A format this graph cannot be stored in (BSR over duplicate entries): the
        // candidate is out, the search goes on.
        c.status = std::string("not buildable: ") + e.what();
        log_warn("tuner: candidate {} skipped: {}", c.plan.str(), c.status);
        continue;
      }
      auto& [check, run] = bound;
      c.padding = padding;
      if (!check.ok) {
        c.status = "wrong result: " + check.str();
        log_warn("tuner: candidate {} rejected: {}", c.plan.str(), c.status);
        continue;
      }
      checked.push_back(ok[q]);
      runs.push_back(std::move(run));
    }
    if (runs.empty()) return;
    const std::vector<double> ms =
        time_interleaved(runs, {}, {o.max_repeats, 0.5, o.budget_ms * static_cast<double>(runs.size()), 3});
    for (size_t q = 0; q < checked.size(); ++q) {
      MeasuredCandidate& c = ranked[checked[q]];
      c.measured_ms = ms[q];
      c.status = "ok";
      if (!o.quiet) log_info("tuner: {:<48} {:9.3f} ms (predicted {:.3f})", c.plan.str(), c.measured_ms, c.predicted_ms);
      timed.emplace_back(checked[q], std::move(runs[q]));
    }
  };
  measure_batch(measure);
  // The cost model ranks knobs it cannot price (streaming stores into a cached Y,
  // a finer grain on a graph with uneven rows) about equal, so the ranking alone
  // misses good plans next to the best one: measure the best measured candidate's
  // untried neighbours (one knob changed), in ranked order.
  if (!o.exhaustive && o.neighbours > 0 && !timed.empty()) {
    size_t best = timed.front().first;
    for (const auto& [k, run] : timed)
      if (ranked[k].measured_ms < ranked[best].measured_ms) best = k;
    std::vector<KernelPlan> untried, tried;
    for (const auto& c : ranked) (c.status == "not measured" ? untried : tried).push_back(c.plan);
    std::vector<size_t> near;
    for (const KernelPlan& p : neighbour_plans(ranked[best].plan, untried, tried, o.neighbours)) {
      auto same = std::find_if(ranked.begin(), ranked.end(), [&](const auto& c) { return c.plan == p; });
      if (same == ranked.end()) {  // a distance the space does not hold
        ranked.push_back({p, hooks.predict(p), -1, 0, "not measured"});
        same = ranked.end() - 1;
      }
      same->neighbour = true;
      near.push_back(static_cast<size_t>(same - ranked.begin()));
    }
    measure_batch(near);
  }
  STRATA_CHECK(!timed.empty(), "tuner: no candidate of {} produced correct results", hooks.op_name);
  final_round(ranked, timed, anchors, o);
  // Only the final round's times decide (when it ran): they are comparable.
  bool any_final = false;
  for (const auto& [k, run] : timed) any_final |= ranked[k].final_round;
  double best = -1;
  for (const auto& [k, run] : timed) {
    const MeasuredCandidate& c = ranked[k];
    if (c.plan == baseline) res.default_ms = c.measured_ms;
    if (any_final && !c.final_round) continue;
    if (best < 0 || c.measured_ms < best) {
      best = c.measured_ms;
      res.chosen = c.plan;
    }
  }
  res.chosen_ms = best;
  // Keep the untuned plan unless the fastest beat it by more than the noise.
  for (const auto& [k, run] : timed) {
    const MeasuredCandidate& c = ranked[k];
    if (!(c.plan == untuned) || c.plan == res.chosen || (any_final && !c.final_round)) continue;
    if (best * (1 + o.min_gain) > c.measured_ms) {
      res.fastest_within_noise = res.chosen;
      res.chosen = c.plan;
      res.chosen_ms = c.measured_ms;
    }
  }
  res.candidates = ranked;
  res.tune_ms = total.ms();
  if (o.use_records) {
    TuningRecord r;
    r.key = key;
    r.graph = fingerprint;
    r.op = hooks.op_name;
    r.target = cpu_target();
    r.compiler = compiler;
    r.chosen = res.chosen;
    r.tune_ms = res.tune_ms;
    r.candidates = ranked;
    save_record(r);
  }
  return res;
}

}  // namespace

TuneResult tune_spmm(const Graph& A, const SpmmSpec& spec, const TuneOptions& o) {
  STRATA_CHECK(spec.index_dtype == A.index_dtype(), "tune_spmm: spec index dtype {} does not match the graph's {}",
               dtype_name(spec.index_dtype), dtype_name(A.index_dtype()));
  const GraphFingerprint g = GraphFingerprint::of(A);
  const MachineModel machine = MachineModel::host();
  const int lanes = host_vector_lanes();
  Rng rng(7);
  const Tensor X = Tensor::uniform({A.num_cols(), spec.feat}, -1, 1, rng);
  const Tensor values = spec.weighted ? Tensor::uniform({A.nnz()}, -1, 1, rng) : Tensor();
  const Tensor rs = spec.row_scale ? Tensor::uniform({A.num_rows()}, 0.5, 2, rng) : Tensor();
  const Tensor cs = spec.col_scale ? Tensor::uniform({A.num_cols()}, 0.5, 2, rng) : Tensor();
  Tensor want = Tensor::empty({A.num_rows(), spec.feat}, DType::F32);
  reference_spmm(A, X, values, rs, cs, false, want);
  auto kernels = std::make_shared<std::vector<std::unique_ptr<SpmmKernel>>>();
  auto out = std::make_shared<Tensor>(Tensor::empty({A.num_rows(), spec.feat}, DType::F32));
  OpHooks h;
  h.op_name = spec.name() + (o.x_layouts ? "/x_layouts" : "");
  h.space = spmm_search_space(g, spec, lanes, o.exhaustive, o.x_layouts);
  // X in each layout a candidate reads, converted once.
  auto laid = std::make_shared<std::map<std::string, Tensor>>();
  h.predict = [&](const KernelPlan& p) { return predict_spmm_ms(g, spec, p, machine); };
  if (x_outgrows_cache(g, spec.feat, machine))
    h.families.push_back([](const KernelPlan& p) { return p.feature_tile > 0; });
  // Panels of X with streaming stores and no prefetch: the model prices neither the
  // panel's reuse nor the stores' cost against the cache Y sits in, and expects a
  // prefetch to pay where it costs; it ranked them below plans they beat by
  // 1.04-1.25x (Pubmed, CA-GrQc at F = 128, 256).
  if (o.x_layouts) h.families.push_back(is_streaming_panel_without_prefetch);
  if (column_parts_may_pay(g, spec.feat, machine))
    h.families.push_back([](const KernelPlan& p) { return p.format.kind == FormatKind::Hyb && p.format.col_parts > 1; });
  // The model prices one cache level; column tiles pay in L1/L2 (cost_model.h).
  h.families.push_back([](const KernelPlan& p) { return p.format.kind == FormatKind::Dcsr && p.format.col_tile > 0; });
  // Whether fixed task blocks beat the dynamic hand-out turns on the kernel's
  // length and the machine's noise, which the model guesses at.
  h.families.push_back([](const KernelPlan& p) { return p.knobs.static_tasks; });
  // The model does not price a row's chain of dependent adds, which accumulator
  // sets break: measure the best-ranked plan that has them.
  h.families.push_back([](const KernelPlan& p) { return p.knobs.accumulator_sets > 1; });
  // Nor what shared pairs save, which only their inspector finds out.
  h.families.push_back([](const KernelPlan& p) { return p.pair_rounds > 0; });
  h.untuned = SpmmKernel::default_plan(spec, A);
  h.lower = [&](const KernelPlan& p) { return SpmmKernel::lower(spec, p); };
  h.bind = [&, kernels, out, laid](const KernelPlan& p, const CompiledKernel& ck, double& padding) {
    SpmmOptions so;
    so.feat = spec.feat;
    so.weighted = spec.weighted;
    so.row_scale = rs;
    so.col_scale = cs;
    so.plan = p;
    kernels->push_back(std::make_unique<SpmmKernel>(A, so, ck));
    SpmmKernel* k = kernels->back().get();
    padding = k->format() ? k->format()->padding_ratio() : 0;
    const std::string layout = p.x_layout.str();
    if (!laid->count(layout)) (*laid)[layout] = p.x_layout.is_row() ? X : to_layout(X, p.x_layout);
    const Tensor& x = laid->at(layout);
    k->run_into(x, *out, values);
    CloseReport r = all_close(*out, want, 1e-3, 1e-3);
    return std::make_pair(r, std::function<void()>([k, out, &x, &values] { k->run_into(x, *out, values); }));
  };
  return tune(A, h, o, g.digest());
}

TuneResult tune_spmm(const Graph& A, int64_t feat, const TuneOptions& o) {
  SpmmSpec s;
  s.feat = feat;
  s.index_dtype = A.index_dtype();
  return tune_spmm(A, s, o);
}

TuneResult tune_sddmm(const Graph& A, int64_t feat, const TuneOptions& o) {
  const GraphFingerprint g = GraphFingerprint::of(A);
  const MachineModel machine = MachineModel::host();
  const int lanes = host_vector_lanes();
  const SddmmSpec spec{SddmmKind::Dot, feat, A.index_dtype()};
  Rng rng(9);
  const Tensor X = Tensor::uniform({A.num_rows(), feat}, -1, 1, rng);
  const Tensor Y = Tensor::uniform({A.num_cols(), feat}, -1, 1, rng);
  Tensor want = Tensor::empty({A.nnz()}, DType::F32);
  reference_sddmm_dot(A, X, Y, want);
  auto kernels = std::make_shared<std::vector<std::unique_ptr<SddmmKernel>>>();
  auto out = std::make_shared<Tensor>(Tensor::empty({A.nnz()}, DType::F32));
  OpHooks h;
  h.op_name = spec.name() + (o.x_layouts ? "/x_layouts" : "");
  h.space = sddmm_search_space(g, feat, lanes, o.exhaustive, o.x_layouts);
  // X and Y in each layout a candidate reads, converted once.
  auto laid = std::make_shared<std::map<std::string, std::pair<Tensor, Tensor>>>();
  h.predict = [&](const KernelPlan& p) { return predict_sddmm_ms(g, feat, p, machine); };
  // The model prices the panels' smaller working set only roughly (cost_model.h):
  // where Y outgrows the cache, measure the best-ranked panel plan.
  if (x_outgrows_cache(g, feat, machine))
    h.families.push_back([](const KernelPlan& p) { return !p.x_layout.is_row(); });
  h.families.push_back([](const KernelPlan& p) { return p.format.kind == FormatKind::Dcsr && p.format.col_tile > 0; });
  h.families.push_back([](const KernelPlan& p) { return p.knobs.static_tasks; });
  // The model does not price the horizontal sums, which edge groups share out:
  // measure the best-ranked plan that has them.
  h.families.push_back([](const KernelPlan& p) { return p.knobs.edge_groups && p.format.kind == FormatKind::Csr; });
  // Over COO slots, with static and with dynamic tasks: the model prices the two
  // alike, and which wins differs per graph (AIFB, Pubmed: static; MUTAG: dynamic).
  for (bool fixed : {false, true})
    h.families.push_back([fixed](const KernelPlan& p) {
      return p.knobs.edge_groups && p.format.kind == FormatKind::Coo && p.knobs.static_tasks == fixed;
    });
  h.untuned = SddmmKernel::default_plan(spec, A);
  h.lower = [&](const KernelPlan& p) { return SddmmKernel::lower(spec, p); };
  h.bind = [&, kernels, out, laid](const KernelPlan& p, const CompiledKernel& ck, double& padding) {
    kernels->push_back(std::make_unique<SddmmKernel>(A, SddmmOptions{SddmmKind::Dot, feat, Backend::Generated, p}, ck));
    SddmmKernel* k = kernels->back().get();
    padding = k->format() ? k->format()->padding_ratio() : 0;
    const std::string layout = p.x_layout.str();
    if (!laid->count(layout))
      (*laid)[layout] = p.x_layout.is_row() ? std::make_pair(X, Y)
                                            : std::make_pair(to_layout(X, p.x_layout), to_layout(Y, p.x_layout));
    const Tensor& x = laid->at(layout).first;
    const Tensor& y = laid->at(layout).second;
    k->run_into(x, y, *out);
    CloseReport r = all_close(*out, want, 1e-3, 1e-3);
    return std::make_pair(r, std::function<void()>([k, out, &x, &y] { k->run_into(x, y, *out); }));
  };
  return tune(A, h, o, g.digest());
}

}  // namespace strata::sc
