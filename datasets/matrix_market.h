// Matrix Market coordinate files (.mtx, .mtx.gz), as the SuiteSparse collection
// distributes them: a `%%MatrixMarket matrix coordinate <field> <symmetry>` banner,
// `%` comment lines, a size line `rows cols entries`, then 1-based `i j [value]`
// entries. Fields: real, integer (values become float32 edge values) and pattern
// (no values). Symmetry: general, symmetric (each off-diagonal entry also stored
// mirrored) and skew-symmetric (mirrored with the sign flipped). The matrix is the
// adjacency as is: entry (i, j) is graph row i, column j.
#pragma once

#include "datasets/dataset.h"
#include "datasets/source_options.h"

namespace strata::data {

Dataset load_matrix_market(const fs::path& path, const SourceOptions& options);

}  // namespace strata::data
