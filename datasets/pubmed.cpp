#include "datasets/pubmed.h"

#include <algorithm>
#include <unordered_map>

#include "datasets/line_reader.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

std::optional<fs::path> find_one(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> hits;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && ends_with(e.path().filename().string(), suffix)) hits.push_back(e.path());
  std::sort(hits.begin(), hits.end());
  STRATA_CHECK(hits.size() <= 1, "'{}': {} files end in '{}' ({} and {}); expected one", dir.string(), hits.size(),
               suffix, hits[0].filename().string(), hits[1].filename().string());
  if (hits.empty()) return std::nullopt;
  return hits[0];
}

std::string_view paper_id(std::string_view field, const Where& w, const char* which) {
  STRATA_CHECK(starts_with(field, "paper:") && field.size() > 6, "{}: {} endpoint is '{}', expected 'paper:<pmid>'",
               w.str(), which, excerpt(field));
  return field.substr(6);
}

struct NodeFile {
  std::vector<std::string> ids;
  std::vector<std::string> class_values;  // from the cat=... schema entry
  std::vector<int64_t> labels;
  std::vector<std::string> feature_names;
  std::vector<float> x;  // rows * dim
};

NodeFile parse_node_file(const fs::path& path) {
  NodeFile nf;
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;
  STRATA_CHECK(lines.next(line) && starts_with(trim(line), "NODE"), "{}:1: expected the header 'NODE<TAB>paper'",
               path.string());
  STRATA_CHECK(lines.next(line), "{}:2: expected the schema line (cat=...:label, numeric:<word>:0.0, ...)",
               path.string());
  split_fields(trim(line), '\t', f);
  std::unordered_map<std::string, int64_t> feature_index;
  for (std::string_view field : f) {
    if (starts_with(field, "cat=")) {
      const size_t colon = field.rfind(':');
      STRATA_CHECK(colon != std::string_view::npos && field.substr(colon + 1) == "label",
                   "{}: schema entry '{}' is not 'cat=<values>:label'", lines.where().str(), excerpt(field));
      std::vector<std::string_view> vals;
      split_fields(field.substr(4, colon - 4), ',', vals);
      for (auto v : vals) nf.class_values.emplace_back(v);
    } else if (starts_with(field, "numeric:")) {
      const std::string_view rest = field.substr(8);
      const size_t colon = rest.find(':');
      const std::string name(rest.substr(0, colon));
      STRATA_CHECK(!name.empty() && feature_index.emplace(name, static_cast<int64_t>(nf.feature_names.size())).second,
                   "{}: schema entry '{}' is empty or repeats a feature name", lines.where().str(), excerpt(field));
      nf.feature_names.push_back(name);
    } else if (starts_with(field, "string:")) {
      // Free text (the summary); not a feature.
    } else {
      STRATA_FAIL("{}: unknown schema entry '{}' (expected cat=..., numeric:... or string:...)", lines.where().str(),
                  excerpt(field));
    }
  }
  STRATA_CHECK(!nf.class_values.empty(), "{}: the schema line has no 'cat=<values>:label' entry", lines.where().str());
  const int64_t dim = static_cast<int64_t>(nf.feature_names.size());
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    split_fields(line, '\t', f);
    const Where w = lines.where();
    STRATA_CHECK(f.size() >= 2 && starts_with(f[1], "label="),
                 "{}: expected '<pmid> TAB label=<class> TAB <word>=<value> ...', found '{}'", w.str(), excerpt(line));
    nf.ids.emplace_back(f[0]);
    const std::string_view lv = f[1].substr(6);
    auto it = std::find(nf.class_values.begin(), nf.class_values.end(), lv);
    STRATA_CHECK(it != nf.class_values.end(), "{}: label '{}' is not one of the schema's classes", w.str(), excerpt(lv));
    nf.labels.push_back(it - nf.class_values.begin());
    const size_t row = nf.x.size();
    nf.x.resize(row + static_cast<size_t>(dim), 0.0f);
    for (size_t k = 2; k < f.size(); ++k) {
      const size_t eq = f[k].find('=');
      STRATA_CHECK(eq != std::string_view::npos, "{}: field {} is '{}', expected <name>=<value>", w.str(), k + 1,
                   excerpt(f[k]));
      const std::string_view key = f[k].substr(0, eq);
      if (key == "summary") continue;
      auto fi = feature_index.find(std::string(key));
      STRATA_CHECK(fi != feature_index.end(), "{}: feature '{}' is not declared on the schema line", w.str(),
                   excerpt(key));
      nf.x[row + static_cast<size_t>(fi->second)] = parse_float(f[k].substr(eq + 1), w, fmt::format("feature '{}'", key));
    }
  }
  return nf;
}

}  // namespace

Dataset load_pubmed(const fs::path& folder, const SourceOptions& opt) {
  std::error_code ec;
  STRATA_CHECK(fs::is_directory(folder, ec), "Pubmed dataset '{}' is not a folder (expected the folder holding "
               "Pubmed-Diabetes.DIRECTED.cites.tab)", folder.string());
  const auto cites_path = find_one(folder, ".DIRECTED.cites.tab");
  STRATA_CHECK(cites_path.has_value(), "'{}': no *.DIRECTED.cites.tab file (the Pubmed-Diabetes edge list)",
               folder.string());
  const auto node_path = find_one(folder, ".NODE.paper.tab");

  Dataset ds;
  ds.name = opt.name.empty() ? folder.filename().string() : opt.name;
  ds.format = "pubmed";
  ds.source = folder.string();
  ds.notes = opt.notes;

  std::unordered_map<std::string, int64_t> index;
  std::vector<std::string> names;
  NodeFile nf;
  if (node_path) {
    nf = parse_node_file(*node_path);
    for (size_t i = 0; i < nf.ids.size(); ++i) {
      STRATA_CHECK(index.emplace(nf.ids[i], static_cast<int64_t>(i)).second, "{}: paper '{}' appears twice",
                   node_path->string(), nf.ids[i]);
    }
    names = nf.ids;
  }
  const int64_t n_node_rows = static_cast<int64_t>(names.size());

  auto src = open_input(*cites_path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;
  std::vector<int64_t> dst, srcs;
  bool header = true;
  auto node_of = [&](std::string_view id) {
    auto [it, fresh] = index.emplace(std::string(id), static_cast<int64_t>(names.size()));
    if (fresh) names.emplace_back(id);
    return it->second;
  };
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (header && (starts_with(t, "DIRECTED") || starts_with(t, "UNDIRECTED") || t == "NO_FEATURES")) continue;
    header = false;
    split_fields(t, '\t', f);
    const Where w = lines.where();
    STRATA_CHECK(f.size() == 4 && f[2] == "|",
                 "{}: expected '<edge_id> TAB paper:<pmid> TAB | TAB paper:<pmid>', found '{}'", w.str(), excerpt(t));
    const int64_t s = node_of(paper_id(f[1], w, "source"));
    const int64_t d = node_of(paper_id(f[3], w, "destination"));
    srcs.push_back(s);
    dst.push_back(d);
  }
  STRATA_CHECK(!dst.empty(), "'{}': no edges", cites_path->string());
  const int64_t n = static_cast<int64_t>(names.size());
  CooOptions co;
  co.source = cites_path->string();
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(srcs), co);
  ds.undirected = opt.undirected.value_or(false);
  ds.node_names = std::move(names);

  if (node_path) {
    ds.task = Task::NodeClassification;
    const int64_t dim = static_cast<int64_t>(nf.feature_names.size());
    Tensor x = Tensor::zeros({n, dim}, DType::F32);
    std::copy(nf.x.begin(), nf.x.end(), x.data<float>());
    ds.features = FeatureMatrix::dense(std::move(x));
    ds.labels = Tensor::full({n}, DType::I64, -1);
    std::copy(nf.labels.begin(), nf.labels.end(), ds.labels.data<int64_t>());
    ds.num_classes = static_cast<int64_t>(nf.class_values.size());
    ds.class_names = nf.class_values;
    if (n > n_node_rows)
      ds.notes.push_back(fmt::format("{} papers occur only in the cites file: added with zero features and label -1",
                                     n - n_node_rows));
  } else {
    ds.task = Task::None;
    ds.notes.push_back(fmt::format("features and labels missing: Pubmed NODE file (*.NODE.paper.tab) not in '{}'",
                                   folder.string()));
  }
  ds.notes.push_back("edges run left -> right as written in the DIRECTED cites file");
  ds.validate();
  return ds;
}

}  // namespace strata::data
