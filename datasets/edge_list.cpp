#include "datasets/edge_list.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "datasets/line_reader.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

// "# Nodes: 23133 Edges: 186936" (SNAP): "Nodes:", spaces, digits, spaces, "Edges:",
// spaces, digits, anywhere in the line. Scanned by hand: std::regex recurses once per
// character and overflows the stack on a long comment line.
std::optional<std::pair<std::string_view, std::string_view>> find_snap_counts(std::string_view line) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t at = line.find("Nodes:"); at != std::string_view::npos; at = line.find("Nodes:", at + 1)) {
    size_t i = at + 6;
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t nodes_begin = i;
    while (i < line.size() && is_digit(line[i])) ++i;
    const size_t nodes_end = i;
    while (i < line.size() && is_space(line[i])) ++i;
    if (nodes_end == nodes_begin || i == nodes_end || line.substr(i, 6) != "Edges:") continue;
    i += 6;
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t edges_begin = i;
    while (i < line.size() && is_digit(line[i])) ++i;
    if (i == edges_begin) continue;
    return std::make_pair(line.substr(nodes_begin, nodes_end - nodes_begin), line.substr(edges_begin, i - edges_begin));
  }
  return std::nullopt;
}

// Returns true when the line is a SNAP counts header (and records its counts).
bool parse_snap_counts(std::string_view line, const Where& where, EdgeRecords& out) {
  const auto counts = find_snap_counts(line);
  if (!counts) return false;
  out.header_nodes = parse_int(counts->first, where, "node count of the '# Nodes: … Edges: …' header");
  out.header_edges = parse_int(counts->second, where, "edge count of the '# Nodes: … Edges: …' header");
  return true;
}

// A node id: any non-negative integer (ids that are not 0..N-1 are renumbered later).
// A negative one is refused rather than renumbered: no graph format writes them, so
// one is a damaged line (a stray '-'), not an id.
int64_t parse_node_id(std::string_view s, const Where& where, std::string_view what) {
  const int64_t id = parse_int(s, where, what);
  STRATA_CHECK(id >= 0, "{}: {} is '{}', expected a non-negative integer", where.str(), what, excerpt(s));
  return id;
}

}  // namespace

EdgeRecords read_edge_records(const fs::path& path, EdgeListStyle style) {
  EdgeRecords rec;
  auto src = open_input(path);
  rec.file = src->name();
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;
  int64_t columns = -1;
  bool first = true;
  bool first_line = true;  // the first line that is not blank
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    // A Matrix Market file would read as an edge list (its banner a comment, its size
    // line "4 4 3" an edge 4 -> 4 of weight 3): refuse it.
    if (first_line) {
      std::string head(t.substr(0, 14));
      for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      STRATA_CHECK(head != "%%matrixmarket",
                   "{}: this is a Matrix Market file (it starts with the '%%MatrixMarket' banner), not an edge list; "
                   "load it with the 'mtx:' prefix (mtx:{})",
                   lines.where().str(), path.string());
      first_line = false;
    }
    if (style == EdgeListStyle::Blank && (t[0] == '#' || t[0] == '%')) {
      if (!rec.header_edges && rec.src.empty()) parse_snap_counts(t, lines.where(), rec);
      continue;
    }
    if (style == EdgeListStyle::Blank) {
      split_blanks(t, f);
    } else {
      split_fields(t, ',', f);
      for (auto& x : f) x = trim(x);
    }
    const Where w = lines.where();
    // (Not an integer too large for int64, which parse_node_id reports as out of range.)
    if (first && style == EdgeListStyle::Csv && !f.empty() && !is_integer_syntax(f[0])) {
      for (auto x : f) rec.header.emplace_back(x);  // a header line
      first = false;
      continue;
    }
    first = false;
    if (columns < 0) columns = static_cast<int64_t>(f.size());
    STRATA_CHECK((f.size() == 2 || f.size() == 3) && static_cast<int64_t>(f.size()) == columns,
                 "{}: expected '<src>{}<dst>[{}<weight>]' with {} fields like the first record, found {}: '{}'", w.str(),
                 style == EdgeListStyle::Csv ? "," : " ", style == EdgeListStyle::Csv ? "," : " ",
                 columns == 3 ? 3 : 2, f.size(), excerpt(t));
    rec.src.push_back(parse_node_id(f[0], w, "source id"));
    rec.dst.push_back(parse_node_id(f[1], w, "destination id"));
    if (f.size() == 3) rec.weights.push_back(parse_finite_float(f[2], w, "weight"));
    rec.lines.push_back(w.line);
  }
  return rec;
}

Dataset load_edge_list(const fs::path& path, EdgeListStyle style, const SourceOptions& opt) {
  EdgeRecords rec = read_edge_records(path, style);
  const int64_t m = static_cast<int64_t>(rec.src.size());
  STRATA_CHECK(m > 0, "'{}': no edges (only comments or a header)", rec.file);
  if (rec.header_edges)
    STRATA_CHECK(*rec.header_edges == m,
                 "'{}': {} edge records, but the header line says Edges: {} (the counts disagree; the file may be "
                 "truncated)",
                 rec.file, m, *rec.header_edges);

  // Number the nodes: keep ids when they are exactly 0..N-1, else renumber ascending.
  int64_t lo = rec.src[0], hi = rec.src[0];
  for (int64_t k = 0; k < m; ++k) {
    lo = std::min({lo, rec.src[k], rec.dst[k]});
    hi = std::max({hi, rec.src[k], rec.dst[k]});
  }
  std::vector<int64_t> used;
  // A presence bitmap when the id range is small next to the edge count, else sort.
  if (lo >= 0 && hi < std::min<int64_t>(int64_t{1} << 28, 16 * m + 4096)) {
    std::vector<uint8_t> seen(static_cast<size_t>(hi) + 1, 0);
    for (int64_t k = 0; k < m; ++k) seen[rec.src[k]] = seen[rec.dst[k]] = 1;
    for (int64_t i = 0; i <= hi; ++i)
      if (seen[i]) used.push_back(i);
  } else {
    used.reserve(static_cast<size_t>(2 * m));
    used.insert(used.end(), rec.src.begin(), rec.src.end());
    used.insert(used.end(), rec.dst.begin(), rec.dst.end());
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
  }
  const int64_t n = static_cast<int64_t>(used.size());
  const bool identity = lo == 0 && hi == n - 1;

  Dataset ds;
  std::string stem = path.filename().string();
  for (const char* ext : {".gz", ".txt", ".csv", ".tsv", ".edges", ".el"})
    if (ends_with(stem, ext)) stem.resize(stem.size() - std::string_view(ext).size());
  ds.name = opt.name.empty() ? stem : opt.name;
  ds.format = style == EdgeListStyle::Csv ? "csv" : "edgelist";
  ds.source = path.string();
  ds.notes = opt.notes;
  if (!identity) {
    auto rank = [&](int64_t id) { return std::lower_bound(used.begin(), used.end(), id) - used.begin(); };
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < m; ++k) {
      rec.src[k] = rank(rec.src[k]);
      rec.dst[k] = rank(rec.dst[k]);
    }
    ds.original_ids = Tensor::from_vector(used);
    ds.notes.push_back(fmt::format("node ids renumbered: {} distinct ids in {}..{} numbered 0..{} in ascending order "
                                   "(original_ids keeps them)",
                                   n, lo, hi, n - 1));
  }
  if (rec.header_nodes && *rec.header_nodes != n)
    ds.notes.push_back(fmt::format("the header says Nodes: {} but {} distinct ids occur in edges", *rec.header_nodes, n));
  int64_t loops = 0;
  for (int64_t k = 0; k < m; ++k) loops += rec.src[k] == rec.dst[k];
  if (loops > 0) ds.notes.push_back(fmt::format("{} self-loop records (kept)", loops));
  CooOptions co;
  co.source = rec.file;
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(rec.dst), Tensor::from_vector(rec.src), co,
                             rec.weights.empty() ? Tensor() : Tensor::from_vector(rec.weights));
  ds.undirected = opt.undirected.value_or(false);
  if (!opt.undirected) ds.notes.push_back("direction as written (src -> dst); undirectedness not known for this file");
  ds.validate();
  return ds;
}

}  // namespace strata::data
