// datasets/: everything that turns a dataset name into a Dataset.
//   load.h            load_dataset("cora" | "mtx:path" | "sbm:nodes=2000,...") with the binary cache
//   registry.h        short names, format prefixes, generator specs, the data root
//   dataset.h         Dataset: graph or heterograph, features, labels, splits, notes
//   feature_matrix.h  dense or sparse (CSR) node features;  splits.h  seeded splits
//   linqs.h pubmed.h ogb.h rdf.h hgb.h matrix_market.h edge_list.h musae.h dgl_csv.h   one loader per format
//   rmat.h erdos_renyi.h sbm.h relational_sbm.h   synthetic generators;  dataset_cache.h  the cache file format
//   byte_source.h archive.h line_reader.h text_fields.h ntriples.h   streaming text input
// Loaders keep the direction of the files (graph rows = destinations) and say in
// Dataset::notes what was missing or assumed; bad input fails with file:line.
#pragma once

#include "datasets/dataset.h"
#include "datasets/dataset_cache.h"
#include "datasets/edge_list.h"
#include "datasets/erdos_renyi.h"
#include "datasets/feature_matrix.h"
#include "datasets/hgb.h"
#include "datasets/linqs.h"
#include "datasets/load.h"
#include "datasets/matrix_market.h"
#include "datasets/dgl_csv.h"
#include "datasets/musae.h"
#include "datasets/ogb.h"
#include "datasets/pubmed.h"
#include "datasets/rdf.h"
#include "datasets/registry.h"
#include "datasets/rmat.h"
#include "datasets/relational_sbm.h"
#include "datasets/sbm.h"
#include "datasets/splits.h"
