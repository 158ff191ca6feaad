// The knobs an untuned SpMM gets from its graph's sizes (untuned_knobs.h): the size
// thresholds exactly, the refusals (features not a whole number of vectors), column
// tiles on graphs with long rows, accumulator sets on long rows of one vector,
// SDDMM's prefetch and tiles, and that a kernel bound without a plan runs the
// untuned plan and matches the reference with it.
#include <gtest/gtest.h>

#include "core/parallel.h"
#include "core/rng.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "tests/support/test_support.h"
#include "tests/sparse_compiler/reference_ops.h"

namespace strata::sc {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

CpuKnobs lanes16() {
  CpuKnobs k;
  k.vector_lanes = 16;
  return k;
}

TEST(UntunedKnobs, StreamingStoresFromAnOutputOfTheCacheSize) {
  // F = 64: a row is 256 B, so 32768 rows are 8 MiB.
  const int64_t rows_8mib = kUntunedCacheBytes / 256;
  EXPECT_FALSE(untuned_spmm_knobs(lanes16(), 64, 0, rows_8mib - 1, 100).stream_stores);
  EXPECT_TRUE(untuned_spmm_knobs(lanes16(), 64, 0, rows_8mib, 100).stream_stores);
  EXPECT_EQ(kUntunedCacheBytes, 8 * kMiB);
  // Not a whole number of vectors per row or per tile: no streaming stores.
  EXPECT_FALSE(untuned_spmm_knobs(lanes16(), 72, 0, 10 * rows_8mib, 100).stream_stores);
  EXPECT_FALSE(untuned_spmm_knobs(lanes16(), 64, 40, 10 * rows_8mib, 100).stream_stores);
  EXPECT_TRUE(untuned_spmm_knobs(lanes16(), 256, 128, 10 * rows_8mib, 100).stream_stores);
  CpuKnobs avx2 = lanes16();
  avx2.vector_lanes = 8;
  EXPECT_TRUE(untuned_spmm_knobs(avx2, 72, 0, 10 * rows_8mib, 100).stream_stores);
}

TEST(UntunedKnobs, PrefetchFromAnXOfTwiceTheCacheSize) {
  const int64_t rows_16mib = 2 * kUntunedCacheBytes / 256;  // F = 64
  EXPECT_EQ(untuned_spmm_knobs(lanes16(), 64, 0, 10, rows_16mib - 1).prefetch, 0);
  EXPECT_EQ(untuned_spmm_knobs(lanes16(), 64, 0, 10, rows_16mib).prefetch, 64);  // 16 KiB / 256 B
  EXPECT_EQ(untuned_spmm_knobs(lanes16(), 256, 0, 10, rows_16mib).prefetch, 16);
  // The rest of the knobs pass through.
  CpuKnobs base = lanes16();
  base.grain = 777;
  const CpuKnobs k = untuned_spmm_knobs(base, 64, 0, 10 * rows_16mib, 10 * rows_16mib);
  EXPECT_EQ(k.grain, 777);
  EXPECT_EQ(k.vector_lanes, 16);
  EXPECT_TRUE(k.stream_stores);
  EXPECT_EQ(k.prefetch, 64);
}

TEST(UntunedKnobs, GatheringRowProgramsPrefetchFromHalfAnL2) {
  const int64_t half_l2 = host_l2_bytes() / 2;
  EXPECT_EQ(untuned_gather_knobs(lanes16(), half_l2 - 1).prefetch, 0);
  EXPECT_EQ(untuned_gather_knobs(lanes16(), half_l2).prefetch, 16);
  EXPECT_EQ(untuned_gather_knobs(lanes16(), 0).prefetch, 0);  // gathers nothing
  CpuKnobs base = lanes16();
  base.grain = 777;
  base.prefetch = 5;  // replaced by the rule
  const CpuKnobs k = untuned_gather_knobs(base, 0);
  EXPECT_EQ(k.grain, 777);
  EXPECT_EQ(k.vector_lanes, 16);
  EXPECT_EQ(k.prefetch, 0);
}

TEST(UntunedKnobs, SmallGraphsKeepThePlanTemplate) {
  testing::RandomGraphSpec s;
  s.rows = s.cols = 500;
  const Graph g = testing::random_graph(s);
  SpmmOptions o;
  o.feat = 256;
  const SpmmSpec spec = SpmmKernel::spec(g, o);
  EXPECT_EQ(SpmmKernel::default_plan(spec, g).str(), SpmmKernel::default_plan(spec).str());
}

// Column tiles by the graph's own segments: 4096 rows, each with `s` non-zeros at
// the start of each of 4 tiles of 256 columns (F = 64: X is 256 KiB).
TEST(UntunedKnobs, ColumnTilesNeedSegmentsOf16OrOf8WhenXOutgrowsL2) {
  auto graph = [](int64_t s) {
    std::vector<int64_t> r, c;
    for (int64_t i = 0; i < 4096; ++i)
      for (int64_t t = 0; t < 4; ++t)
        for (int64_t k = 0; k < s; ++k) {
          r.push_back(i);
          c.push_back(t * 256 + k);
        }
    return Graph::from_coo(4096, 1024, Tensor::from_vector(r), Tensor::from_vector(c));
  };
  const Graph g16 = graph(16), g15 = graph(15), g8 = graph(8), g7 = graph(7);
  EXPECT_EQ(count_tile_segments(g16, 256), 4 * 4096);
  EXPECT_EQ(count_tile_segments(g16, 128), 4 * 4096);
  EXPECT_EQ(count_tile_segments(g16, 8), 4 * 2 * 4096);
  constexpr int64_t kL2 = int64_t{1} << 20;  // X (256 KiB) fits twice over: 16 needed
  EXPECT_EQ(untuned_column_tiles(g16, 64, 1, kL2).value_or(FormatSpec::csr()).str(), "dcsr:cols=256");
  EXPECT_FALSE(untuned_column_tiles(g15, 64, 1, kL2).has_value());
  constexpr int64_t kSmallL2 = int64_t{64} << 10;  // X outgrows twice this L2: 8 needed
  EXPECT_TRUE(untuned_column_tiles(g8, 64, 1, kSmallL2).has_value());
  EXPECT_FALSE(untuned_column_tiles(g7, 64, 1, kSmallL2).has_value());
  // Enough non-zeros for 4 tasks of 16384 per thread: g16's 262,144 serve 4
  // threads, not 5.
  EXPECT_TRUE(untuned_column_tiles(g16, 64, 4, kL2).has_value());
  EXPECT_FALSE(untuned_column_tiles(g16, 64, 5, kL2).has_value());
  // X narrower than 4 tiles: F = 32 tiles are 512 columns, and there are 1024.
  EXPECT_FALSE(untuned_column_tiles(g16, 32, 1, kL2).has_value());
}

// Rows of ~400 non-zeros over 3000 columns (a tenth of them empty), weighted.
Graph long_rows_graph(bool int64_indices) {
  testing::RandomGraphSpec s;
  s.rows = 2000;
  s.cols = 3000;
  s.avg_degree = 400;
  s.empty_row_fraction = 0.1;
  s.weighted = true;
  s.int64_indices = int64_indices;
  s.seed = 12;
  return testing::random_graph(s);
}

// The untuned plan a weighted SpMM at F gets on g, after checking that it runs and
// matches the reference, sum and mean.
SpmmPlan untuned_plan_checked(const Graph& g, int64_t F) {
  SpmmPlan plan;
  for (const bool mean : {false, true}) {
    SpmmOptions o;
    o.feat = F;
    o.weighted = true;
    o.reduce = mean ? Reduce::Mean : Reduce::Sum;
    const SpmmKernel k(g, o);
    plan = k.plan();
    Rng rng(4);
    const Tensor X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
    const Tensor want = testing::reference_spmm(g, X, g.values(), Tensor(), Tensor(), mean);
    const CloseReport r = all_close(k.run(X), want, 1e-4, 1e-4);
    EXPECT_TRUE(r.ok) << r.str() << " (F " << F << ", int64 indices " << (g.index_dtype() == DType::I64) << ", mean "
                      << mean << ", plan " << plan.str() << ")";
  }
  return plan;
}

// On long_rows_graph at F = 64 the 64 KiB tile is 256 columns (12 tiles, ~33
// non-zeros per row and tile), so the untuned plan is column-tiled DCSR; it must
// match the reference, int32 and int64, sum and mean. Above 256 features the plan
// template tiles the features, and stays on CSR.
TEST(UntunedKnobs, LongRowsPerTileGetColumnTiles) {
  testing::ScopedCacheRoot cache("untuned_knobs");
  EXPECT_EQ(column_tile_widths(64, false).back(), 256);
  EXPECT_EQ(column_tile_grain(450000, 2), 16384) << "6 tasks of 65536 for 2 threads: too few";
  EXPECT_EQ(column_tile_grain(2135822, 2), 65536);
  for (const bool int64_indices : {false, true}) {
    const Graph g = long_rows_graph(int64_indices);
    const SpmmPlan plan = untuned_plan_checked(g, 64);
    EXPECT_EQ(plan.format.str(), "dcsr:cols=256");
    EXPECT_EQ(plan.knobs.grain, column_tile_grain(g.nnz(), num_threads()));
    EXPECT_FALSE(plan.knobs.stream_stores);
    SpmmOptions wide;
    wide.feat = 512;
    EXPECT_EQ(SpmmKernel::default_plan(SpmmKernel::spec(g, wide), g).format.str(), "csr");
  }
}

TEST(UntunedKnobs, LongRowsOfOneVectorGetTwoAccumulatorSetsBeforeColumnTiles) {
  // The line: a row's features fit one vector and rows average 32 non-zeros.
  EXPECT_EQ(untuned_accumulator_sets(16, 16, 100, 3200), 2);
  EXPECT_EQ(untuned_accumulator_sets(16, 16, 100, 3199), 1);
  EXPECT_EQ(untuned_accumulator_sets(7, 16, 100, 3200), 2);
  EXPECT_EQ(untuned_accumulator_sets(17, 16, 100, 1 << 20), 1) << "two vectors: two chains already";
  EXPECT_EQ(untuned_accumulator_sets(8, 8, 100, 3200), 2);
  EXPECT_EQ(untuned_accumulator_sets(16, 8, 100, 3200), 1);
  EXPECT_EQ(untuned_accumulator_sets(16, 16, 0, 0), 1) << "no rows";
  // On long_rows_graph (400 non-zeros per row), where F = 64 takes column tiles,
  // a row of one vector (with a scalar tail) takes CSR with two sets.
  testing::ScopedCacheRoot cache("untuned_knobs");
  for (const bool int64_indices : {false, true}) {
    const Graph g = long_rows_graph(int64_indices);
    const SpmmPlan plan = untuned_plan_checked(g, host_vector_lanes() - 1);
    EXPECT_EQ(plan.format.str(), "csr");
    EXPECT_EQ(plan.knobs.accumulator_sets, 2);
    SpmmOptions o;
    o.feat = 64;
    EXPECT_EQ(SpmmKernel::default_plan(SpmmKernel::spec(g, o), g).knobs.accumulator_sets, 1);
    // The plan template (plain_csr) keeps one set.
    o.feat = 16;
    EXPECT_EQ(SpmmKernel::default_plan(SpmmKernel::spec(g, o)).knobs.accumulator_sets, 1);
  }
}

// SDDMM (dot) prefetches the gathered Y rows from 32 MiB of Y; on a graph with
// long rows per tile it takes column tiles like SpMM; per-head sums keep the
// template. A kernel bound without a plan runs that plan and matches the reference.
TEST(UntunedKnobs, SddmmPrefetchesFromAYOf32MiBGroupsLongRowsAndTilesWiderOnes) {
  const int64_t rows_32mib = 4 * kUntunedCacheBytes / 256;  // F = 64
  EXPECT_EQ(untuned_sddmm_knobs(lanes16(), 64, rows_32mib - 1).prefetch, 0);
  EXPECT_EQ(untuned_sddmm_knobs(lanes16(), 64, rows_32mib).prefetch, default_prefetch_distance(64));
  EXPECT_FALSE(untuned_sddmm_knobs(lanes16(), 64, 10 * rows_32mib).stream_stores);
  // Edge groups: whole vectors, at most four of them, and rows of 32 non-zeros on average.
  EXPECT_TRUE(untuned_edge_groups(32, 16, 100, 3200));
  EXPECT_TRUE(untuned_edge_groups(64, 16, 100, 3200));
  EXPECT_FALSE(untuned_edge_groups(64, 16, 100, 3199));
  EXPECT_FALSE(untuned_edge_groups(128, 16, 100, 100000));
  EXPECT_FALSE(untuned_edge_groups(40, 16, 100, 100000));
  EXPECT_FALSE(untuned_edge_groups(32, 1, 100, 100000));
  EXPECT_FALSE(untuned_edge_groups(4, 2, 100, 100000)) << "two-lane sums are unrolled, not rfactored";
  testing::ScopedCacheRoot cache("untuned_knobs");
  for (const bool int64_indices : {false, true}) {
    testing::RandomGraphSpec s;
    s.rows = 2000;
    s.cols = 3000;
    s.avg_degree = 400;
    s.int64_indices = int64_indices;
    s.seed = 13;
    const Graph g = testing::random_graph(s);
    // Rows of 400 non-zeros: up to four vectors of features, edge groups over CSR
    // (untuned_edge_groups); wider rows, column tiles.
    const SddmmKernel dot(g, {SddmmKind::Dot, 64});
    EXPECT_EQ(dot.plan().str(), "csr lanes=16,grain=4096,prefetch=0,groups");
    const KernelPlan wider = SddmmKernel::default_plan({SddmmKind::Dot, 128, g.index_dtype()}, g);
    EXPECT_EQ(wider.format.kind, FormatKind::Dcsr);
    EXPECT_GT(wider.format.col_tile, 0);
    EXPECT_FALSE(wider.knobs.edge_groups);
    Rng rng(5);
    const Tensor X = Tensor::uniform({g.num_rows(), 64}, -1, 1, rng), Y = Tensor::uniform({g.num_cols(), 64}, -1, 1, rng);
    const CloseReport r = all_close(dot.run(X, Y), testing::reference_sddmm_dot(g, X, Y), 1e-4, 1e-4);
    EXPECT_TRUE(r.ok) << r.str() << " (int64 indices " << int64_indices << ")";
    EXPECT_EQ(SddmmKernel::default_plan({SddmmKind::Add, 4, g.index_dtype()}, g).str(), SddmmKernel::default_plan().str());
  }
  testing::RandomGraphSpec s;
  s.rows = 1000;
  s.cols = 140000;  // Y at F = 64: 35.8 MB
  s.avg_degree = 5;
  s.seed = 14;
  const Graph wide = testing::random_graph(s);
  const SddmmKernel dot(wide, {SddmmKind::Dot, 64});
  EXPECT_EQ(dot.plan().format.str(), "csr");
  EXPECT_EQ(dot.plan().knobs.prefetch, default_prefetch_distance(64));
  Rng rng(6);
  const Tensor X = Tensor::uniform({wide.num_rows(), 64}, -1, 1, rng), Y = Tensor::uniform({wide.num_cols(), 64}, -1, 1, rng);
  const CloseReport r = all_close(dot.run(X, Y), testing::reference_sddmm_dot(wide, X, Y), 1e-4, 1e-4);
  EXPECT_TRUE(r.ok) << r.str();
}

// SDDMM (dot) over one vector of features (or two, over short rows and a Y that L2
// holds) groups COO slots across rows, with static tasks of at least 8 per thread
// where the graph allows; a kernel bound without a plan runs that plan correctly.
TEST(UntunedKnobs, SddmmGroupsCooSlotsAtOneVectorOrTwoOverShortRowsAndASmallY) {
  const int64_t l2 = host_l2_bytes();
  EXPECT_TRUE(untuned_slot_groups(16, 16, 100, 100000, 4 * l2 - 1)) << "long rows too";
  EXPECT_FALSE(untuned_slot_groups(16, 16, 100, 400, 4 * l2)) << "a Y of 4 L2s gathers from beyond them";
  EXPECT_TRUE(untuned_slot_groups(32, 16, 100, 3199, l2));
  EXPECT_FALSE(untuned_slot_groups(32, 16, 100, 3200, l2)) << "rows of 32: CSR's groups";
  EXPECT_FALSE(untuned_slot_groups(32, 16, 100, 400, l2 + 1));
  EXPECT_FALSE(untuned_slot_groups(64, 16, 100, 400, 1024));
  EXPECT_FALSE(untuned_slot_groups(8, 16, 100, 400, 1024)) << "half a vector";
  EXPECT_FALSE(untuned_slot_groups(2, 2, 100, 400, 1024)) << "two-lane sums are unrolled, not rfactored";
  EXPECT_EQ(slot_group_grain(16 * 16384, 2), 16384);
  EXPECT_EQ(slot_group_grain(16 * 16384 - 1, 2), 4096);
  EXPECT_EQ(slot_group_grain(16 * 1024, 2), 1024);
  EXPECT_EQ(slot_group_grain(1000, 2), 256);
  EXPECT_EQ(slot_group_grain(0, 0), 256);
  testing::ScopedCacheRoot cache("untuned_knobs");
  for (const bool int64_indices : {false, true}) {
    testing::RandomGraphSpec s;
    s.rows = 700;
    s.cols = 500;
    s.avg_degree = 5;
    s.long_row_length = 300;
    s.int64_indices = int64_indices;
    s.seed = 15;
    const Graph g = testing::random_graph(s);
    const int lanes = host_vector_lanes();
    const SddmmKernel dot(g, {SddmmKind::Dot, lanes});
    if (lanes >= 4) {
      EXPECT_EQ(dot.plan().format.kind, FormatKind::Coo);
      EXPECT_TRUE(dot.plan().knobs.edge_groups && dot.plan().knobs.static_tasks) << dot.plan().str();
      EXPECT_EQ(dot.plan().knobs.grain, slot_group_grain(g.nnz(), num_threads()));
    } else {
      EXPECT_FALSE(dot.plan().knobs.edge_groups) << "two-lane sums are unrolled, not grouped: " << dot.plan().str();
    }
    EXPECT_EQ(SddmmKernel::default_plan({SddmmKind::Dot, 4 * lanes, g.index_dtype()}, g).format.kind, FormatKind::Csr);
    Rng rng(7);
    const Tensor X = Tensor::uniform({g.num_rows(), lanes}, -1, 1, rng);
    const Tensor Y = Tensor::uniform({g.num_cols(), lanes}, -1, 1, rng);
    const CloseReport r = all_close(dot.run(X, Y), testing::reference_sddmm_dot(g, X, Y), 1e-4, 1e-4);
    EXPECT_TRUE(r.ok) << r.str() << " (int64 indices " << int64_indices << ")";
  }
}

// A graph with 140k rows and columns (sparse, so cheap): at F = 32 its Y is 17.9 MB
// and X too, so the untuned plan streams and prefetches; a kernel bound without a
// plan must run that plan and still match the reference, weighted and with the
// mean's row scale, int32 and int64 indices.
TEST(UntunedKnobs, AKernelBoundWithoutAPlanRunsTheUntunedPlanCorrectly) {
  testing::ScopedCacheRoot cache("untuned_knobs");
  for (const bool int64_indices : {false, true}) {
    testing::RandomGraphSpec s;
    s.rows = s.cols = 140000;
    s.avg_degree = 3;
    s.long_row_length = 5000;
    s.weighted = true;
    s.int64_indices = int64_indices;
    s.seed = 9;
    const Graph g = testing::random_graph(s);
    for (const bool mean : {false, true}) {
      SpmmOptions o;
      o.feat = 32;
      o.weighted = true;
      o.reduce = mean ? Reduce::Mean : Reduce::Sum;
      const SpmmKernel k(g, o);
      EXPECT_TRUE(k.plan().knobs.stream_stores);
      EXPECT_EQ(k.plan().knobs.prefetch, default_prefetch_distance(32));
      EXPECT_EQ(k.plan().str(), SpmmKernel::default_plan(k.program_spec(), g).str());
      Rng rng(3);
      const Tensor X = Tensor::uniform({g.num_cols(), 32}, -1, 1, rng);
      const Tensor want = testing::reference_spmm(g, X, g.values(), Tensor(), Tensor(), mean);
      const CloseReport r = all_close(k.run(X), want, 1e-4, 1e-4);
      EXPECT_TRUE(r.ok) << r.str() << " (int64 indices " << int64_indices << ", mean " << mean << ")";
    }
  }
}

}  // namespace
}  // namespace strata::sc
