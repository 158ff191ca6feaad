#include "datasets/rmat.h"

#include <algorithm>
#include <array>

#include "core/host_memory.h"
#include "datasets/generator_params.h"
#include "datasets/generator_util.h"

namespace strata::data {

namespace detail {
Graph graph_from_pairs(int64_t n, std::vector<int64_t> src, std::vector<int64_t> dst, bool undirected, bool simple,
                       const char* what) {
  if (undirected) {
    const size_t m = src.size();
    src.reserve(2 * m);
    dst.reserve(2 * m);
    for (size_t k = 0; k < m; ++k) {
      src.push_back(dst[k]);
      dst.push_back(src[k]);
    }
  }
  CooOptions co;
  co.source = what;
  if (simple) {
    co.duplicates = DuplicatePolicy::KeepFirst;
    co.self_loops = SelfLoopPolicy::Remove;
  }
  return Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(src), co);
}
}  // namespace detail

RmatParams parse_rmat_params(std::string_view text) {
  GeneratorParams g("rmat", text,
                    {{"scale", "log2 of the node count (1..31)"},
                     {"edge_factor", "generated edges per node"},
                     {"a", "probability of the top-left quadrant (0.57)"},
                     {"b", "top-right (0.19)"},
                     {"c", "bottom-left (0.19); d = 1 - a - b - c"},
                     {"noise", "per-level perturbation of a..d, 0..0.5 (0)"},
                     {"seed", "random seed (1)"},
                     {"undirected", "store every edge both ways (0)"},
                     {"simple", "drop duplicate edges and self-loops (1)"},
                     {"permute", "shuffle node ids (1)"}});
  RmatParams p;
  p.scale = static_cast<int>(g.get_int("scale", p.scale, 1, 31));
  p.edge_factor = g.get_int("edge_factor", p.edge_factor, 1, 1 << 16);
  p.a = g.get_double("a", p.a, 0, 1);
  p.b = g.get_double("b", p.b, 0, 1);
  p.c = g.get_double("c", p.c, 0, 1);
  STRATA_CHECK(p.a + p.b + p.c <= 1.0 + 1e-12, "rmat: a + b + c = {} exceeds 1 (d = 1 - a - b - c)", p.a + p.b + p.c);
  p.noise = g.get_double("noise", p.noise, 0, 0.5);
  p.seed = static_cast<uint64_t>(g.get_int("seed", static_cast<int64_t>(p.seed), 0, INT64_MAX));
  p.undirected = g.get_bool("undirected", p.undirected);
  p.simple = g.get_bool("simple", p.simple);
  p.permute = g.get_bool("permute", p.permute);
  STRATA_CHECK((int64_t{1} << p.scale) * p.edge_factor <= (int64_t{1} << 34),
               "rmat: scale={} edge_factor={} asks for {} edges, more than the 2^34 this generator allows", p.scale,
               p.edge_factor, (int64_t{1} << p.scale) * p.edge_factor);
  return p;
}

std::string rmat_spec(const RmatParams& p) {
  return fmt::format("rmat:scale={},edge_factor={},a={:g},b={:g},c={:g},noise={:g},seed={},undirected={},simple={},"
                     "permute={}",
                     p.scale, p.edge_factor, p.a, p.b, p.c, p.noise, p.seed, int(p.undirected), int(p.simple),
                     int(p.permute));
}

Dataset generate_rmat(const RmatParams& p) {
  const int64_t n = int64_t{1} << p.scale;
  const int64_t m = n * p.edge_factor;
  // The drawn edges, their sort and dedup, and the CSR: ~50 bytes per generated edge
  // and ~29 per node at the peak (max RSS of `strata info` at scale 18 / 20, less
  // karate's), so a memory cgroup is met with an error, not the OOM killer.
  check_host_bytes(56.0 * static_cast<double>(m) + 32.0 * static_cast<double>(n),
                   fmt::format("generating '{}'", rmat_spec(p)));
  // Per-level quadrant probabilities (cumulative), perturbed once per level by noise.
  std::vector<std::array<double, 3>> levels(static_cast<size_t>(p.scale));
  {
    Rng rng = detail::chunk_rng(p.seed, UINT64_MAX);
    for (auto& lv : levels) {
      double q[4] = {p.a, p.b, p.c, 1.0 - p.a - p.b - p.c};
      if (p.noise > 0) {
        double sum = 0;
        for (double& x : q) sum += (x *= rng.uniform(1.0 - p.noise, 1.0 + p.noise));
        for (double& x : q) x /= sum;
      }
      lv = {q[0], q[0] + q[1], q[0] + q[1] + q[2]};
    }
  }
  std::vector<int64_t> src(static_cast<size_t>(m)), dst(static_cast<size_t>(m));
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (m + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    Rng rng = detail::chunk_rng(p.seed, static_cast<uint64_t>(ch));
    const int64_t end = std::min(m, (ch + 1) * kChunk);
    for (int64_t e = ch * kChunk; e < end; ++e) {
      int64_t s = 0, d = 0;
      for (int l = 0; l < p.scale; ++l) {
        const double u = rng.uniform();
        const auto& lv = levels[l];
        const int64_t sb = u >= lv[1], db = (u >= lv[0] && u < lv[1]) || u >= lv[2];
        s = (s << 1) | sb;
        d = (d << 1) | db;
      }
      src[e] = s;
      dst[e] = d;
    }
  }
  if (p.permute) {
    Rng rng = detail::chunk_rng(p.seed, UINT64_MAX - 1);
    const std::vector<int64_t> perm = rng.permutation(n);
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < m; ++e) {
      src[e] = perm[src[e]];
      dst[e] = perm[dst[e]];
    }
  }
  Dataset ds;
  ds.name = fmt::format("rmat-s{}-e{}", p.scale, p.edge_factor);
  ds.format = "rmat";
  ds.source = rmat_spec(p);
  ds.graph = detail::graph_from_pairs(n, std::move(src), std::move(dst), p.undirected, p.simple, "rmat generator");
  ds.undirected = p.undirected;
  ds.notes.push_back(fmt::format("R-MAT a={:g} b={:g} c={:g} d={:g}, noise {:g}: {} generated edges{}{}", p.a, p.b, p.c,
                                 1.0 - p.a - p.b - p.c, p.noise, m, p.undirected ? ", stored both ways" : "",
                                 p.simple ? fmt::format(", {} after dropping duplicates and self-loops", ds.graph.nnz())
                                          : ""));
  ds.validate();
  return ds;
}

}  // namespace strata::data
