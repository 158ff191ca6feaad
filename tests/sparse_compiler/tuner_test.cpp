// The tuner: it measures only correct candidates, keeps the fastest, records the
// choice and reuses the record on the next run without measuring; the cost model
// and the search space behave as documented.
#include "sparse_compiler/tune/tuner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/file_util.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/ops/untuned_knobs.h"
#include "sparse_compiler/tune/cost_model.h"
#include "sparse_compiler/tune/graph_fingerprint.h"
#include "sparse_compiler/tune/search_space.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

// Each test uses its own cache root, so records of other runs never interfere.
class TunerTest : public ::testing::Test {
 protected:
  // Tuning records go to the private root (compiled kernels too, unless this
  // process already opened the kernel cache elsewhere).
  void SetUp() override { cache_.emplace("tuner"); }
  void TearDown() override { cache_.reset(); }
  static Graph graph() {
    testing::RandomGraphSpec s;
    s.rows = 2000;
    s.cols = 2000;
    s.avg_degree = 6;
    s.long_row_length = 300;
    s.seed = 4;
    return testing::random_graph(s);
  }
  // A short search: the top_k ranked candidates, then `neighbours` of the best,
  // each timed briefly.
  static TuneOptions quick(int top_k, int neighbours, double budget_ms = 20) {
    TuneOptions o;
    o.top_k = top_k;
    o.neighbours = neighbours;
    o.max_repeats = 3;
    o.budget_ms = budget_ms;
    return o;
  }
  // The smallest search that writes a record: one ranked candidate, timed twice.
  static TuneOptions one_candidate() {
    TuneOptions o;
    o.top_k = 1;
    o.max_repeats = 2;
    o.budget_ms = 10;
    return o;
  }
  std::optional<testing::ScopedCacheRoot> cache_;
};

TEST_F(TunerTest, MeasuresCandidatesPicksTheFastestAndReusesTheRecord) {
  const Graph g = graph();
  TuneOptions o = quick(2, 0);  // the ranked candidates only (neighbours: the test below)
  o.min_gain = 0;  // the fastest wins, however narrowly (the margin: the test below)
  const TuneResult first = tune_spmm(g, 32, o);
  EXPECT_FALSE(first.from_record);
  int measured = 0, finalists = 0;
  double best = 1e30;
  for (const auto& c : first.candidates) {
    if (c.measured_ms >= 0) ++measured;
    if (c.final_round) {
      ++finalists;
      best = std::min(best, c.measured_ms);
      EXPECT_EQ(c.status, "ok");
    }
  }
  EXPECT_GE(measured, 2);  // top 2 + the default plan (unless it is among them) + a static-task plan per grain
  // The 3 fastest and the default plan (maybe one of them) are finalists, and the
  // choice is the fastest in the interleaved final round.
  EXPECT_GE(finalists, std::min(measured, 3));
  EXPECT_LE(finalists, measured);
  EXPECT_DOUBLE_EQ(first.chosen_ms, best);
  bool default_final = false;
  for (const auto& c : first.candidates) default_final |= c.final_round && c.measured_ms == first.default_ms;
  EXPECT_TRUE(default_final) << "the default plan is always timed in the final round";
  EXPECT_GT(first.default_ms, 0);
  ASSERT_TRUE(fs::exists(first.record_file)) << first.record_file;

  const TuneResult second = tune_spmm(g, 32, o);
  EXPECT_TRUE(second.from_record);
  EXPECT_TRUE(second.chosen == first.chosen);
  ASSERT_EQ(second.candidates.size(), first.candidates.size());
  for (size_t i = 0; i < first.candidates.size(); ++i)
    EXPECT_EQ(second.candidates[i].final_round, first.candidates[i].final_round) << "the record keeps the flag";
  EXPECT_LT(second.tune_ms, first.tune_ms);
  // A different feature size is a different record.
  o.use_records = true;
  EXPECT_FALSE(tune_spmm(g, 16, o).from_record);
}

TEST_F(TunerTest, MeasuresTheUntriedNeighboursOfTheBestRankedCandidate) {
  const Graph g = graph();
  const TuneOptions o = quick(1, 3, 10);
  const TuneResult r = tune_spmm(g, 32, o);
  std::vector<KernelPlan> ranked_measured;
  int neighbours = 0;
  for (const auto& c : r.candidates)
    if (!c.neighbour && c.measured_ms >= 0) ranked_measured.push_back(c.plan);
  ASSERT_FALSE(ranked_measured.empty());
  for (const auto& c : r.candidates) {
    if (!c.neighbour) continue;
    ++neighbours;
    EXPECT_EQ(c.status, "ok") << c.plan.str();
    EXPECT_GT(c.measured_ms, 0) << c.plan.str();
    int nearest = 99;
    for (const auto& p : ranked_measured) nearest = std::min(nearest, plan_distance(c.plan, p));
    EXPECT_EQ(nearest, 1) << c.plan.str() << " is not one knob from a ranked candidate";
  }
  EXPECT_EQ(neighbours, 3) << "the default space holds more than 3 neighbours of any CSR plan";
  // The record keeps the flag.
  const TuneResult again = tune_spmm(g, 32, o);
  ASSERT_TRUE(again.from_record);
  int kept = 0;
  for (const auto& c : again.candidates) kept += c.neighbour;
  EXPECT_EQ(kept, 3);
}

// A plan replaces the untuned one only when the final round times it faster by more
// than min_gain: with a margin no plan can clear, the untuned plan is kept and the
// fastest is reported as within the noise; with none, the fastest wins.
TEST_F(TunerTest, TheUntunedPlanIsKeptUnlessBeatenByMoreThanTheMargin) {
  const Graph g = graph();
  TuneOptions o = quick(3, 0);
  o.use_records = false;
  SpmmSpec spec;
  spec.feat = 32;
  spec.index_dtype = g.index_dtype();
  const KernelPlan untuned = SpmmKernel::default_plan(spec, g);
  o.min_gain = 1e9;
  const TuneResult kept = tune_spmm(g, spec, o);
  EXPECT_TRUE(kept.chosen == untuned) << kept.chosen.str();
  double untuned_ms = -1, fastest_ms = 1e30;
  const MeasuredCandidate* fastest = nullptr;
  for (const auto& c : kept.candidates) {
    if (!c.final_round) continue;
    if (c.plan == untuned) untuned_ms = c.measured_ms;
    if (c.measured_ms < fastest_ms) {
      fastest_ms = c.measured_ms;
      fastest = &c;
    }
  }
  ASSERT_GT(untuned_ms, 0) << "the untuned plan is timed in the final round";
  EXPECT_DOUBLE_EQ(kept.chosen_ms, untuned_ms);
  ASSERT_NE(fastest, nullptr);
  if (fastest->plan == untuned) {
    EXPECT_FALSE(kept.fastest_within_noise.has_value());
  } else {
    ASSERT_TRUE(kept.fastest_within_noise.has_value());
    EXPECT_TRUE(*kept.fastest_within_noise == fastest->plan) << kept.fastest_within_noise->str();
  }
  o.min_gain = 0;
  const TuneResult fastest_wins = tune_spmm(g, spec, o);
  EXPECT_FALSE(fastest_wins.fastest_within_noise.has_value());
  for (const auto& c : fastest_wins.candidates)
    if (c.final_round) {
      EXPECT_LE(fastest_wins.chosen_ms, c.measured_ms) << c.plan.str();
    }
}

// When X outgrows the modelled cache, the best-ranked feature-tiled plan at each
// task grain is measured whatever its rank; when X fits, only the ranked
// candidates are.
TEST_F(TunerTest, FeatureTilesAreSampledWhenXOutgrowsTheCache) {
  TuneOptions o = quick(1, 0);
  o.use_records = false;
  testing::RandomGraphSpec big;
  big.rows = big.cols = 40000;  // X at F = 64: 10 MB, over the model's 8 MB
  big.avg_degree = 2;
  big.seed = 5;
  const Graph g = testing::random_graph(big);
  ASSERT_TRUE(x_outgrows_cache(GraphFingerprint::of(g), 64, MachineModel::host()));
  const TuneResult r = tune_spmm(g, 64, o);
  // In ranked order: the first tiled plan of each grain is measured, no other.
  std::set<int64_t> grains_seen, static_grains;
  int measured = 0, tiled_measured = 0, static_measured = 0;
  for (const auto& c : r.candidates) {
    measured += c.measured_ms >= 0;
    // Static task blocks are a family of their own, sampled the same way.
    if (c.plan.knobs.static_tasks && c.plan.feature_tile == 0) {
      if (static_grains.insert(c.plan.knobs.grain).second) {
        EXPECT_GE(c.measured_ms, 0) << c.plan.str();
      }
      static_measured += c.measured_ms >= 0;
    }
    if (c.plan.feature_tile == 0) continue;
    const bool first_of_grain = grains_seen.insert(c.plan.knobs.grain).second;
    EXPECT_EQ(c.measured_ms >= 0, first_of_grain) << c.plan.str();
    tiled_measured += c.measured_ms >= 0;
  }
  EXPECT_GE(grains_seen.size(), 2u);
  EXPECT_EQ(tiled_measured, static_cast<int>(grains_seen.size()));
  EXPECT_LE(measured, tiled_measured + static_measured + 3)
      << "besides them: the top plan, the plan template and the untuned plan";
  // Y (10 MB) outgrows the cache: the untuned plan streams its stores, and the tuner
  // measured it and held it in the final round.
  SpmmSpec spec;
  spec.feat = 64;
  spec.index_dtype = g.index_dtype();
  const KernelPlan untuned = SpmmKernel::default_plan(spec, g);
  ASSERT_TRUE(untuned.knobs.stream_stores);
  const auto u = std::find_if(r.candidates.begin(), r.candidates.end(), [&](const auto& c) { return c.plan == untuned; });
  ASSERT_NE(u, r.candidates.end());
  EXPECT_GE(u->measured_ms, 0);
  EXPECT_TRUE(u->final_round) << u->plan.str();
  const Graph small = graph();
  ASSERT_FALSE(x_outgrows_cache(GraphFingerprint::of(small), 64, MachineModel::host()));
  const TuneResult rs = tune_spmm(small, 64, o);
  measured = 0;
  static_grains.clear();
  for (const auto& c : rs.candidates) {
    const bool static_family = c.plan.knobs.static_tasks && static_grains.insert(c.plan.knobs.grain).second;
    measured += c.measured_ms >= 0 && !static_family;
    if (c.measured_ms >= 0 && c.plan.feature_tile > 0) {
      EXPECT_EQ(&c, &rs.candidates.front()) << "a tiled plan only when ranked first";
    }
  }
  EXPECT_LE(measured, 2) << "the top plan and the default plan (besides a static-task plan per grain)";
}

TEST_F(TunerTest, CandidatesCompiledInSeveralUnitsComeBackInOrderAndRunCorrectly) {
  const Graph g = graph();
  std::vector<Kernel> lowered;
  const std::vector<int64_t> feats = {3, 16, 17, 32, 33};  // each kernel's F is compiled in
  for (int64_t F : feats) {
    SpmmSpec spec;
    spec.feat = F;
    lowered.push_back(SpmmKernel::lower(spec, default_cpu_plan(F)));
  }
  const std::vector<CompiledKernel> compiled = compile_cpu(lowered, 2);
  ASSERT_EQ(compiled.size(), lowered.size());
  Rng rng(11);
  for (size_t i = 0; i < feats.size(); ++i) {
    EXPECT_EQ(compiled[i].kernel.name, lowered[i].name);
    SpmmOptions so;
    so.feat = feats[i];
    so.plan = default_cpu_plan(feats[i]);
    const Tensor X = Tensor::uniform({g.num_cols(), feats[i]}, -1, 1, rng);
    const Tensor want = testing::reference_spmm(g, X, Tensor(), Tensor(), Tensor(), false);
    const Tensor got = SpmmKernel(g, so, compiled[i]).run(X);
    EXPECT_TRUE(all_close(got, want, 1e-4, 1e-4).ok) << "F = " << feats[i];
  }
}

TEST_F(TunerTest, SddmmTunesToo) {
  TuneOptions o;
  o.top_k = 2;
  o.max_repeats = 3;
  o.budget_ms = 20;
  const TuneResult r = tune_sddmm(graph(), 24, o);
  EXPECT_GT(r.chosen_ms, 0);
  EXPECT_EQ(r.candidates.front().status == "ok" || r.candidates.front().status == "not measured", true);
}

// On a graph with long rows per tile the column-tiled plans are a family: the
// best-ranked one is measured (checked against the reference) at each of its
// grains, whatever its rank, for SpMM and SDDMM; which plan wins is the timing's.
TEST_F(TunerTest, ColumnTiledPlansAreMeasuredWhereRowsAreLong) {
  TuneOptions o = quick(1, 0);
  o.use_records = false;
  testing::RandomGraphSpec s;
  s.rows = 2000;
  s.cols = 3000;
  s.avg_degree = 400;
  s.seed = 6;
  const Graph g = testing::random_graph(s);
  auto measured_tiles = [](const TuneResult& r) {
    std::set<int64_t> grains;
    for (const auto& c : r.candidates)
      if (c.plan.format.col_tile > 0 && c.measured_ms >= 0) {
        EXPECT_EQ(c.status.rfind("ok", 0), 0u) << c.plan.str() << ": " << c.status;
        grains.insert(c.plan.knobs.grain);
      }
    return grains.size();
  };
  const size_t grains = g.nnz() / 65536 >= 4 * std::max(1, num_threads()) ? 2 : 1;
  EXPECT_EQ(measured_tiles(tune_spmm(g, 64, o)), grains);
  EXPECT_EQ(measured_tiles(tune_sddmm(g, 64, o)), grains);
}

// A candidate whose format cannot hold the graph (BSR over a repeated entry, as AIFB
// stores some) is reported and skipped; the search goes on and its choice is correct.
// Before, `strata tune --exhaustive` on AIFB stopped at the first such candidate.
TEST_F(TunerTest, ACandidateWhoseFormatCannotHoldTheGraphIsSkippedAndReported) {
  // Dense 4x4 diagonal blocks (BSR ranks well: no padding), entry (0, 1) stored twice.
  std::vector<int64_t> rows, cols;
  for (int64_t b = 0; b < 16; ++b)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        rows.push_back(4 * b + i);
        cols.push_back(4 * b + j);
      }
  rows.push_back(0);
  cols.push_back(1);
  const Graph g = Graph::from_coo(64, 64, Tensor::from_vector(rows), Tensor::from_vector(cols));
  ASSERT_EQ(g.nnz(), 16 * 16 + 1);
  TuneOptions o = quick(1000, 0);  // every candidate of the default space
  o.use_records = false;
  const TuneResult r = tune_spmm(g, 16, o);
  int skipped = 0, ok = 0;
  for (const auto& c : r.candidates) {
    if (c.plan.format.str().rfind("bsr", 0) == 0) {
      EXPECT_NE(c.status.find("not buildable: bsr: the graph stores the entry (row 0, column 1) more than once"),
                std::string::npos)
          << c.status;
      EXPECT_LT(c.measured_ms, 0);
      EXPECT_FALSE(c.final_round);
      ++skipped;
    }
    ok += c.status == "ok";
  }
  EXPECT_GE(skipped, 1);
  EXPECT_GE(ok, 2);
  EXPECT_NE(r.chosen.format.str().rfind("bsr", 0), 0u) << r.chosen.str();
  // The choice runs and matches the reference.
  Rng rng(3);
  const Tensor X = Tensor::uniform({64, 16}, -1, 1, rng);
  SpmmOptions so;
  so.feat = 16;
  so.plan = r.chosen;
  const Tensor got = SpmmKernel(g, so).run(X);
  EXPECT_TRUE(all_close(got, testing::reference_spmm(g, X, Tensor(), Tensor(), Tensor(), false), 1e-4, 1e-5).ok);
}

TEST_F(TunerTest, CorruptRecordIsIgnoredAndRewritten) {
  const Graph g = graph();
  const TuneOptions o = one_candidate();
  const TuneResult first = tune_spmm(g, 8, o);
  write_file_atomic(first.record_file, "{ not json");
  const TuneResult again = tune_spmm(g, 8, o);
  EXPECT_FALSE(again.from_record);
  EXPECT_TRUE(tune_spmm(g, 8, o).from_record);
}

// A record that parses but whose plan does not fit the op (a panel width that does
// not divide F) is stale: tuned again and rewritten, not run; a folder in the
// record's place is replaced by the record.
TEST_F(TunerTest, RecordWithAPlanThatDoesNotFitIsTunedAgain) {
  const Graph g = graph();
  const TuneOptions o = one_candidate();
  const TuneResult first = tune_spmm(g, 8, o);
  auto record = nlohmann::json::parse(read_file(first.record_file));
  record["chosen"]["x_layout"] = "panel:3";
  write_file_atomic(first.record_file, record.dump());
  const TuneResult again = tune_spmm(g, 8, o);
  EXPECT_FALSE(again.from_record);
  EXPECT_TRUE(again.chosen.x_layout.is_row());
  EXPECT_TRUE(tune_spmm(g, 8, o).from_record);
  fs::remove(first.record_file);
  fs::create_directories(fs::path(first.record_file) / "junk");
  EXPECT_FALSE(tune_spmm(g, 8, o).from_record);
  EXPECT_TRUE(fs::is_regular_file(first.record_file));
  EXPECT_TRUE(tune_spmm(g, 8, o).from_record);
}

TEST(CostModel, PaddingAndTilesCostWhatTheyShould) {
  testing::RandomGraphSpec s;
  s.rows = 5000;
  s.cols = 5000;
  s.avg_degree = 8;
  const GraphFingerprint g = GraphFingerprint::of(testing::random_graph(s));
  const MachineModel m;
  SpmmSpec spec;
  spec.feat = 64;
  KernelPlan csr;
  KernelPlan ell = csr;
  ell.format = FormatSpec::parse("ell:w=64");  // mostly padding
  EXPECT_LT(predict_spmm_ms(g, spec, csr, m), predict_spmm_ms(g, spec, ell, m));
  EXPECT_GT(estimate_format(g, ell.format).slots, 4.0 * static_cast<double>(g.nnz));
  EXPECT_DOUBLE_EQ(estimate_format(g, csr.format).slots, static_cast<double>(g.nnz));
  EXPECT_EQ(default_prefetch_distance(64), 64);
  EXPECT_EQ(default_prefetch_distance(1024), 4);
}

// The plan kinds the tuner samples whatever their rank, and when (sizes only).
TEST(CostModel, SamplingRulesFollowXsSizeAndReuse) {
  MachineModel m;
  m.cache_bytes = 8 << 20;
  m.l2_bytes = 2 << 20;
  GraphFingerprint dense;  // ogbl-ddi's shape: 4,267 nodes, 500 non-zeros per column
  dense.rows = dense.cols = 4267;
  dense.nnz = 2135822;
  EXPECT_FALSE(column_parts_may_pay(dense, 64, m)) << "X: 1.1 MB, fits L2";
  EXPECT_TRUE(column_parts_may_pay(dense, 256, m)) << "X: 4.4 MB, over L2, each row gathered 500 times";
  EXPECT_FALSE(x_outgrows_cache(dense, 256, m));
  GraphFingerprint sparse;  // MUSAE Facebook's: 22,470 nodes, 15 per column
  sparse.rows = sparse.cols = 22470;
  sparse.nnz = 341825;
  EXPECT_FALSE(column_parts_may_pay(sparse, 256, m)) << "too little reuse";
  EXPECT_FALSE(x_outgrows_cache(sparse, 64, m)) << "X: 5.8 MB";
  EXPECT_TRUE(x_outgrows_cache(sparse, 128, m)) << "X: 11.5 MB";
}

// Column tiles (dcsr:cols) enter the default space only where a row's share of a
// tile is long: ogbl-ddi's 500 non-zeros per row, not MUSAE Facebook's 15.
TEST(SearchSpace, ColumnTilesOnlyWhereRowsAreLongPerTile) {
  EXPECT_EQ(column_tile_widths(32, false), (std::vector<int64_t>{256, 512}));
  EXPECT_EQ(column_tile_widths(256, false), (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(column_tile_widths(64, true), (std::vector<int64_t>{128, 256, 512}));
  EXPECT_EQ(column_tile_widths(4096, false), (std::vector<int64_t>{8})) << "at least 8 columns";
  GraphFingerprint dense;
  dense.rows = dense.cols = 4267;
  dense.nnz = 2135822;
  dense.row_histogram = std::vector<int64_t>(10, 0);
  dense.row_histogram[9] = 4267;  // degrees 256..511
  GraphFingerprint sparse;
  sparse.rows = sparse.cols = 22470;
  sparse.nnz = 341825;
  sparse.row_histogram = std::vector<int64_t>(5, 0);
  sparse.row_histogram[4] = 22470;  // degrees 8..15
  // 67 tiles of 64 columns: a row of 383.5 non-zeros (the bucket's middle) fills
  // about 66 of them, 5.8 each; 17 tiles of 256: 22.6 each.
  EXPECT_NEAR(mean_tile_segment(dense, 64), 383.5 / (67 * (1 - std::pow(1 - 1.0 / 67, 383.5))), 1e-9);
  EXPECT_GT(mean_tile_segment(dense, 256), 22);
  EXPECT_TRUE(column_tiles_may_pay(dense, 256, 64));
  EXPECT_FALSE(column_tiles_may_pay(dense, 256, 32)) << "134 tiles: 3 non-zeros per segment";
  EXPECT_TRUE(column_tiles_may_pay(dense, 64, 256));
  EXPECT_FALSE(column_tiles_may_pay(dense, 64, 2048)) << "X is not 4 tiles wide";
  EXPECT_LT(mean_tile_segment(sparse, 256), 1.2);
  EXPECT_FALSE(column_tiles_may_pay(sparse, 64, 256));
  SpmmSpec spec;
  spec.feat = 256;
  auto tiled = [&](const GraphFingerprint& g, bool exhaustive) {
    std::vector<std::string> out;
    for (const auto& p : spmm_search_space(g, spec, 16, exhaustive))
      if (p.format.kind == FormatKind::Dcsr && p.format.col_tile > 0) out.push_back(p.str());
    return out;
  };
  const auto on_dense = tiled(dense, false);
  ASSERT_FALSE(on_dense.empty());
  for (const auto& p : on_dense) EXPECT_NE(p.find("dcsr:cols=64 "), std::string::npos) << p << ": only the paying width";
  EXPECT_TRUE(tiled(sparse, false).empty());
  // The exhaustive space holds every width, at the coarsest grain (16384) and at
  // 4x it where that still gives every thread 4 tasks.
  const size_t grains = sparse.nnz / (4 * 16384) >= 4 * std::max(1, num_threads()) ? 2 : 1;
  EXPECT_EQ(tiled(sparse, true).size(), 3 * grains);
  bool in_sddmm = false;
  for (const auto& p : sddmm_search_space(dense, 64, 16, false)) in_sddmm |= p.format.col_tile > 0;
  EXPECT_TRUE(in_sddmm);
}

TEST(SearchSpace, AccumulatorSetsWhereARowIsOneVectorAndRowsAreLong) {
  GraphFingerprint g;
  g.rows = g.cols = 1000;
  g.nnz = 16000;  // 16 non-zeros per row: the line
  g.row_histogram = std::vector<int64_t>(6, 0);
  g.row_histogram[5] = 1000;
  SpmmSpec spec;
  auto sets = [&](int64_t F, bool exhaustive) {
    spec.feat = F;
    std::set<int> out;
    for (const auto& p : spmm_search_space(g, spec, 16, exhaustive))
      if (p.knobs.accumulator_sets > 1) {
        out.insert(p.knobs.accumulator_sets);
        EXPECT_TRUE(p.format.kind == FormatKind::Csr && p.feature_tile == 0) << p.str();
      }
    return out;
  };
  EXPECT_EQ(sets(16, false), (std::set<int>{2}));
  EXPECT_EQ(sets(7, false), (std::set<int>{2}));
  EXPECT_TRUE(sets(32, false).empty()) << "two vectors: two chains already";
  EXPECT_EQ(sets(32, true), (std::set<int>{2, 4}));
  EXPECT_TRUE(sets(64, true).empty());
  g.nnz = 15999;  // shorter rows: only the exhaustive search tries them
  EXPECT_TRUE(sets(16, false).empty());
  EXPECT_EQ(sets(16, true), (std::set<int>{2, 4}));
  // Two sets are a one-knob neighbour.
  KernelPlan a, b;
  b.knobs.accumulator_sets = 2;
  EXPECT_EQ(plan_distance(a, b), 1);
}

TEST(SearchSpace, SmallGraphsGetAGrainThatBalancesTheirTasks) {
  GraphFingerprint g;
  g.nnz = 5429;  // Cora as stored: 4096 per task gives two tasks of 4096 and 1333 non-zeros
  EXPECT_EQ(task_grains(g, 2, false), (std::vector<int64_t>{512, 4096, 16384}));
  EXPECT_EQ(task_grains(g, 1, false), (std::vector<int64_t>{1024, 4096, 16384}));
  EXPECT_EQ(task_grains(g, 2, true), (std::vector<int64_t>{512, 1024, 4096, 16384}));
  g.nnz = 2'000'000;  // large graphs: the fixed grains
  EXPECT_EQ(task_grains(g, 2, false), (std::vector<int64_t>{4096, 16384}));
  g.nnz = 900;  // tiny: no grain below 256
  EXPECT_EQ(task_grains(g, 2, false), (std::vector<int64_t>{4096, 16384}));
  g.nnz = 88'648;  // Pubmed: ~11 tasks of 4096 per thread; 1024 gives each about 43
  EXPECT_EQ(task_grains(g, 2, false), (std::vector<int64_t>{1024, 4096, 16384}));
  EXPECT_EQ(task_grains(g, 2, true), (std::vector<int64_t>{1024, 4096, 16384}));
}

TEST(SearchSpace, PlanDistanceCountsTheKnobsThatDiffer) {
  KernelPlan a;
  KernelPlan b = a;
  EXPECT_EQ(plan_distance(a, b), 0);
  b.knobs.stream_stores = !a.knobs.stream_stores;
  EXPECT_EQ(plan_distance(a, b), 1);
  b.knobs.grain = a.knobs.grain * 4;
  EXPECT_EQ(plan_distance(a, b), 2);
  b = a;
  b.format = FormatSpec::parse("hyb:c=2,B=5");
  EXPECT_EQ(plan_distance(a, b), 1);
  b.feature_tile = 32;
  b.x_layout = DenseLayout::panel(32);
  EXPECT_EQ(plan_distance(a, b), 3);
}

// The neighbours of a prefetching plan start with its distance halved, doubled
// and quadrupled, then the untried one-knob plans in rank order, at most n in all.
TEST(SearchSpace, NeighboursTryOtherPrefetchDistancesFirst) {
  KernelPlan best;
  best.knobs.vector_lanes = 16;
  best.knobs.grain = 4096;
  best.knobs.prefetch = 32;
  KernelPlan streamed = best, coarse = best, far = best, two_knobs = best;
  streamed.knobs.stream_stores = true;
  coarse.knobs.grain = 16384;
  far.knobs.prefetch = 128;  // already in the space: listed once
  two_knobs.knobs.grain = 16384;
  two_knobs.knobs.stream_stores = true;
  const std::vector<KernelPlan> untried = {two_knobs, streamed, far, coarse};
  const auto n = neighbour_plans(best, untried, {}, 5);
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[0].knobs.prefetch, 16);
  EXPECT_EQ(n[1].knobs.prefetch, 64);
  EXPECT_EQ(n[2].knobs.prefetch, 128);
  EXPECT_TRUE(n[3] == streamed) << n[3].str();
  EXPECT_TRUE(n[4] == coarse) << n[4].str();
  for (const auto& p : n) EXPECT_EQ(plan_distance(p, best), 1) << p.str();
  EXPECT_EQ(neighbour_plans(best, untried, {}, 1).size(), 1u);
  // A plan measured already is never offered again; the next one takes its place.
  KernelPlan near = best;
  near.knobs.prefetch = 16;
  const auto without = neighbour_plans(best, untried, {near}, 5);
  ASSERT_EQ(without.size(), 4u);
  EXPECT_EQ(without[0].knobs.prefetch, 64);
  // No prefetch, no distances to vary: only the space's neighbours.
  KernelPlan plain = best;
  plain.knobs.prefetch = 0;
  KernelPlan plain_streamed = plain;
  plain_streamed.knobs.stream_stores = true;
  const auto m = neighbour_plans(plain, {best, plain_streamed, two_knobs}, {}, 6);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0] == best && m[1] == plain_streamed);
}

TEST(SearchSpace, HoldsFormatsAndKnobsAndOnlyValidTiles) {
  testing::RandomGraphSpec s;
  const GraphFingerprint g = GraphFingerprint::of(testing::random_graph(s));
  SpmmSpec spec;
  spec.feat = 96;
  const auto space = spmm_search_space(g, spec, 16, false);
  const auto all = spmm_search_space(g, spec, 16, true);
  EXPECT_GT(all.size(), space.size());
  bool hyb = false, prefetch = false, tile = false;
  for (const auto& p : all) {
    hyb |= p.format.kind == FormatKind::Hyb;
    prefetch |= p.knobs.prefetch > 0;
    if (p.feature_tile > 0) {
      tile = true;
      EXPECT_EQ(96 % p.feature_tile, 0) << p.str();
    }
  }
  EXPECT_TRUE(hyb && prefetch && tile);
  // The default space offers streaming stores at every grain of the untiled CSR plans.
  for (int64_t grain : task_grains(g, num_threads(), false)) {
    bool streamed = false;
    for (const auto& p : space)
      streamed |= p.format.kind == FormatKind::Csr && p.knobs.grain == grain && p.feature_tile == 0 && p.knobs.stream_stores;
    EXPECT_TRUE(streamed) << "grain " << grain;
  }
  // X layouts only when the caller can supply them; a panel is the plan's tile.
  for (const auto& p : all) EXPECT_TRUE(p.x_layout.is_row()) << p.str();
  int panels = 0;
  for (const auto& p : spmm_search_space(g, spec, 16, true, true))
    if (p.x_layout.kind == DenseLayout::Kind::Panel) {
      ++panels;
      EXPECT_EQ(p.x_layout.param, p.feature_tile) << p.str();
      EXPECT_TRUE(p.format.kind == FormatKind::Csr) << p.str();
    }
  EXPECT_GT(panels, 0);
  // The default space with layouts holds streaming plans over panels of 32 (the one
  // width that divides F = 96 by default) at the coarsest grain both with the default
  // prefetch and with none (the exhaustive pick on Pubmed and CA-GrQc at F = 128,
  // 256); row-major tiles stream only with the prefetch.
  const int64_t coarsest = task_grains(g, num_threads(), false).back();
  std::set<int64_t> panel_prefetches, row_prefetches;
  int static_panels = 0;
  for (const auto& p : spmm_search_space(g, spec, 16, false, true))
    if (p.feature_tile == 32 && p.knobs.stream_stores) {
      EXPECT_EQ(p.knobs.grain, coarsest) << p.str();
      (p.x_layout.is_row() ? row_prefetches : panel_prefetches).insert(p.knobs.prefetch);
      // The ones without prefetch come with fixed task blocks too (Pubmed at F = 256).
      if (p.knobs.static_tasks) {
        EXPECT_FALSE(p.x_layout.is_row()) << p.str();
        EXPECT_EQ(p.knobs.prefetch, 0) << p.str();
        ++static_panels;
      }
    }
  EXPECT_EQ(static_panels, 1);
  EXPECT_EQ(panel_prefetches.size(), 2u);
  EXPECT_EQ(panel_prefetches.count(0), 1u);
  EXPECT_EQ(row_prefetches.size(), 1u);
  EXPECT_EQ(row_prefetches.count(0), 0u);
}

TEST_F(TunerTest, ChoosesAmongXLayoutsWhenAllowedAndTheChoiceRunsOnLaidOutX) {
  testing::RandomGraphSpec s;
  s.rows = s.cols = 3000;
  s.avg_degree = 12;
  const Graph g = testing::random_graph(s);
  TuneOptions o;
  o.x_layouts = true;
  o.top_k = 3;
  o.max_repeats = 3;
  const TuneResult r = tune_spmm(g, 64, o);
  bool panel_ranked = false;
  for (const auto& c : r.candidates) panel_ranked |= !c.plan.x_layout.is_row();
  EXPECT_TRUE(panel_ranked);
  SpmmOptions so;
  so.feat = 64;
  so.plan = r.chosen;
  Rng rng(5);
  const Tensor X = Tensor::uniform({g.num_cols(), 64}, -1, 1, rng);
  const Tensor want = testing::reference_spmm(g, X, Tensor(), Tensor(), Tensor(), false);
  const Tensor got = SpmmKernel(g, so).run(to_layout(X, r.chosen.x_layout));
  EXPECT_TRUE(all_close(got, want, 1e-4, 1e-4).ok) << r.chosen.str();
  // A record made with layouts is not reused by a caller that holds row-major X.
  TuneOptions row;
  row.max_repeats = 3;
  EXPECT_FALSE(tune_spmm(g, 64, row).from_record);
}

// SDDMM with layouts allowed: where Y outgrows the cache, the best-ranked panel
// plan (X and Y panel by panel) is measured at each grain, checked against the
// reference like every candidate; the choice runs on laid-out X and Y. Without
// layouts no panel plan is a candidate.
TEST_F(TunerTest, SddmmPanelsAreMeasuredWhereYOutgrowsTheCacheOnlyWithLayouts) {
  testing::RandomGraphSpec big;
  big.rows = big.cols = 20000;  // Y at F = 128: 10 MB, over the model's 8 MB
  big.avg_degree = 10;          // each row of Y gathered ~10 times: panels are in the default space
  big.seed = 6;
  const Graph g = testing::random_graph(big);
  ASSERT_TRUE(x_outgrows_cache(GraphFingerprint::of(g), 128, MachineModel::host()));
  TuneOptions o = quick(1, 0);
  o.use_records = false;
  o.x_layouts = true;
  const TuneResult r = tune_sddmm(g, 128, o);
  int panels_measured = 0;
  for (const auto& c : r.candidates)
    if (!c.plan.x_layout.is_row() && c.measured_ms >= 0) {
      EXPECT_EQ(c.status, "ok") << c.plan.str();
      ++panels_measured;
    }
  EXPECT_GE(panels_measured, 1);
  Rng rng(8);
  const Tensor X = Tensor::uniform({g.num_rows(), 128}, -1, 1, rng);
  const Tensor Y = Tensor::uniform({g.num_cols(), 128}, -1, 1, rng);
  const Tensor got = SddmmKernel(g, {SddmmKind::Dot, 128, Backend::Generated, r.chosen})
                         .run(to_layout(X, r.chosen.x_layout), to_layout(Y, r.chosen.x_layout));
  EXPECT_TRUE(all_close(got, testing::reference_sddmm_dot(g, X, Y), 1e-4, 1e-4).ok) << r.chosen.str();
  o.x_layouts = false;
  for (const auto& c : tune_sddmm(g, 128, o).candidates) EXPECT_TRUE(c.plan.x_layout.is_row()) << c.plan.str();
}

TEST(SearchSpace, SddmmPanelsOnlyWithLayoutsAndOnlyNarrowerThanF) {
  GraphFingerprint g;
  g.rows = g.cols = 1000;
  g.nnz = 8000;
  g.row_histogram = std::vector<int64_t>(5, 0);
  g.row_histogram[4] = 1000;
  auto panels = [&](int64_t F, bool exhaustive, bool layouts) {
    std::set<std::string> out;
    for (const auto& p : sddmm_search_space(g, F, 16, exhaustive, layouts))
      if (!p.x_layout.is_row()) {
        EXPECT_EQ(p.feature_tile, p.x_layout.param) << p.str();
        EXPECT_EQ(p.format.kind, FormatKind::Csr) << p.str();
        out.insert(fmt::format("{}/{}", p.x_layout.str(), p.knobs.prefetch));
      }
    return out;
  };
  EXPECT_TRUE(panels(128, false, false).empty());
  EXPECT_TRUE(panels(128, true, false).empty());
  EXPECT_TRUE(panels(32, false, true).empty()) << "a panel of 32 at F = 32 is the row";
  // A row of Y gathered fewer than 8 times on average: panels only when exhaustive.
  g.nnz = 7999;
  EXPECT_TRUE(panels(128, false, true).empty());
  EXPECT_FALSE(panels(128, true, true).empty());
  g.nnz = 8000;
  // Y-row prefetch ~16 KiB and ~8 KiB ahead of a panel's rows (and none).
  const int64_t d32 = default_prefetch_distance(32), d64 = default_prefetch_distance(64);
  EXPECT_EQ(panels(128, false, true), (std::set<std::string>{"panel:64/0", fmt::format("panel:64/{}", d64 / 2),
                                                             fmt::format("panel:64/{}", d64)}));
  EXPECT_TRUE(panels(64, false, true).empty()) << "panels of 32 only when exhaustive";
  EXPECT_EQ(panels(64, true, true).count(fmt::format("panel:32/{}", d32 / 4)), 1u);
  std::set<std::string> widths;
  for (const auto& p : panels(256, true, true)) widths.insert(p.substr(0, p.find('/')));
  EXPECT_EQ(widths, (std::set<std::string>{"panel:32", "panel:64", "panel:128"}));
}

// Edge groups: every row-major CSR plan again with groups, where rows average 16
// non-zeros or more (always when exhaustive) and F is a whole number of vectors;
// never with panels, never for other formats.
TEST(SearchSpace, SddmmEdgeGroupsWhereRowsAreLongAndFeaturesFillVectors) {
  GraphFingerprint g;
  g.rows = g.cols = 1000;
  g.nnz = 16000;
  g.row_histogram = std::vector<int64_t>(6, 0);
  g.row_histogram[5] = 1000;
  // Grouped CSR plans: one copy of each row-major CSR plan, where rows are long.
  auto grouped = [&](int64_t F, bool exhaustive) {
    int n = 0, row_major_csr = 0;
    for (const auto& p : sddmm_search_space(g, F, 16, exhaustive, true)) {
      if (p.format.kind == FormatKind::Csr && p.x_layout.is_row() && !p.knobs.edge_groups) ++row_major_csr;
      if (!p.knobs.edge_groups || p.format.kind == FormatKind::Coo) continue;
      EXPECT_EQ(p.format.kind, FormatKind::Csr) << p.str();
      EXPECT_TRUE(p.x_layout.is_row()) << p.str();
      ++n;
    }
    if (n > 0) {
      EXPECT_EQ(n, row_major_csr) << "one grouped copy of each row-major csr plan";
    }
    return n;
  };
  // Grouped COO plans: static and dynamic tasks at each grain offered, where the
  // features are whole vectors (outside the exhaustive space, at most four of them
  // or a Y under four L2s).
  auto grouped_slots = [&](int64_t F, bool exhaustive) {
    int n = 0;
    std::set<std::pair<int64_t, bool>> seen;
    for (const auto& p : sddmm_search_space(g, F, 16, exhaustive, true))
      if (p.format.kind == FormatKind::Coo && p.knobs.edge_groups) {
        EXPECT_TRUE(p.x_layout.is_row()) << p.str();
        EXPECT_EQ(p.knobs.prefetch, 0) << p.str();
        EXPECT_TRUE(seen.insert({p.knobs.grain, p.knobs.static_tasks}).second) << p.str();
        ++n;
      }
    return n;
  };
  EXPECT_GT(grouped(32, false), 0);
  EXPECT_GT(grouped(128, false), 0);
  EXPECT_EQ(grouped(40, false), 0) << "40 features are not whole 16-lane vectors";
  EXPECT_EQ(grouped(40, true), 0);
  EXPECT_EQ(grouped_slots(32, false), 2);
  EXPECT_EQ(grouped_slots(64, false), 2);
  EXPECT_EQ(grouped_slots(128, false), 2) << "eight vectors of features, but a small Y";
  const int64_t cols = g.cols;
  g.cols = host_l2_bytes() / 128;  // Y of four L2s at F = 128
  EXPECT_EQ(grouped_slots(128, false), 0) << "eight vectors of features and a Y of four L2s: the sums weigh little";
  EXPECT_GT(grouped_slots(128, true), 2);
  g.cols = cols;
  EXPECT_EQ(grouped_slots(40, true), 0);
  g.nnz = 15999;
  EXPECT_EQ(grouped(32, false), 0) << "rows of fewer than 16 non-zeros on average";
  EXPECT_GT(grouped(32, true), 0);
  EXPECT_EQ(grouped_slots(32, false), 2) << "slots fill groups whatever the rows' lengths";
  EXPECT_TRUE(sddmm_search_space(g, 32, 16, false, true) != sddmm_search_space(g, 32, 16, true, true));
}

}  // namespace
}  // namespace strata::sc
