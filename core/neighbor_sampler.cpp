#include "core/neighbor_sampler.h"

#include <omp.h>

#include <algorithm>

#include "core/error.h"

namespace strata {
namespace {

// A destination's own random stream: SplitMix64 (Steele et al. 2014) from a seed that
// mixes the layer's draw with the destination's position. Each destination draws from
// its own stream, so destinations can be sampled on any thread, in any order, and the
// batch is the same for every thread count.
class DestinationStream {
 public:
  DestinationStream(uint64_t layer_seed, uint64_t position) : state_(layer_seed ^ (position * 0xD1B54A32D192ED03ULL)) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n >= 1, without modulo bias (Lemire 2019: a multiply, and a
  // rejection only in the rare low-product case).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    if (static_cast<uint64_t>(m) < n) {
      const uint64_t floor = (0 - n) % n;
      while (static_cast<uint64_t>(m) < floor) m = static_cast<unsigned __int128>(next()) * n;
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  uint64_t state_;
};

// k distinct positions of [0, d), uniformly, in increasing order (Floyd's algorithm:
// k draws whatever d is, so a hub's neighbour list is never walked).
void choose_positions(int64_t d, int64_t k, DestinationStream& rng, std::vector<int64_t>& out) {
  out.clear();
  for (int64_t j = d - k; j < d; ++j) {
    const auto t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    const auto at = std::lower_bound(out.begin(), out.end(), t);
    if (at != out.end() && *at == t)
      out.push_back(j);  // t was taken: j, larger than every earlier pick, is new
    else
      out.insert(at, t);
  }
}

// Layers that pick at least this many neighbours pick them on every thread (the
// random draws and Floyd's insertions are most of a layer's time); smaller ones stay on
// the calling thread (see kParallelWork in core/autograd.h).
constexpr int64_t kParallelPicks = int64_t{1} << 15;

template <typename Index>
SampledBatch sample(const Graph& A, const std::vector<int64_t>& seeds, const std::vector<int64_t>& fanouts, Rng& rng) {
  const int64_t n = A.num_rows();
  const Index* cols = A.indices().template data<Index>();
  const int64_t* indptr = A.indptr_data();
  const float* weights = A.has_values() ? A.values().data<float>() : nullptr;
  // Global id -> local id of the block being built (-1: not in it); kept between calls,
  // so a batch costs what it touches, not the graph's size.
  thread_local std::vector<int64_t> local;
  if (static_cast<int64_t>(local.size()) < n) local.assign(static_cast<size_t>(n), -1);

  for (int64_t v : seeds)
    STRATA_CHECK(v >= 0 && v < n, "sample_blocks: seed {} is not a node of a graph of {} nodes", v, n);
  SampledBatch batch;
  batch.seeds = seeds;
  batch.blocks.resize(fanouts.size());
  std::vector<int64_t> frontier = seeds;
  for (size_t l = fanouts.size(); l-- > 0;) {
    SampledBlock& b = batch.blocks[l];
    b.num_dst = static_cast<int64_t>(frontier.size());
    b.src_nodes = frontier;
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t v = frontier[static_cast<size_t>(i)];
      if (local[static_cast<size_t>(v)] >= 0) {  // only seeds can repeat; leave the map clean for the next call
        for (int64_t k = 0; k < i; ++k) local[static_cast<size_t>(frontier[static_cast<size_t>(k)])] = -1;
        STRATA_FAIL("sample_blocks: seed {} is listed twice", v);
      }
      local[static_cast<size_t>(v)] = i;
    }
    // Destination i keeps min(degree, fanout) neighbours: the block's row offsets are
    // known before any is picked.
    const int64_t fanout = fanouts[l];
    std::vector<int64_t> indptr_out(static_cast<size_t>(b.num_dst) + 1, 0);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t v = frontier[static_cast<size_t>(i)], d = indptr[v + 1] - indptr[v];
      indptr_out[static_cast<size_t>(i) + 1] =
          indptr_out[static_cast<size_t>(i)] + (fanout < 0 ? d : std::min(d, fanout));
    }
    const int64_t picks = indptr_out.back();
    // Picks, as node ids of A, each destination's in increasing position.
    std::vector<Index> picked(static_cast<size_t>(picks));
    std::vector<float> picked_weights(weights ? static_cast<size_t>(picks) : 0);  // each pick's edge value
    const uint64_t layer_seed = fanout < 0 ? 0 : rng.next_u64();  // a full layer draws nothing
    // Each thread's Floyd positions, allocated here: an exception (bad_alloc) may not
    // leave an OpenMP region.
    const bool parallel = picks >= kParallelPicks && !omp_in_parallel();
    std::vector<std::vector<int64_t>> scratch(static_cast<size_t>(parallel ? omp_get_max_threads() : 1));
    for (std::vector<int64_t>& s : scratch) s.reserve(static_cast<size_t>(std::max<int64_t>(fanout, 0)));
    const int team = static_cast<int>(scratch.size());
#pragma omp parallel num_threads(team) if (parallel)
    {
      std::vector<int64_t>& positions = scratch[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 256)
      for (int64_t i = 0; i < b.num_dst; ++i) {
        const int64_t v = frontier[static_cast<size_t>(i)];
        const int64_t begin = indptr[v], d = indptr[v + 1] - begin;
        const int64_t at = indptr_out[static_cast<size_t>(i)];
        Index* out = picked.data() + at;
        if (fanout < 0 || d <= fanout) {
          std::copy_n(cols + begin, d, out);
          if (weights) std::copy_n(weights + begin, d, picked_weights.begin() + at);
        } else {
          DestinationStream stream(layer_seed, static_cast<uint64_t>(i));
          choose_positions(d, fanout, stream, positions);
          for (size_t k = 0; k < positions.size(); ++k) out[k] = cols[begin + positions[k]];
          if (weights)
            for (size_t k = 0; k < positions.size(); ++k)
              picked_weights[static_cast<size_t>(at) + k] = weights[begin + positions[k]];
        }
      }
    }
    // Local ids in order of first appearance (destinations first): one serial pass.
    std::vector<Index> indices_out(static_cast<size_t>(picks));
    for (int64_t p = 0; p < picks; ++p) {
      const auto u = static_cast<int64_t>(picked[static_cast<size_t>(p)]);
      int64_t& id = local[static_cast<size_t>(u)];
      if (id < 0) {
        id = static_cast<int64_t>(b.src_nodes.size());
        b.src_nodes.push_back(u);
      }
      indices_out[static_cast<size_t>(p)] = static_cast<Index>(id);
    }
    for (int64_t u : b.src_nodes) local[static_cast<size_t>(u)] = -1;
    // Square over the sources: the rows past the destinations are empty.
    const int64_t num_src = b.num_src();
    indptr_out.resize(static_cast<size_t>(num_src) + 1, indptr_out.back());
    b.graph = Graph::from_csr(num_src, num_src, Tensor::from_vector(indptr_out), Tensor::from_vector(indices_out),
                              weights ? Tensor::from_vector(picked_weights) : Tensor());
    frontier = b.src_nodes;
  }
  return batch;
}

}  // namespace

SampledBatch sample_blocks(const Graph& A, const std::vector<int64_t>& seeds, const std::vector<int64_t>& fanouts,
                           Rng& rng) {
  STRATA_CHECK(A.num_rows() == A.num_cols(), "sample_blocks: the graph must be square, got {}", A.describe());
  STRATA_CHECK(!fanouts.empty(), "sample_blocks: no fanouts (one per layer)");
  for (int64_t f : fanouts)
    STRATA_CHECK(f == -1 || f >= 1, "sample_blocks: a fanout is a positive number of neighbours or -1 (all), got {}",
                 f);
  if (A.index_dtype() == DType::I32) return sample<int32_t>(A, seeds, fanouts, rng);
  return sample<int64_t>(A, seeds, fanouts, rng);
}

}  // namespace strata
