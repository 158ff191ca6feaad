#include "sparse_compiler/tune/search_space.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/tune/cost_model.h"

namespace strata::sc {

namespace {

KernelPlan make(const std::string& format, int lanes, int64_t grain, int64_t prefetch, int64_t tile) {
  KernelPlan p;
  p.format = FormatSpec::parse(format);
  p.knobs.vector_lanes = lanes;
  p.knobs.grain = grain;
  p.knobs.prefetch = prefetch;
  p.feature_tile = tile;
  return p;
}

// Bucket limits worth trying: around the degrees that hold most non-zeros.
std::vector<int64_t> bucket_limits(const GraphFingerprint& g) {
  std::vector<int64_t> out;
  const int64_t top = std::max<int64_t>(0, static_cast<int64_t>(g.row_histogram.size()) - 2);
  for (int64_t b : {int64_t{3}, int64_t{5}, std::min<int64_t>(top, 7)})
    if (std::find(out.begin(), out.end(), b) == out.end() && b >= 0) out.push_back(b);
  return out;
}

// Feature tile widths: 32 and 64, and 128 where F is large enough that a 128-wide
// tile is still a split (measured: the best tile on MUSAE Facebook at F = 256).
std::vector<int64_t> tiles_for(int64_t F, bool exhaustive) {
  std::vector<int64_t> t = {0};
  for (int64_t w : exhaustive || F >= 256 ? std::vector<int64_t>{32, 64, 128} : std::vector<int64_t>{32, 64})
    if (w < F && F % w == 0) t.push_back(w);
  return t;
}

}  // namespace

std::vector<KernelPlan> column_tile_plans(const GraphFingerprint& g, int64_t F, int lanes,
                                          const std::vector<int64_t>& grains, bool exhaustive) {
  std::vector<KernelPlan> out;
  // A task's rows share each tile's X rows: coarse tasks reuse them most.
  std::vector<int64_t> tile_grains = {grains.back()};
  if (const int64_t coarse = column_tile_grain(g.nnz, num_threads()); coarse > grains.back()) tile_grains.push_back(coarse);
  for (int64_t w : column_tile_widths(F, exhaustive)) {
    if (!exhaustive && !column_tiles_may_pay(g, F, w)) continue;
    for (int64_t grain : tile_grains) out.push_back(make("dcsr:cols=" + std::to_string(w), lanes, grain, 0, 0));
  }
  return out;
}

std::vector<int64_t> task_grains(const GraphFingerprint& g, int threads, bool exhaustive) {
  std::vector<int64_t> out = exhaustive ? std::vector<int64_t>{1024, 4096, 16384} : std::vector<int64_t>{4096, 16384};
  const int64_t smallest_fixed = out.front();
  // A graph of a few thousand edges gets one or two 4096-non-zero tasks, which
  // leaves a thread idle: add the grain that gives every thread about four tasks.
  // A mid-sized one (Pubmed: 89 k non-zeros) gets ~11 tasks per thread, and its
  // rows differ enough in cost that the last task decides the time: add the grain
  // that gives every thread about 32 tasks.
  for (int64_t tasks_per_thread : {int64_t{4}, int64_t{32}}) {
    int64_t grain = 1;
    while (grain * 2 <= g.nnz / (tasks_per_thread * std::max(1, threads))) grain *= 2;
    if (grain >= 256 && grain < smallest_fixed && std::find(out.begin(), out.end(), grain) == out.end())
      out.push_back(grain);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_streaming_panel_without_prefetch(const KernelPlan& p) {
  return p.feature_tile > 0 && !p.x_layout.is_row() && p.knobs.stream_stores && p.knobs.prefetch == 0;
}

int plan_distance(const KernelPlan& a, const KernelPlan& b) {
  return !(a.format == b.format) + (a.knobs.vector_lanes != b.knobs.vector_lanes) + (a.knobs.grain != b.knobs.grain) +
         (a.knobs.prefetch != b.knobs.prefetch) + (a.knobs.stream_stores != b.knobs.stream_stores) +
         (a.knobs.static_tasks != b.knobs.static_tasks) + (a.knobs.accumulator_sets != b.knobs.accumulator_sets) +
         (a.knobs.edge_groups != b.knobs.edge_groups) + (a.feature_tile != b.feature_tile) +
         !(a.x_layout == b.x_layout);
}

std::vector<KernelPlan> neighbour_plans(const KernelPlan& best, const std::vector<KernelPlan>& untried,
                                        const std::vector<KernelPlan>& tried, int n) {
  std::vector<KernelPlan> out;
  auto add = [&](const KernelPlan& p) {
    if (static_cast<int>(out.size()) < n && std::find(out.begin(), out.end(), p) == out.end() &&
        std::find(tried.begin(), tried.end(), p) == tried.end())
      out.push_back(p);
  };
  // Halved, doubled and quadrupled: on R-MAT 17 at F = 128 with panels of 32, 2
  // threads, 32 / 64 / 128 / 256 non-zeros ahead ran 18.6 / 16.8 / 17.8 / 19.6 ms,
  // so a step of 4 alone skips the best.
  if (const int64_t pf = best.knobs.prefetch; pf > 1)
    for (int64_t other : {pf / 2, pf * 2, pf * 4}) {
      KernelPlan p = best;
      p.knobs.prefetch = other;
      add(p);
    }
  for (const KernelPlan& p : untried)
    if (plan_distance(p, best) == 1) add(p);
  return out;
}

std::vector<KernelPlan> spmm_search_space(const GraphFingerprint& g, const SpmmSpec& spec, int lanes, bool exhaustive,
                                          bool x_layouts) {
  const int64_t F = spec.feat;
  std::vector<KernelPlan> out;
  const std::vector<int64_t> grains = task_grains(g, num_threads(), exhaustive);
  // ~16 KiB ahead of what a non-zero reads: its tile of X's row when tiled.
  const auto prefetches = [&](int64_t tile) {
    const int64_t d = default_prefetch_distance(tile > 0 ? tile : F);
    return exhaustive ? std::vector<int64_t>{0, d / 2, d, 4 * d} : std::vector<int64_t>{0, d};
  };
  for (int64_t grain : grains)
    for (size_t k = 0; k < prefetches(0).size(); ++k)
      for (int64_t tile : tiles_for(F, exhaustive)) {
        const int64_t pf = prefetches(tile)[k];
        out.push_back(make("csr", lanes, grain, pf, tile));
        if (!x_layouts || tile == 0) continue;
        // The same tile over a panel of X (contiguous per tile) or padded rows.
        out.push_back(make("csr", lanes, grain, pf, tile));
        out.back().x_layout = DenseLayout::panel(tile);
        if (exhaustive) {
          out.push_back(make("csr", lanes, grain, pf, tile));
          out.back().x_layout = DenseLayout::padded(16);
        }
      }
  // Streaming stores of Y (whole vectors only): every untiled CSR plan again, and
  // the best-guess tiled ones. They pay once Y nears the last-level cache (AMD
  // EPYC VM, 32 MiB L3: Facebook at F = 256, a 23 MB Y, 1.16x over plain stores)
  // and cost where Y fits (Cora 0.75-0.88x, Pubmed 0.59-0.92x), each plan timed on
  // its own (`strata bench --backend plan:A.json,plan:B.json`). Over panels of X
  // also without prefetch: the exhaustive search's pick on Pubmed and CA-GrQc at
  // F = 128 and 256 (Xeon VM, 2 threads, in `strata bench` beside the default
  // pick: 1.04-1.25x it, 1.29-1.53x plain CSR), a plan the default space lacked.
  const auto tiled_stream_guess = [&](const KernelPlan& p) {
    if (p.knobs.grain != grains.back()) return false;
    return p.knobs.prefetch == prefetches(p.feature_tile)[1] || (p.knobs.prefetch == 0 && !p.x_layout.is_row());
  };
  if (F % lanes == 0) {
    const size_t n = out.size();
    for (size_t k = 0; k < n; ++k)
      if (exhaustive || out[k].feature_tile == 0 || tiled_stream_guess(out[k])) {
        out.push_back(out[k]);
        out.back().knobs.stream_stores = true;
      }
  }
  // Tasks handed to threads in fixed blocks (Schedule::static_tasks): every
  // untiled CSR plan again (every CSR plan when exhaustive). On graphs whose
  // kernel takes a few microseconds the dynamic hand-out is a sizeable share
  // (Xeon VM, 2 threads, grain 512, side by side: Cora F = 64 0.012 against 0.021
  // ms, ca-grqc F = 64 0.047 against 0.066); on larger ones it can lose balance.
  // And the panel plans with streaming stores and no prefetch: static, they were
  // the exhaustive pick on CA-GrQc at F = 128 and 256, and the default pick on
  // Pubmed at F = 256 became one, 1.18x the row-major plan picked before (three
  // `strata bench` processes).
  {
    const size_t n = out.size();
    for (size_t k = 0; k < n; ++k)
      if (exhaustive || out[k].feature_tile == 0 || is_streaming_panel_without_prefetch(out[k])) {
        out.push_back(out[k]);
        out.back().knobs.static_tasks = true;
      }
  }
  // Accumulator sets (CpuKnobs::accumulator_sets): every untiled CSR plan again
  // with two sets where a row's features fill at most one vector, so that its
  // adds form one dependent chain, and rows average 16 non-zeros or more (Xeon
  // VM, F = 16, 2 threads, side by side: ogbl-ddi 1.57x, Squirrel 1.33x, ACM
  // 1.23x, bcsstk13 1.20x; 0.73-0.97x on every graph with shorter rows, where a
  // pick of two sets could only be timing noise on a kernel of microseconds);
  // when exhaustive, two and four sets up to two vectors (F = 32: 0.87-1.01x).
  if (F <= (exhaustive ? 2 * lanes : lanes) && (exhaustive || g.nnz >= 16 * std::max<int64_t>(g.rows, 1))) {
    const size_t n = out.size();
    for (size_t k = 0; k < n; ++k)
      if (out[k].feature_tile == 0 && out[k].x_layout.is_row())
        for (int sets : exhaustive ? std::vector<int>{2, 4} : std::vector<int>{2}) {
          out.push_back(out[k]);
          out.back().knobs.accumulator_sets = sets;
        }
  }
  // Shared neighbour pairs (KernelPlan::pair_rounds): the CSR plans at the coarsest grain
  // again, over rows rewritten to read pairs of columns they share summed once. What they
  // save is known only after the inspector has run (Xeon VM, 2 threads, side by side with
  // plain CSR: Squirrel 1.9-2.4x, bcsstk13 1.25-2.1x, ogbl-ddi 1.0-1.8x; ACM 0.6-1.0x, and
  // nothing on Cora, whose rows share little), so the model cannot rank them and the tuner
  // measures the best-placed one. Only where rows average 8 non-zeros or more: sharing needs
  // rows to share in. Edge values do not factor through a sum; column scales do.
  if (!spec.weighted && (exhaustive || g.nnz >= 8 * std::max<int64_t>(g.rows, 1))) {
    const size_t n = out.size();
    for (size_t k = 0; k < n; ++k)
      if (out[k].feature_tile == 0 && out[k].x_layout.is_row() && out[k].knobs.accumulator_sets == 1 &&
          out[k].knobs.grain == grains.back())
        for (int rounds : exhaustive ? std::vector<int>{2, 4} : std::vector<int>{4}) {
          out.push_back(out[k]);
          out.back().pair_rounds = rounds;
        }
  }
  std::vector<std::string> formats = {"dcsr", "coo", "ell:w=8", "bsr:b=4"};
  for (int64_t c : exhaustive ? std::vector<int64_t>{1, 2, 4} : std::vector<int64_t>{1, 2})
    for (int64_t B : bucket_limits(g)) formats.push_back("hyb:c=" + std::to_string(c) + ",B=" + std::to_string(B));
  if (exhaustive) formats.push_back("ell:w=16");
  // The formats at the finest and the coarsest grain: a decomposed format's task
  // also reloads and stores the output rows it touches, so coarse tasks can pay
  // (measured: hyb:c=2,B=5 on ogbl-ddi at F = 256 runs 1.4x faster in tasks of
  // 16384 slots than of 4096), which one grain would never show.
  std::vector<int64_t> format_grains = {grains.front()};
  if (grains.back() != grains.front()) format_grains.push_back(grains.back());
  for (const auto& f : formats)
    for (int64_t grain : exhaustive ? grains : format_grains) out.push_back(make(f, lanes, grain, 0, 0));
  for (const KernelPlan& p : column_tile_plans(g, F, lanes, grains, exhaustive)) out.push_back(p);
  return out;
}

std::vector<KernelPlan> sddmm_search_space(const GraphFingerprint& g, int64_t F, int lanes, bool exhaustive,
                                           bool x_layouts) {
  const int64_t d = default_prefetch_distance(F);
  std::vector<KernelPlan> out;
  const std::vector<int64_t> grains = task_grains(g, num_threads(), exhaustive);
  for (int64_t grain : grains)
    for (int64_t pf : exhaustive ? std::vector<int64_t>{0, d / 2, d, 4 * d} : std::vector<int64_t>{0, d})
      for (bool fixed : {false, true}) {
        out.push_back(make("csr", lanes, grain, pf, 0));
        out.back().knobs.static_tasks = fixed;  // as in spmm_search_space
      }
  // Panels of X and Y: each pass gathers from one W-wide slice of Y, which the
  // caches hold where the whole of Y does not, and adds its partial dot products
  // into O (Xeon VM, 2 threads, panels of 64 with 32 non-zeros ahead against
  // the plan template: MUSAE Facebook 1.46x at F = 128, 1.74x at F = 256; GitHub
  // 1.30x, 1.54x). Where Y fits they only repeat the walk over the structure,
  // and where a row of Y is gathered only a few times (Pubmed, MUTAG, IMDB: 4-6
  // non-zeros per column) the slice it comes from matters little: there the
  // picks were timing noise (0.63-1.01x in the benchmark that followed), so the
  // default space holds panels where columns average 8 non-zeros or more, and
  // only of 64: panels of 32 lost to them on every graph of the experiment
  // (benchmarks/experiments/sddmm_panels.cpp), and at F = 64 to the row.
  if (x_layouts && (exhaustive || g.nnz >= 8 * std::max<int64_t>(g.cols, 1)))
    for (int64_t w : exhaustive ? tiles_for(F, true) : std::vector<int64_t>{64}) {
      if (w == 0 || w >= F) continue;
      const int64_t dw = default_prefetch_distance(w);
      for (int64_t grain : grains)
        for (int64_t pf :
             exhaustive ? std::vector<int64_t>{0, dw / 4, dw / 2, dw} : std::vector<int64_t>{0, dw / 2, dw})
          for (bool fixed : {false, true}) {
            out.push_back(make("csr", lanes, grain, pf, w));
            out.back().x_layout = DenseLayout::panel(w);
            out.back().knobs.static_tasks = fixed;
          }
    }
  // Edge groups (CpuKnobs::edge_groups): every row-major CSR plan again with a
  // row's edges summed `lanes` at a time by one transposing reduction. They pay
  // where rows are long and F is small (Xeon VM, 2 threads, against the plan
  // template: ACM, Squirrel, ogbl-ddi 1.44-1.48x at F = 32, 1.22-1.24x at F = 64,
  // 1.06-1.16x at F = 128) and cost where rows are short (Cora 0.80x at F = 32:
  // most edges fall in the rest of a row). The default space holds them where
  // rows average 16 non-zeros or more.
  if (lanes >= 4 && F % lanes == 0 && (exhaustive || g.nnz >= 16 * std::max<int64_t>(g.rows, 1))) {
    const size_t n = out.size();
    for (size_t k = 0; k < n; ++k)
      if (out[k].x_layout.is_row()) {
        out.push_back(out[k]);
        out.back().knobs.edge_groups = true;
      }
  }
  // Edge groups over COO slots: `lanes` consecutive edges at a time whatever rows
  // they belong to, each reading its row of X. Where rows are short, CSR's groups
  // rarely fill and each row's end costs a branch; over slots every edge is in a
  // group but a task's last few (Xeon VM, 2 threads, F = 32, against the plan
  // template: Pubmed 1.73x, CA-GrQc 1.57x, AIFB 1.49x, IMDB 1.40x, Cora 1.36x,
  // DBLP 1.24x; at F = 64 1.06-1.20x, and 0.8-1.0x from F = 128 on, where the
  // horizontal sums weigh little, except where Y is small: Cora 1.16x, Citeseer
  // 1.68x at F = 128, Cora 1.20x at F = 256). The default space holds them up to
  // four vectors of features, and at any width where Y is under four L2s.
  const bool small_y = slot_groups_y_in_cache(g.cols * F * static_cast<int64_t>(sizeof(float)));
  if (lanes >= 4 && F % lanes == 0 && (exhaustive || F <= 4 * lanes || small_y))
    for (int64_t grain : exhaustive ? grains : std::vector<int64_t>{grains.front()})
      for (bool fixed : {false, true}) {
        out.push_back(make("coo", lanes, grain, 0, 0));
        out.back().knobs.static_tasks = fixed;
        out.back().knobs.edge_groups = true;
      }
  std::vector<std::string> formats = {"coo", "dcsr", "ell:w=8"};
  for (int64_t B : bucket_limits(g)) formats.push_back("hyb:c=1,B=" + std::to_string(B));
  for (const auto& f : formats)
    for (int64_t grain : exhaustive ? grains : std::vector<int64_t>{grains.front()}) out.push_back(make(f, lanes, grain, 0, 0));
  // Column tiles keep the gathered rows of Y in L1/L2 for SDDMM as for SpMM
  // (ogbl-ddi, 2 threads: 1.15x at F = 32, 1.4x at F = 128 over CSR).
  for (const KernelPlan& p : column_tile_plans(g, F, lanes, grains, exhaustive)) out.push_back(p);
  return out;
}

}  // namespace strata::sc
