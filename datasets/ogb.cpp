#include "datasets/ogb.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "datasets/line_reader.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

// OGB master.csv: add_inverse_edge (true = the graph is undirected), the split
// scheme OGB evaluates on and its eval metric, per dataset.
struct OgbFacts {
  const char* name;
  bool undirected;
  const char* split;
  const char* metric;
};
constexpr OgbFacts kOgbFacts[] = {
    {"ogbn_arxiv", false, "time", "acc"},         {"ogbn_products", true, "sales_ranking", "acc"},
    {"ogbn_proteins", true, "species", "rocauc"}, {"ogbn_papers100M", false, "time", "acc"},
    {"ogbn_mag", false, "time", "acc"},           {"ogbl_ddi", true, "target", "hits@20"},
    {"ogbl_collab", true, "time", "hits@50"},     {"ogbl_ppa", true, "throughput", "hits@100"},
    {"ogbl_citation2", false, "time", "mrr"},
};

// The dataset's entry in kOgbFacts, by its folder name ("ogbn-arxiv" or "ogbn_arxiv").
const OgbFacts* ogb_facts(const std::string& key) {
  for (const auto& f : kOgbFacts)
    if (key == f.name) return &f;
  return nullptr;
}

std::string normalized(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// <dir>/<stem>.csv.gz or <dir>/<stem>.csv, whichever exists.
std::optional<fs::path> find_csv(const fs::path& dir, const std::string& stem) {
  for (const char* ext : {".csv.gz", ".csv"}) {
    fs::path p = dir / (stem + ext);
    if (fs::exists(p)) return p;
  }
  return std::nullopt;
}

fs::path require_csv(const fs::path& dir, const std::string& stem) {
  auto p = find_csv(dir, stem);
  STRATA_CHECK(p.has_value(), "OGB dataset: required file '{}' (or .csv) is missing", (dir / (stem + ".csv.gz")).string());
  return *p;
}

// The single integer of num-node-list / num-edge-list.
int64_t read_count(const fs::path& path) {
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<int64_t> values;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    values.push_back(parse_int(trim(line), lines.where(), "the count"));
  }
  STRATA_CHECK(!values.empty(), "'{}': empty, expected one count", path.string());
  STRATA_CHECK(values.size() == 1,
               "'{}': {} counts (one per graph): graph-property datasets with several graphs are not supported, "
               "expected one graph",
               path.string(), values.size());
  STRATA_CHECK(values[0] >= 0, "'{}': negative count {}", path.string(), values[0]);
  return values[0];
}

// Rows of comma-separated numbers, all the same width; `counted_by` names the file
// whose count the rows must match.
struct NumberTable {
  int64_t rows = 0, cols = -1;
  std::vector<float> values;
};

NumberTable read_table(const fs::path& path, int64_t expected_rows, const char* what, const char* counted_by) {
  NumberTable t;
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;
  if (expected_rows > 0) t.values.reserve(static_cast<size_t>(std::min<int64_t>(expected_rows, int64_t{1} << 24)));
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    split_fields(line, ',', f);
    const Where w = lines.where();
    if (t.cols < 0) t.cols = static_cast<int64_t>(f.size());
    STRATA_CHECK(static_cast<int64_t>(f.size()) == t.cols, "{}: {} values, expected {} like line 1", w.str(), f.size(),
                 t.cols);
    for (size_t k = 0; k < f.size(); ++k) {
      const std::string_view s = trim(f[k]);
      if (s.empty() || s == "nan" || s == "NaN") {
        t.values.push_back(std::nanf(""));
        continue;
      }
      t.values.push_back(parse_float(s, w, fmt::format("{} column {}", what, k + 1)));
    }
    ++t.rows;
  }
  STRATA_CHECK(t.rows == expected_rows, "'{}': {} rows, but {} says {} (the counts disagree)", path.string(), t.rows,
               counted_by, expected_rows);
  return t;
}

Tensor read_ids(const fs::path& path, int64_t n) {
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<int64_t> ids;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    const int64_t id = parse_int(trim(line), lines.where(), "node id");
    STRATA_CHECK(id >= 0 && id < n, "{}: node id {} outside [0, {})", lines.where().str(), id, n);
    ids.push_back(id);
  }
  return Tensor::from_vector(ids);
}

// edge.csv.gz of `expected` lines `src,dst` with src < n_src and dst < n_dst.
void read_edges(const fs::path& path, int64_t n_src, int64_t n_dst, int64_t expected, const char* counted_by,
                std::vector<int64_t>& src, std::vector<int64_t>& dst) {
  src.reserve(static_cast<size_t>(std::min<int64_t>(expected, int64_t{1} << 24)));
  dst.reserve(static_cast<size_t>(std::min<int64_t>(expected, int64_t{1} << 24)));
  auto in = open_input(path);
  LineReader lines(*in);
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    const Where w = lines.where();
    STRATA_CHECK(comma != std::string_view::npos && line.find(',', comma + 1) == std::string_view::npos,
                 "{}: expected '<src>,<dst>', found '{}'", w.str(), excerpt(line));
    const int64_t s = parse_int(trim(line.substr(0, comma)), w, "source id");
    const int64_t d = parse_int(trim(line.substr(comma + 1)), w, "destination id");
    STRATA_CHECK(s >= 0 && s < n_src && d >= 0 && d < n_dst,
                 "{}: edge ({}, {}) has a node id outside [0, {}) x [0, {}) (node counts)", w.str(), s, d, n_src, n_dst);
    src.push_back(s);
    dst.push_back(d);
  }
  const int64_t m = static_cast<int64_t>(src.size());
  STRATA_CHECK(m == expected, "'{}': {} edges, but {} says {} (the counts disagree)", path.string(), m, counted_by,
               expected);
}

FeatureMatrix read_features(const fs::path& path, int64_t n, const char* counted_by) {
  NumberTable t = read_table(path, n, "node feature", counted_by);
  Tensor x = Tensor::empty({n, std::max<int64_t>(t.cols, 0)}, DType::F32);
  std::copy(t.values.begin(), t.values.end(), x.data<float>());
  return FeatureMatrix::dense(std::move(x));
}

// node-label.csv.gz: one class id per line (NaN = unlabelled), or several 0/1
// columns (multi-label).
void read_labels(const fs::path& path, int64_t n, const char* counted_by, Dataset& ds) {
  NumberTable t = read_table(path, n, "node label", counted_by);
  const std::string file = path.string();
  const bool multi = t.cols > 1;
  for (size_t i = 0; i < t.values.size(); ++i) {
    const float v = t.values[i];
    if (std::isnan(v)) continue;
    const Where w{file, static_cast<int64_t>(i / static_cast<size_t>(std::max<int64_t>(t.cols, 1))) + 1};
    STRATA_CHECK(v >= 0 && v == std::floor(v) && v < static_cast<float>(kMaxClasses),
                 "{}: label {} is not a class id (an integer in [0, {}))", w.str(), v, kMaxClasses);
    STRATA_CHECK(!multi || v <= 1, "{}: multi-label value {} is not 0 or 1", w.str(), v);
  }
  if (multi) {
    ds.task = Task::MultiLabelNodeClassification;
    ds.num_classes = t.cols;
    ds.labels = Tensor::empty({n, t.cols}, DType::I64);
    int64_t* y = ds.labels.data<int64_t>();
    int64_t partial = 0;  // rows with some, not all, columns NaN
    for (int64_t i = 0; i < n; ++i) {
      int64_t missing = 0;
      for (int64_t c = 0; c < t.cols; ++c) missing += std::isnan(t.values[i * t.cols + c]);
      partial += missing > 0 && missing < t.cols;
      for (int64_t c = 0; c < t.cols; ++c)
        y[i * t.cols + c] = missing > 0 ? -1 : static_cast<int64_t>(t.values[i * t.cols + c]);
    }
    if (partial > 0)
      ds.notes.push_back(
          fmt::format("{}: {} node(s) have NaN in some but not all of the {} label columns; they are "
                      "treated as unlabelled",
                      file, partial, t.cols));
  } else {
    ds.task = Task::NodeClassification;
    ds.labels = Tensor::empty({n}, DType::I64);
    int64_t* y = ds.labels.data<int64_t>();
    int64_t max_label = -1;
    for (int64_t i = 0; i < n; ++i) {
      y[i] = std::isnan(t.values[i]) ? -1 : static_cast<int64_t>(t.values[i]);
      max_label = std::max(max_label, y[i]);
    }
    ds.num_classes = max_label + 1;
  }
  for (int64_t c = 0; c < ds.num_classes; ++c) ds.class_names.push_back(std::to_string(c));
}

// split/<scheme>[/<type>]/{train,valid,test}.csv.gz: the scheme OGB evaluates the
// dataset on (master.csv's split) when it is there, else the first in name order.
void read_splits(const fs::path& folder, const std::string& type, int64_t n, Dataset& ds) {
  std::error_code ec;
  const fs::path split_root = folder / "split";
  if (!fs::is_directory(split_root, ec)) {
    if (ds.task == Task::LinkPrediction)
      ds.notes.push_back("no split/ folder: edge.csv.gz is the training edge set; valid/test edges are not included");
    return;
  }
  std::vector<fs::path> schemes;
  for (const auto& e : fs::directory_iterator(split_root))
    if (e.is_directory()) schemes.push_back(e.path());
  std::sort(schemes.begin(), schemes.end());
  STRATA_CHECK(!schemes.empty(), "'{}': no split scheme folder inside", split_root.string());
  const OgbFacts* facts = ogb_facts(
      normalized(folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string()));
  fs::path scheme = schemes[0];
  if (facts && std::find(schemes.begin(), schemes.end(), split_root / facts->split) != schemes.end())
    scheme = split_root / facts->split;
  if (schemes.size() > 1)
    ds.notes.push_back(fmt::format("{} split schemes; using '{}'{}", schemes.size(), scheme.filename().string(),
                                   scheme.filename() == (facts ? facts->split : "")
                                       ? fmt::format(" (OGB's for {})", facts->name)
                                       : " (the first by name; OGB names no scheme for this dataset)"));
  const fs::path dir = type.empty() ? scheme : scheme / type;
  if (find_csv(dir, "train")) {
    ds.splits.train = read_ids(require_csv(dir, "train"), n);
    ds.splits.val = read_ids(require_csv(dir, "valid"), n);
    ds.splits.test = read_ids(require_csv(dir, "test"), n);
    ds.splits.origin = "split/" + scheme.filename().string() + (type.empty() ? "" : "/" + type);
  } else {
    ds.notes.push_back(fmt::format("split/{} holds no train.csv.gz (OGB link splits are PyTorch .pt files, which are "
                                   "not read); no split loaded",
                                   scheme.filename().string()));
  }
}

std::vector<std::string> read_csv_row(const fs::path& path, int line_no) {
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;
  while (lines.next(line))
    if (lines.line_number() == line_no) {
      split_fields(trim(line), ',', f);
      return {f.begin(), f.end()};
    }
  STRATA_FAIL("'{}': expected at least {} lines", path.string(), line_no);
}

void load_hetero(const fs::path& folder, const fs::path& raw, Dataset& ds) {
  // Node types and counts.
  const fs::path dict = require_csv(raw, "num-node-dict");
  const std::vector<std::string> types = read_csv_row(dict, 1), counts_text = read_csv_row(dict, 2);
  STRATA_CHECK(!types.empty() && types.size() == counts_text.size(),
               "'{}': {} node types on line 1 but {} counts on line 2", dict.string(), types.size(), counts_text.size());
  HeteroGraph hg;
  std::vector<int64_t> counts;
  for (size_t t = 0; t < types.size(); ++t) {
    counts.push_back(parse_int(trim(counts_text[t]), {dict.string(), 2}, fmt::format("count of '{}'", types[t])));
    STRATA_CHECK(counts.back() >= 0, "{}:2: negative count for '{}'", dict.string(), types[t]);
    STRATA_CHECK(hg.find_node_type(types[t]) < 0, "{}:1: node type '{}' is listed twice", dict.string(), types[t]);
    hg.add_node_type(types[t], counts.back());
  }
  auto type_id = [&](const std::string& name, const Where& w) {
    const int t = hg.find_node_type(name);
    STRATA_CHECK(t >= 0, "{}: node type '{}' is not in num-node-dict ({})", w.str(), excerpt(name),
                 fmt::join(types, ", "));
    return t;
  };

  // Relations, in triplet-list order.
  const fs::path triplets = require_csv(raw, "triplet-type-list");
  auto in = open_input(triplets);
  LineReader lines(*in);
  std::string_view line;
  std::vector<std::string_view> f;
  std::map<std::string, int64_t> listed;  // "s,r,d" -> the line that listed it
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    split_fields(trim(line), ',', f);
    const Where w = lines.where();
    STRATA_CHECK(f.size() == 3, "{}: expected '<src_type>,<relation>,<dst_type>', found '{}'", w.str(), excerpt(line));
    const std::string s(f[0]), r(f[1]), d(f[2]);
    const auto [seen, first] = listed.emplace(s + "," + r + "," + d, w.line);
    STRATA_CHECK(first, "{}: relation '{},{},{}' is listed again (first on line {}); each is read once", w.str(),
                 excerpt(s), excerpt(r), excerpt(d), seen->second);
    const int st = type_id(s, w), dt = type_id(d, w);
    const fs::path rel_dir = raw / "relations" / (s + "___" + r + "___" + d);
    std::vector<int64_t> src, dst;
    const int64_t declared = read_count(require_csv(rel_dir, "num-edge-list"));
    read_edges(require_csv(rel_dir, "edge"), counts[st], counts[dt], declared, "num-edge-list", src, dst);
    CooOptions co;
    co.source = (rel_dir / "edge.csv.gz").string();
    hg.add_relation(s, hg.find_relation(r) < 0 ? r : s + "___" + r + "___" + d,
                    d, Graph::from_coo(counts[dt], counts[st], Tensor::from_vector(dst), Tensor::from_vector(src), co));
  }
  STRATA_CHECK(hg.num_relations() > 0, "'{}': no relations listed", triplets.string());

  // Per-type features and labels.
  ds.type_features.resize(types.size());
  std::vector<int> labelled;
  for (size_t t = 0; t < types.size(); ++t) {
    if (auto p = find_csv(raw / "node-feat" / types[t], "node-feat"))
      ds.type_features[t] = read_features(*p, counts[t], "num-node-dict");
    if (find_csv(raw / "node-label" / types[t], "node-label")) labelled.push_back(static_cast<int>(t));
  }
  if (!labelled.empty()) {
    const int target = labelled[0];
    if (labelled.size() > 1)
      ds.notes.push_back(fmt::format("labels exist for {} node types; loaded those of '{}'", labelled.size(),
                                     types[target]));
    read_labels(require_csv(raw / "node-label" / types[target], "node-label"), counts[target], "num-node-dict", ds);
    ds.target_node_type = target;
    read_splits(folder, types[target], counts[target], ds);
  } else {
    ds.target_node_type = -1;
  }
  ds.graph = hg.to_homogeneous().graph;
  ds.notes.push_back(fmt::format("heterogeneous OGB layout: {} node types, {} relations (no inverses added)",
                                 hg.num_node_types(), hg.num_relations()));
  ds.hetero = std::move(hg);
}

// mapping/nodeidx2<what>.csv(.gz), OGB's names of the nodes (DrugBank ids for
// ogbl-ddi, MAG paper ids for ogbn-arxiv): a header "node idx,<what>", then one
// "i,name" row per node in order. Absent: the nodes keep their numbers.
void read_node_names(const fs::path& folder, int64_t n, Dataset& ds) {
  std::error_code ec;
  std::optional<fs::path> file;
  for (const auto& e : fs::directory_iterator(folder / "mapping", ec)) {
    const std::string f = e.path().filename().string();
    if (starts_with(f, "nodeidx2") && (f.ends_with(".csv.gz") || f.ends_with(".csv"))) {
      STRATA_CHECK(!file, "OGB dataset '{}': two node-name mappings, '{}' and '{}'; expected one mapping/nodeidx2*.csv",
                   folder.string(), file->filename().string(), f);
      file = e.path();
    }
  }
  if (!file) return;
  auto src = open_input(*file);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(n));
  while (lines.next(line)) {
    if (lines.line_number() == 1) continue;  // "node idx,drug id"
    if (trim(line).empty()) continue;
    const size_t comma = line.find(',');
    STRATA_CHECK(comma != std::string_view::npos, "{}: expected 'node index,name', got '{}'", lines.where().str(),
                 excerpt(line));
    const int64_t idx = parse_int(trim(line.substr(0, comma)), lines.where(), "the node index");
    STRATA_CHECK(idx == static_cast<int64_t>(names.size()),
                 "{}: node index {} where {} was expected (the rows list the nodes in order)", lines.where().str(), idx,
                 names.size());
    names.emplace_back(trim(line.substr(comma + 1)));
  }
  STRATA_CHECK(static_cast<int64_t>(names.size()) == n, "'{}': {} node names, but num-node-list says {} nodes",
               file->string(), names.size(), n);
  ds.node_names = std::move(names);
}

}  // namespace

Dataset load_ogb(const fs::path& folder, const SourceOptions& opt) {
  std::error_code ec;
  STRATA_CHECK(fs::is_directory(folder, ec), "OGB dataset '{}' is not a folder (expected the folder holding raw/)",
               folder.string());
  const fs::path raw = fs::is_directory(folder / "raw", ec) ? folder / "raw" : folder;
  Dataset ds;
  const std::string dir_name = (folder.filename().empty() ? folder.parent_path() : folder).filename().string();
  ds.name = opt.name.empty() ? dir_name : opt.name;
  ds.format = "ogb";
  ds.source = folder.string();
  ds.notes = opt.notes;
  const std::string key = normalized(dir_name);
  std::optional<bool> known;
  if (const OgbFacts* f = ogb_facts(key)) {
    known = f->undirected;
    ds.eval_metric = f->metric;
  }
  ds.undirected = opt.undirected.value_or(known.value_or(false));
  if (!opt.undirected && !known)
    ds.notes.push_back("direction unknown (not in the OGB table): treated as directed src -> dst");

  if (find_csv(raw, "num-node-dict")) {
    load_hetero(folder, raw, ds);
    ds.validate();
    return ds;
  }

  const fs::path edge_path = require_csv(raw, "edge");
  const int64_t n = read_count(require_csv(raw, "num-node-list"));
  const int64_t m = read_count(require_csv(raw, "num-edge-list"));
  std::vector<int64_t> src, dst;
  read_edges(edge_path, n, n, m, "num-edge-list", src, dst);
  CooOptions co;
  co.source = edge_path.string();
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(src), co);

  if (auto p = find_csv(raw, "node-feat")) ds.features = read_features(*p, n, "num-node-list");
  if (auto p = find_csv(raw, "edge-feat")) {
    NumberTable t = read_table(*p, m, "edge feature", "num-edge-list");
    ds.edge_features = Tensor::empty({m, std::max<int64_t>(t.cols, 0)}, DType::F32);
    std::copy(t.values.begin(), t.values.end(), ds.edge_features.data<float>());
  }
  if (auto p = find_csv(raw, "node-label"))
    read_labels(*p, n, "num-node-list", ds);
  else if (starts_with(key, "ogbl_"))
    ds.task = Task::LinkPrediction;
  for (const auto& e : fs::directory_iterator(raw)) {
    const std::string f = e.path().filename().string();
    if (starts_with(f, "node_") || starts_with(f, "graph-label"))
      ds.notes.push_back(fmt::format("raw/{} not loaded (extra attribute the loader does not use)", f));
  }
  read_splits(folder, "", n, ds);
  read_node_names(folder, n, ds);
  if (ds.undirected) ds.notes.push_back("undirected: each edge stored once as src -> dst (OGB add_inverse_edge)");
  ds.validate();
  return ds;
}

}  // namespace strata::data
