#include "apps/training/link_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "apps/training/run_report.h"
#include "core/error.h"

namespace strata::train {
namespace {

NodePairs take(const NodePairs& all, const std::vector<int64_t>& order, int64_t begin, int64_t count) {
  NodePairs p;
  p.u.reserve(static_cast<size_t>(count));
  p.v.reserve(static_cast<size_t>(count));
  for (int64_t k = begin; k < begin + count; ++k) p.push(all.u[order[k]], all.v[order[k]]);
  return p;
}

}  // namespace

std::string LinkSplit::origin() const {
  return fmt::format("link split seed {}: {} / {} / {} edges", seed, commas(train.size()), commas(val.size()),
                     commas(test.size()));
}

EdgeSet::EdgeSet(const Graph& g) : g_(g), n_(g.num_rows()) {
  STRATA_ASSERT(g.num_rows() == g.num_cols() && g.columns_sorted(), "EdgeSet needs a square graph with sorted columns");
  constexpr uint64_t kBitmapBytes = uint64_t{8} << 20;
  const auto pairs = static_cast<uint64_t>(n_) * static_cast<uint64_t>(n_);
  if (pairs / 8 > kBitmapBytes) return;
  bits_.assign((pairs + 63) / 64, 0);
  for (int64_t u = 0; u < n_; ++u)
    for (int64_t p = g.row_begin(u); p < g.row_end(u); ++p) {
      const uint64_t k = static_cast<uint64_t>(u) * static_cast<uint64_t>(n_) + static_cast<uint64_t>(g.column(p));
      bits_[k >> 6] |= uint64_t{1} << (k & 63);
    }
}

bool EdgeSet::search(int64_t u, int64_t v) const {
  const int64_t* indptr = g_.indptr_data();
  if (g_.index_dtype() == DType::I32) {
    const int32_t* col = g_.indices().data<int32_t>();
    return std::binary_search(col + indptr[u], col + indptr[u + 1], static_cast<int32_t>(v));
  }
  const int64_t* col = g_.indices().data<int64_t>();
  return std::binary_search(col + indptr[u], col + indptr[u + 1], v);
}

NodePairs undirected_edges(const Graph& g) {
  STRATA_CHECK(g.num_rows() == g.num_cols(), "link prediction needs a square graph, got {}", g.describe());
  const Graph s = g.without_values().symmetrized();
  NodePairs e;
  for (int64_t u = 0; u < s.num_rows(); ++u) {
    int64_t last = -1;
    for (int64_t p = s.row_begin(u); p < s.row_end(u); ++p) {
      const int64_t v = s.column(p);
      if (v > u && v != last) e.push(u, v);
      last = v;
    }
  }
  return e;
}

LinkSplit split_links(const Graph& g, double val_ratio, double test_ratio, uint64_t seed, const std::string& where) {
  const NodePairs all = undirected_edges(g);
  const int64_t m = all.size();
  const int64_t n_val = static_cast<int64_t>(std::floor(val_ratio * static_cast<double>(m)));
  const int64_t n_test = static_cast<int64_t>(std::floor(test_ratio * static_cast<double>(m)));
  STRATA_CHECK(n_val >= 1 && n_test >= 1 && m - n_val - n_test >= 1,
               "{}: the graph has {} undirected edges (self-loops not counted); data.link.val_ratio {} and "
               "test_ratio {} leave {} validation, {} test and {} training edges, and each needs at least one",
               where, m, val_ratio, test_ratio, n_val, n_test, m - n_val - n_test);
  Rng rng(seed);
  Rng order_rng = rng.fork(1), negative_rng = rng.fork(2);
  const std::vector<int64_t> order = order_rng.permutation(m);
  LinkSplit s;
  s.seed = seed;
  s.val = take(all, order, 0, n_val);
  s.test = take(all, order, n_val, n_test);
  s.train = take(all, order, n_val + n_test, m - n_val - n_test);
  const EdgeSet full(symmetric_pair_graph(g.num_rows(), all));
  s.val_negative = sample_non_edges(full, n_val, negative_rng, where);
  s.test_negative = sample_non_edges(full, n_test, negative_rng, where);
  return s;
}

NodePairs sample_non_edges(const EdgeSet& known, int64_t count, Rng& rng, const std::string& where) {
  const int64_t n = known.num_nodes();
  NodePairs p;
  p.u.reserve(static_cast<size_t>(count));
  p.v.reserve(static_cast<size_t>(count));
  const int64_t budget = 100 * count + 1000;
  int64_t draws = 0;
  while (p.size() < count) {
    STRATA_CHECK(n >= 2 && draws < budget,
                 "{}: could not draw {} non-edges (node pairs that are not edges) in {} tries: the graph of {} nodes "
                 "is too dense for link prediction's negative pairs",
                 where, count, draws, n);
    ++draws;
    const auto u = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    const auto v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    if (u == v || known.has(u, v) || known.has(v, u)) continue;
    p.push(u, v);
  }
  return p;
}

Graph symmetric_pair_graph(int64_t n, const NodePairs& pairs) {
  std::vector<int64_t> rows, cols;
  rows.reserve(2 * pairs.u.size());
  cols.reserve(2 * pairs.u.size());
  for (int64_t k = 0; k < pairs.size(); ++k) {
    rows.push_back(pairs.u[k]);
    cols.push_back(pairs.v[k]);
    rows.push_back(pairs.v[k]);
    cols.push_back(pairs.u[k]);
  }
  CooOptions o;
  o.duplicates = DuplicatePolicy::KeepFirst;
  o.source = "link pairs";
  return Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), o);
}

LabelledPairs labelled_pair_graph(int64_t n, const NodePairs& positive, const NodePairs& negative) {
  std::vector<int64_t> rows(positive.u), cols(positive.v);
  rows.insert(rows.end(), negative.u.begin(), negative.u.end());
  cols.insert(cols.end(), negative.v.begin(), negative.v.end());
  CooOptions o;
  o.source = "link pairs";
  LabelledPairs out;
  out.pairs = Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), o);
  // from_coo keeps every pair (a multigraph); its edge ids name each non-zero's input position.
  const Tensor ids = out.pairs.edge_ids();
  const int64_t* id = ids.data<int64_t>();
  out.labels.resize(static_cast<size_t>(out.pairs.nnz()));
  for (int64_t q = 0; q < out.pairs.nnz(); ++q) out.labels[q] = id[q] < positive.size() ? 1 : 0;
  return out;
}

double hits_at_k(const std::vector<float>& positive, const std::vector<float>& negative, int64_t k) {
  STRATA_ASSERT(k >= 1 && static_cast<int64_t>(negative.size()) >= k, "Hits@{} over {} negative scores", k,
                negative.size());
  if (positive.empty()) return 0.0;
  std::vector<float> neg = negative;
  std::nth_element(neg.begin(), neg.begin() + (k - 1), neg.end(), std::greater<float>());
  const float kth = neg[static_cast<size_t>(k - 1)];
  int64_t above = 0;
  for (float s : positive) above += s > kth ? 1 : 0;
  return static_cast<double>(above) / static_cast<double>(positive.size());
}

}  // namespace strata::train
