// DGL's CSVDataset layout (dgl.data.CSVDataset), one homogeneous graph:
//   meta.yaml   dataset_name (required), version, separator (one character, default
//               ','), node_data: [{file_name, ntype, node_id_field}], edge_data:
//               [{file_name, etype, src_id_field, dst_id_field}]
//   nodes.csv   a header, then one node per record: node_id, and optionally label
//               (a non-negative integer class), train_mask / val_mask / test_mask
//               (True/False or 1/0) and feat (a number, or a quoted comma-separated list)
//   edges.csv   a header, then src_id, dst_id per record, optionally weight (a finite
//               number: the edge's value) and feat (as for nodes: edge features)
// Node ids that are not exactly 0..N-1 in some order are numbered in file order (the
// file's ids kept as names); every edge endpoint must be a listed node. Edges are
// directed, as DGL reads them (data.undirected symmetrizes). Several edge files are
// read in turn. Refused with the reason: several node types or edge types
// (heterographs: use hgb: or rdf:), graph_data (graph classification), keys meta.yaml
// does not define. Other columns are listed in the dataset's notes as not read.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

// `path` is the folder holding meta.yaml, or meta.yaml itself.
Dataset load_dgl_csv(const fs::path& path, const SourceOptions& options);

}  // namespace strata::data
