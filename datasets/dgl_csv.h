// DGL's CSVDataset layout (dgl.data.CSVDataset), one graph:
//   meta.yaml   dataset_name (required), version, separator (one character, default
//               ','), node_data: [{file_name, ntype, node_id_field}], edge_data:
//               [{file_name, etype, src_id_field, dst_id_field}]
//   nodes.csv   a header, then one node per record: node_id, and optionally label
//               (a non-negative integer class), train_mask / val_mask / test_mask
//               (True/False or 1/0: the splits, which may not overlap) and feat (a
//               number, or a quoted comma-separated list)
//   edges.csv   a header, then src_id, dst_id per record, optionally weight (a finite
//               number: the edge's value) and feat (as for nodes: edge features)
// One node type and one edge type (typed or not) load as a homogeneous graph; edges
// are directed, as DGL reads them (data.undirected symmetrizes), and several edge
// files are read in turn. Several node types (one file each, ntype named) and edge
// types (one file per etype) load as a heterograph, with an inverse "rev-" relation
// per edge type as the R-GCN loaders give them; the one node type with a label column
// is the labelled type, every type with feat has features (typed edge feat is not
// read). Node ids that are not exactly 0..N-1 are numbered in file order and kept as
// names; every edge endpoint must be a node of its type. Refused with the reason:
// graph_data (graph classification), keys meta.yaml does not define, ambiguous typing.
// Columns not read are listed in the dataset's notes.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

// `path` is the folder holding meta.yaml, or meta.yaml itself.
Dataset load_dgl_csv(const fs::path& path, const SourceOptions& options);

}  // namespace strata::data
