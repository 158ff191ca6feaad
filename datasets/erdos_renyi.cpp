#include "datasets/erdos_renyi.h"

#include <algorithm>
#include <cmath>

#include "core/host_memory.h"
#include "datasets/generator_params.h"
#include "datasets/generator_util.h"

namespace strata::data {

ErParams parse_er_params(std::string_view text) {
  GeneratorParams g("er", text,
                    {{"nodes", "node count"},
                     {"avg_degree", "stored edges per node (16)"},
                     {"edges", "stored edges (instead of avg_degree)"},
                     {"seed", "random seed (1)"},
                     {"undirected", "draw unordered pairs and store both ways (0)"}});
  ErParams p;
  p.nodes = g.get_int("nodes", p.nodes, 1, int64_t{1} << 31);
  STRATA_CHECK(!(g.has("edges") && g.has("avg_degree")), "er: give either 'edges' or 'avg_degree', not both");
  p.avg_degree = g.get_double("avg_degree", p.avg_degree, 0, 1e6);
  p.edges = g.get_int("edges", -1, 0, int64_t{1} << 34);
  p.seed = static_cast<uint64_t>(g.get_int("seed", static_cast<int64_t>(p.seed), 0, INT64_MAX));
  p.undirected = g.get_bool("undirected", p.undirected);
  return p;
}

std::string er_spec(const ErParams& p) {
  return p.edges >= 0 ? fmt::format("er:nodes={},edges={},seed={},undirected={}", p.nodes, p.edges, p.seed, int(p.undirected))
                      : fmt::format("er:nodes={},avg_degree={:g},seed={},undirected={}", p.nodes, p.avg_degree, p.seed,
                                    int(p.undirected));
}

Dataset generate_er(const ErParams& p) {
  const int64_t n = p.nodes;
  const int64_t stored = p.edges >= 0 ? p.edges : std::llround(static_cast<double>(n) * p.avg_degree);
  // Undirected graphs store each drawn pair twice.
  STRATA_CHECK(!p.undirected || stored % 2 == 0, "er: an undirected graph stores an even number of edges, got {}", stored);
  const int64_t draws = p.undirected ? stored / 2 : stored;
  const double pairs = p.undirected ? static_cast<double>(n) * (n - 1) / 2 : static_cast<double>(n) * (n - 1);
  STRATA_CHECK(static_cast<double>(draws) <= pairs, "er: {} edges requested but {} nodes have only {:.0f} {} pairs",
               stored, n, pairs, p.undirected ? "unordered" : "ordered");
  STRATA_CHECK(static_cast<double>(draws) <= 0.5 * pairs || n <= 4096,
               "er: {} edges fill more than half of the {:.0f} possible pairs; use fewer edges or more nodes", stored,
               pairs);
  // Keys, their sort and the CSR: ~60 bytes per stored edge and ~16 per node at the
  // peak (max RSS of `strata info` on 8M edges over 250k and 1M nodes, less karate's).
  check_host_bytes(64.0 * static_cast<double>(stored) + 24.0 * static_cast<double>(n),
                   fmt::format("generating '{}'", er_spec(p)));
  // Pair keys s*n+d; draw, sort, dedupe, top up until `draws` distinct pairs.
  std::vector<uint64_t> keys;
  keys.reserve(static_cast<size_t>(draws));
  const uint64_t un = static_cast<uint64_t>(n);
  for (uint64_t round = 0; static_cast<int64_t>(keys.size()) < draws; ++round) {
    const int64_t need = draws - static_cast<int64_t>(keys.size());
    constexpr int64_t kChunk = 1 << 16;
    const int64_t chunks = (need + kChunk - 1) / kChunk;
    const size_t base = keys.size();
    keys.resize(base + static_cast<size_t>(need));
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      Rng rng = detail::chunk_rng(p.seed, (round << 40) | static_cast<uint64_t>(ch));
      for (int64_t k = ch * kChunk; k < std::min(need, (ch + 1) * kChunk); ++k) {
        uint64_t s, d;
        do {
          s = rng.below(un);
          d = rng.below(un);
        } while (s == d);
        if (p.undirected && s > d) std::swap(s, d);
        keys[base + static_cast<size_t>(k)] = s * un + d;
      }
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  std::vector<int64_t> src(keys.size()), dst(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    src[k] = static_cast<int64_t>(keys[k] / un);
    dst[k] = static_cast<int64_t>(keys[k] % un);
  }
  Dataset ds;
  ds.name = fmt::format("er-n{}", n);
  ds.format = "er";
  ds.source = er_spec(p);
  ds.graph = detail::graph_from_pairs(n, std::move(src), std::move(dst), p.undirected, false, "er generator");
  ds.undirected = p.undirected;
  ds.notes.push_back(fmt::format("uniform random G(n, m): {} distinct {} pairs, no self-loops", draws,
                                 p.undirected ? "unordered" : "ordered"));
  ds.validate();
  return ds;
}

}  // namespace strata::data
