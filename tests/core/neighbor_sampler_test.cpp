// Neighbour sampling (core/neighbor_sampler.h): blocks that hold exactly the sampled
// in-neighbours, destinations first, chained layer to layer; fanouts respected
// without replacement and uniformly; seeded; empty rows, hubs, int32 and int64.
#include "core/neighbor_sampler.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <map>
#include <optional>
#include <set>

#include "tests/support/test_support.h"

namespace strata {
namespace {

// A random graph of n nodes with a hub (node 0: every other node points to it) and
// isolated nodes (the last three: no in- or out-edges).
Graph test_graph(int64_t n, DType index, uint64_t seed) {
  Rng rng(seed);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < 4 * n; ++i) {
    const auto r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - 3)));
    const auto c = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - 3)));
    if (r == 0) continue;
    rows.push_back(r);
    cols.push_back(c);
  }
  for (int64_t c = 1; c < n - 3; ++c) {
    rows.push_back(0);
    cols.push_back(c);
  }
  CooOptions o;
  o.duplicates = DuplicatePolicy::KeepFirst;
  return Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), o).with_index_dtype(index);
}

std::vector<int64_t> in_neighbours(const Graph& g, int64_t v) {
  std::vector<int64_t> out;
  for (int64_t p = g.row_begin(v); p < g.row_end(v); ++p) out.push_back(g.column(p));
  return out;
}

// Every structural promise of a batch, for any fanouts.
void check_batch(const Graph& A, const SampledBatch& b, const std::vector<int64_t>& seeds,
                 const std::vector<int64_t>& fanouts) {
  ASSERT_EQ(b.blocks.size(), fanouts.size());
  EXPECT_EQ(b.seeds, seeds);
  std::vector<int64_t> dst = seeds;
  for (size_t l = fanouts.size(); l-- > 0;) {
    const SampledBlock& k = b.blocks[l];
    ASSERT_EQ(k.num_dst, static_cast<int64_t>(dst.size()));
    ASSERT_GE(k.num_src(), k.num_dst);
    for (int64_t i = 0; i < k.num_dst; ++i) EXPECT_EQ(k.src_nodes[static_cast<size_t>(i)], dst[static_cast<size_t>(i)]);
    EXPECT_EQ(std::set<int64_t>(k.src_nodes.begin(), k.src_nodes.end()).size(), k.src_nodes.size()) << "distinct";
    EXPECT_EQ(k.graph.num_rows(), k.num_src());
    EXPECT_EQ(k.graph.num_cols(), k.num_src());
    EXPECT_EQ(k.graph.index_dtype(), A.index_dtype());
    std::set<int64_t> reached(k.src_nodes.begin(), k.src_nodes.begin() + k.num_dst);
    for (int64_t i = 0; i < k.num_src(); ++i) {
      const int64_t v = k.src_nodes[static_cast<size_t>(i)];
      if (i >= k.num_dst) {
        EXPECT_EQ(k.graph.degree(i), 0) << "rows past the destinations are empty";
        continue;
      }
      const std::vector<int64_t> all = in_neighbours(A, v);
      std::vector<int64_t> got;
      for (int64_t p = k.graph.row_begin(i); p < k.graph.row_end(i); ++p)
        got.push_back(k.src_nodes[static_cast<size_t>(k.graph.column(p))]);
      const int64_t want = fanouts[l] < 0 ? static_cast<int64_t>(all.size())
                                          : std::min<int64_t>(fanouts[l], static_cast<int64_t>(all.size()));
      EXPECT_EQ(static_cast<int64_t>(got.size()), want) << "node " << v;
      EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size()) << "without replacement";
      // A subsequence of the node's in-neighbours, in the graph's order, each with its
      // edge's value on a weighted graph.
      EXPECT_EQ(k.graph.has_values(), A.has_values());
      size_t at = 0;
      for (size_t q = 0; q < got.size(); ++q) {
        const int64_t u = got[q];
        while (at < all.size() && all[at] != u) ++at;
        EXPECT_LT(at, all.size()) << u << " is not an in-neighbour of " << v << " (or out of order)";
        if (at < all.size() && A.has_values()) {
          EXPECT_EQ(k.graph.values().data<float>()[k.graph.row_begin(i) + static_cast<int64_t>(q)],
                    A.values().data<float>()[A.row_begin(v) + static_cast<int64_t>(at)])
              << "the value of edge " << u << " -> " << v;
        }
        ++at;
        reached.insert(u);
      }
    }
    EXPECT_EQ(reached, std::set<int64_t>(k.src_nodes.begin(), k.src_nodes.end())) << "sources = dst + sampled";
    dst = k.src_nodes;
  }
}

TEST(NeighborSampler, FullFanoutsGiveExactNeighbourhoodsBothIndexTypes) {
  for (DType index : {DType::I32, DType::I64}) {
    const Graph A = test_graph(60, index, 5);
    Rng rng(1);
    const std::vector<int64_t> seeds = {0, 7, 59, 13};  // the hub, ordinary nodes, an isolated node
    const SampledBatch b = sample_blocks(A, seeds, {-1, -1}, rng);
    check_batch(A, b, seeds, {-1, -1});
    // Full fanouts draw nothing: the stream is untouched.
    Rng fresh(1);
    EXPECT_EQ(rng.next_u64(), fresh.next_u64());
    // The isolated seed has no in-neighbours in any layer.
    EXPECT_EQ(b.blocks[1].graph.degree(2), 0);
  }
}

// A weighted graph's blocks carry each kept edge's value (GCN with edge weights).
TEST(NeighborSampler, BlocksOfAWeightedGraphCarryTheKeptEdgesValues) {
  for (DType index : {DType::I32, DType::I64}) {
    const Graph plain = test_graph(300, index, 4);
    std::vector<float> w(static_cast<size_t>(plain.nnz()));
    for (size_t k = 0; k < w.size(); ++k) w[k] = 0.25f + static_cast<float>(k);  // distinct: a misplaced value shows
    const Graph A = plain.with_values(Tensor::from_vector(w));
    const std::vector<int64_t> seeds = {0, 5, 299, 120};
    for (const std::vector<int64_t>& fanouts : std::vector<std::vector<int64_t>>{{-1, -1}, {3, 2}, {-1, 1}}) {
      SCOPED_TRACE(::testing::Message() << "index " << dtype_name(index) << ", fanouts " << fanouts[0] << ","
                                        << fanouts[1]);
      Rng rng(5);
      check_batch(A, sample_blocks(A, seeds, fanouts, rng), seeds, fanouts);
    }
    Rng rng(5);
    EXPECT_FALSE(sample_blocks(plain, seeds, {2}, rng).blocks[0].graph.has_values());
  }
}

TEST(NeighborSampler, FanoutsBoundEveryRowAndSamplingIsSeeded) {
  const Graph A = test_graph(200, DType::I32, 9);
  const std::vector<int64_t> seeds = {0, 3, 150, 42, 199};
  for (const std::vector<int64_t>& fanouts : std::vector<std::vector<int64_t>>{{2}, {3, 1}, {1, 5, 2}, {-1, 4}}) {
    Rng a(11), b(11), c(12);
    const SampledBatch x = sample_blocks(A, seeds, fanouts, a);
    check_batch(A, x, seeds, fanouts);
    const SampledBatch y = sample_blocks(A, seeds, fanouts, b);
    const SampledBatch z = sample_blocks(A, seeds, fanouts, c);
    bool differs = false;
    for (size_t l = 0; l < fanouts.size(); ++l) {
      EXPECT_EQ(x.blocks[l].src_nodes, y.blocks[l].src_nodes) << "same seed, same sample";
      EXPECT_TRUE(x.blocks[l].graph.same_structure(y.blocks[l].graph));
      differs = differs || x.blocks[l].src_nodes != z.blocks[l].src_nodes;
    }
    EXPECT_TRUE(differs) << "another seed samples the hub's neighbours otherwise";
  }
}

// Layers with many picks sample on every thread; each destination draws from its own
// stream, so the batch must not depend on the thread count.
TEST(NeighborSampler, LargeBatchesAreTheSameAtEveryThreadCount) {
  for (DType index : {DType::I32, DType::I64}) {
    const Graph A = test_graph(20000, index, 5);  // about 4 in-neighbours a node, and a hub
    std::vector<int64_t> seeds;
    for (int64_t v = 0; v < 20000; ++v)
      if (v % 3 != 2) seeds.push_back(v);  // 13,334 seeds, the hub among them
    const std::vector<int64_t> fanouts = {3, 4};
    const int saved = omp_get_max_threads();
    std::optional<SampledBatch> first;
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "index " << dtype_name(index) << ", threads " << threads);
      omp_set_num_threads(threads);
      Rng rng(21);
      const SampledBatch b = sample_blocks(A, seeds, fanouts, rng);
      omp_set_num_threads(saved);
      ASSERT_GE(b.blocks[1].graph.nnz(), int64_t{1} << 15) << "the last layer must take the parallel path";
      check_batch(A, b, seeds, fanouts);
      if (!first) {
        first = b;
        continue;
      }
      for (size_t l = 0; l < fanouts.size(); ++l) {
        EXPECT_EQ(b.blocks[l].src_nodes, first->blocks[l].src_nodes) << "layer " << l;
        EXPECT_TRUE(b.blocks[l].graph.same_structure(first->blocks[l].graph)) << "layer " << l;
      }
    }
  }
}

TEST(NeighborSampler, EachNeighbourOfAHubIsChosenWithProbabilityFanoutOverDegree) {
  const Graph A = test_graph(120, DType::I64, 3);
  const std::vector<int64_t> hub = in_neighbours(A, 0);
  const int64_t d = static_cast<int64_t>(hub.size()), k = 7, trials = 6000;
  ASSERT_GT(d, 100);
  std::map<int64_t, int64_t> count;
  Rng rng(2);
  for (int64_t t = 0; t < trials; ++t) {
    const SampledBatch b = sample_blocks(A, {0}, {k}, rng);
    const SampledBlock& blk = b.blocks[0];
    for (int64_t p = blk.graph.row_begin(0); p < blk.graph.row_end(0); ++p)
      ++count[blk.src_nodes[static_cast<size_t>(blk.graph.column(p))]];
  }
  // Expected trials * k / d each; a binomial's 5-sigma band.
  const double mean = static_cast<double>(trials * k) / static_cast<double>(d);
  const double sigma = std::sqrt(mean * (1.0 - static_cast<double>(k) / static_cast<double>(d)));
  ASSERT_EQ(static_cast<int64_t>(count.size()), d) << "every neighbour is drawn sometimes";
  for (const auto& [u, c] : count) EXPECT_NEAR(static_cast<double>(c), mean, 5 * sigma) << "neighbour " << u;
}

TEST(NeighborSampler, BadSeedsAndFanoutsAreRefusedAndLeaveTheSamplerClean) {
  const Graph A = test_graph(30, DType::I32, 1);
  Rng rng(0);
  testing::expect_user_error(
      [&] {
        sample_blocks(A, {1, 40}, {2}, rng);
      },
      {"sample_blocks: seed 40 is not a node of a graph of 30 nodes"});
  testing::expect_user_error([&] { sample_blocks(A, {1, 2, 1}, {2}, rng); }, {"sample_blocks: seed 1 is listed twice"});
  testing::expect_user_error([&] { sample_blocks(A, {1}, {0}, rng); },
                             {"a fanout is a positive number of neighbours or -1 (all), got 0"});
  testing::expect_user_error([&] { sample_blocks(A, {1}, {}, rng); }, {"no fanouts"});
  // After the refusals the next batch is whole (no stale ids from the refused one).
  const SampledBatch b = sample_blocks(A, {1, 2}, {-1}, rng);
  check_batch(A, b, {1, 2}, {-1});
  // No seeds: empty blocks.
  const SampledBatch none = sample_blocks(A, {}, {3, 3}, rng);
  EXPECT_EQ(none.blocks[0].num_src(), 0);
  EXPECT_EQ(none.blocks[0].graph.nnz(), 0);
}

}  // namespace
}  // namespace strata
