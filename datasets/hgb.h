// Heterogeneous Graph Benchmark datasets (HGB: ACM, DBLP, IMDB, ...), read from the
// distributed zip (streamed through libarchive, nothing unpacked) or a folder:
//   node.dat             `id TAB name TAB type [TAB f1,f2,...]`; featureless types have no 4th column
//   link.dat             `src TAB dst TAB link_type TAB weight` (edge src -> dst)
//   label.dat            `id TAB name TAB type TAB label` (train); IMDB labels are "3,4,1" (multi-label)
//   label.dat.test_full  the full test set (label.dat.test, half of it, is used only if it is absent)
//   info.dat             optional JSON: type names, link meanings, class names
//
// Node types become HeteroGraph node types (local ids in global-id order), link
// types become relations (HGB already lists both directions, so no inverses are
// added). Per-type features are kept sparse when at most 10% of the entries are
// non-zero (DBLP's 4231-dim paper vectors are 0.16% non-zero) and dense otherwise.
// Splits: label.dat is cut into train and validation by a seeded 80/20 draw
// (SourceOptions::seed; floor(20%) go to validation), label.dat.test_full is the test set.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

Dataset load_hgb(const fs::path& path, const SourceOptions& options);

}  // namespace strata::data
