#include "datasets/ogb.h"

#include <algorithm>
#include <cmath>

#include "datasets/line_reader.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

// OGB master.csv: add_inverse_edge per dataset (true = the graph is undirected).
struct OgbFacts {
  const char* name;
  bool undirected;
};
constexpr OgbFacts kOgbFacts[] = {
    {"ogbn_arxiv", false},  {"ogbn_products", true}, {"ogbn_proteins", true}, {"ogbn_papers100M", false},
    {"ogbl_ddi", true},     {"ogbl_collab", true},   {"ogbl_ppa", true},      {"ogbl_citation2", false},
};

std::string normalized(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// raw/<stem>.csv.gz or raw/<stem>.csv, whichever exists.
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

// Rows of comma-separated numbers, all the same width.
struct NumberTable {
  int64_t rows = 0, cols = -1;
  std::vector<float> values;
};

NumberTable read_table(const fs::path& path, int64_t expected_rows, const char* what) {
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
  STRATA_CHECK(t.rows == expected_rows, "'{}': {} rows, but num-{}-list says {} (the counts disagree)", path.string(),
               t.rows, std::string(what) == "edge feature" ? "edge" : "node", expected_rows);
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

}  // namespace

Dataset load_ogb(const fs::path& folder, const SourceOptions& opt) {
  std::error_code ec;
  STRATA_CHECK(fs::is_directory(folder, ec), "OGB dataset '{}' is not a folder (expected the folder holding raw/)",
               folder.string());
  const fs::path raw = fs::is_directory(folder / "raw", ec) ? folder / "raw" : folder;
  STRATA_CHECK(!fs::exists(raw / "num-node-dict.csv.gz") && !fs::is_directory(raw / "relations"),
               "'{}': heterogeneous OGB layout (num-node-dict.csv.gz, relations/) is not supported; expected the "
               "homogeneous layout with raw/edge.csv.gz",
               folder.string());
  const fs::path edge_path = require_csv(raw, "edge");
  const int64_t n = read_count(require_csv(raw, "num-node-list"));
  const int64_t m_declared = read_count(require_csv(raw, "num-edge-list"));

  Dataset ds;
  const std::string dir_name = (folder.filename().empty() ? folder.parent_path() : folder).filename().string();
  ds.name = opt.name.empty() ? dir_name : opt.name;
  ds.format = "ogb";
  ds.source = folder.string();
  ds.notes = opt.notes;

  // Edges.
  std::vector<int64_t> src, dst;
  src.reserve(static_cast<size_t>(std::min<int64_t>(m_declared, int64_t{1} << 24)));
  dst.reserve(static_cast<size_t>(std::min<int64_t>(m_declared, int64_t{1} << 24)));
  {
    auto in = open_input(edge_path);
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
      STRATA_CHECK(s >= 0 && s < n && d >= 0 && d < n, "{}: edge ({}, {}) has a node id outside [0, {}) (num-node-list)",
                   w.str(), s, d, n);
      src.push_back(s);
      dst.push_back(d);
    }
  }
  const int64_t m = static_cast<int64_t>(src.size());
  STRATA_CHECK(m == m_declared, "'{}': {} edges, but num-edge-list says {} (the counts disagree)", edge_path.string(),
               m, m_declared);
  CooOptions co;
  co.source = edge_path.string();
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(src), co);

  const std::string key = normalized(dir_name);
  std::optional<bool> known;
  for (const auto& f : kOgbFacts)
    if (key == f.name) known = f.undirected;
  ds.undirected = opt.undirected.value_or(known.value_or(false));
  if (!opt.undirected && !known)
    ds.notes.push_back("direction unknown (not in the OGB table): treated as directed src -> dst");

  // Node features and labels.
  if (auto p = find_csv(raw, "node-feat")) {
    NumberTable t = read_table(*p, n, "node feature");
    Tensor x = Tensor::empty({n, std::max<int64_t>(t.cols, 0)}, DType::F32);
    std::copy(t.values.begin(), t.values.end(), x.data<float>());
    ds.features = FeatureMatrix::dense(std::move(x));
  }
  if (auto p = find_csv(raw, "edge-feat")) {
    NumberTable t = read_table(*p, m, "edge feature");
    ds.edge_features = Tensor::empty({m, std::max<int64_t>(t.cols, 0)}, DType::F32);
    std::copy(t.values.begin(), t.values.end(), ds.edge_features.data<float>());
  }
  if (auto p = find_csv(raw, "node-label")) {
    NumberTable t = read_table(*p, n, "node label");
    const std::string label_file = p->string();
    const bool multi = t.cols > 1;
    for (size_t i = 0; i < t.values.size(); ++i) {
      const float v = t.values[i];
      if (std::isnan(v)) continue;
      const Where w{label_file, static_cast<int64_t>(i / static_cast<size_t>(std::max<int64_t>(t.cols, 1))) + 1};
      STRATA_CHECK(v >= 0 && v == std::floor(v), "{}: label {} is not a non-negative integer class id", w.str(), v);
      STRATA_CHECK(!multi || v <= 1, "{}: multi-label value {} is not 0 or 1", w.str(), v);
    }
    if (multi) {
      ds.task = Task::MultiLabelNodeClassification;
      ds.num_classes = t.cols;
      ds.labels = Tensor::empty({n, t.cols}, DType::I64);
      int64_t* y = ds.labels.data<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        bool unknown = false;
        for (int64_t c = 0; c < t.cols; ++c) unknown |= std::isnan(t.values[i * t.cols + c]);
        for (int64_t c = 0; c < t.cols; ++c)
          y[i * t.cols + c] = unknown ? -1 : static_cast<int64_t>(t.values[i * t.cols + c]);
      }
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
  } else if (starts_with(key, "ogbl_")) {
    ds.task = Task::LinkPrediction;
  }
  for (const auto& e : fs::directory_iterator(raw)) {
    const std::string f = e.path().filename().string();
    if (starts_with(f, "node_") || starts_with(f, "graph-label"))
      ds.notes.push_back(fmt::format("raw/{} not loaded (extra attribute the loader does not use)", f));
  }

  // Splits.
  const fs::path split_root = folder / "split";
  if (fs::is_directory(split_root, ec)) {
    std::vector<fs::path> schemes;
    for (const auto& e : fs::directory_iterator(split_root))
      if (e.is_directory()) schemes.push_back(e.path());
    std::sort(schemes.begin(), schemes.end());
    STRATA_CHECK(!schemes.empty(), "'{}': no split scheme folder inside", split_root.string());
    const fs::path scheme = schemes[0];
    if (schemes.size() > 1)
      ds.notes.push_back(fmt::format("{} split schemes; using '{}'", schemes.size(), scheme.filename().string()));
    if (find_csv(scheme, "train")) {
      ds.splits.train = read_ids(require_csv(scheme, "train"), n);
      ds.splits.val = read_ids(require_csv(scheme, "valid"), n);
      ds.splits.test = read_ids(require_csv(scheme, "test"), n);
      ds.splits.origin = "split/" + scheme.filename().string();
    } else {
      ds.notes.push_back(fmt::format("split/{} holds no train.csv.gz (OGB link splits are PyTorch .pt files, which "
                                     "are not read); no split loaded",
                                     scheme.filename().string()));
    }
  } else if (ds.task == Task::LinkPrediction) {
    ds.notes.push_back("no split/ folder: edge.csv.gz is the training edge set; valid/test edges are not included");
  }
  if (ds.undirected) ds.notes.push_back("undirected: each edge stored once as src -> dst (OGB add_inverse_edge)");
  ds.validate();
  return ds;
}

}  // namespace strata::data
