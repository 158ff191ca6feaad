// strata bench spmm|sddmm --graph <dataset>[,<dataset>...] --feat 32,64,128,256
//              --backend generated,reference,eigen [--format csr|hyb:..|auto] [--threads N] [--json]
//              [--reduce sum|mean|gcn]   (spmm; eigen and handwritten are sum-only and skipped otherwise)
//
// 'generated' is the compiler's kernel with the plan a layer gets untuned (for SpMM
// on CSR: streaming stores and X prefetch where the graph's sizes say they pay),
// 'plain_csr' the same kernel with the plan template (no prefetch, plain stores):
// the baseline the [formats] goals compare the tuner's choice with.
// For every (graph, F), every backend's output is first checked against the
// reference path; a mismatch is reported and not timed, and a backend that cannot be
// built (FAIL, with the reason) or runs out of memory (OOM) is a cell of its own
// while the others run; any such cell makes the exit code 1. Then the backends are timed
// interleaved, one timed sample of each per round (so a drift in the machine's load,
// or whatever runs first, hits all alike: timed one after another, the first of two
// identical 30 us kernels measured 1.24x slower), each a batch of calls of at least
// 0.5 ms right after as many untimed calls of its own (so it starts from its own
// state, not from what the backend before it left: sparse_compiler/tune/
// interleaved_timing.h, as the tuner times), each backend writing an output of its
// own, every buffer in 2 MiB pages (in_own_huge_pages, below); the median of the
// rounds reported with GFLOP/s, effective GB/s
// (the minimum bytes an SpMM must move over its time) and the share of the memory
// bandwidth floor, using a STREAM-like triad measured in the same run on the same
// threads. Ratios between rows of one run are what to compare; absolute times only
// mean something beside the machine.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "apps/bench_graph.h"
#include "apps/commands.h"
#include "apps/option_checks.h"
#include "benchmarks/baselines/baselines.h"
#include "core/file_util.h"
#include "core/host_memory.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/timer.h"
#include "layers/graph_kernels.h"
#include "sparse_compiler/ops/reference_kernels.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/tune/interleaved_timing.h"
#include "sparse_compiler/tune/tuner.h"

namespace strata::apps {
namespace {

using json = nlohmann::ordered_json;

struct BenchArgs {
  std::string op;
  std::vector<std::string> graphs;
  std::string feats = "32,64,128,256";
  std::string backends;  // empty: generated,reference,eigen for spmm; generated,reference,plain for sddmm
  std::string format = "untuned";
  // 'generated' knobs; unset (empty, 0, -1): the untuned plan's own.
  std::string prefetch, stream, tasks, x_layout;
  int64_t grain = 0, tile = -1;
  int accumulator_sets = 0;
  std::string edge_groups;
  std::string pairs;
  std::string reduce = "sum";
  std::optional<std::string> data_root;
  int threads = 0;
  int repeats = 20;
  bool as_stored = false;
  bool json_out = false;
};

struct Row {
  std::string graph, backend, plan, status = "ok";
  int64_t F = 0;
  double ms = 0, gflops = 0, gbs = 0, floor_share = 0, speedup_vs_first = 0;
};

// A buffer of one backend's own, in 2 MiB pages whatever its size: at least
// kHugePageThreshold bytes are allocated (core/host_memory.h), of which the tensor
// views the start. Under the threshold a buffer sits at 4 KiB pages of its own, and
// where those fall moved a kernel's time: four backends running the same plain CSR
// kernel on Pubmed at F = 32, each writing such an output of its own, ran 0.087 /
// 0.076 / 0.080 / 0.077 ms. One output shared by all would not do either: a plan with
// streaming stores leaves it out of the cache for the next (Pubmed, F = 128: plain CSR
// 0.36 ms alone, 0.62 ms sharing its output with a streaming plan, 0.43 ms with its own).
Tensor in_own_huge_pages(const Shape& shape, DType dtype) {
  int64_t bytes = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : shape) bytes *= d;
  return Tensor::from_storage(
      Storage::allocate(std::max(bytes, static_cast<int64_t>(kHugePageThreshold)), Device::cpu()), shape, dtype);
}

Tensor copy_in_own_huge_pages(const Tensor& t) {
  Tensor c = in_own_huge_pages(t.shape(), t.dtype());
  std::memcpy(c.raw_data(), t.raw_data(), t.nbytes());
  return c;
}

// Times the functions interleaved (sc::time_interleaved: each sample right after as
// many untimed calls of its own) until `repeats` rounds or ~3 s per function, at
// least 3 rounds. A sample is a batch of calls of at least ~0.5 ms, sized by one
// warm-up call's time, as in the tuner, so both time a few-microsecond kernel alike.
// The median of each function's samples.
std::vector<double> time_backends(const std::vector<std::function<void()>>& fns, int repeats) {
  return sc::time_interleaved(fns, {}, {repeats, 0.5, 3000.0 * static_cast<double>(fns.size()), 3});
}

// The plan 'generated' times at feature size F: with --format csr, the untuned plan
// for this graph (what a layer with tuning off gets: sc::SpmmKernel::default_plan
// for A), else the plan template of that format; each knob option given replaces
// that field. --prefetch auto is the ~16 KiB-ahead distance; a tile or panel not
// below F means none.
sc::KernelPlan generated_plan(const BenchArgs& a, const Graph& A, int64_t F, const sc::SpmmSpec* spmm_spec) {
  // "untuned": the format the untuned plan picks for the graph (column tiles on
  // graphs with long rows, else csr); csr keeps the untuned knobs of csr.
  const sc::SddmmSpec sddmm_spec{sc::SddmmKind::Dot, F, A.index_dtype()};
  sc::KernelPlan p = !spmm_spec ? sc::SddmmKernel::default_plan(sddmm_spec, A) : sc::SpmmKernel::default_plan(*spmm_spec, A);
  if (a.format != "untuned") {
    const sc::FormatSpec format = sc::FormatSpec::parse(a.format, "--format");
    if (!(format == p.format)) {
      // Another format than the untuned plan's: the plan template, and for csr the
      // knobs the untuned plan gives csr.
      p = spmm_spec ? sc::SpmmKernel::default_plan(*spmm_spec) : sc::SddmmKernel::default_plan();
      if (format.kind == sc::FormatKind::Csr)
        p.knobs = spmm_spec ? sc::untuned_spmm_knobs(p.knobs, F, p.feature_tile, A.num_rows(), A.num_cols())
                            : sc::untuned_sddmm_knobs(p.knobs, F, A.num_cols());
    }
    p.format = format;
  }
  if (a.grain > 0) p.knobs.grain = a.grain;
  if (a.prefetch == "auto") {
    p.knobs.prefetch = sc::default_prefetch_distance(F);
  } else if (!a.prefetch.empty()) {
    // 0 (no prefetch) is legal here, unlike in the feature-size lists.
    int64_t d = -1;
    const auto [end, ec] = std::from_chars(a.prefetch.data(), a.prefetch.data() + a.prefetch.size(), d);
    STRATA_CHECK(ec == std::errc() && end == a.prefetch.data() + a.prefetch.size() && d >= 0,
                 "--prefetch: expected auto or a distance >= 0 in non-zeros, got '{}'", a.prefetch);
    p.knobs.prefetch = d;
  }
  if (!a.stream.empty()) {
    STRATA_CHECK(a.stream == "on" || a.stream == "off", "--stream: expected on or off, got '{}'", a.stream);
    p.knobs.stream_stores = a.stream == "on";
  }
  if (!a.tasks.empty()) {
    STRATA_CHECK(a.tasks == "static" || a.tasks == "dynamic", "--tasks: expected static or dynamic, got '{}'", a.tasks);
    p.knobs.static_tasks = a.tasks == "static";
  }
  if (a.accumulator_sets > 0) p.knobs.accumulator_sets = a.accumulator_sets;
  if (!a.edge_groups.empty()) {
    STRATA_CHECK(a.edge_groups == "on" || a.edge_groups == "off", "--edge-groups: expected on or off, got '{}'",
                 a.edge_groups);
    p.knobs.edge_groups = a.edge_groups == "on";
  }
  if (!a.pairs.empty()) {
    // R or R:M: R rounds of shared pairs, a pair summed when M rows hold it.
    const size_t colon = a.pairs.find(':');
    int64_t rounds = -1, min_rows = p.pair_min_rows;
    const std::string r = a.pairs.substr(0, colon), m = colon == std::string::npos ? "" : a.pairs.substr(colon + 1);
    const auto [re, rc] = std::from_chars(r.data(), r.data() + r.size(), rounds);
    bool ok = rc == std::errc() && re == r.data() + r.size() && rounds >= 0 && rounds <= 64;
    if (ok && colon != std::string::npos) {
      const auto [me, mc] = std::from_chars(m.data(), m.data() + m.size(), min_rows);
      ok = mc == std::errc() && me == m.data() + m.size() && min_rows >= 3;
    }
    STRATA_CHECK(ok, "--pairs: expected R or R:M (R rounds in [0, 64], M rows a pair needs, at least 3), got '{}'",
                 a.pairs);
    STRATA_CHECK(spmm_spec || rounds == 0, "--pairs applies to spmm only");
    p.pair_rounds = static_cast<int>(rounds);
    p.pair_min_rows = min_rows;
  }
  if (a.tile >= 0) p.feature_tile = a.tile < F ? a.tile : 0;
  if (!a.x_layout.empty()) {
    p.x_layout = sc::DenseLayout::parse(a.x_layout, "--x-layout");
    if (p.x_layout.kind == sc::DenseLayout::Kind::Panel && p.x_layout.param >= F) p.x_layout = sc::DenseLayout::row();
  }
  // The untuned streaming stores need whole vectors in every tile; a tile given
  // here may break that (an explicit --stream on is left for lower() to refuse).
  if (a.stream.empty() && p.feature_tile % p.knobs.vector_lanes != 0) p.knobs.stream_stores = false;
  return p;
}

int run_bench(const BenchArgs& a) {
  STRATA_CHECK(a.op == "spmm" || a.op == "sddmm", "unknown op '{}' (expected spmm or sddmm)", a.op);
  if (a.threads > 0) set_num_threads(a.threads);
  const std::vector<int64_t> feats = parse_int_list(a.feats, "--feat", kMaxFeatureSize);
  const bool spmm = a.op == "spmm";
  const std::vector<std::string> backends = split_list(!a.backends.empty() ? a.backends
                                                       : spmm              ? "generated,reference,eigen"
                                                                           : "generated,reference,plain");
  STRATA_CHECK(!backends.empty(), "--backend: no backend given (expected a list such as generated,reference)");
  static const std::vector<std::string> kKnown = {"generated", "plain_csr",   "tuned", "tuned_row", "reference",
                                                   "interpreter", "eigen",     "handwritten", "plain"};
  for (const auto& b : backends)
    STRATA_CHECK(b.rfind("plan:", 0) == 0 || std::find(kKnown.begin(), kKnown.end(), b) != kKnown.end(),
                 "--backend: unknown backend '{}' (known: generated, plain_csr, tuned, tuned_row, reference, interpreter, eigen, "
                 "handwritten (spmm, F = 32..256), plain (sddmm), plan:FILE (a plan JSON from strata tune))",
                 b);
  // Baselines of one op only: refused before anything is timed.
  for (const auto& b : backends) {
    STRATA_CHECK(spmm || (b != "eigen" && b != "handwritten"), "--backend {} measures spmm only, not sddmm", b);
    STRATA_CHECK(!spmm || b != "plain", "--backend plain measures sddmm only, not spmm");
  }
  STRATA_CHECK(a.reduce == "sum" || a.reduce == "mean" || a.reduce == "gcn",
               "--reduce: '{}' (expected sum, mean or gcn)", a.reduce);
  const bool mean = a.reduce == "mean", gcn = a.reduce == "gcn";
  STRATA_CHECK(a.reduce == "sum" || a.op == "spmm", "--reduce {} applies to spmm only", a.reduce);
  // The knob options, checked once up front (not as a FAIL cell per graph after the
  // other backends were timed): the plan they give on a one-node graph, and the tile.
  if (std::find(backends.begin(), backends.end(), "generated") != backends.end()) {
    const Graph one = Graph::from_csr(1, 1, Tensor::from_vector(std::vector<int64_t>{0, 1}),
                                      Tensor::from_vector(std::vector<int32_t>{0}));
    for (int64_t F : feats) {
      sc::SpmmSpec spec;
      spec.feat = F;
      (void)generated_plan(a, one, F, spmm ? &spec : nullptr);
      STRATA_CHECK(a.tile <= 0 || a.tile >= F || F % a.tile == 0,
                   "--tile {}: a feature tile must divide the feature size (--feat {})", a.tile, F);
    }
  }
  const double stream_gbs = baselines::measure_stream_triad_gbs();
  if (!a.json_out)
    std::printf("threads %d; memory bandwidth floor (STREAM triad, this run) %.1f GB/s\n", num_threads(), stream_gbs);
  std::vector<Row> rows;
  Rng rng(1);
  for (const auto& gspec : a.graphs) {
    const BenchGraph bg = load_bench_graph(gspec, a.data_root, a.as_stored);
    const Graph& A = bg.graph;
    if (!a.json_out) std::printf("\n%s\n", bg.description.c_str());
    // GCN's normalisation, D_in^-1/2 A D_out^-1/2: a row and a column scale, as the GCN
    // layer computes them (gcn_inverse_sqrt_degree).
    Tensor row_scale, col_scale;
    if (gcn) {
      row_scale = Tensor::empty({A.num_rows()}, DType::F32);
      col_scale = Tensor::empty({A.num_cols()}, DType::F32);
      std::vector<int64_t> col_degree(A.num_cols(), 0);
      for (int64_t p = 0; p < A.nnz(); ++p) ++col_degree[A.column(p)];
      for (int64_t r = 0; r < A.num_rows(); ++r)
        row_scale.data<float>()[r] = nn::gcn_inverse_sqrt_degree(static_cast<double>(A.degree(r)), false);
      for (int64_t c = 0; c < A.num_cols(); ++c)
        col_scale.data<float>()[c] = nn::gcn_inverse_sqrt_degree(static_cast<double>(col_degree[c]), false);
    }
    for (int64_t F : feats) {
      // The operands every backend reads, in 2 MiB pages too (alike from run to run).
      Tensor X = copy_in_own_huge_pages(Tensor::uniform({spmm ? A.num_cols() : A.num_rows(), F}, -1, 1, rng));
      Tensor Yin = spmm ? Tensor() : copy_in_own_huge_pages(Tensor::uniform({A.num_cols(), F}, -1, 1, rng));
      Tensor want = spmm ? Tensor::empty({A.num_rows(), F}, DType::F32) : Tensor::empty({A.nnz()}, DType::F32);
      if (spmm)
        sc::reference_spmm(A, X, Tensor(), row_scale, col_scale, mean, want);
      else sc::reference_sddmm_dot(A, X, Yin, want);
      const double idx = dtype_size(A.index_dtype());
      const double bytes = spmm ? (A.num_rows() + 1) * 8.0 + A.nnz() * idx + 4.0 * F * (A.num_cols() + A.num_rows())
                                : (A.num_rows() + 1) * 8.0 + A.nnz() * idx + 4.0 * F * (A.num_cols() + A.num_rows()) +
                                      A.nnz() * 4.0;
      const double flops = 2.0 * static_cast<double>(A.nnz()) * F;
      // Every backend built and checked first; kept (with its kernel objects and
      // buffers) until the rounds below have timed it.
      struct Prepared {
        Row row;
        Tensor out, Xlaid, Ylaid;  // X (and SDDMM's Y) in the plan's layout
        std::function<void()> fn;
        std::optional<sc::SpmmKernel> spk;
        std::optional<sc::SddmmKernel> sdk;
        std::optional<baselines::EigenSpmmBaseline> eig;
        std::optional<baselines::HandwrittenCsrSpmmBaseline> hand;
        std::string skipped;  // a row with nothing to time, and why
      };
      std::vector<std::unique_ptr<Prepared>> prepared;
      for (const auto& b : backends) {
        prepared.push_back(std::make_unique<Prepared>());
        Prepared& c = *prepared.back();  // heap-held: the timing closures keep its address
        c.row.graph = gspec;
        c.row.backend = b;
        c.row.F = F;
        c.out = spmm ? in_own_huge_pages({A.num_rows(), F}, DType::F32) : in_own_huge_pages({A.nnz()}, DType::F32);
        if (a.reduce != "sum" && (b == "eigen" || b == "handwritten")) {  // sum-only baselines
          prepared.pop_back();
          continue;
        }
        const bool tuned = b == "tuned" || b == "tuned_row";
        const bool from_file = b.rfind("plan:", 0) == 0;  // a recorded plan, replayed exactly
        const bool plain_csr = b == "plain_csr";
        // A backend that cannot be built for this graph and F (a plan that does not
        // fit, a failed compile, memory) is a FAIL or OOM cell; the others still run.
        try {
          if (b == "generated" || b == "reference" || b == "interpreter" || tuned || from_file || plain_csr) {
            const sc::Backend be =
                tuned || from_file || plain_csr ? sc::Backend::Generated : sc::parse_backend(b, "--backend");
            std::optional<sc::KernelPlan> plan;
            sc::SpmmOptions so;
            so.feat = F;
            so.reduce = mean ? sc::Reduce::Mean : sc::Reduce::Sum;
            so.row_scale = row_scale;
            so.col_scale = col_scale;
            const std::optional<sc::SpmmSpec> spec = spmm ? std::optional(sc::SpmmKernel::spec(A, so)) : std::nullopt;
            if (b == "generated" && a.format != "auto") plan = generated_plan(a, A, F, spec ? &*spec : nullptr);
            if (b == "plain_csr") plan = spmm ? sc::SpmmKernel::default_plan(*spec) : sc::SddmmKernel::default_plan();
            if (from_file) plan = sc::KernelPlan::from_json(read_file(b.substr(5)), b.substr(5));
            if (tuned || (b == "generated" && a.format == "auto")) {
              sc::TuneOptions to;
              to.quiet = true;
              // 'tuned' may choose the layout X is read in (X is converted outside the
              // timing, as its producer would write it); 'tuned_row' keeps row-major X.
              to.x_layouts = b != "tuned_row";
              if (spmm) {
                plan = sc::tune_spmm(A, *spec, to).chosen;
              } else {
                plan = sc::tune_sddmm(A, F, to).chosen;
              }
            }
            if (spmm) {
              sc::SpmmOptions o = so;
              o.backend = be;
              o.plan = plan;
              c.spk.emplace(A, o);
              c.row.plan = c.spk->plan().str();
              // X as its producer would write it for this plan (converted outside the timing).
              const sc::DenseLayout& xl = c.spk->plan().x_layout;
              c.Xlaid = xl.is_row() ? X : copy_in_own_huge_pages(sc::to_layout(X, xl));
              c.fn = [cp = &c] { cp->spk->run_into(cp->Xlaid, cp->out); };
            } else {
              c.sdk.emplace(A, sc::SddmmOptions{sc::SddmmKind::Dot, F, be, plan});
              c.row.plan = c.sdk->plan().str();
              // X and Y as their producers would write them for this plan (converted outside the timing).
              const sc::DenseLayout& xl = c.sdk->plan().x_layout;
              c.Xlaid = xl.is_row() ? X : copy_in_own_huge_pages(sc::to_layout(X, xl));
              c.Ylaid = xl.is_row() ? Yin : copy_in_own_huge_pages(sc::to_layout(Yin, xl));
              c.fn = [cp = &c] { cp->sdk->run_into(cp->Xlaid, cp->Ylaid, cp->out); };
            }
            if (be != sc::Backend::Generated) c.row.plan = "";
          } else if (b == "eigen") {
            c.eig.emplace(A);
            c.fn = [&X, cp = &c] { cp->eig->run(X, cp->out); };
          } else if (b == "handwritten") {
            if (!baselines::HandwrittenCsrSpmmBaseline::supports(F)) {  // not a failure: nothing to time
              c.skipped = "n/a (the baseline is compiled for F = 32, 64, 128, 256)";
              continue;
            }
            c.hand.emplace(A, F);
            c.fn = [&X, cp = &c] { cp->hand->run(X, cp->out); };
          } else {
            c.fn = [&A, &X, &Yin, cp = &c] { baselines::plain_sddmm_baseline(A, X, Yin, cp->out); };
          }
          c.fn();
        } catch (const std::bad_alloc&) {
          c.row.status = "OOM (out of memory building or running it)";
          continue;
        } catch (const UserError& e) {
          std::string why = e.what();
          std::replace(why.begin(), why.end(), '\n', ' ');
          c.row.status = "FAIL " + why;
          continue;
        }
        const CloseReport check = all_close(c.out, want, 1e-3, 1e-3);
        if (!check.ok) c.row.status = "MISMATCH " + check.str();
      }
      // The interpreter (seconds per call) is timed on its own, 3 calls; the rest
      // interleaved.
      std::vector<std::function<void()>> timed;
      std::vector<Prepared*> timed_rows;
      for (auto& c : prepared) {
        if (!c->skipped.empty() || c->row.status != "ok") continue;
        if (c->row.backend == "interpreter") {
          c->row.ms = time_backends({c->fn}, 3).front();
        } else {
          timed.push_back(c->fn);
          timed_rows.push_back(c.get());
        }
      }
      const std::vector<double> ms = timed.empty() ? std::vector<double>{} : time_backends(timed, a.repeats);
      for (size_t k = 0; k < timed_rows.size(); ++k) timed_rows[k]->row.ms = ms[k];
      double first_ms = 0;
      for (auto& c : prepared) {
        Row& row = c->row;
        const std::string& b = row.backend;
        if (!c->skipped.empty()) {
          if (!a.json_out) std::printf("  F=%-4lld %-12s %s\n", static_cast<long long>(F), b.c_str(), c->skipped.c_str());
          continue;
        }
        if (row.status == "ok") {
          row.gflops = flops / (row.ms * 1e6);
          row.gbs = bytes / (row.ms * 1e6);
          row.floor_share = (bytes / (stream_gbs * 1e9)) / (row.ms * 1e-3);
          if (first_ms == 0) first_ms = row.ms;
          row.speedup_vs_first = first_ms / row.ms;
        }
        if (!a.json_out) {
          if (row.status != "ok") {
            std::printf("  F=%-4lld %-12s %s\n", static_cast<long long>(F), b.c_str(), row.status.c_str());
          } else {
            std::printf("  F=%-4lld %-12s %9.3f ms %8.2f GFLOP/s %7.1f GB/s %5.1f%% of floor  %5.2fx vs %s  %s\n",
                        static_cast<long long>(F), b.c_str(), row.ms, row.gflops, row.gbs, 100 * row.floor_share,
                        row.speedup_vs_first, backends.front().c_str(), row.plan.c_str());
          }
          std::fflush(stdout);
        }
        rows.push_back(row);
      }
    }
  }
  if (a.json_out) {
    json j = {{"op", a.op}, {"threads", num_threads()}, {"stream_gbs", stream_gbs}, {"rows", json::array()}};
    for (const auto& r : rows)
      j["rows"].push_back({{"graph", r.graph}, {"F", r.F}, {"backend", r.backend}, {"plan", r.plan}, {"status", r.status},
                           {"ms", r.ms}, {"gflops", r.gflops}, {"gbs", r.gbs}, {"floor_share", r.floor_share}});
    std::printf("%s\n", j.dump(2).c_str());
  }
  for (const auto& r : rows)
    if (r.status != "ok") return 1;
  return 0;
}

RegisterCommand reg({"bench", "Time spmm or sddmm backends on graphs, checked against the reference first",
                     [](CLI::App& app) {
                       auto a = std::make_shared<BenchArgs>();
                       app.add_option("op", a->op, "spmm or sddmm")->required();
                       app.add_option("--graph", a->graphs, "dataset string; repeat for several graphs")
                           ->required();
                       app.add_option("--feat", a->feats, "feature sizes")->capture_default_str();
                       app.add_option(
                           "--backend", a->backends,
                           "generated (the untuned plan for the graph), plain_csr (the plan template: csr, "
                           "no prefetch, plain stores), tuned, tuned_row (row-major X only), reference, "
                           "interpreter, eigen, handwritten, plain, plan:FILE (replay a plan JSON); "
                           "default: generated,reference,eigen for spmm, generated,reference,plain for sddmm");
                       app.add_option("--format", a->format, "plan format for 'generated': untuned (the untuned plan's: "
                                                             "dcsr:cols=.. on graphs with long rows, else csr), csr, coo, "
                                                             "dcsr, dcsr:cols=.., ell:w=.., bsr:b=.., hyb:c=..,B=.., or "
                                                             "auto (tuned)")
                           ->capture_default_str();
                       // Unset knobs keep the untuned plan's values (csr) or the template's.
                       app.add_option("--prefetch", a->prefetch,
                                      "'generated': prefetch distance in non-zeros, 0 (none) or auto (~16 KiB ahead)");
                       app.add_option("--stream", a->stream, "'generated' spmm: streaming stores on or off");
                       app.add_option("--tasks", a->tasks,
                                      "'generated': tasks to threads in fixed blocks (static) or one by one as threads "
                                      "free up (dynamic)");
                       app.add_option("--tile", a->tile, "'generated': feature tile (0: none)")->check(integer_at_least(0));
                       app.add_option("--grain", a->grain, "'generated': non-zeros per task")->check(integer_at_least(1));
                       app.add_option("--x-layout", a->x_layout,
                                      "'generated': X layout row, pad:P or panel:W (sddmm: X and Y, row or panel:W)");
                       app.add_option("--accumulator-sets", a->accumulator_sets,
                                      "'generated' spmm on csr: accumulator sets a row's non-zeros alternate between")
                           ->check(integer_in(1, 8));
                       app.add_option(
                           "--edge-groups", a->edge_groups,
                           "'generated' sddmm (dot) on csr or coo: on: a row's edges (coo: consecutive slots, "
                           "whatever their rows) a vector's lanes at a time, summed by one transposing "
                           "reduction");
                       app.add_option("--pairs", a->pairs,
                                      "'generated' spmm on csr: R or R:M, R rounds of shared neighbour pairs summed "
                                      "once before the rows (a pair when M rows hold it, default 4; 0: off)");
                       app.add_option("--data-root", a->data_root, "dataset folder (default: ../shared/datasets)");
                       app.add_option("--threads", a->threads, "threads (default: all cores)")
                           ->check(integer_in(1, 4096));
                       app.add_option("--reduce", a->reduce,
                                      "spmm: sum, mean or gcn (D^-1/2 A D^-1/2: row and column scales)")
                           ->capture_default_str();
                       app.add_option("--repeats", a->repeats,
                                      "timed samples per row, each a batch of calls lasting at least 0.5 ms")
                           ->capture_default_str()
                           ->check(integer_at_least(1));
                       app.add_flag("--as-stored", a->as_stored, "do not symmetrize undirected datasets");
                       app.add_flag("--json", a->json_out, "print JSON instead of a table");
                       return [a] { return run_bench(*a); };
                     }});

}  // namespace
}  // namespace strata::apps
