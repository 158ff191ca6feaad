// Pieces shared by the synthetic generators (not part of the public interface).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "core/rng.h"

namespace strata::data::detail {

// SplitMix64: turns (base seed, chunk index) into well-separated stream seeds.
inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The stream for chunk `k` of a generator seeded with `seed`.
inline Rng chunk_rng(uint64_t seed, uint64_t k) { return Rng(splitmix64(splitmix64(seed) ^ (k * 0xD1B54A32D192ED03ULL))); }

// A graph from (src, dst) pairs: rows = dst. `undirected` adds each pair reversed;
// `simple` drops self-loops and repeated pairs.
Graph graph_from_pairs(int64_t n, std::vector<int64_t> src, std::vector<int64_t> dst, bool undirected, bool simple,
                       const char* what);

// Features of block-labelled nodes: a centroid N(0, 1)^dim per block, drawn first,
// then each node's centroid plus N(0, noise²) per entry (float32 [block.size(), dim]).
Tensor block_features(const std::vector<int64_t>& block, int64_t blocks, int64_t dim, double noise, Rng& rng);

}  // namespace strata::data::detail
