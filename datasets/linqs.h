// LINQS citation datasets (Cora, Citeseer): `<name>.content` rows
// `<paper_id> <F feature values> <class_label>` and `<name>.cites` rows
// `<cited_id> <citing_id>`, read from the original .tgz (streamed through libarchive,
// nothing unpacked) or from a folder holding the two files.
//
// Direction: a cites line says the right paper cites the left one, so the edge runs
// citing -> cited (graph row = cited, column = citing). Nodes are numbered in
// .content order; ids that occur only in .cites (Citeseer has 15) are appended in
// order of first appearance with zero features and label -1. Classes are numbered
// in sorted name order. Self-loops and duplicates are kept as written.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

Dataset load_linqs(const fs::path& path, const SourceOptions& options);

}  // namespace strata::data
