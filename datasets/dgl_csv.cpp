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
};

std::string at(const fs::path& file, const YAML::Node& n) {
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
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    STRATA_CHECK(std::find(allowed.begin(), allowed.end(), key) != allowed.end(),
                 "{}: unknown key '{}' in {} (CSVDataset defines: {})", at(file, kv.first), key, where,
                 fmt::join(allowed, ", "));
  }
}

Meta read_meta(const fs::path& folder) {
  Meta m;
  m.path = folder / "meta.yaml";
  YAML::Node root;
  try {
    root = YAML::LoadFile(m.path.string());
  } catch (const YAML::BadFile&) {
    STRATA_FAIL("'{}': cannot read it (a DGL CSVDataset folder holds meta.yaml and the CSV files it names)",
                m.path.string());
  } catch (const YAML::Exception& e) {
    STRATA_FAIL("{}:{}:{}: not valid YAML ({})", m.path.string(), e.mark.line + 1, e.mark.column + 1, e.msg);
  }
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
    f.file = folder / scalar(m.path, e["file_name"], "file_name");
    if (e["ntype"]) f.ntype = scalar(m.path, e["ntype"], "ntype");
    if (e["node_id_field"]) f.id_field = scalar(m.path, e["node_id_field"], "node_id_field");
    m.nodes.push_back(f);
  }
  for (const auto& e : root["edge_data"]) {
    check_keys(m.path, e, "an edge_data entry", {"file_name", "etype", "src_id_field", "dst_id_field"});
    STRATA_CHECK(e["file_name"], "{}: an edge_data entry needs 'file_name'", at(m.path, e));
    EdgeFile f;
    f.file = folder / scalar(m.path, e["file_name"], "file_name");
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
  // One node type and one edge type: a homogeneous graph.
  std::set<std::string> ntypes, etypes;
  for (const auto& n : m.nodes) ntypes.insert(n.ntype);
  for (const auto& e : m.edges) {
    if (e.etype.empty()) continue;
    etypes.insert(fmt::format("[{}]", fmt::join(e.etype, ", ")));
    ntypes.insert(e.etype[0]);
    ntypes.insert(e.etype[2]);
  }
  ntypes.erase("");
  STRATA_CHECK(ntypes.size() <= 1 && etypes.size() <= 1 && m.nodes.size() == 1,
               "{}: a heterogeneous graph ({} node file(s), node types {{{}}}, edge types {{{}}}); the dgl-csv loader "
               "reads one node file and one edge type (heterographs load as hgb: or rdf:)",
               m.path.string(), m.nodes.size(), fmt::join(ntypes, ", "), fmt::join(etypes, ", "));
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
  for (const auto& f : row) h.names.emplace_back(trim(f));
  return h;
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
    if (!read.count(n)) rest.push_back(n);
  return rest.empty() ? "" : fmt::format("{}: columns not read: {}", file.filename().string(), fmt::join(rest, ", "));
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

  // Nodes.
  const NodeFile& nf = meta.nodes[0];
  auto nsrc = open_input(nf.file);
  CsvReader ncsv(*nsrc, meta.sep);
  const Header nh = read_header(ncsv, nf.file, "a '" + nf.id_field + "' column");
  const int64_t id_col = nh.col(nf.id_field);
  STRATA_CHECK(id_col >= 0, "{}: the header has no '{}' column (columns: {}; meta.yaml's node_id_field names it)",
               ncsv.where().str(), nf.id_field, fmt::join(nh.names, ", "));
  const int64_t label_col = nh.col("label"), feat_col = nh.col("feat");
  const int64_t mask_col[3] = {nh.col("train_mask"), nh.col("val_mask"), nh.col("test_mask")};
  std::vector<std::string> ids;
  std::vector<int64_t> labels;
  std::vector<uint8_t> masks[3];
  std::vector<std::vector<float>> feats;
  std::optional<int64_t> feat_width;
  std::vector<std::string> row;
  std::vector<float> vec;
  while (ncsv.next(row)) {
    if (row.size() == 1 && trim(row[0]).empty()) continue;
    const Where w = ncsv.where();
    STRATA_CHECK(row.size() == nh.names.size(), "{}: {} fields, but the header has {}", w.str(), row.size(),
                 nh.names.size());
    ids.emplace_back(trim(row[id_col]));
    STRATA_CHECK(!ids.back().empty(), "{}: empty {}", w.str(), nf.id_field);
    if (label_col >= 0) {
      labels.push_back(parse_int(trim(row[label_col]), w, "label"));
      STRATA_CHECK(labels.back() >= 0, "{}: label is {}, expected a class number >= 0", w.str(), labels.back());
    }
    for (int k = 0; k < 3; ++k)
      if (mask_col[k] >= 0) masks[k].push_back(parse_mask(row[mask_col[k]], w, nh.names[mask_col[k]]));
    if (feat_col >= 0) {
      parse_vector(row[feat_col], w, "feat", vec);
      check_width(feat_width, vec, w, "feat");
      feats.push_back(vec);
    }
  }
  const int64_t n = static_cast<int64_t>(ids.size());
  STRATA_CHECK(n > 0, "'{}': no nodes after the header", nf.file.string());
  // Ids 0..n-1 in any order are kept; anything else is numbered in file order.
  std::unordered_map<std::string, int64_t> index;
  index.reserve(ids.size());
  std::vector<int64_t> node_of_row(ids.size());
  bool identity = true;
  for (int64_t r = 0; r < n; ++r) {
    const auto v = try_parse_int(ids[r]);
    identity = identity && v && *v >= 0 && *v < n;
    STRATA_CHECK(index.emplace(ids[r], r).second, "'{}': node id '{}' appears twice", nf.file.string(),
                 excerpt(ids[r]));
  }
  if (identity) {
    std::vector<uint8_t> seen(n, 0);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t v = *try_parse_int(ids[r]);
      identity = identity && !seen[v];  // "1" and "01" are distinct strings but the same number
      seen[v] = 1;
      node_of_row[r] = v;
      index[ids[r]] = v;
    }
  }
  if (!identity) {
    for (int64_t r = 0; r < n; ++r) node_of_row[r] = r;
    for (int64_t r = 0; r < n; ++r) index[ids[r]] = r;
    ds.node_names = ids;
    ds.notes.push_back(fmt::format("node ids of {} are not 0..{}: numbered in file order (the ids kept as names)",
                                   nf.file.filename().string(), n - 1));
  }
  auto scatter_rows = [&](auto& by_row, auto init) {
    std::vector<typename std::decay_t<decltype(by_row)>::value_type> out(n, init);
    for (int64_t r = 0; r < n; ++r) out[node_of_row[r]] = by_row[r];
    return out;
  };

  // Edges, file by file.
  std::vector<int64_t> src, dst;
  std::vector<float> weights;
  std::vector<std::vector<float>> efeats;
  std::optional<int64_t> efeat_width;
  bool any_weight = false, all_weight = true, any_efeat = false, all_efeat = true;
  for (const EdgeFile& ef : meta.edges) {
    auto esrc = open_input(ef.file);
    CsvReader ecsv(*esrc, meta.sep);
    const Header eh = read_header(ecsv, ef.file, "'" + ef.src_field + "' and '" + ef.dst_field + "' columns");
    const int64_t s_col = eh.col(ef.src_field), d_col = eh.col(ef.dst_field);
    STRATA_CHECK(s_col >= 0 && d_col >= 0,
                 "{}: the header lacks '{}' (columns: {}; meta.yaml's src_id_field and dst_id_field name them)",
                 ecsv.where().str(), s_col < 0 ? ef.src_field : ef.dst_field, fmt::join(eh.names, ", "));
    const int64_t w_col = eh.col("weight"), f_col = eh.col("feat");
    any_weight |= w_col >= 0;
    all_weight &= w_col >= 0;
    any_efeat |= f_col >= 0;
    all_efeat &= f_col >= 0;
    while (ecsv.next(row)) {
      if (row.size() == 1 && trim(row[0]).empty()) continue;
      const Where w = ecsv.where();
      STRATA_CHECK(row.size() == eh.names.size(), "{}: {} fields, but the header has {}", w.str(), row.size(),
                   eh.names.size());
      for (const auto& [col, out] : {std::pair{s_col, &src}, std::pair{d_col, &dst}}) {
        const std::string id(trim(row[col]));
        const auto it = index.find(id);
        STRATA_CHECK(it != index.end(), "{}: {} '{}' is not a node of {}", w.str(), eh.names[col], excerpt(id),
                     nf.file.filename().string());
        out->push_back(it->second);
      }
      if (w_col >= 0) weights.push_back(parse_finite_float(trim(row[w_col]), w, "weight"));
      if (f_col >= 0) {
        parse_vector(row[f_col], w, "feat", vec);
        check_width(efeat_width, vec, w, "feat");
        efeats.push_back(vec);
      }
    }
    if (const std::string s = ignored(eh, {ef.src_field, ef.dst_field, "weight", "feat"}, ef.file); !s.empty())
      ds.notes.push_back(s);
  }
  STRATA_CHECK(!any_weight || all_weight, "{}: some edge files have a 'weight' column and some do not",
               meta.path.string());
  STRATA_CHECK(!any_efeat || all_efeat, "{}: some edge files have a 'feat' column and some do not", meta.path.string());
  CooOptions co;
  co.source = meta.edges[0].file.filename().string();
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(src), co,
                             any_weight ? Tensor::from_vector(weights) : Tensor());
  ds.undirected = opt.undirected.value_or(false);
  if (any_efeat && !efeats.empty()) ds.edge_features = stack(efeats, *efeat_width);

  if (feat_col >= 0) ds.features = FeatureMatrix::dense(stack(scatter_rows(feats, std::vector<float>{}), *feat_width));
  if (label_col >= 0) {
    const std::vector<int64_t> by_node = scatter_rows(labels, int64_t{-1});
    ds.task = Task::NodeClassification;
    ds.num_classes = *std::max_element(by_node.begin(), by_node.end()) + 1;
    for (int64_t c = 0; c < ds.num_classes; ++c) ds.class_names.push_back(std::to_string(c));
    ds.labels = Tensor::from_vector(by_node);
  } else {
    ds.notes.push_back(fmt::format("{} has no 'label' column: no labels", nf.file.filename().string()));
  }
  // Splits from the masks; a node in two of them would leak between training and evaluation.
  if (mask_col[0] >= 0 || mask_col[1] >= 0 || mask_col[2] >= 0) {
    std::vector<int64_t> part[3];
    std::vector<int8_t> owner(n, -1);
    static const char* kNames[3] = {"train_mask", "val_mask", "test_mask"};
    for (int k = 0; k < 3; ++k) {
      if (mask_col[k] < 0) continue;
      for (int64_t r = 0; r < n; ++r) {
        if (!masks[k][r]) continue;
        const int64_t v = node_of_row[r];
        STRATA_CHECK(owner[v] < 0, "'{}': node '{}' is in both {} and {}; the splits must not overlap",
                     nf.file.string(), excerpt(ids[r]), kNames[owner[v]], kNames[k]);
        owner[v] = static_cast<int8_t>(k);
        part[k].push_back(v);
      }
      std::sort(part[k].begin(), part[k].end());
    }
    ds.splits.train = Tensor::from_vector(part[0]);
    ds.splits.val = Tensor::from_vector(part[1]);
    ds.splits.test = Tensor::from_vector(part[2]);
    ds.splits.origin = fmt::format("{} columns of {}", "train_mask/val_mask/test_mask", nf.file.filename().string());
  }
  if (const std::string s = ignored(nh, {nf.id_field, "label", "feat", "train_mask", "val_mask", "test_mask"}, nf.file);
      !s.empty())
    ds.notes.push_back(s);
  ds.validate();
  return ds;
}

}  // namespace strata::data
