// HeteroGraph: typed nodes and typed relations, as R-GCN and HGB datasets have them.
//
// Each relation (source type, name, destination type) owns a Graph whose rows are
// destination nodes and whose columns are source nodes (see graph.h for the
// orientation). Node ids are local to their type. to_homogeneous() flattens all
// types into one id space (type offsets) and all relations into one Graph with a
// relation id per edge, the view RGCN kernels and `strata info` use.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"

namespace strata {

struct NodeType {
  std::string name;
  int64_t count = 0;
};

struct Relation {
  std::string src_type, name, dst_type;
  Graph adj;  // dst_count x src_count
  bool is_inverse = false;
  std::string str() const { return src_type + "-" + name + "->" + dst_type; }
};

struct HomogeneousView {
  Graph graph;                         // rows and columns in the flattened id space
  std::vector<int64_t> type_offsets;   // node type t owns [type_offsets[t], type_offsets[t+1])
  Tensor edge_relation;                // int32 [nnz]: relation id of each non-zero
};

class HeteroGraph {
 public:
  // Returns the new type's id; names are unique.
  int add_node_type(const std::string& name, int64_t count);
  // Adds a relation; adj must be dst_count x src_count. Returns its id.
  int add_relation(const std::string& src_type, const std::string& name, const std::string& dst_type, Graph adj);
  // Adds, for every relation r that is not itself an inverse, the relation
  // "rev-<name>" from dst to src with the transposed adjacency.
  void add_inverse_relations();

  int num_node_types() const { return static_cast<int>(node_types_.size()); }
  int num_relations() const { return static_cast<int>(relations_.size()); }
  const std::vector<NodeType>& node_types() const { return node_types_; }
  const std::vector<Relation>& relations() const { return relations_; }
  const Relation& relation(int r) const { return relations_.at(r); }
  // Type id by name, or -1.
  int find_node_type(const std::string& name) const;
  int find_relation(const std::string& name) const;
  int64_t num_nodes() const;
  int64_t num_edges() const;

  HomogeneousView to_homogeneous() const;

 private:
  std::vector<NodeType> node_types_;
  std::vector<Relation> relations_;
};

}  // namespace strata
