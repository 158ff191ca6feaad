#include "sparse_compiler/tune/cost_model.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"

namespace strata::sc {

MachineModel MachineModel::host() {
  MachineModel m;
  m.threads = num_threads();
  m.l2_bytes = static_cast<double>(host_l2_bytes());
  m.flops_per_s = 30e9 * m.threads;
  return m;
}

namespace {

// Probability that a gathered row of X is still cached, for a working set `ws`
// gathered `touches` times in total: rows reused across the pass stay resident in
// proportion to the cache they fit in.
double hit_ratio(double ws_bytes, double cache_bytes) {
  if (ws_bytes <= cache_bytes) return 1.0;
  return std::max(0.0, cache_bytes / ws_bytes);
}

double gather_seconds(double bytes_missed, bool prefetch, const MachineModel& m) {
  const double eff = prefetch ? m.prefetch_efficiency : m.gather_efficiency;
  return bytes_missed / (m.bandwidth_gbs * 1e9 * eff);
}

}  // namespace

FormatEstimate estimate_format(const GraphFingerprint& g, const FormatSpec& f) {
  FormatEstimate e;
  if (f.kind == FormatKind::Csr || f.kind == FormatKind::Coo) {
    e.slots = static_cast<double>(g.nnz);
    e.outer_rows = static_cast<double>(g.rows);
    return e;
  }
  if (f.kind == FormatKind::Dcsr && f.col_tile > 0) {
    // One entry per non-empty (row, tile) segment.
    const double T = static_cast<double>(f.tile_count(g.cols));
    e.slots = static_cast<double>(g.nnz);
    for (size_t k = 1; k < g.row_histogram.size(); ++k)
      e.outer_rows += static_cast<double>(g.row_histogram[k]) * expected_tile_segments(GraphFingerprint::bucket_degree(k), T);
    return e;
  }
  if (f.kind == FormatKind::Dcsr) {
    e.slots = static_cast<double>(g.nnz);
    e.outer_rows = static_cast<double>(g.rows - g.empty_rows);
    return e;
  }
  if (f.kind == FormatKind::Bsr) {
    // Blocks: with b rows per block and neighbours spread over b-wide column
    // blocks, a block row touches about min(b * d, cols / b) distinct blocks.
    const double b = static_cast<double>(f.block);
    const double d = static_cast<double>(g.nnz) / std::max<int64_t>(1, g.rows);
    const double block_rows = std::ceil(static_cast<double>(g.rows) / b);
    const double blocks = block_rows * std::min(b * d, std::ceil(static_cast<double>(g.cols) / b));
    e.slots = blocks * b * b;
    e.outer_rows = block_rows * b;
    return e;
  }
  const std::vector<int64_t> widths = f.bucket_widths();
  const double c = f.kind == FormatKind::Hyb ? static_cast<double>(f.col_parts) : 1.0;
  const double W = static_cast<double>(widths.back());
  for (size_t k = 1; k < g.row_histogram.size(); ++k) {
    const double rows = static_cast<double>(g.row_histogram[k]);
    const double d = GraphFingerprint::bucket_degree(k) / c;  // per column part
    const double parts = std::min(c, GraphFingerprint::bucket_degree(k));
    const double dp = std::max(1.0, GraphFingerprint::bucket_degree(k) / parts);
    double width = W;
    for (int64_t w : widths)
      if (static_cast<double>(w) >= dp) {
        width = static_cast<double>(w);
        break;
      }
    const double pieces = std::ceil(dp / width);
    e.outer_rows += rows * parts * pieces;
    e.slots += rows * parts * pieces * width;
    (void)d;
  }
  return e;
}

bool x_outgrows_cache(const GraphFingerprint& g, int64_t feat, const MachineModel& m) {
  return static_cast<double>(g.cols) * static_cast<double>(feat) * 4 > m.cache_bytes;
}

bool column_parts_may_pay(const GraphFingerprint& g, int64_t feat, const MachineModel& m) {
  const double x_bytes = static_cast<double>(g.cols) * static_cast<double>(feat) * 4;
  return x_bytes > m.l2_bytes && g.nnz >= 64 * std::max<int64_t>(1, g.cols);
}

double predict_spmm_ms(const GraphFingerprint& g, const SpmmSpec& spec, const KernelPlan& plan, const MachineModel& m) {
  if (plan.pair_rounds > 0) {
    // What shared pairs save shows only once the inspector has run: rank them behind
    // their CSR twin (the copy of X they add), and let the tuner measure one.
    KernelPlan twin = plan;
    twin.pair_rounds = 0;
    return 1.25 * predict_spmm_ms(g, spec, twin, m);
  }
  const double F = static_cast<double>(spec.feat), nnz = static_cast<double>(g.nnz);
  const double idx = static_cast<double>(dtype_size(g.index_dtype));
  const FormatEstimate fe = estimate_format(g, plan.format);
  const FormatKind kind = plan.format.kind;
  const double tile = plan.feature_tile > 0 ? static_cast<double>(plan.feature_tile) : F;
  const double tiles = std::ceil(F / tile);
  // Column parts (hyb) or tiles (dcsr:cols): X's working set is one part's or tile's rows.
  const double c = kind == FormatKind::Hyb ? static_cast<double>(plan.format.col_parts)
                   : kind == FormatKind::Dcsr ? static_cast<double>(plan.format.tile_count(g.cols))
                                              : 1.0;
  // X rows gathered: one per stored slot; padding repeats a real column (cached).
  // A feature tile shrinks the working set only when the tile's part of X is
  // compact (a panel, or rows padded off the power-of-two stride); over plain
  // row-major X the lines of one tile are spread over every page of X.
  const bool compact_tile = !plan.x_layout.is_row() || tile >= F;
  const double ws = static_cast<double>(g.cols) / c * (compact_tile ? tile : F) * 4;
  const double h = hit_ratio(ws, m.cache_bytes);
  const double x_miss_bytes = nnz * tile * 4 * (1 - h) * tiles + std::min(ws * c, nnz * tile * 4) * tiles * h;
  double struct_bytes = (g.rows + 1) * 8.0 + nnz * idx + (spec.weighted ? nnz * 4 : 0);
  double y_bytes = static_cast<double>(g.rows) * F * 4;
  double overhead_rows = static_cast<double>(g.rows);
  if (plan.format.decomposed()) {
    // Slots carry a column and an edge id; every ELL row loads and stores its
    // output row once; the init zeroes all rows first.
    struct_bytes = fe.slots * 2 * idx + fe.outer_rows * idx + (spec.weighted ? nnz * 4 : 0);
    // A column tile's segments revisit the rows of one task, whose outputs stay
    // cached: they cost per-row overhead, not memory traffic.
    if (!(kind == FormatKind::Dcsr && plan.format.col_tile > 0)) y_bytes += fe.outer_rows * F * 4 * 2;
    overhead_rows = fe.outer_rows + static_cast<double>(g.rows);
  } else if (kind == FormatKind::Coo) {
    struct_bytes += nnz * 8;  // the hoisted row of every non-zero
    y_bytes += nnz * F * 4 * 2 * 0.25;  // Y row reloaded per non-zero (mostly cached)
    overhead_rows = nnz;
  }
  struct_bytes *= tiles;  // every feature tile walks the structure again
  // A plain store of an uncached output line first reads it (read for ownership);
  // a streaming store does not, but also leaves nothing cached for a small Y.
  const double y_out = static_cast<double>(g.rows) * F * 4;
  if (!plan.knobs.stream_stores) y_bytes += y_out * (1 - hit_ratio(y_out, m.cache_bytes));
  const bool prefetch = plan.knobs.prefetch > 0 && kind == FormatKind::Csr;
  const double mem_s = (struct_bytes + y_bytes) / (m.bandwidth_gbs * 1e9) + gather_seconds(x_miss_bytes, prefetch, m);
  const double compute_s = 2 * fe.slots * F / m.flops_per_s;
  const double overhead_s = overhead_rows * m.row_overhead_ns * 1e-9 / m.threads * tiles;
  // Too coarse a grain leaves a thread idle at the end; too fine costs scheduling.
  const double tasks = std::max(1.0, fe.slots / static_cast<double>(plan.knobs.grain));
  double balance = 1.0 + std::min(1.0, static_cast<double>(m.threads) / tasks) * 0.5 + tasks * 2e-7;
  if (plan.knobs.static_tasks) balance += m.static_imbalance;
  const double dispatch_s = plan.knobs.static_tasks ? 0 : tasks * m.task_dispatch_us * 1e-6 / m.threads;
  // A loop of one task runs on the calling thread (see the CPU emitter): no team.
  const bool team = std::ceil(fe.slots / static_cast<double>(plan.knobs.grain)) > 1 && m.threads > 1;
  const double team_s = team ? m.team_wakeup_us * 1e-6 : 0;
  return ((std::max(mem_s, compute_s) + overhead_s) * balance + dispatch_s + team_s) * 1e3;
}

double predict_sddmm_ms(const GraphFingerprint& g, int64_t feat, const KernelPlan& plan, const MachineModel& m) {
  SpmmSpec spec;
  spec.feat = feat;
  // SDDMM gathers like SpMM and additionally writes one value per edge; its Y
  // traffic is the X row per output row.
  const double base = predict_spmm_ms(g, spec, plan, m);
  // Panel by panel, O is zeroed first and every pass reads and writes it again.
  const bool panels = !plan.x_layout.is_row() && plan.feature_tile > 0 && plan.feature_tile < feat;
  const double passes = panels ? std::ceil(static_cast<double>(feat) / static_cast<double>(plan.feature_tile)) : 1;
  const double o_bytes = static_cast<double>(g.nnz) * 4 * (panels ? 2 * passes : 1);
  return base + o_bytes / (m.bandwidth_gbs * 1e9) * 1e3;
}

}  // namespace strata::sc
