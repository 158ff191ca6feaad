#include "sparse_compiler/tune/graph_fingerprint.h"

#include <cmath>

#include "core/hash.h"

namespace strata::sc {

GraphFingerprint GraphFingerprint::of(const Graph& A) {
  GraphFingerprint f;
  f.rows = A.num_rows();
  f.cols = A.num_cols();
  f.nnz = A.nnz();
  f.index_dtype = A.index_dtype();
  const DegreeStats rs = A.degree_stats();
  f.row_histogram = rs.histogram;
  f.max_row_degree = rs.max;
  f.empty_rows = rs.empty_rows;
  std::vector<int64_t> col_deg(static_cast<size_t>(A.num_cols()), 0);
  for (int64_t p = 0; p < A.nnz(); ++p) ++col_deg[A.column(p)];
  for (int64_t d : col_deg) {
    const size_t b = d == 0 ? 0 : static_cast<size_t>(64 - __builtin_clzll(static_cast<uint64_t>(d)));
    if (f.col_histogram.size() <= b) f.col_histogram.resize(b + 1, 0);
    ++f.col_histogram[b];
  }
  return f;
}

double GraphFingerprint::bucket_degree(size_t k) {
  if (k == 0) return 0;
  if (k == 1) return 1;
  const double lo = std::ldexp(1.0, static_cast<int>(k) - 1), hi = std::ldexp(1.0, static_cast<int>(k)) - 1;
  return 0.5 * (lo + hi);
}

std::string GraphFingerprint::digest() const {
  Hasher h;
  h.add_u64(rows).add_u64(cols).add_u64(nnz).add_u64(static_cast<uint64_t>(index_dtype));
  h.add_u64(row_histogram.size());
  for (int64_t v : row_histogram) h.add_u64(v);
  h.add_u64(col_histogram.size());
  for (int64_t v : col_histogram) h.add_u64(v);
  return h.digest().hex();
}

}  // namespace strata::sc
