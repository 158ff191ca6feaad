#include "datasets/musae.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/json_input.h"
#include "datasets/edge_list.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

std::optional<fs::path> find_suffix(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> hits;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && ends_with(e.path().filename().string(), suffix)) hits.push_back(e.path());
  std::sort(hits.begin(), hits.end());
  STRATA_CHECK(hits.size() <= 1, "'{}': several files end in '{}' ({} and {}); expected one", dir.string(), suffix,
               hits[0].filename().string(), hits[1].filename().string());
  if (hits.empty()) return std::nullopt;
  return hits[0];
}

struct Target {
  int64_t rows = 0;
  std::string column;              // the label/target column used ("" = none)
  std::vector<std::string> value;  // by node id
};

Target read_target(const fs::path& path) {
  auto src = open_input(path);
  CsvReader csv(*src);
  std::vector<std::string> row;
  STRATA_CHECK(csv.next(row), "'{}': empty, expected a header line with an 'id' column", path.string());
  const std::vector<std::string> header = row;
  const auto id_col = std::find(header.begin(), header.end(), "id") - header.begin();
  STRATA_CHECK(id_col < static_cast<int64_t>(header.size()), "{}: the header has no 'id' column (columns: {})",
               csv.where().str(), fmt::join(header, ", "));
  int64_t label_col = -1;
  for (const char* name : {"page_type", "ml_target", "target"}) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it != header.end()) {
      label_col = it - header.begin();
      break;
    }
  }
  Target t;
  if (label_col >= 0) t.column = header[label_col];
  std::vector<std::pair<int64_t, std::string>> rows;
  while (csv.next(row)) {
    if (row.size() == 1 && row[0].empty()) continue;
    const Where w = csv.where();
    STRATA_CHECK(row.size() == header.size(), "{}: {} fields, but the header has {}", w.str(), row.size(),
                 header.size());
    const int64_t id = parse_int(trim(row[id_col]), w, "id");
    rows.emplace_back(id, label_col >= 0 ? row[label_col] : std::string());
  }
  t.rows = static_cast<int64_t>(rows.size());
  t.value.resize(rows.size());
  std::vector<uint8_t> seen(rows.size(), 0);
  for (const auto& [id, v] : rows) {
    STRATA_CHECK(id >= 0 && id < t.rows, "'{}': id {} outside 0..{} (ids must number the {} rows from 0)",
                 path.string(), id, t.rows - 1, t.rows);
    STRATA_CHECK(!seen[id], "'{}': id {} appears twice", path.string(), id);
    seen[id] = 1;
    t.value[id] = v;
  }
  return t;
}

FeatureMatrix read_json_features(const fs::path& path, int64_t n, int64_t& empty_rows) {
  std::string text;
  {
    auto src = open_input(path);
    text = read_all(*src);
  }
  const nlohmann::json j =
      parse_user_json(text, fmt::format("'{}'", path.string()), "{\"<node id>\": [feature indices], ...}");
  STRATA_CHECK(j.is_object(), "'{}': expected a JSON object mapping node ids to feature index lists, found a {}",
               path.string(), j.type_name());
  std::vector<std::vector<int32_t>> rows(static_cast<size_t>(n));
  std::vector<char> given(static_cast<size_t>(n), 0);  // "0" and "00" name one node
  int64_t max_index = -1;
  for (auto it = j.begin(); it != j.end(); ++it) {
    auto id = try_parse_int(it.key());
    STRATA_CHECK(id && *id >= 0 && *id < n, "'{}': key \"{}\" is not a node id in [0, {})", path.string(),
                 excerpt(it.key()), n);
    STRATA_CHECK(!given[static_cast<size_t>(*id)],
                 "'{}': node {} is given twice (key \"{}\" is another spelling of an earlier key)", path.string(), *id,
                 excerpt(it.key()));
    given[static_cast<size_t>(*id)] = 1;
    STRATA_CHECK(it.value().is_array(), "'{}': node \"{}\": expected a list of feature indices, found a {}",
                 path.string(), it.key(), it.value().type_name());
    auto& r = rows[*id];
    for (const auto& x : it.value()) {
      STRATA_CHECK(x.is_number_integer() && x.get<int64_t>() >= 0 && x.get<int64_t>() < (int64_t{1} << 31),
                   "'{}': node \"{}\": feature index {} is not a non-negative integer", path.string(), it.key(),
                   excerpt(x.dump()));
      r.push_back(static_cast<int32_t>(x.get<int64_t>()));
      max_index = std::max<int64_t>(max_index, r.back());
    }
  }
  std::vector<int64_t> indptr(static_cast<size_t>(n) + 1, 0);
  std::vector<int32_t> indices;
  empty_rows = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto& r = rows[i];
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    empty_rows += r.empty();
    indices.insert(indices.end(), r.begin(), r.end());
    indptr[i + 1] = static_cast<int64_t>(indices.size());
  }
  return FeatureMatrix::sparse(n, max_index + 1, Tensor::from_vector(indptr), Tensor::from_vector(indices));
}

}  // namespace

Dataset load_musae(const fs::path& folder, const SourceOptions& opt) {
  std::error_code ec;
  STRATA_CHECK(fs::is_directory(folder, ec), "MUSAE dataset '{}' is not a folder (expected the folder holding "
               "<name>_edges.csv)", folder.string());
  const auto edges_path = find_suffix(folder, "_edges.csv");
  STRATA_CHECK(edges_path.has_value(), "'{}': no *_edges.csv file (MUSAE layout: <name>_edges.csv, "
               "<name>_target.csv, <name>_features.json)", folder.string());
  const auto target_path = find_suffix(folder, "_target.csv");
  const auto features_path = find_suffix(folder, "_features.json");

  Dataset ds;
  ds.name = opt.name.empty() ? folder.filename().string() : opt.name;
  ds.format = "musae";
  ds.source = folder.string();
  ds.notes = opt.notes;

  EdgeRecords rec = read_edge_records(*edges_path, EdgeListStyle::Csv);
  const int64_t m = static_cast<int64_t>(rec.src.size());
  STRATA_CHECK(m > 0, "'{}': no edges", rec.file);
  std::optional<Target> target;
  if (target_path) target = read_target(*target_path);
  int64_t n = 0;
  if (target) {
    n = target->rows;
  } else {
    for (int64_t k = 0; k < m; ++k) n = std::max({n, rec.src[k] + 1, rec.dst[k] + 1});
  }
  for (int64_t k = 0; k < m; ++k)
    STRATA_CHECK(rec.src[k] >= 0 && rec.src[k] < n && rec.dst[k] >= 0 && rec.dst[k] < n,
                 "{}:{}: edge ({}, {}) names a node outside 0..{} ({} nodes{})", rec.file, rec.lines[k], rec.src[k],
                 rec.dst[k], n - 1, n, target ? " in the target file" : "");
  CooOptions co;
  co.source = rec.file;
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(rec.dst), Tensor::from_vector(rec.src), co,
                             rec.weights.empty() ? Tensor() : Tensor::from_vector(rec.weights));
  ds.undirected = opt.undirected.value_or(true);

  if (target && (target->column == "page_type" || target->column == "ml_target")) {
    ds.task = Task::NodeClassification;
    std::map<std::string, int64_t> classes;
    for (const auto& v : target->value) classes.emplace(v, 0);
    // Numeric class values sort numerically ("2" before "10").
    std::vector<std::string> names;
    for (const auto& [v, _] : classes) names.push_back(v);
    const bool numeric = std::all_of(names.begin(), names.end(), [](const std::string& s) { return try_parse_int(s).has_value(); });
    if (numeric)
      std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return *try_parse_int(a) < *try_parse_int(b);
      });
    for (size_t i = 0; i < names.size(); ++i) classes[names[i]] = static_cast<int64_t>(i);
    ds.class_names = names;
    ds.num_classes = static_cast<int64_t>(names.size());
    ds.labels = Tensor::empty({n}, DType::I64);
    for (int64_t i = 0; i < n; ++i) ds.labels.data<int64_t>()[i] = classes.at(target->value[i]);
    ds.notes.push_back(fmt::format("classes from column '{}' of {}", target->column, target_path->filename().string()));
  } else if (target && target->column == "target") {
    ds.task = Task::NodeRegression;
    ds.targets = Tensor::empty({n}, DType::F32);
    const std::string target_file = target_path->string();
    for (int64_t i = 0; i < n; ++i)
      ds.targets.data<float>()[i] = parse_float(trim(target->value[i]), Where{target_file, 0},
                                                fmt::format("target of node {}", i));
    ds.notes.push_back(fmt::format("column 'target' of {} is a continuous value (regression target), not a class",
                                   target_path->filename().string()));
  } else if (target) {
    ds.notes.push_back(fmt::format("{} has no known label column (page_type, ml_target, target); no labels",
                                   target_path->filename().string()));
  } else {
    ds.notes.push_back("no *_target.csv: no labels");
  }
  if (features_path) {
    int64_t empty_rows = 0;
    ds.features = read_json_features(*features_path, n, empty_rows);
    if (empty_rows > 0) ds.notes.push_back(fmt::format("{} nodes have no features in the JSON file", empty_rows));
  } else {
    ds.notes.push_back("no *_features.json: no node features");
  }
  ds.validate();
  return ds;
}

}  // namespace strata::data
