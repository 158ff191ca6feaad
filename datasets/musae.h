// MUSAE / Rozemberczki graph folders (Facebook page-page, GitHub developers,
// Wikipedia networks), loaded as one dataset each:
//   <name>_edges.csv     `id_1,id_2` header, one edge per line (src -> dst as written)
//   <name>_target.csv    optional: header with an `id` column and a target column, RFC
//                        4180 quoting (page names hold commas and non-ASCII text)
//   <name>_features.json optional: {"<node id>": [feature indices, ...], ...}: sparse
//                        binary features, stored as a sparse FeatureMatrix
// Ids are 0-based; the node count is the number of target rows (or the largest id
// in the edges + 1 without a target file). Known target columns: `page_type` and
// `ml_target` are classes (numbered in sorted order of their values), `target` is a
// continuous value (Wikipedia traffic) kept as a regression target.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

Dataset load_musae(const fs::path& folder, const SourceOptions& options);

}  // namespace strata::data
