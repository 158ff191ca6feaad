#include "sparse_compiler/ops/relational_graph.h"

#include <algorithm>
#include <iterator>
#include <numeric>

namespace strata::sc {

namespace {
// The 3-level format's arrays as the inspectors build them, relation by relation.
struct RelationalArrays {
  std::vector<int64_t> rel_ptr{0}, rel_rows, row_ptr{0}, cols, edge_ids, src_ptr{0}, src_ids, jloc;
  std::vector<float> values;
};

// Owner tasks: destination rows balanced by non-zeros; each relation's share of
// a task is the run of its row list inside the task's rows.
void assign_owner_tasks(RelationalGraph& g, const std::vector<int64_t>& rel_ptr, const std::vector<int64_t>& rel_rows,
                        const std::vector<int64_t>& row_ptr, int64_t grain) {
  const int64_t rows = g.rows;
  std::vector<int64_t> row_nnz(static_cast<size_t>(rows) + 1, 0);
  for (int64_t q = 0; q < g.pairs; ++q) row_nnz[rel_rows[q] + 1] += row_ptr[q + 1] - row_ptr[q];
  std::partial_sum(row_nnz.begin(), row_nnz.end(), row_nnz.begin());
  const int64_t T = std::max<int64_t>(1, std::min<int64_t>(std::max<int64_t>(rows, 1), (g.nnz + grain - 1) / grain));
  g.num_tasks = T;
  std::vector<int64_t> tr(static_cast<size_t>(T) + 1);
  tr[0] = 0;
  tr[T] = rows;
  for (int64_t t = 1; t < T; ++t)
    tr[t] = std::max(tr[t - 1], static_cast<int64_t>(std::lower_bound(row_nnz.begin(), row_nnz.end(), g.nnz * t / T) -
                                                     row_nnz.begin()));
  g.task_rows = Tensor::from_vector(tr);
  std::vector<int64_t> rt(static_cast<size_t>(g.relations * (T + 1)));
  for (int64_t r = 0; r < g.relations; ++r) {
    const auto b = rel_rows.begin() + rel_ptr[r], e = rel_rows.begin() + rel_ptr[r + 1];
    for (int64_t t = 0; t <= T; ++t) rt[r * (T + 1) + t] = rel_ptr[r] + (std::lower_bound(b, e, tr[t]) - b);
  }
  g.rel_tasks = Tensor::from_vector(rt);
}

// g's arrays from `a` (indices in g.index_dtype), its sizes, and its owner tasks.
void set_arrays(RelationalGraph& g, const RelationalArrays& a, int64_t grain) {
  g.pairs = static_cast<int64_t>(a.rel_rows.size());
  g.nnz = static_cast<int64_t>(a.cols.size());
  g.sources = static_cast<int64_t>(a.src_ids.size());
  auto idx = [&](const std::vector<int64_t>& v) { return Tensor::from_vector(v).cast(g.index_dtype); };
  g.rel_ptr = Tensor::from_vector(a.rel_ptr);
  g.rel_rows = idx(a.rel_rows);
  g.row_ptr = Tensor::from_vector(a.row_ptr);
  g.col_ids = idx(a.cols);
  g.values = Tensor::from_vector(a.values);
  g.edge_ids = Tensor::from_vector(a.edge_ids);
  g.src_ptr = Tensor::from_vector(a.src_ptr);
  g.src_ids = idx(a.src_ids);
  g.jloc = idx(a.jloc);
  assign_owner_tasks(g, a.rel_ptr, a.rel_rows, a.row_ptr, grain);
}

int64_t index_at(const Tensor& t, int64_t k) {
  return t.dtype() == DType::I32 ? t.data<int32_t>()[k] : t.data<int64_t>()[k];
}
}  // namespace

RelationalGraph RelationalGraph::build(int64_t rows, int64_t cols, const std::vector<Graph>& rels,
                                       RgmsNormalization norm, int64_t grain, std::vector<std::string> names) {
  RelationalGraph g;
  g.rows = rows;
  g.cols = cols;
  g.relations = static_cast<int64_t>(rels.size());
  g.relation_names = std::move(names);
  for (size_t r = 0; r < rels.size(); ++r) {
    STRATA_CHECK(rels[r].num_rows() == rows && rels[r].num_cols() == cols,
                 "relational graph: relation {} is {} x {}, expected {} x {}", r, rels[r].num_rows(),
                 rels[r].num_cols(), rows, cols);
    g.nnz += rels[r].nnz();
  }
  g.index_dtype = (std::max(rows, cols) > INT32_MAX || g.nnz > INT32_MAX) ? DType::I64 : DType::I32;
  // Pairs: the rows each relation reaches.
  RelationalArrays a;
  for (int64_t r = 0; r < g.relations; ++r) {
    const Graph& A = rels[r];
    const Tensor eid = A.edge_ids();
    std::vector<int64_t> srcs;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t d = A.degree(i);
      if (d == 0) continue;
      a.rel_rows.push_back(i);
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        a.cols.push_back(A.column(p));
        srcs.push_back(A.column(p));
        a.edge_ids.push_back(eid.data<int64_t>()[p]);
        float v = norm == RgmsNormalization::RightByRelation ? 1.0f / static_cast<float>(d) : 1.0f;
        if (A.has_values()) v *= A.values().data<float>()[p];
        a.values.push_back(v);
      }
      a.row_ptr.push_back(static_cast<int64_t>(a.cols.size()));
    }
    a.rel_ptr.push_back(static_cast<int64_t>(a.rel_rows.size()));
    std::sort(srcs.begin(), srcs.end());
    srcs.erase(std::unique(srcs.begin(), srcs.end()), srcs.end());
    for (int64_t p = a.row_ptr[a.rel_ptr[r]]; p < a.row_ptr[a.rel_ptr[r + 1]]; ++p)
      a.jloc.push_back(std::lower_bound(srcs.begin(), srcs.end(), a.cols[p]) - srcs.begin());
    a.src_ids.insert(a.src_ids.end(), srcs.begin(), srcs.end());
    a.src_ptr.push_back(static_cast<int64_t>(a.src_ids.size()));
  }
  set_arrays(g, a, grain);
  return g;
}

RelationalGraph RelationalGraph::subset(const std::vector<int64_t>& keep, int64_t grain) const {
  RelationalGraph g;
  g.rows = rows;
  g.cols = cols;
  g.index_dtype = index_dtype;
  g.relations = static_cast<int64_t>(keep.size());
  const int64_t* rp = rel_ptr.data<int64_t>();
  const int64_t* qp = row_ptr.data<int64_t>();
  const int64_t* sp = src_ptr.data<int64_t>();
  RelationalArrays a;
  for (size_t k = 0; k < keep.size(); ++k) {
    const int64_t r = keep[k];
    STRATA_CHECK(r >= 0 && r < relations && (k == 0 || r > keep[k - 1]),
                 "relational graph subset: relation {} at position {} is out of range [0, {}) or not increasing", r, k,
                 relations);
    if (!relation_names.empty()) g.relation_names.push_back(relation_names[r]);
    for (int64_t q = rp[r]; q < rp[r + 1]; ++q) {
      a.rel_rows.push_back(index_at(rel_rows, q));
      for (int64_t p = qp[q]; p < qp[q + 1]; ++p) {
        a.cols.push_back(index_at(col_ids, p));
        a.jloc.push_back(index_at(jloc, p));  // positions in the relation's own source list
        a.values.push_back(values.data<float>()[p]);
        a.edge_ids.push_back(edge_ids.data<int64_t>()[p]);
      }
      a.row_ptr.push_back(static_cast<int64_t>(a.cols.size()));
    }
    a.rel_ptr.push_back(static_cast<int64_t>(a.rel_rows.size()));
    for (int64_t q = sp[r]; q < sp[r + 1]; ++q) a.src_ids.push_back(index_at(src_ids, q));
    a.src_ptr.push_back(static_cast<int64_t>(a.src_ids.size()));
  }
  set_arrays(g, a, grain);
  return g;
}

namespace {
// Calls fn(q, i) for each pair q of relation r whose row i is in `rows` (increasing;
// rel_rows is increasing within a relation), in row order: a search per row of the
// shorter list in the longer one, so a few rows of a large relation, or a small
// relation among many rows, cost what the shorter list holds.
template <typename Fn>
void for_each_pair_at(const RelationalGraph& g, int64_t r, const std::vector<int64_t>& rows, Fn fn) {
  const int64_t* rp = g.rel_ptr.data<int64_t>();
  const auto walk = [&](const auto* rel_rows) {
    const auto* b = rel_rows + rp[r];
    const auto* e = rel_rows + rp[r + 1];
    if (static_cast<int64_t>(rows.size()) <= e - b) {
      for (int64_t i : rows) {
        b = std::lower_bound(b, e, i);
        if (b == e) return;
        if (*b == i) fn(static_cast<int64_t>(b - rel_rows), i);
      }
    } else {
      auto at = rows.begin();
      for (const auto* q = b; q != e; ++q) {
        at = std::lower_bound(at, rows.end(), static_cast<int64_t>(*q));
        if (at == rows.end()) return;
        if (*at == *q) fn(static_cast<int64_t>(q - rel_rows), *at);
      }
    }
  };
  if (g.index_dtype == DType::I32)
    walk(g.rel_rows.data<int32_t>());
  else
    walk(g.rel_rows.data<int64_t>());
}

bool contains(const std::vector<int64_t>& sorted, int64_t v) {
  return std::binary_search(sorted.begin(), sorted.end(), v);
}

// Positions in an increasing list for lookups that mostly increase (a row's sorted
// columns): an exponential search from the last position found, so a dense row's
// next column costs a step or two, not a binary search of the whole list (which,
// on ACM's 158,693 field non-zeros, took 25 ms: every level a mispredicted branch).
class IncreasingLookup {
 public:
  explicit IncreasingLookup(const std::vector<int64_t>& v) : v_(v) {}
  // The position of x, or -1.
  int64_t find(int64_t x) {
    const size_t n = v_.size();
    size_t lo = at_ < n && v_[at_] <= x ? at_ : 0, step = 1, hi = lo + 1;
    while (hi < n && v_[hi] <= x) {
      lo = hi;
      step *= 2;
      hi = lo + step;
    }
    const auto it = std::lower_bound(v_.begin() + static_cast<std::ptrdiff_t>(lo),
                                     v_.begin() + static_cast<std::ptrdiff_t>(std::min(hi, n)), x);
    at_ = static_cast<size_t>(it - v_.begin());
    return it != v_.end() && *it == x ? static_cast<int64_t>(at_) : -1;
  }

 private:
  const std::vector<int64_t>& v_;
  size_t at_ = 0;
};
}  // namespace

std::vector<int64_t> RelationalGraph::in_neighbourhood(const std::vector<int64_t>& seeds, int hops,
                                                       std::vector<int64_t>* inner, int64_t* inner_nnz) const {
  STRATA_CHECK(rows == cols, "relational graph: the in-neighbourhood of a {} x {} graph (it must be square)", rows,
               cols);
  STRATA_CHECK(hops >= 1, "relational graph: in-neighbourhood of {} hops (at least 1)", hops);
  std::vector<int64_t> field(seeds.begin(), seeds.end());
  for (int64_t v : field)
    STRATA_CHECK(v >= 0 && v < rows, "relational graph: node {} is out of range [0, {})", v, rows);
  std::sort(field.begin(), field.end());
  field.erase(std::unique(field.begin(), field.end()), field.end());
  // One flag per node: a field's non-zeros repeat their sources many times over
  // (ACM: 158,693 non-zeros into 4,467 nodes), which sorting them all would pay for.
  std::vector<bool> seen(static_cast<size_t>(rows), false);
  for (int64_t v : field) seen[static_cast<size_t>(v)] = true;
  std::vector<int64_t> frontier = field, next;
  const int64_t* qp = row_ptr.data<int64_t>();
  int64_t nnz_walked = 0;  // the in-edges of every row walked: the inner rows' after the last hop
  for (int h = 0; h < hops; ++h) {
    if (h + 1 == hops && inner) *inner = field;
    next.clear();
    for (int64_t r = 0; r < relations; ++r)
      for_each_pair_at(*this, r, frontier, [&](int64_t q, int64_t) {
        nnz_walked += qp[q + 1] - qp[q];
        for (int64_t p = qp[q]; p < qp[q + 1]; ++p) {
          const int64_t j = index_at(col_ids, p);
          if (!seen[static_cast<size_t>(j)]) {
            seen[static_cast<size_t>(j)] = true;
            next.push_back(j);
          }
        }
      });
    std::sort(next.begin(), next.end());
    frontier.swap(next);
    std::vector<int64_t> merged;
    merged.reserve(field.size() + frontier.size());
    std::merge(field.begin(), field.end(), frontier.begin(), frontier.end(), std::back_inserter(merged));
    field = std::move(merged);
  }
  if (inner_nnz) *inner_nnz = nnz_walked;
  return field;
}

RelationalGraph RelationalGraph::induced(const std::vector<int64_t>& nodes, const std::vector<int64_t>& keep_rows,
                                         int64_t grain) const {
  STRATA_CHECK(rows == cols, "relational graph: an induced subgraph of a {} x {} graph (it must be square)", rows,
               cols);
  for (size_t k = 0; k < nodes.size(); ++k)
    STRATA_CHECK(nodes[k] >= 0 && nodes[k] < rows && (k == 0 || nodes[k] > nodes[k - 1]),
                 "relational graph: induced subgraph node {} at position {} is out of range [0, {}) or not increasing",
                 nodes[k], k, rows);
  for (size_t k = 0; k < keep_rows.size(); ++k)
    STRATA_CHECK(contains(nodes, keep_rows[k]) && (k == 0 || keep_rows[k] > keep_rows[k - 1]),
                 "relational graph: induced subgraph row {} at position {} is not one of the nodes or not increasing",
                 keep_rows[k], k);
  const auto position = [&nodes](int64_t v) {
    return static_cast<int64_t>(std::lower_bound(nodes.begin(), nodes.end(), v) - nodes.begin());
  };
  IncreasingLookup source(nodes);
  RelationalGraph g;
  g.rows = g.cols = static_cast<int64_t>(nodes.size());
  g.index_dtype = index_dtype;
  g.relations = relations;
  g.relation_names = relation_names;
  const int64_t* qp = row_ptr.data<int64_t>();
  RelationalArrays a;
  // Each relation's source list: its distinct columns, increasing; jloc by a slot per
  // field node (a search per non-zero cost ACM's field 10 ms).
  std::vector<int64_t> slot(nodes.size(), -1), at_of, srcs;
  for (int64_t r = 0; r < relations; ++r) {
    at_of.clear();
    srcs.clear();
    for_each_pair_at(*this, r, keep_rows, [&](int64_t q, int64_t i) {
      const size_t begin = a.cols.size();
      for (int64_t p = qp[q]; p < qp[q + 1]; ++p) {
        const int64_t j = index_at(col_ids, p), at = source.find(j);
        if (at < 0) continue;
        a.cols.push_back(at);
        a.values.push_back(values.data<float>()[p]);
        a.edge_ids.push_back(edge_ids.data<int64_t>()[p]);
        at_of.push_back(at);
        if (slot[static_cast<size_t>(at)] < 0) {
          slot[static_cast<size_t>(at)] = 0;
          srcs.push_back(at);
        }
      }
      if (a.cols.size() == begin) return;
      a.rel_rows.push_back(position(i));
      a.row_ptr.push_back(static_cast<int64_t>(a.cols.size()));
    });
    a.rel_ptr.push_back(static_cast<int64_t>(a.rel_rows.size()));
    std::sort(srcs.begin(), srcs.end());  // positions increase with ids: global ids stay sorted
    for (size_t k = 0; k < srcs.size(); ++k) slot[static_cast<size_t>(srcs[k])] = static_cast<int64_t>(k);
    for (int64_t at : at_of) a.jloc.push_back(slot[static_cast<size_t>(at)]);
    for (int64_t at : srcs) {
      a.src_ids.push_back(at);
      slot[static_cast<size_t>(at)] = -1;
    }
    a.src_ptr.push_back(static_cast<int64_t>(a.src_ids.size()));
  }
  set_arrays(g, a, grain);
  return g;
}

RelationalGraph RelationalGraph::with_column_ids(const std::vector<int64_t>& ids, int64_t new_cols) const {
  STRATA_CHECK(static_cast<int64_t>(ids.size()) == cols, "relational graph: {} column ids for a graph of {} columns",
               ids.size(), cols);
  for (size_t k = 0; k < ids.size(); ++k)
    STRATA_CHECK(ids[k] >= 0 && ids[k] < new_cols && (k == 0 || ids[k] > ids[k - 1]),
                 "relational graph: column id {} at position {} is out of range [0, {}) or not increasing", ids[k], k,
                 new_cols);
  RelationalGraph g = *this;
  g.cols = new_cols;
  g.index_dtype = std::max(rows, new_cols) > INT32_MAX ? DType::I64 : index_dtype;
  // Increasing ids keep each relation's source list sorted, so jloc stays as it is.
  const auto renamed = [&](const Tensor& t) {
    std::vector<int64_t> v(static_cast<size_t>(t.numel()));
    for (int64_t k = 0; k < t.numel(); ++k) v[static_cast<size_t>(k)] = ids[static_cast<size_t>(index_at(t, k))];
    return Tensor::from_vector(v).cast(g.index_dtype);
  };
  g.col_ids = renamed(col_ids);
  g.src_ids = renamed(src_ids);
  if (g.index_dtype != index_dtype)
    for (Tensor* t : {&g.rel_rows, &g.jloc}) *t = t->cast(g.index_dtype);
  return g;
}

RelationalGraph RelationalGraph::from_hetero(const HeteroGraph& h, RgmsNormalization norm, int64_t grain) {
  std::vector<int64_t> off(h.node_types().size() + 1, 0);
  for (size_t t = 0; t < h.node_types().size(); ++t) off[t + 1] = off[t] + h.node_types()[t].count;
  const int64_t N = off.back();
  std::vector<Graph> rels;
  std::vector<std::string> names;
  for (const auto& rel : h.relations()) {
    const int64_t doff = off[h.find_node_type(rel.dst_type)], soff = off[h.find_node_type(rel.src_type)];
    std::vector<int64_t> r, c;
    for (int64_t i = 0; i < rel.adj.num_rows(); ++i)
      for (int64_t p = rel.adj.row_begin(i); p < rel.adj.row_end(i); ++p) {
        r.push_back(doff + i);
        c.push_back(soff + rel.adj.column(p));
      }
    CooOptions o;
    o.source = "relation " + rel.str();
    rels.push_back(Graph::from_coo(N, N, Tensor::from_vector(r), Tensor::from_vector(c), o));
    names.push_back(rel.str());
  }
  return build(N, N, rels, norm, grain, names);
}

std::vector<Graph> RelationalGraph::relation_graphs() const {
  std::vector<Graph> out;
  for (int64_t r = 0; r < relations; ++r) {
    std::vector<int64_t> rr, cc;
    std::vector<float> vv;
    for (int64_t q = rel_ptr.data<int64_t>()[r]; q < rel_ptr.data<int64_t>()[r + 1]; ++q)
      for (int64_t p = row_ptr.data<int64_t>()[q]; p < row_ptr.data<int64_t>()[q + 1]; ++p) {
        rr.push_back(static_cast<int64_t>(rel_rows.item_as_double(q)));
        cc.push_back(static_cast<int64_t>(col_ids.item_as_double(p)));
        vv.push_back(values.data<float>()[p]);
      }
    CooOptions o;
    o.order = ColumnOrder::InputOrder;
    out.push_back(
        Graph::from_coo(rows, cols, Tensor::from_vector(rr), Tensor::from_vector(cc), o, Tensor::from_vector(vv)));
  }
  return out;
}

RelationalGraph RelationalGraph::reversed(int64_t grain) const {
  std::vector<Graph> rels;
  for (const Graph& A : relation_graphs()) rels.push_back(A.transpose());
  // Values are carried, not recomputed: a_r(i, j) belongs to the edge.
  return build(cols, rows, rels, RgmsNormalization::None, grain, relation_names);
}

void RelationalGraph::bind(KernelArgs& a) const {
  a.buffer("rel_ptr", rel_ptr).buffer("rel_rows", rel_rows).buffer("row_ptr", row_ptr).buffer("cols", col_ids);
  a.buffer("src_ptr", src_ptr).buffer("src_ids", src_ids).buffer("jloc", jloc).buffer("A", values);
  a.buffer("task_rows", task_rows).buffer("rel_tasks", rel_tasks);
  a.scalar("m", rows).scalar("n", cols).scalar("rels", relations).scalar("pairs", pairs).scalar("nnz", nnz);
  a.scalar("sources", sources).scalar("num_tasks", num_tasks);
}

}  // namespace strata::sc
