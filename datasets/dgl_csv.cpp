#include "datasets/dgl_csv.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "datasets/text_fields.h"

namespace strata::data {
namespace {

struct NodeFile {
  fs::path file;
  std::string ntype, id_field = "node_id";
};
struct EdgeFile {
  fs::path file;
  std::vector<std::string> etype;
  std::string src_field = "src_id", dst_field = "dst_id";
};
struct Meta {
  fs::path path;
  std::string name;
  char sep = ',';
  std::vector<NodeFile> nodes;
  std::vector<EdgeFile> edges;
  bool hetero = false;  // several node types or edge types
};

std::string at(const fs::path& file, const YAML::Node& n) {
  // A node yaml-cpp made up (the root of an empty file) has no position.
  if (n.Mark().is_null()) return file.string();
  return fmt::format("{}:{}:{}", file.string(), n.Mark().line + 1, n.Mark().column + 1);
}

std::string scalar(const fs::path& file, const YAML::Node& n, const std::string& key) {
  STRATA_CHECK(n.IsScalar(), "{}: '{}' must be a string", at(file, n), key);
  return n.as<std::string>();
}

// Refuses keys the CSVDataset specification does not define, naming the allowed ones.
void check_keys(const fs::path& file, const YAML::Node& map, const std::string& where,
                const std::vector<std::string>& allowed) {
  STRATA_CHECK(map.IsMap(), "{}: {} must be a mapping of keys ({})", at(file, map), where, fmt::join(allowed, ", "));
  std::set<std::string> seen;
  for (const auto& kv : map) {
    STRATA_CHECK(kv.first.IsScalar(), "{}: a key of {} is a {}, expected a name ({})", at(file, kv.first), where,
                 kv.first.IsSequence() ? "list" : "mapping", fmt::join(allowed, ", "));
    const std::string key = kv.first.as<std::string>();
    STRATA_CHECK(std::find(allowed.begin(), allowed.end(), key) != allowed.end(),
                 "{}: unknown key '{}' in {} (CSVDataset defines: {})", at(file, kv.first), key, where,
                 fmt::join(allowed, ", "));
    // YAML readers keep one of the two (yaml-cpp the first): which was meant is unknown.
    STRATA_CHECK(seen.insert(key).second, "{}: key '{}' appears twice in {}", at(file, kv.first), key, where);
  }
}

// A file meta.yaml names, which must lie inside the dataset's folder: the dataset
// cache validates an entry by the folder's files, so a file elsewhere (../x.csv, an
// absolute path, a symlinked folder) could change without the cache noticing.
fs::path data_file(const fs::path& folder, const fs::path& meta, const YAML::Node& n) {
  const std::string name = scalar(meta, n, "file_name");
  STRATA_CHECK(!trim(name).empty(), "{}: file_name is empty, expected the name of a CSV file in the dataset folder",
               at(meta, n));
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(folder, ec), file = fs::weakly_canonical(folder / name, ec);
  const fs::path rel = file.lexically_relative(base);
  STRATA_CHECK(!fs::path(name).is_absolute() && !rel.empty() && *rel.begin() != "..",
               "{}: file_name '{}' lies outside the dataset folder '{}' (after following links); keep the CSV files "
               "inside it",
               at(meta, n), name, folder.string());
  return folder / name;
}

Meta read_meta(const fs::path& folder) {
  Meta m;
  m.path = folder / "meta.yaml";
  std::error_code ec;
  STRATA_CHECK(fs::is_regular_file(m.path, ec),
               "'{}': {} (a DGL CSVDataset folder holds meta.yaml and the CSV files it names)", m.path.string(),
               fs::exists(m.path, ec) ? "not a regular file" : "missing");
  YAML::Node root;
  try {
    root = YAML::LoadFile(m.path.string());
  } catch (const YAML::BadFile&) {
    STRATA_FAIL("'{}': cannot read it (a DGL CSVDataset folder holds meta.yaml and the CSV files it names)",
                m.path.string());
  } catch (const YAML::Exception& e) {
    STRATA_FAIL("{}:{}:{}: not valid YAML ({})", m.path.string(), e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  STRATA_CHECK(!root.IsNull(),
               "'{}': the file is empty (no keys), expected a mapping with dataset_name, node_data and edge_data (a "
               "DGL CSVDataset's meta.yaml)",
               m.path.string());
  check_keys(m.path, root, "meta.yaml",
             {"version", "dataset_name", "separator", "node_data", "edge_data", "graph_data"});
  STRATA_CHECK(!root["graph_data"],
               "{}: graph_data makes this a dataset of many graphs (graph classification), which Strata does not "
               "train; node-level datasets have node_data and edge_data only",
               at(m.path, root["graph_data"]));
  STRATA_CHECK(root["dataset_name"], "{}: 'dataset_name' is required", m.path.string());
  m.name = scalar(m.path, root["dataset_name"], "dataset_name");
  if (root["separator"]) {
    const std::string sep = scalar(m.path, root["separator"], "separator");
    STRATA_CHECK(sep.size() == 1 && sep != "\"" && sep != "\n",
                 "{}: 'separator' must be one character other than a quote or a line break, got '{}'",
                 at(m.path, root["separator"]), sep);
    m.sep = sep[0];
  }
  for (const char* list : {"node_data", "edge_data"}) {
    const YAML::Node l = root[list];
    STRATA_CHECK(l, "{}: '{}' is required (a list of {{file_name: ...}} entries)", m.path.string(), list);
    STRATA_CHECK(l.IsSequence() && l.size() > 0, "{}: '{}' must be a non-empty list of {{file_name: ...}} entries",
                 at(m.path, l), list);
  }
  for (const auto& e : root["node_data"]) {
    check_keys(m.path, e, "a node_data entry", {"file_name", "ntype", "node_id_field"});
    STRATA_CHECK(e["file_name"], "{}: a node_data entry needs 'file_name'", at(m.path, e));
    NodeFile f;
    f.file = data_file(folder, m.path, e["file_name"]);
    if (e["ntype"]) f.ntype = scalar(m.path, e["ntype"], "ntype");
    if (e["node_id_field"]) f.id_field = scalar(m.path, e["node_id_field"], "node_id_field");
    m.nodes.push_back(f);
  }
  for (const auto& e : root["edge_data"]) {
    check_keys(m.path, e, "an edge_data entry", {"file_name", "etype", "src_id_field", "dst_id_field"});
    STRATA_CHECK(e["file_name"], "{}: an edge_data entry needs 'file_name'", at(m.path, e));
    EdgeFile f;
    f.file = data_file(folder, m.path, e["file_name"]);
    for (const auto& other : m.edges)
      STRATA_CHECK(!fs::equivalent(other.file, f.file, ec), "{}: edge file '{}' is listed twice", at(m.path, e),
                   f.file.filename().string());
    if (e["etype"]) {
      STRATA_CHECK(e["etype"].IsSequence() && e["etype"].size() == 3,
                   "{}: 'etype' must be a list of three names [source type, relation, destination type]",
                   at(m.path, e["etype"]));
      for (const auto& t : e["etype"]) f.etype.push_back(scalar(m.path, t, "etype"));
    }
    if (e["src_id_field"]) f.src_field = scalar(m.path, e["src_id_field"], "src_id_field");
    if (e["dst_id_field"]) f.dst_field = scalar(m.path, e["dst_id_field"], "dst_id_field");
    m.edges.push_back(f);
  }
  // Untyped: one node file, edge files without etype (or all of one etype over
  // one node type). Typed: every node file names its ntype, every edge file its
  // etype over those types.
  std::set<std::string> ntypes;
  for (const auto& n : m.nodes) ntypes.insert(n.ntype);
  const bool typed = std::any_of(m.nodes.begin(), m.nodes.end(), [](const NodeFile& n) { return !n.ntype.empty(); }) ||
                     std::any_of(m.edges.begin(), m.edges.end(), [](const EdgeFile& e) { return !e.etype.empty(); });
  std::set<std::vector<std::string>> distinct_etypes;
  for (const auto& e : m.edges) distinct_etypes.insert(e.etype);
  if (!typed || (m.nodes.size() == 1 && distinct_etypes.size() == 1)) {
    // One node type and one edge type is a homogeneous graph, typed or not.
    STRATA_CHECK(m.nodes.size() == 1,
                 "{}: {} node files without an ntype; name each file's node type (ntype) to "
                 "load a heterogeneous graph",
                 m.path.string(), m.nodes.size());
    const auto& et = *distinct_etypes.begin();
    STRATA_CHECK(et.empty() || ((et[0] == m.nodes[0].ntype || m.nodes[0].ntype.empty()) && et[0] == et[2]),
                 "{}: edge type [{}] joins types the node files do not list (node type '{}')", m.path.string(),
                 fmt::join(et, ", "), m.nodes[0].ntype);
    return m;
  }
  m.hetero = true;
  for (const auto& n : m.nodes)
    STRATA_CHECK(!n.ntype.empty(), "{}: node file '{}' has no ntype, but the edge files are typed ({} edge types)",
                 m.path.string(), n.file.filename().string(), distinct_etypes.size());
  STRATA_CHECK(ntypes.size() == m.nodes.size(), "{}: a node type has two node files; list one file per ntype",
               m.path.string());
  std::set<std::string> etypes;
  for (const auto& e : m.edges) {
    STRATA_CHECK(!e.etype.empty(), "{}: edge file '{}' has no etype, but the node files are typed", m.path.string(),
                 e.file.filename().string());
    for (const std::string& t : {e.etype[0], e.etype[2]})
      STRATA_CHECK(ntypes.count(t), "{}: edge file '{}': node type '{}' of its etype has no node file (types: {})",
                   m.path.string(), e.file.filename().string(), t, fmt::join(ntypes, ", "));
    STRATA_CHECK(e.etype[1].rfind("rev-", 0) != 0,
                 "{}: edge type [{}]: relation names starting with 'rev-' are the inverses the loader adds; rename it",
                 m.path.string(), fmt::join(e.etype, ", "));
    STRATA_CHECK(etypes.insert(fmt::format("{}-{}->{}", e.etype[0], e.etype[1], e.etype[2])).second,
                 "{}: edge type [{}] has two edge files; list one file per etype", m.path.string(),
                 fmt::join(e.etype, ", "));
  }
  return m;
}

// A header and the column index of each name (absent: -1).
struct Header {
  std::vector<std::string> names;
  int64_t col(const std::string& name) const {
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? -1 : it - names.begin();
  }
};

Header read_header(CsvReader& csv, const fs::path& file, const std::string& needs) {
  std::vector<std::string> row;
  STRATA_CHECK(csv.next(row), "'{}': empty, expected a header line with {}", file.string(), needs);
  Header h;
  // (A UTF-8 byte-order mark, as Excel writes, is skipped by the LineReader under the CsvReader.)
  for (const auto& f : row) h.names.emplace_back(trim(f));
  std::set<std::string> seen;
  for (const auto& name : h.names)
    STRATA_CHECK(name.empty() || seen.insert(name).second, "{}: column '{}' appears twice in the header",
                 csv.where().str(), name);
  return h;
}

// The next record with as many fields as the header; blank lines are skipped.
bool next_record(CsvReader& csv, const Header& h, std::vector<std::string>& row) {
  while (csv.next(row)) {
    if (row.size() == 1 && trim(row[0]).empty()) continue;
    STRATA_CHECK(row.size() == h.names.size(), "{}: {} fields, but the header has {}", csv.where().str(), row.size(),
                 h.names.size());
    return true;
  }
  return false;
}

// True/False (any case) or 1/0, as pandas writes boolean columns.
bool parse_mask(std::string_view s, const Where& w, const std::string& column) {
  std::string v(trim(s));
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  STRATA_FAIL("{}: {} is '{}', expected True, False, 1 or 0", w.str(), column, excerpt(s));
}

// A number, or a list of numbers separated by commas (optionally in [ ]), as DGL
// writes vector-valued columns.
void parse_vector(std::string_view s, const Where& w, const std::string& column, std::vector<float>& out) {
  out.clear();
  std::string_view v = trim(s);
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = trim(v.substr(1, v.size() - 2));
  std::vector<std::string_view> parts;
  split_fields(v, ',', parts);
  for (const auto& p : parts) out.push_back(parse_finite_float(trim(p), w, column));
}

// Rows of a vector column, all of one width, into a float32 [rows, width] tensor.
Tensor stack(const std::vector<std::vector<float>>& rows, int64_t width) {
  Tensor t = Tensor::empty({static_cast<int64_t>(rows.size()), width}, DType::F32);
  float* p = t.data<float>();
  for (const auto& r : rows) p = std::copy(r.begin(), r.end(), p);
  return t;
}

void check_width(std::optional<int64_t>& width, const std::vector<float>& v, const Where& w, const std::string& col) {
  if (!width) width = static_cast<int64_t>(v.size());
  STRATA_CHECK(static_cast<int64_t>(v.size()) == *width, "{}: {} has {} values, but the first row had {}", w.str(), col,
               v.size(), *width);
}

std::string ignored(const Header& h, const std::set<std::string>& read, const fs::path& file) {
  std::vector<std::string> rest;
  for (const auto& n : h.names)
    if (!n.empty() && !read.count(n)) rest.push_back(n);
  return rest.empty() ? "" : fmt::format("{}: columns not read: {}", file.filename().string(), fmt::join(rest, ", "));
}

// One node file: the ids, and the label, mask and feat columns it has, each in node
// order. Ids that are exactly 0..n-1 (in any order) are the nodes' ids; otherwise
// the nodes are numbered in file order.
struct NodeTable {
  fs::path file;
  std::vector<std::string> ids;  // by node
  bool renumbered = false;
  std::unordered_map<std::string, int64_t> index;  // id as written -> node
  std::vector<int64_t> labels;                     // by node; empty: no label column
  bool has_mask[3] = {false, false, false};
  std::vector<uint8_t> masks[3];  // by node
  Tensor feat;                    // float32 [n, d], or undefined
  std::string ignored;            // "nodes.csv: columns not read: ..." or ""
  int64_t size() const { return static_cast<int64_t>(ids.size()); }
};

constexpr const char* kMaskNames[3] = {"train_mask", "val_mask", "test_mask"};

NodeTable read_nodes(const NodeFile& nf, char sep) {
  auto src = open_input(nf.file);
  CsvReader csv(*src, sep);
  const Header h = read_header(csv, nf.file, "a '" + nf.id_field + "' column");
  const int64_t id_col = h.col(nf.id_field);
  STRATA_CHECK(id_col >= 0, "{}: the header has no '{}' column (columns: {}; meta.yaml's node_id_field names it)",
               csv.where().str(), nf.id_field, fmt::join(h.names, ", "));
  const int64_t label_col = h.col("label"), feat_col = h.col("feat");
  int64_t mask_col[3];
  for (int k = 0; k < 3; ++k) mask_col[k] = h.col(kMaskNames[k]);
  std::vector<std::string> ids;
  std::vector<int64_t> labels;
  std::vector<uint8_t> masks[3];
  std::vector<std::vector<float>> feats;
  std::optional<int64_t> width;
  std::vector<std::string> row;
  std::vector<float> vec;
  while (next_record(csv, h, row)) {
    const Where w = csv.where();
    ids.emplace_back(trim(row[id_col]));
    STRATA_CHECK(!ids.back().empty(), "{}: empty {}", w.str(), nf.id_field);
    if (label_col >= 0) {
      // A class number; -1 is DGL's "unlabelled", and 1.0 is how pandas writes a
      // column with missing values.
      labels.push_back(parse_integral(trim(row[label_col]), w, "label"));
      STRATA_CHECK(labels.back() >= -1 && labels.back() < kMaxClasses,
                   "{}: label is {}, expected a class number in [0, {}) or -1 (unlabelled)", w.str(), labels.back(),
                   kMaxClasses);
    }
    for (int k = 0; k < 3; ++k)
      if (mask_col[k] >= 0) masks[k].push_back(parse_mask(row[mask_col[k]], w, kMaskNames[k]));
    if (feat_col >= 0) {
      parse_vector(row[feat_col], w, "feat", vec);
      check_width(width, vec, w, "feat");
      feats.push_back(vec);
    }
  }
  const int64_t n = static_cast<int64_t>(ids.size());
  STRATA_CHECK(n > 0, "'{}': no nodes after the header", nf.file.string());
  NodeTable t;
  t.file = nf.file;
  // The node of each file row: the id itself when the ids are a permutation of 0..n-1.
  std::vector<int64_t> node_of_row(n);
  std::vector<uint8_t> seen(n, 0);
  bool identity = true;
  for (int64_t r = 0; r < n && identity; ++r) {
    const auto v = try_parse_int(ids[r]);
    identity = v && *v >= 0 && *v < n && !seen[*v] && std::to_string(*v) == ids[r];
    if (identity) seen[*v] = 1, node_of_row[r] = *v;
  }
  if (!identity)
    for (int64_t r = 0; r < n; ++r) node_of_row[r] = r;
  t.renumbered = !identity;
  t.ids.resize(n);
  t.index.reserve(n);
  for (int64_t r = 0; r < n; ++r) {
    STRATA_CHECK(t.index.emplace(ids[r], node_of_row[r]).second, "'{}': node id '{}' appears twice", nf.file.string(),
                 excerpt(ids[r]));
    t.ids[node_of_row[r]] = ids[r];
  }
  if (label_col >= 0) {
    t.labels.resize(n);
    for (int64_t r = 0; r < n; ++r) t.labels[node_of_row[r]] = labels[r];
  }
  for (int k = 0; k < 3; ++k) {
    t.has_mask[k] = mask_col[k] >= 0;
    if (!t.has_mask[k]) continue;
    t.masks[k].resize(n);
    for (int64_t r = 0; r < n; ++r) t.masks[k][node_of_row[r]] = masks[k][r];
  }
  if (feat_col >= 0) {
    std::vector<std::vector<float>> by_node(n);
    for (int64_t r = 0; r < n; ++r) by_node[node_of_row[r]] = std::move(feats[r]);
    t.feat = stack(by_node, *width);
  }
  t.ignored = ignored(h, {nf.id_field, "label", "feat", "train_mask", "val_mask", "test_mask"}, nf.file);
  return t;
}

// The edges of one or more files between two node tables.
struct EdgeTable {
  std::vector<int64_t> src, dst;
  std::vector<float> weight;
  std::vector<std::vector<float>> feat;
  std::optional<int64_t> feat_width;
  int files = 0, weighted_files = 0, featured_files = 0;
};

void read_edges(const EdgeFile& ef, char sep, const NodeTable& from, const NodeTable& to, EdgeTable& out,
                std::vector<std::string>& notes) {
  auto src = open_input(ef.file);
  CsvReader csv(*src, sep);
  const Header h = read_header(csv, ef.file, "'" + ef.src_field + "' and '" + ef.dst_field + "' columns");
  const int64_t s_col = h.col(ef.src_field), d_col = h.col(ef.dst_field);
  STRATA_CHECK(s_col >= 0 && d_col >= 0,
               "{}: the header lacks '{}' (columns: {}; meta.yaml's src_id_field and dst_id_field name them)",
               csv.where().str(), s_col < 0 ? ef.src_field : ef.dst_field, fmt::join(h.names, ", "));
  const int64_t w_col = h.col("weight"), f_col = h.col("feat");
  ++out.files;
  out.weighted_files += w_col >= 0;
  out.featured_files += f_col >= 0;
  std::vector<std::string> row;
  std::vector<float> vec;
  while (next_record(csv, h, row)) {
    const Where w = csv.where();
    for (const auto& [col, table, ids] : {std::tuple{s_col, &from, &out.src}, std::tuple{d_col, &to, &out.dst}}) {
      const std::string id(trim(row[col]));
      const auto it = table->index.find(id);
      STRATA_CHECK(it != table->index.end(), "{}: {} '{}' is not a node of {}", w.str(), h.names[col], excerpt(id),
                   table->file.filename().string());
      ids->push_back(it->second);
    }
    if (w_col >= 0) out.weight.push_back(parse_finite_float(trim(row[w_col]), w, "weight"));
    if (f_col >= 0) {
      parse_vector(row[f_col], w, "feat", vec);
      check_width(out.feat_width, vec, w, "feat");
      out.feat.push_back(vec);
    }
  }
  if (const std::string note = ignored(h, {ef.src_field, ef.dst_field, "weight", "feat"}, ef.file); !note.empty())
    notes.push_back(note);
}

Graph edges_graph(const EdgeTable& e, int64_t rows, int64_t cols, const fs::path& meta_path, const std::string& what) {
  STRATA_CHECK(e.weighted_files == 0 || e.weighted_files == e.files,
               "{}: some edge files of {} have a 'weight' column and some do not", meta_path.string(), what);
  CooOptions co;
  co.source = what;
  return Graph::from_coo(rows, cols, Tensor::from_vector(e.dst), Tensor::from_vector(e.src), co,
                         e.weighted_files ? Tensor::from_vector(e.weight) : Tensor());
}

void set_labels(Dataset& ds, const NodeTable& t) {
  const int64_t unlabelled = std::count(t.labels.begin(), t.labels.end(), int64_t{-1});
  if (unlabelled == t.size()) {
    ds.notes.push_back(fmt::format("{}: every label is -1 (unlabelled): no labels", t.file.filename().string()));
    return;
  }
  if (unlabelled > 0)
    ds.notes.push_back(fmt::format("{}: {} nodes have label -1 (unlabelled)", t.file.filename().string(), unlabelled));
  ds.task = Task::NodeClassification;
  ds.num_classes = *std::max_element(t.labels.begin(), t.labels.end()) + 1;
  for (int64_t c = 0; c < ds.num_classes; ++c) ds.class_names.push_back(std::to_string(c));
  ds.labels = Tensor::from_vector(t.labels);
}

// Splits from a node table's masks; a node in two of them would leak between
// training and evaluation.
void set_splits(Dataset& ds, const NodeTable& t) {
  if (!t.has_mask[0] && !t.has_mask[1] && !t.has_mask[2]) return;
  std::vector<int64_t> part[3];
  std::vector<int8_t> owner(t.size(), -1);
  for (int k = 0; k < 3; ++k) {
    if (!t.has_mask[k]) continue;
    for (int64_t v = 0; v < t.size(); ++v) {
      if (!t.masks[k][v]) continue;
      STRATA_CHECK(owner[v] < 0, "'{}': node '{}' is in both {} and {}; the splits must not overlap", t.file.string(),
                   excerpt(t.ids[v]), kMaskNames[owner[v]], kMaskNames[k]);
      owner[v] = static_cast<int8_t>(k);
      part[k].push_back(v);
    }
  }
  STRATA_CHECK(!part[0].empty() || !part[1].empty() || !part[2].empty(),
               "'{}': the mask columns select no node (every value is False); leave them out to have the config's "
               "data.split draw the splits",
               t.file.string());
  ds.splits.train = Tensor::from_vector(part[0]);
  ds.splits.val = Tensor::from_vector(part[1]);
  ds.splits.test = Tensor::from_vector(part[2]);
  ds.splits.origin = fmt::format("train_mask/val_mask/test_mask columns of {}", t.file.filename().string());
}

void load_homogeneous(Dataset& ds, const Meta& meta, const SourceOptions& opt) {
  const NodeTable t = read_nodes(meta.nodes[0], meta.sep);
  const int64_t n = t.size();
  if (t.renumbered) {
    ds.node_names = t.ids;
    ds.notes.push_back(fmt::format("node ids of {} are not 0..{}: numbered in file order (the ids kept as names)",
                                   t.file.filename().string(), n - 1));
  }
  EdgeTable e;
  for (const EdgeFile& ef : meta.edges) read_edges(ef, meta.sep, t, t, e, ds.notes);
  STRATA_CHECK(e.featured_files == 0 || e.featured_files == e.files,
               "{}: some edge files have a 'feat' column and some do not", meta.path.string());
  ds.graph = edges_graph(e, n, n, meta.path, meta.edges[0].file.filename().string());
  ds.undirected = opt.undirected.value_or(false);
  if (e.featured_files && !e.feat.empty()) ds.edge_features = stack(e.feat, *e.feat_width);
  if (t.feat.defined()) ds.features = FeatureMatrix::dense(t.feat);
  if (!t.labels.empty())
    set_labels(ds, t);
  else
    ds.notes.push_back(fmt::format("{} has no 'label' column: no labels", t.file.filename().string()));
  set_splits(ds, t);
  if (!t.ignored.empty()) ds.notes.push_back(t.ignored);
}

// Node types in node_data order; one relation per etype, and its inverse ("rev-"),
// as the R-GCN loaders give every relation (DGL's AddReverse).
void load_heterogeneous(Dataset& ds, const Meta& meta) {
  std::vector<NodeTable> tables;
  HeteroGraph hg;
  std::map<std::string, int> slot;
  for (const NodeFile& nf : meta.nodes) {
    tables.push_back(read_nodes(nf, meta.sep));
    slot[nf.ntype] = hg.add_node_type(nf.ntype, tables.back().size());
    if (!tables.back().ignored.empty()) ds.notes.push_back(tables.back().ignored);
  }
  for (const EdgeFile& ef : meta.edges) {
    const int s = slot.at(ef.etype[0]), d = slot.at(ef.etype[2]);
    EdgeTable e;
    read_edges(ef, meta.sep, tables[s], tables[d], e, ds.notes);
    if (e.featured_files)
      ds.notes.push_back(fmt::format("{}: edge features of typed graphs are not read", ef.file.filename().string()));
    hg.add_relation(ef.etype[0], ef.etype[1], ef.etype[2],
                    edges_graph(e, tables[d].size(), tables[s].size(), meta.path, ef.file.filename().string()));
  }
  hg.add_inverse_relations();
  ds.notes.push_back(
      fmt::format("{} node types, {} edge types and their inverses (rev-)", hg.num_node_types(), meta.edges.size()));
  ds.type_features.resize(tables.size());
  std::vector<std::string> labelled;
  for (size_t k = 0; k < tables.size(); ++k) {
    if (tables[k].feat.defined()) ds.type_features[k] = FeatureMatrix::dense(tables[k].feat);
    if (!tables[k].labels.empty()) labelled.push_back(meta.nodes[k].ntype);
  }
  STRATA_CHECK(labelled.size() <= 1, "{}: node types {} all have a 'label' column; one type is the one classified",
               meta.path.string(), fmt::join(labelled, ", "));
  if (labelled.empty()) {
    ds.notes.push_back("no node file has a 'label' column: no labels");
  } else {
    ds.target_node_type = slot.at(labelled[0]);
    const NodeTable& t = tables[ds.target_node_type];
    set_labels(ds, t);
    set_splits(ds, t);
    if (t.renumbered) ds.node_names = t.ids;
  }
  // Splits are of the labelled type's nodes: masks elsewhere say nothing.
  for (size_t k = 0; k < tables.size(); ++k)
    if (static_cast<int>(k) != ds.target_node_type &&
        (tables[k].has_mask[0] || tables[k].has_mask[1] || tables[k].has_mask[2]))
      ds.notes.push_back(fmt::format("{}: mask columns not read (splits are of the labelled type's nodes{})",
                                     tables[k].file.filename().string(),
                                     labelled.empty() ? "; no node file has a 'label' column" : ""));
  ds.graph = hg.to_homogeneous().graph;
  ds.hetero = std::move(hg);
}

}  // namespace

Dataset load_dgl_csv(const fs::path& path_in, const SourceOptions& opt) {
  std::error_code ec;
  const fs::path folder =
      fs::is_regular_file(path_in, ec) && path_in.filename() == "meta.yaml" ? path_in.parent_path() : path_in;
  STRATA_CHECK(fs::is_directory(folder, ec),
               "dgl-csv: '{}' is not a folder (expected the folder holding meta.yaml, or meta.yaml itself)",
               path_in.string());
  const Meta meta = read_meta(folder);
  Dataset ds;
  ds.name = opt.name.empty() ? meta.name : opt.name;
  ds.format = "dglcsv";
  ds.source = folder.string();
  ds.notes = opt.notes;
  if (meta.hetero)
    load_heterogeneous(ds, meta);
  else
    load_homogeneous(ds, meta, opt);
  ds.validate();
  return ds;
}

}  // namespace strata::data
