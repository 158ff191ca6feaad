// RGMS's relational graph: the relation-major 3-level format (SparseTIR's CSF-3D,
// rgms_programs.h) built from per-relation CSR graphs by a native inspector, with
// each relation's source list (for transform-first), the input edge of every
// non-zero, and owner tasks (task_rows / rel_tasks: each output row is written by
// one task, across every relation, so kernels need no atomics).
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/hetero_graph.h"
#include "sparse_compiler/codegen/compiled_kernel.h"

namespace strata::sc {

enum class RgmsNormalization : uint8_t {
  None,             // a_r(i, j) = 1
  RightByRelation,  // a_r(i, j) = 1 / |N_r(i)|, R-GCN's c_{i,r}
};

struct RelationalGraph {
  int64_t rows = 0, cols = 0, relations = 0, pairs = 0, nnz = 0, sources = 0;
  DType index_dtype = DType::I32;
  Tensor rel_ptr, rel_rows, row_ptr, col_ids, values;  // the 3-level format and a_r(i, j)
  Tensor src_ptr, src_ids, jloc;                       // per-relation source lists
  Tensor edge_ids;                                     // int64 [nnz]: the input edge of every non-zero
  int64_t num_tasks = 0;
  Tensor task_rows, rel_tasks;  // owner tasks
  std::vector<std::string> relation_names;

  // relations[r] is dst x src (rows x cols) in one global id space.
  static RelationalGraph build(int64_t rows, int64_t cols, const std::vector<Graph>& relations, RgmsNormalization norm,
                               int64_t grain = 4096, std::vector<std::string> names = {});
  // All node types flattened into one id space (HeteroGraph::to_homogeneous's order).
  static RelationalGraph from_hetero(const HeteroGraph& h, RgmsNormalization norm, int64_t grain = 4096);
  // Every relation reversed (sources become rows), values carried per edge.
  RelationalGraph reversed(int64_t grain = 4096) const;
  // Only the relations `keep` (increasing indices), in that order, over the same
  // rows and columns: their arrays copied as they are (values, edge ids, source
  // lists), owner tasks built anew, the index type kept.
  RelationalGraph subset(const std::vector<int64_t>& keep, int64_t grain = 4096) const;
  // The nodes within `hops` steps of `seeds` along in-edges of any relation (a
  // square graph's receptive field for a model of `hops` layers), increasing;
  // `inner`, when given, receives those within hops - 1 steps (the rows whose
  // outputs a forward over the field needs), and `inner_nnz` their non-zeros (what
  // induced(field, inner) holds). Costs the field's pairs, not the graph's.
  std::vector<int64_t> in_neighbourhood(const std::vector<int64_t>& seeds, int hops,
                                        std::vector<int64_t>* inner = nullptr, int64_t* inner_nnz = nullptr) const;
  // The subgraph induced on `nodes` (increasing ids of a square graph): rows and
  // columns are positions in `nodes`; the non-zeros kept are those whose destination
  // is in `rows` (increasing, a subset of `nodes`) and whose source is in `nodes`,
  // each with its value and edge id as they are (a_r(i, j) is not recomputed: a row
  // that keeps all its non-zeros keeps its normalisation). The index type is kept.
  RelationalGraph induced(const std::vector<int64_t>& nodes, const std::vector<int64_t>& rows,
                          int64_t grain = 4096) const;
  // The same graph with column c renamed ids[c] (increasing, each below `cols`, the
  // new column count): an induced subgraph's columns back to the whole graph's ids,
  // by which a one-hot first layer reads its weight rows. Rows, values and owner
  // tasks are shared.
  RelationalGraph with_column_ids(const std::vector<int64_t>& ids, int64_t cols) const;
  // The relations as separate CSR graphs (rows x cols each), values included.
  std::vector<Graph> relation_graphs() const;
  void bind(KernelArgs& a) const;
};

}  // namespace strata::sc
