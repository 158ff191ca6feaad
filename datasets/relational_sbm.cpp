#include "datasets/relational_sbm.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/host_memory.h"
#include "datasets/generator_params.h"
#include "datasets/generator_util.h"

namespace strata::data {

RelationalSbmParams parse_relational_sbm_params(std::string_view text) {
  GeneratorParams g("rsbm", text,
                    {{"nodes", "nodes per node type (2000)"},
                     {"types", "node types; t0 carries the labels (2)"},
                     {"relations", "relations drawn, each stored with its inverse (6)"},
                     {"classes", "blocks per type = classes of t0 (4)"},
                     {"avg_degree", "in-edges per node over every relation and inverse (8)"},
                     {"ratio", "p_in / p_out: how much likelier the relation's shifted block is (8)"},
                     {"feature_dim", "dense features per node, 0 for none (0)"},
                     {"noise", "std of the per-entry feature noise around the block centroid (1)"},
                     {"seed", "random seed (1)"},
                     {"train", "fraction of t0 in the train split (0.6)"},
                     {"val", "fraction of t0 in the validation split (0.2)"}});
  RelationalSbmParams p;
  p.nodes = g.get_int("nodes", p.nodes, 2, int64_t{1} << 28);
  p.types = g.get_int("types", p.types, 1, 64);
  p.relations = g.get_int("relations", p.relations, 1, 4096);
  p.classes = g.get_int("classes", p.classes, 2, 1 << 16);
  STRATA_CHECK(p.classes <= p.nodes, "rsbm: {} classes need at least as many nodes per type, got nodes={}", p.classes,
               p.nodes);
  p.avg_degree = g.get_double("avg_degree", p.avg_degree, 0, 1e4);
  p.ratio = g.get_double("ratio", p.ratio, 1e-6, 1e9);
  p.feature_dim = g.get_int("feature_dim", p.feature_dim, 0, 1 << 16);
  p.noise = g.get_double("noise", p.noise, 0, 1e6);
  p.seed = static_cast<uint64_t>(g.get_int("seed", static_cast<int64_t>(p.seed), 0, INT64_MAX));
  p.train = g.get_double("train", p.train, 0, 1);
  p.val = g.get_double("val", p.val, 0, 1);
  STRATA_CHECK(p.train + p.val <= 1.0, "rsbm: train={} + val={} exceeds 1", p.train, p.val);
  // Each relation draws distinct (source, destination) pairs among nodes² of them.
  const double per_relation =
      static_cast<double>(p.types * p.nodes) * p.avg_degree / (2.0 * static_cast<double>(p.relations));
  STRATA_CHECK(per_relation <= 0.5 * static_cast<double>(p.nodes) * static_cast<double>(p.nodes),
               "rsbm: avg_degree={} is too dense for {} relations over {} nodes per type (a relation can draw at most "
               "half of its node pairs)",
               p.avg_degree, p.relations, p.nodes);
  return p;
}

std::string relational_sbm_spec(const RelationalSbmParams& p) {
  return fmt::format(
      "rsbm:nodes={},types={},relations={},classes={},avg_degree={:g},ratio={:g},feature_dim={},noise={:g},seed={},"
      "train={:g},val={:g}",
      p.nodes, p.types, p.relations, p.classes, p.avg_degree, p.ratio, p.feature_dim, p.noise, p.seed, p.train, p.val);
}

Dataset generate_relational_sbm(const RelationalSbmParams& p) {
  const int64_t n = p.nodes, T = p.types, R = p.relations, C = p.classes;
  const int64_t pairs = std::llround(static_cast<double>(T * n) * p.avg_degree / (2.0 * static_cast<double>(R)));
  // Per drawn pair: the dedup set, both endpoints, the relation's CSR and its
  // inverse's, and the flattened graph: as sbm.h's ~160 bytes, twice the CSRs.
  check_host_bytes(static_cast<double>(T * n) * (16.0 + 4.0 * static_cast<double>(p.feature_dim)) +
                       200.0 * static_cast<double>(R * pairs),
                   fmt::format("generating '{}'", relational_sbm_spec(p)));
  Rng rng = detail::chunk_rng(p.seed, 0);

  // Balanced blocks in random positions, per type.
  std::vector<std::vector<int64_t>> block(static_cast<size_t>(T));                 // [type][node]
  std::vector<std::vector<std::vector<int64_t>>> members(static_cast<size_t>(T));  // [type][block] -> nodes
  for (int64_t t = 0; t < T; ++t) {
    block[t].resize(static_cast<size_t>(n));
    members[t].resize(static_cast<size_t>(C));
    const std::vector<int64_t> perm = rng.permutation(n);
    for (int64_t i = 0; i < n; ++i) block[t][perm[i]] = i % C;
    for (int64_t v = 0; v < n; ++v) members[t][block[t][v]].push_back(v);
  }

  HeteroGraph hg;
  for (int64_t t = 0; t < T; ++t) hg.add_node_type(fmt::format("t{}", t), n);
  // The probability that a destination draws from the shifted block: an edge there is
  // `ratio` times as likely as to any one node outside it (blocks are n / C nodes).
  const double inside = static_cast<double>(n) / static_cast<double>(C);
  const double q = p.ratio * inside / (p.ratio * inside + (static_cast<double>(n) - inside));
  int64_t shifted = 0;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t s = r % T, d = (s + 1 + r / T) % T;
    std::unordered_set<uint64_t> seen;
    seen.reserve(static_cast<size_t>(pairs) * 2);
    std::vector<int64_t> rows, cols;
    rows.reserve(static_cast<size_t>(pairs));
    cols.reserve(static_cast<size_t>(pairs));
    while (static_cast<int64_t>(rows.size()) < pairs) {
      const int64_t v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      const bool in_block = rng.uniform() < q;
      const auto& from = members[s][(block[d][v] + r) % C];
      const int64_t u =
          in_block ? from[rng.below(from.size())] : static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      if (!seen.insert(static_cast<uint64_t>(v) * static_cast<uint64_t>(n) + static_cast<uint64_t>(u)).second) continue;
      rows.push_back(v);
      cols.push_back(u);
      shifted += block[s][u] == (block[d][v] + r) % C;
    }
    CooOptions o;
    o.source = fmt::format("rsbm relation r{}", r);
    hg.add_relation(fmt::format("t{}", s), fmt::format("r{}", r), fmt::format("t{}", d),
                    Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), o));
  }
  hg.add_inverse_relations();

  Dataset ds;
  ds.name = "rsbm";
  ds.format = "rsbm";
  ds.source = relational_sbm_spec(p);
  ds.task = Task::NodeClassification;
  ds.graph = hg.to_homogeneous().graph;
  ds.target_node_type = 0;
  ds.type_features.resize(static_cast<size_t>(T));
  if (p.feature_dim > 0)
    for (int64_t t = 0; t < T; ++t)
      ds.type_features[t] = FeatureMatrix::dense(detail::block_features(block[t], C, p.feature_dim, p.noise, rng));
  ds.labels = Tensor::from_vector(block[0]);
  ds.num_classes = C;
  for (int64_t c = 0; c < C; ++c) ds.class_names.push_back(fmt::format("block{}", c));
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[i] = i;
  ds.splits = random_split(all, p.train, p.val, p.seed);
  const double share = R * pairs > 0 ? 100.0 * static_cast<double>(shifted) / static_cast<double>(R * pairs) : 0.0;
  ds.notes.push_back(fmt::format(
      "relational block model: {} node types of {} nodes, {} relations of {} edges each (r shifts blocks by r: {:.1f}% "
      "of edges in the shifted block, p_in/p_out = {:g}), each stored with its inverse",
      T, n, R, pairs, share, p.ratio));
  ds.notes.push_back(
      p.feature_dim > 0
          ? fmt::format("features: block centroid N(0,1)^{} + N(0,{:g}^2) noise, every type", p.feature_dim, p.noise)
          : std::string("featureless: R-GCN's one-hot (or embedded) input"));
  ds.hetero = std::move(hg);
  ds.validate();
  return ds;
}

}  // namespace strata::data
