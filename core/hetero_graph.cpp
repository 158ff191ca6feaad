#include "core/hetero_graph.h"

#include <numeric>

namespace strata {

int HeteroGraph::add_node_type(const std::string& name, int64_t count) {
  STRATA_CHECK(find_node_type(name) < 0, "node type '{}' is defined twice", name);
  STRATA_CHECK(count >= 0, "node type '{}' has a negative count {}", name, count);
  node_types_.push_back({name, count});
  return num_node_types() - 1;
}

int HeteroGraph::find_node_type(const std::string& name) const {
  for (int i = 0; i < num_node_types(); ++i)
    if (node_types_[i].name == name) return i;
  return -1;
}

int HeteroGraph::find_relation(const std::string& name) const {
  for (int i = 0; i < num_relations(); ++i)
    if (relations_[i].name == name) return i;
  return -1;
}

int HeteroGraph::add_relation(const std::string& src_type, const std::string& name, const std::string& dst_type,
                              Graph adj) {
  const int s = find_node_type(src_type), d = find_node_type(dst_type);
  STRATA_CHECK(s >= 0, "relation '{}': unknown source node type '{}'", name, src_type);
  STRATA_CHECK(d >= 0, "relation '{}': unknown destination node type '{}'", name, dst_type);
  STRATA_CHECK(adj.num_rows() == node_types_[d].count && adj.num_cols() == node_types_[s].count,
               "relation '{}': adjacency is {} x {} but expected {} x {} ({} x {})", name, adj.num_rows(),
               adj.num_cols(), node_types_[d].count, node_types_[s].count, dst_type, src_type);
  relations_.push_back({src_type, name, dst_type, std::move(adj), false});
  return num_relations() - 1;
}

void HeteroGraph::add_inverse_relations() {
  const int n = num_relations();
  for (int r = 0; r < n; ++r) {
    if (relations_[r].is_inverse) continue;
    Relation inv{relations_[r].dst_type, "rev-" + relations_[r].name, relations_[r].src_type,
                 relations_[r].adj.transpose(), true};
    relations_.push_back(std::move(inv));
  }
}

int64_t HeteroGraph::num_nodes() const {
  int64_t n = 0;
  for (const auto& t : node_types_) n += t.count;
  return n;
}

int64_t HeteroGraph::num_edges() const {
  int64_t n = 0;
  for (const auto& r : relations_) n += r.adj.nnz();
  return n;
}

HomogeneousView HeteroGraph::to_homogeneous() const {
  HomogeneousView v;
  v.type_offsets.assign(node_types_.size() + 1, 0);
  for (size_t t = 0; t < node_types_.size(); ++t) v.type_offsets[t + 1] = v.type_offsets[t] + node_types_[t].count;
  const int64_t n = v.type_offsets.back();
  std::vector<int64_t> rows, cols, rel;
  rows.reserve(num_edges());
  cols.reserve(num_edges());
  rel.reserve(num_edges());
  for (int r = 0; r < num_relations(); ++r) {
    const Relation& R = relations_[r];
    const int64_t doff = v.type_offsets[find_node_type(R.dst_type)];
    const int64_t soff = v.type_offsets[find_node_type(R.src_type)];
    for (int64_t i = 0; i < R.adj.num_rows(); ++i) {
      for (int64_t p = R.adj.row_begin(i); p < R.adj.row_end(i); ++p) {
        rows.push_back(doff + i);
        cols.push_back(soff + R.adj.column(p));
        rel.push_back(r);
      }
    }
  }
  CooOptions opt;
  opt.source = "heterograph flattening";
  v.graph = Graph::from_coo(n, n, Tensor::from_vector(rows), Tensor::from_vector(cols), opt);
  // Edge ids of the flattened graph index the concatenated relation lists above.
  const Tensor eid = v.graph.edge_ids();
  v.edge_relation = Tensor::empty({v.graph.nnz()}, DType::I32);
  for (int64_t p = 0; p < v.graph.nnz(); ++p)
    v.edge_relation.data<int32_t>()[p] = static_cast<int32_t>(rel[eid.data<int64_t>()[p]]);
  return v;
}

}  // namespace strata
