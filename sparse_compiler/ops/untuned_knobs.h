// The CPU schedule knobs a kernel gets without tuning, chosen from sizes alone.
//
// The tuner measures; an untuned kernel (tuning off in a config, `strata bench
// --backend generated`) still knows how large its operands are when its graph is
// bound. These knobs pay by size alone, measured on every graph of the shared data
// root at F = 32..256, 2 threads (docs/BENCHMARKS.md, "Untuned plans"):
//   - streaming (non-temporal) stores once the output Y outgrows the cache: no
//     read-for-ownership of Y's lines, and X is not evicted by them. 0.92-2.2x
//     (median 1.21x; one case in 38 below 1) from Y = 8 MiB up; below, 0.6-1.4x
//     (median 1.03x; a small Y is better left in cache).
//   - software prefetch of the gathered X rows (~16 KiB ahead) once X outgrows
//     twice that cache: 0.99-1.39x there; on graphs whose X stays cached it
//     only costs instructions (down to 0.67-0.78x on Citeseer, bcsstk13 and ddi).
//   - column tiles (format dcsr:cols) where each row's share of a tile is long
//     (ogbl-ddi: 1.3-1.9x over CSR at F = 32..256); see column_tiles_may_pay.
//   - two accumulator sets where a row's features fill at most one vector and
//     rows are long; see untuned_accumulator_sets.
// GAT's row programs, whose per-edge work is heavier, take the gather prefetch
// from a much smaller gathered buffer (half an L2); see untuned_gather_knobs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/graph.h"
#include "sparse_compiler/formats/format_spec.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/tune/graph_fingerprint.h"

namespace strata::sc {

// The prefetch distance (in non-zeros) that keeps ~16 KiB of X rows in flight.
int64_t default_prefetch_distance(int64_t feat);

// The cache an untuned kernel assumes (the cost model's effective last-level cache).
inline constexpr int64_t kUntunedCacheBytes = int64_t{8} << 20;

// The SpMM feature tile without tuning: none up to 256 floats (a row's
// accumulators fit the register file); beyond, 128 where it divides F, else the
// largest divisor of F in [64, 256] that is a multiple of 8; 0 when there is none
// (rows of up to Schedule::kMaxStagedElements floats are then staged whole,
// wider ones summed in Y itself).
int64_t untuned_feature_tile(int64_t feat);

// `base` with streaming stores and X prefetch switched on where the sizes say
// they pay, for a CSR SpMM writing `out_rows` x feat floats and gathering from
// `x_rows` x feat floats. Streaming stores need feat (and `feature_tile`, 0 for
// none) to be multiples of the vector lanes, and rows staged in locals; otherwise
// they stay off.
CpuKnobs untuned_spmm_knobs(CpuKnobs base, int64_t feat, int64_t feature_tile, int64_t out_rows, int64_t x_rows);

// SDDMM (dot): Y-row prefetch (~16 KiB ahead) once Y, the gathered operand,
// reaches 32 MiB. SDDMM also streams X's rows and writes one value per edge, so
// its gathers need a larger Y than SpMM's to be what it waits for. Measured on 12
// graphs x F = 64..256, 2 threads, against the template in one process: 0.99-1.26x
// (median 1.10x) from 32 MiB up; between 16 and 32 MiB 0.84-1.14x (Pubmed F = 256
// 0.84x, 19 MiB).
CpuKnobs untuned_sddmm_knobs(CpuKnobs base, int64_t feat, int64_t y_rows);

// Whether an untuned SDDMM (dot) over CSR takes edge groups (CpuKnobs::edge_groups):
// where a row's features are one to four whole vectors and rows average at least 32
// non-zeros, so that most edges fall in full groups. Xeon VM, 2 threads, against
// the plan template: ACM (50 per row), Squirrel (76), ogbl-ddi (500) 1.44-1.48x at
// F = 32 and 1.22-1.24x at F = 64; GitHub (15) 1.14x at F = 32 but 0.99x at 64;
// Cora (2) 0.80x. Such a plan stays CSR rather than taking column tiles.
bool untuned_edge_groups(int64_t feat, int lanes, int64_t rows, int64_t nnz);

// Whether an untuned SDDMM (dot) takes edge groups over COO slots (groups that
// cross rows, each slot reading its row of X), with static tasks: where the
// features are one whole vector and Y is under 4 L2s (Xeon VM, 2 threads, F = 16,
// against the plan template: 1.23-2.07x on 14 graphs, including the long rows of
// ACM, Squirrel and bcsstk13, where CSR's groups give 1.74-1.89x; from a Y of
// 8 MiB, 1.06x on R-MAT and 0.90-0.96x on a uniform graph), and where they are two
// vectors, rows average under 32 non-zeros and Y fits in L2 (Cora 1.32x, Citeseer
// 1.46x, CA-GrQc 1.57x, AIFB 1.49x; beyond L2 it ranges 0.91-1.73x, left to the
// tuner).
bool untuned_slot_groups(int64_t feat, int lanes, int64_t rows, int64_t nnz, int64_t y_bytes);
// The size bound both the untuned rule and the default search space put on slot
// groups at one vector (and the space at any width): Y under four L2s, where its
// gathered rows come from L2 or nearby and the horizontal sums the groups save weigh.
bool slot_groups_y_in_cache(int64_t y_bytes);
// Non-zeros per task for such a plan: tasks are handed out in fixed blocks, so
// there are at least 8 per thread where the graph allows (a thread then waits at
// most about an eighth of a task's share longer than another).
int64_t slot_group_grain(int64_t nnz, int threads);

// Row programs that gather through an index (GAT's X[A_indices[j]], P[eid[j]]):
// software prefetch 16 edges ahead once the largest buffer the program gathers
// reaches half a core's L2. Their per-edge work (an exp per head, eight
// horizontal sums) fills the out-of-order window, so few misses overlap without
// it. Measured on uniform random graphs, 8 heads x 8 features, 2 threads, against
// no prefetch in one process (interleaved): 1.05-1.5x at 22,470 nodes / 360 k
// edges (gat_sddmm 4.1-5.2 -> 2.8-3.4 ms, the aggregation over Aᵀ 3.8-5.3 ->
// 2.1-3.5 ms), 1.3-4.1x at 131,072 nodes / 2 M edges (gat_sddmm 103 -> 25 ms,
// fused forward 66 -> 30 ms), 1.02-1.15x at Cora's size; distances 8 to 64 within
// noise of each other. Kernels that gather only small score rows (gat_score's XR)
// gained nothing, and stay below the line on graphs of these sizes.
CpuKnobs untuned_gather_knobs(CpuKnobs base, int64_t gathered_bytes);

// Column tiles (dcsr:cols): the columns cut into tiles whose rows of X, kept in
// L1/L2, serve every row of a task before the next tile.
//
// Widths whose tile of X holds about 32 and 64 KiB at feature size F (also 128
// KiB when exhaustive): the sizes that kept it cached on ogbl-ddi. Powers of two,
// at least 8 columns; the last is the widest.
std::vector<int64_t> column_tile_widths(int64_t feat, bool exhaustive);
// Non-empty tiles of a row of degree d over T tiles, its columns spread evenly.
double expected_tile_segments(double degree, double tiles);
// The mean length of the non-empty (row, tile) segments (non-zeros per segment),
// estimated from the row-degree histogram. Unweighted: every segment costs a
// reload and store of its row's output, so many short rows outweigh a few hubs
// (GitHub's developers: 1.1 per segment at 256 columns, and tiles ran 2.2x slower).
double mean_tile_segment(const GraphFingerprint& g, int64_t tile_cols);
// Whether tiles of `tile_cols` columns may pay: each segment long enough for the
// cached tile to repay the segment's reload and store of its output row (at least
// 4 non-zeros on average) and X at least 4 tiles wide. Measured on ogbl-ddi
// (about 500 non-zeros per row), 2 threads: tiles of 32-64 KiB of X ran 1.3-1.9x
// faster than CSR at F = 32..256; at F = 256, tiles of 64 columns (7.5 non-zeros
// per segment) 1.9x, of 32 columns (3.8) 1.3x.
bool column_tiles_may_pay(const GraphFingerprint& g, int64_t feat, int64_t tile_cols);
// One core's L2 in bytes, as the OS reports it (1 MiB when it does not).
int64_t host_l2_bytes();
// Non-empty (row, tile) segments of A with tiles of `tile_cols` columns (one pass
// over the non-zeros; columns sorted within rows).
int64_t count_tile_segments(const Graph& A, int64_t tile_cols);
// The accumulator sets (CpuKnobs::accumulator_sets) an untuned CSR SpMM takes:
// 2 when a row's F features fit one vector of `lanes` (its adds then form one
// chain of dependent adds per non-zero) and rows average at least 32 non-zeros;
// else 1. Such a plan stays CSR: it runs before column tiles are considered.
// Measured side by side at F = 16 (Xeon VM, 2 threads, against one set): ogbl-ddi
// (500 non-zeros per row) 1.59x, Squirrel (76) 1.33x, ACM (50) 1.23x; below the
// line DBLP (9) 0.94x, Facebook (15) 0.92x, Pubmed (2) 0.83x, Cora (2) 0.80x.
int untuned_accumulator_sets(int64_t feat, int lanes, int64_t rows, int64_t nnz);

// The column-tiled format an untuned SpMM takes on A at feature size F, if any:
// the widest width of column_tile_widths, when A's actual segments (counted, not
// estimated) average at least 8 non-zeros where X outgrows twice a core's L2
// (`l2_bytes`), at least 16 where it does not (the tile then only saves L2 -> L1
// traffic), and A has enough non-zeros for 4 tasks per thread at 16384 each
// (and columns sorted within rows, which the tile inspector needs).
// Fitted on the graphs where the rule is close (2 threads, AMD EPYC VM, 1 MiB L2):
// ogbl-ddi (segments 9.8-62, X 0.5-4.4 MB) 1.3-1.6x faster at every F; ACM
// (8.5 at F = 64, X 2.8 MB) 1.14x; left off: ACM at F = 32 (12.6, X 1.4 MB; tiles
// 0.91-0.96x), Squirrel (10.4 at F = 32, X 0.7 MB; 0.90x), bcsstk13 (84k non-zeros:
// too few tasks; 0.83x).
std::optional<FormatSpec> untuned_column_tiles(const Graph& A, int64_t feat, int threads, int64_t l2_bytes);
// The task grain column tiles run best at: tasks of 65536 non-zeros (64-256 rows
// of ogbl-ddi share each tile), where that still gives every thread 4 tasks;
// else 16384.
int64_t column_tile_grain(int64_t nnz, int threads);

}  // namespace strata::sc
