#include "datasets/rdf.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/ranges.h>

#include "datasets/line_reader.h"
#include "datasets/ntriples.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

// Predicates that encode the label, by the label column naming them (R-GCN's lists).
const std::map<std::string, std::vector<std::string>>& target_predicates() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"label_affiliation",
       {"http://swrc.ontoware.org/ontology#affiliation", "http://swrc.ontoware.org/ontology#employs"}},
      {"label_mutagenic", {"http://dl-learner.org/carcinogenesis#isMutagenic"}},
      {"label_lithogenesis", {"http://data.bgs.ac.uk/ref/Lexicon/hasLithogenesis"}},
      {"label_cateogory",
       {"http://purl.org/collections/nl/am/objectCategory", "http://purl.org/collections/nl/am/material"}},
  };
  return table;
}

struct LabelRow {
  std::string entity;  // IRI as written (no angle brackets)
  std::string label;
  int64_t line = 0;
};

struct LabelFile {
  fs::path path;
  std::string entity_column, label_column;
  std::vector<LabelRow> rows;
};

LabelFile read_label_file(const fs::path& path) {
  LabelFile lf;
  lf.path = path;
  auto src = open_input(path);
  LineReader lines(*src);
  std::string_view line;
  std::vector<std::string_view> f;
  while (lines.next(line) && trim(line).empty()) {
  }
  STRATA_CHECK(lines.line_number() > 0 && !trim(line).empty(),
               "'{}': empty, expected a header row (id, <entity column>, label_<name>)", path.string());
  split_fields(line, '\t', f);
  std::vector<std::string> header;
  for (auto x : f) header.emplace_back(trim(x));
  int64_t id_col = -1, label_col = -1, entity_col = -1;
  for (size_t k = 0; k < header.size(); ++k) {
    if (header[k] == "id") id_col = static_cast<int64_t>(k);
    else if (starts_with(header[k], "label_")) label_col = static_cast<int64_t>(k);
    else entity_col = static_cast<int64_t>(k);
  }
  STRATA_CHECK(header.size() == 3 && id_col >= 0 && label_col >= 0 && entity_col >= 0,
               "{}: header is '{}', expected three TAB-separated columns: id, the entity column and label_<name>",
               lines.where().str(), fmt::join(header, "\t"));
  lf.entity_column = header[entity_col];
  lf.label_column = header[label_col];
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    split_fields(line, '\t', f);
    const Where w = lines.where();
    STRATA_CHECK(f.size() == 3, "{}: {} fields, expected 3 TAB-separated fields ({}, {}, {})", w.str(), f.size(),
                 header[0], header[1], header[2]);
    parse_integral(trim(f[id_col]), w, "id");
    const std::string_view entity = trim(f[entity_col]), label = trim(f[label_col]);
    STRATA_CHECK(!entity.empty(), "{}: empty {} column", w.str(), lf.entity_column);
    STRATA_CHECK(!label.empty(), "{}: empty {} column", w.str(), lf.label_column);
    lf.rows.push_back({std::string(entity), std::string(label), w.line});
  }
  return lf;
}

std::vector<fs::path> files_matching(const fs::path& dir, std::string_view prefix, std::string_view suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (e.is_regular_file() && starts_with(f, prefix) && ends_with(f, suffix)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Dataset load_rdf(const fs::path& path, const SourceOptions& opt) {
  std::error_code ec;
  STRATA_CHECK(fs::exists(path, ec), "RDF dataset '{}' does not exist", path.string());
  const bool is_dir = fs::is_directory(path, ec);
  const fs::path dir = is_dir ? path : path.parent_path();
  const std::string dir_name = dir.filename().string();

  fs::path graph_path = path;
  if (is_dir) {
    std::vector<fs::path> nts = files_matching(dir, "", ".nt.gz");
    for (auto& p : files_matching(dir, "", ".nt")) nts.push_back(p);
    std::error_code ec;
    const bool has_labels = !files_matching(dir, "", ".tsv").empty();
    STRATA_CHECK(
        !nts.empty(), "RDF graph file missing: expected '{}' (N-Triples, .nt or .nt.gz) in '{}', which {}",
        (dir / (dir_name + "_stripped.nt.gz")).string(), dir.string(),
        has_labels ? fmt::format("holds only the label files: the {} graph is not included in this data root", dir_name)
        : fs::is_empty(dir, ec) ? std::string("is empty")
                                : std::string("holds no N-Triples file"));
    STRATA_CHECK(nts.size() == 1, "'{}': {} N-Triples files ({} and {}); expected one", dir.string(), nts.size(),
                 nts[0].filename().string(), nts[1].filename().string());
    graph_path = nts[0];
  }

  // Labels first: their column names say which target predicates to strip.
  std::vector<fs::path> train_files = files_matching(dir, "trainingSet", ".tsv");
  std::vector<fs::path> test_files = files_matching(dir, "testSet", ".tsv");
  STRATA_CHECK(train_files.size() <= 1 && test_files.size() <= 1, "'{}': several trainingSet*.tsv or testSet*.tsv files",
               dir.string());
  std::optional<LabelFile> train, test;
  if (!train_files.empty()) train = read_label_file(train_files[0]);
  if (!test_files.empty()) test = read_label_file(test_files[0]);
  std::set<std::string> strip;
  for (const auto* lf : {train ? &*train : nullptr, test ? &*test : nullptr}) {
    if (!lf) continue;
    auto it = target_predicates().find(lf->label_column);
    if (it != target_predicates().end()) strip.insert(it->second.begin(), it->second.end());
  }

  // Triples, with terms numbered in order of appearance for now.
  std::unordered_map<std::string, int32_t> term_index;
  std::vector<std::string> terms;
  std::unordered_map<std::string, int32_t> pred_index;
  std::vector<std::string> preds;
  std::vector<int32_t> ts, tp, to;
  std::map<std::string, int64_t> stripped;
  {
    auto src = open_input(graph_path);
    LineReader lines(*src);
    std::string_view line;
    Triple t;
    auto term_id = [&](const Term& term) {
      std::string key = term.canonical();
      auto [it, fresh] = term_index.emplace(std::move(key), static_cast<int32_t>(terms.size()));
      if (fresh) terms.push_back(it->first);
      return it->second;
    };
    while (lines.next(line)) {
      if (!parse_ntriples_line(line, lines.where(), t)) continue;
      if (strip.count(t.predicate.value)) {
        ++stripped[t.predicate.value];
        continue;
      }
      ts.push_back(term_id(t.subject));
      to.push_back(term_id(t.object));
      auto [it, fresh] = pred_index.emplace(t.predicate.value, static_cast<int32_t>(preds.size()));
      if (fresh) preds.push_back(t.predicate.value);
      tp.push_back(it->second);
    }
  }
  STRATA_CHECK(!ts.empty(), "'{}': no triples", graph_path.string());

  // Deterministic numbering: sorted canonical terms, sorted predicate IRIs.
  const int64_t n = static_cast<int64_t>(terms.size());
  std::vector<int32_t> order(terms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return terms[a] < terms[b]; });
  std::vector<int32_t> term_rank(terms.size());
  std::vector<std::string> names(terms.size());
  for (size_t r = 0; r < order.size(); ++r) {
    term_rank[order[r]] = static_cast<int32_t>(r);
    names[r] = terms[order[r]];
  }
  std::vector<int32_t> pred_order(preds.size());
  for (size_t i = 0; i < pred_order.size(); ++i) pred_order[i] = static_cast<int32_t>(i);
  std::sort(pred_order.begin(), pred_order.end(), [&](int32_t a, int32_t b) { return preds[a] < preds[b]; });
  std::vector<int32_t> pred_rank(preds.size());
  for (size_t r = 0; r < pred_order.size(); ++r) pred_rank[pred_order[r]] = static_cast<int32_t>(r);

  std::vector<std::vector<int64_t>> rel_src(preds.size()), rel_dst(preds.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    rel_src[pred_rank[tp[k]]].push_back(term_rank[ts[k]]);
    rel_dst[pred_rank[tp[k]]].push_back(term_rank[to[k]]);
  }
  HeteroGraph hg;
  hg.add_node_type("entity", n);
  int64_t unique_triples = 0;
  for (size_t r = 0; r < preds.size(); ++r) {
    CooOptions co;
    co.duplicates = DuplicatePolicy::KeepFirst;
    co.source = graph_path.string() + " predicate " + preds[pred_order[r]];
    Graph adj = Graph::from_coo(n, n, Tensor::from_vector(rel_dst[r]), Tensor::from_vector(rel_src[r]), co);
    unique_triples += adj.nnz();
    hg.add_relation("entity", preds[pred_order[r]], "entity", std::move(adj));
  }
  const int64_t num_predicates = hg.num_relations();
  hg.add_inverse_relations();

  Dataset ds;
  ds.name = opt.name.empty() ? dir_name : opt.name;
  ds.format = "rdf";
  ds.source = is_dir ? dir.string() : graph_path.string();
  ds.notes = opt.notes;
  ds.graph = hg.to_homogeneous().graph;
  ds.undirected = opt.undirected.value_or(false);
  ds.target_node_type = 0;
  ds.type_features.resize(1);  // entities are featureless (R-GCN uses one-hot ids)
  ds.hetero = std::move(hg);
  ds.node_names = std::move(names);
  ds.notes.push_back(fmt::format("{} triples, {} entities (IRIs, blank nodes and literals), {} predicates + {} inverse "
                                 "relations (rev-*)",
                                 unique_triples, n, num_predicates, num_predicates));
  if (static_cast<int64_t>(ts.size()) != unique_triples)
    ds.notes.push_back(fmt::format("{} duplicate triples merged", static_cast<int64_t>(ts.size()) - unique_triples));
  for (const auto& [p, k] : stripped)
    ds.notes.push_back(fmt::format("removed {} triples with the target predicate {}", k, p));

  if (!train && !test) {
    ds.task = Task::None;
    ds.notes.push_back(fmt::format("no trainingSet*.tsv / testSet*.tsv in '{}': no labels", dir.string()));
    ds.validate();
    return ds;
  }
  // Classes: sorted label values over both files.
  std::map<std::string, int64_t> classes;
  for (const auto* lf : {train ? &*train : nullptr, test ? &*test : nullptr})
    if (lf)
      for (const auto& r : lf->rows) classes.emplace(r.label, 0);
  for (auto& [name, id] : classes) {
    id = static_cast<int64_t>(ds.class_names.size());
    ds.class_names.push_back(name);
  }
  ds.num_classes = static_cast<int64_t>(classes.size());
  ds.task = Task::NodeClassification;
  ds.labels = Tensor::full({n}, DType::I64, -1);
  int64_t* y = ds.labels.data<int64_t>();
  std::vector<std::string> where_labelled(static_cast<size_t>(n));
  auto assign = [&](const LabelFile& lf) {
    std::vector<int64_t> ids;
    for (const auto& r : lf.rows) {
      const std::string key = "<" + r.entity + ">";
      auto it = term_index.find(key);
      const std::string here = fmt::format("{}:{}", lf.path.string(), r.line);
      STRATA_CHECK(it != term_index.end(), "{}: entity '{}' is not in the graph ({})", here, excerpt(r.entity),
                   graph_path.filename().string());
      const int64_t id = term_rank[it->second];
      STRATA_CHECK(where_labelled[id].empty(), "{}: entity '{}' is already labelled at {}", here, r.entity,
                   where_labelled[id]);
      where_labelled[id] = here;
      y[id] = classes.at(r.label);
      ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    return Tensor::from_vector(ids);
  };
  if (train) ds.splits.train = assign(*train);
  if (test) ds.splits.test = assign(*test);
  ds.splits.origin = fmt::format("{} / {}", train ? train->path.filename().string() : "-",
                                 test ? test->path.filename().string() : "-");
  ds.notes.push_back("no validation split in the files (R-GCN validates on part of the training set)");
  ds.validate();
  return ds;
}

}  // namespace strata::data
