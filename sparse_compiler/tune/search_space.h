// The plans the tuner chooses among, per op: sparse formats (csr, coo, dcsr, ell,
// bsr, hyb with column parts and bucket widths) crossed with the schedule knobs
// that DESIGN.md measured to matter on CPUs (software-prefetch distance, feature
// tile, the layout X is read in, task grain). The default space is what the cost model ranks; the
// exhaustive space is the whole grid, measured by `strata tune --exhaustive`. Page size is not
// searched: buffers from 4 MiB up get huge pages in every plan (core/host_memory.h), and smaller
// ones gained nothing from them (docs/BENCHMARKS.md, "Buffers in 2 MiB pages").
#pragma once

#include <vector>

#include "sparse_compiler/ops/plan.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/ops/untuned_knobs.h"  // default_prefetch_distance, column tiles
#include "sparse_compiler/tune/graph_fingerprint.h"

namespace strata::sc {

// With `x_layouts`, CSR candidates also read X in panel and padded layouts
// (dense_layout.h) — only for callers that can supply X in the chosen layout.
// Non-zeros per parallel task to try: 4096 and 16384 (and 1024 when exhaustive),
// plus, on graphs too small to give every thread many such tasks, the powers of
// two that give each thread about 4 and about 32 (when at least 256 non-zeros).
std::vector<int64_t> task_grains(const GraphFingerprint& g, int threads, bool exhaustive);

// What the tuner measures next to the best measured plan, at most n plans: when it
// prefetches, its prefetch distance halved and quadrupled first (the cost model
// prices prefetch as on or off, and the default space holds one distance d; these
// are the exhaustive space's d/2 and 4d), then the plans of `untried` (in rank
// order) that differ from it in one knob; never a plan of `tried`.
std::vector<KernelPlan> neighbour_plans(const KernelPlan& best, const std::vector<KernelPlan>& untried,
                                        const std::vector<KernelPlan>& tried, int n);

// How many schedule choices two plans differ in (format, lanes, grain, prefetch,
// streaming stores, feature tile, X layout): 1 makes them neighbours, which the
// tuner measures around its best ranked candidate.
int plan_distance(const KernelPlan& a, const KernelPlan& b);

// A plan over panels of X with streaming stores and no prefetch: a kind the cost
// model ranks below plans it beats (Pubmed, CA-GrQc at F = 128, 256), so the
// default space offers it in fixed task blocks too and the tuner samples it.
bool is_streaming_panel_without_prefetch(const KernelPlan& p);

// The column-tiled plans worth measuring on `g`: every width of
// column_tile_widths whose segments may pay (untuned_knobs.h; all widths when
// exhaustive), at the coarsest grain of `grains` and at column_tile_grain.
std::vector<KernelPlan> column_tile_plans(const GraphFingerprint& g, int64_t F, int lanes,
                                          const std::vector<int64_t>& grains, bool exhaustive);

std::vector<KernelPlan> spmm_search_space(const GraphFingerprint& g, const SpmmSpec& spec, int lanes, bool exhaustive,
                                          bool x_layouts = false);
// With x_layouts, SDDMM also reads X and Y panel by panel (x_layout panel:W with
// feature tile W, W < F): one pass over the edges per panel, with and without
// static tasks, and Y-row prefetch at ~16 KiB and ~8 KiB ahead of a panel's rows;
// in the default space only panels of 64, where columns average 8 non-zeros or more.
std::vector<KernelPlan> sddmm_search_space(const GraphFingerprint& g, int64_t feat, int lanes, bool exhaustive,
                                           bool x_layouts = false);

}  // namespace strata::sc
