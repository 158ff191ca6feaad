#include "datasets/matrix_market.h"

#include <algorithm>
#include <cctype>

#include "datasets/line_reader.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Dataset load_matrix_market(const fs::path& path, const SourceOptions& opt) {
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;

  STRATA_CHECK(lines.next(line), "'{}': empty file, expected a %%MatrixMarket banner", path.string());
  split_blanks(line, f);
  STRATA_CHECK(f.size() == 5 && lower(f[0]) == "%%matrixmarket",
               "{}: expected the banner '%%MatrixMarket matrix coordinate <real|integer|pattern> "
               "<general|symmetric>', found '{}'",
               lines.where().str(), excerpt(line));
  const std::string object = lower(f[1]), layout = lower(f[2]), field = lower(f[3]), symmetry = lower(f[4]);
  STRATA_CHECK(object == "matrix", "{}: object '{}' is not supported, expected 'matrix'", lines.where().str(),
               excerpt(f[1]));
  STRATA_CHECK(layout == "coordinate", "{}: layout '{}' is not supported, expected 'coordinate' (a sparse matrix)",
               lines.where().str(), excerpt(f[2]));
  STRATA_CHECK(field == "real" || field == "integer" || field == "pattern" || field == "double",
               "{}: field '{}' is not supported, expected real, integer or pattern", lines.where().str(),
               excerpt(f[3]));
  STRATA_CHECK(symmetry == "general" || symmetry == "symmetric" || symmetry == "skew-symmetric",
               "{}: symmetry '{}' is not supported, expected general, symmetric or skew-symmetric", lines.where().str(),
               excerpt(f[4]));
  const bool pattern = field == "pattern";
  const bool mirrored = symmetry != "general";
  const float mirror_sign = symmetry == "skew-symmetric" ? -1.0f : 1.0f;

  // Size line (after comments).
  int64_t rows = -1, cols = -1, declared = -1;
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t[0] == '%') continue;
    split_blanks(t, f);
    STRATA_CHECK(f.size() == 3, "{}: expected the size line '<rows> <cols> <entries>', found '{}'",
                 lines.where().str(), excerpt(t));
    rows = parse_int(f[0], lines.where(), "row count");
    cols = parse_int(f[1], lines.where(), "column count");
    declared = parse_int(f[2], lines.where(), "entry count");
    STRATA_CHECK(rows >= 0 && cols >= 0 && declared >= 0, "{}: negative size in '{}'", lines.where().str(), excerpt(t));
    STRATA_CHECK(!mirrored || rows == cols, "{}: a {} matrix must be square, the size line says {} x {}",
                 lines.where().str(), symmetry, rows, cols);
    break;
  }
  STRATA_CHECK(rows >= 0, "'{}': no size line after the banner", path.string());

  std::vector<int64_t> r, c;
  std::vector<float> v;
  // The size line is not trusted for more than a modest reservation.
  const size_t reserve = static_cast<size_t>(std::min<int64_t>(mirrored ? 2 * declared : declared, int64_t{1} << 24));
  r.reserve(reserve);
  c.reserve(reserve);
  if (!pattern) v.reserve(reserve);
  int64_t stored = 0, diagonal = 0;
  const size_t want = pattern ? 2 : 3;
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t[0] == '%') continue;
    split_blanks(t, f);
    const Where w = lines.where();
    STRATA_CHECK(f.size() == want, "{}: expected '<row> <col>{}' ({} fields), found '{}'", w.str(),
                 pattern ? "" : " <value>", want, excerpt(t));
    ++stored;
    STRATA_CHECK(stored <= declared, "{}: more entries than the {} declared on the size line (the counts disagree)",
                 w.str(), declared);
    const int64_t i = parse_int(f[0], w, "row index"), j = parse_int(f[1], w, "column index");
    STRATA_CHECK(i >= 1 && i <= rows && j >= 1 && j <= cols,
                 "{}: entry ({}, {}) is outside the {} x {} matrix (indices are 1-based)", w.str(), i, j, rows, cols);
    const float val = pattern ? 1.0f : parse_finite_float(f[2], w, "value");
    r.push_back(i - 1);
    c.push_back(j - 1);
    if (!pattern) v.push_back(val);
    if (i == j) {
      ++diagonal;
      STRATA_CHECK(symmetry != "skew-symmetric", "{}: skew-symmetric matrix has a diagonal entry ({}, {})", w.str(), i,
                   j);
    } else if (mirrored) {
      r.push_back(j - 1);
      c.push_back(i - 1);
      if (!pattern) v.push_back(mirror_sign * val);
    }
  }
  STRATA_CHECK(stored == declared, "'{}': {} entries, but the size line declares {} (the counts disagree; the file "
               "may be truncated)",
               path.string(), stored, declared);

  Dataset ds;
  std::string stem = path.filename().string();
  for (const char* ext : {".gz", ".mtx"})
    if (ends_with(stem, ext)) stem.resize(stem.size() - std::string_view(ext).size());
  ds.name = opt.name.empty() ? stem : opt.name;
  ds.format = "mtx";
  ds.source = path.string();
  CooOptions co;
  co.source = path.string();
  ds.graph = Graph::from_coo(rows, cols, Tensor::from_vector(r), Tensor::from_vector(c), co,
                             pattern ? Tensor() : Tensor::from_vector(v));
  ds.undirected = opt.undirected.value_or(symmetry == "symmetric");
  ds.notes = opt.notes;
  ds.notes.push_back(fmt::format("Matrix Market {} {}: {} stored entries ({} on the diagonal), {} non-zeros", field,
                                 symmetry, stored, diagonal, ds.graph.nnz()));
  if (rows != cols) ds.notes.push_back(fmt::format("rectangular matrix ({} x {}): not a graph over one node set", rows, cols));
  ds.validate();
  return ds;
}

}  // namespace strata::data
