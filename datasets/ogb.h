// Open Graph Benchmark datasets in OGB's raw CSV layout (homogeneous node- and
// link-property datasets):
//   raw/edge.csv.gz           `src,dst` per line, no header (edge src -> dst)
//   raw/num-node-list.csv.gz  the node count (one line: one graph)
//   raw/num-edge-list.csv.gz  the edge count; must equal the lines of edge.csv.gz
//   raw/node-feat.csv.gz      optional, N lines of F comma-separated numbers
//   raw/edge-feat.csv.gz      optional, E lines of D numbers (by edge line)
//   raw/node-label.csv.gz     optional, N lines: one class id (NaN = unlabelled) or
//                             several 0/1 columns (multi-label, as ogbn-proteins)
//   split/<scheme>/{train,valid,test}.csv.gz  node ids, one per line; with several schemes,
//                             the one OGB's master.csv names for the dataset, else the first
//   mapping/nodeidx2<x>.csv.gz optional, "node idx,<x>" then one "i,name" row per node
//                             (ogbl-ddi: DrugBank ids): the nodes' names in predictions
// Heterogeneous datasets (ogbn-mag) use OGB's hetero layout instead:
//   raw/num-node-dict.csv.gz       header = node types, one row of counts
//   raw/triplet-type-list.csv.gz   `src_type,relation,dst_type` per line
//   raw/relations/<s>___<r>___<d>/{edge,num-edge-list}.csv.gz   local ids per type
//   raw/node-feat/<type>/node-feat.csv.gz, raw/node-label/<type>/node-label.csv.gz
//   split/<scheme>/<type>/{train,valid,test}.csv.gz
// and become a HeteroGraph (no inverse relations added: OGB lists what it stores).
// Files may also be uncompressed (.csv). Whether edges are undirected comes from
// OGB's master.csv `add_inverse_edge` (a table here, by dataset name) unless the
// registry says so; the edge list is kept as written (each edge once).
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

Dataset load_ogb(const fs::path& folder, const SourceOptions& options);

}  // namespace strata::data
