#include "datasets/linqs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "datasets/archive.h"
#include "datasets/line_reader.h"
#include "datasets/text_fields.h"

namespace strata::data {
namespace {

struct Content {
  std::string file;
  std::vector<std::string> ids;
  std::vector<float> x;  // rows * dim
  int64_t dim = -1;
  std::vector<std::string> labels;
};

struct Cites {
  std::string file;
  std::vector<std::pair<std::string, std::string>> pairs;  // (cited, citing)
  std::vector<int64_t> lines;
};

float feature_value(std::string_view s, const Where& w, size_t column) {
  if (s.size() == 1 && (s[0] == '0' || s[0] == '1')) return static_cast<float>(s[0] - '0');
  auto v = try_parse_float(s);
  if (!v || !std::isfinite(*v))
    STRATA_FAIL("{}: feature {} is '{}', expected a finite number", w.str(), column, excerpt(s));
  return *v;
}

Content parse_content(ByteSource& src) {
  Content c;
  c.file = src.name();
  LineReader lines(src);
  std::string_view line;
  std::vector<std::string_view> f;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    split_fields(line, '\t', f);
    const Where w = lines.where();
    if (c.dim < 0) {
      STRATA_CHECK(f.size() >= 2, "{}: expected '<paper_id> TAB <features...> TAB <class_label>', found {} field(s)",
                   w.str(), f.size());
      c.dim = static_cast<int64_t>(f.size()) - 2;
    }
    STRATA_CHECK(static_cast<int64_t>(f.size()) == c.dim + 2,
                 "{}: expected {} TAB-separated fields (paper id, {} features, class label) like line 1, found {}",
                 w.str(), c.dim + 2, c.dim, f.size());
    STRATA_CHECK(!f[0].empty(), "{}: empty paper id", w.str());
    STRATA_CHECK(!f.back().empty(), "{}: empty class label", w.str());
    c.ids.emplace_back(f[0]);
    for (size_t k = 1; k + 1 < f.size(); ++k) c.x.push_back(feature_value(f[k], w, k));
    c.labels.emplace_back(f.back());
  }
  STRATA_CHECK(!c.ids.empty(), "'{}': no papers (the file is empty)", c.file);
  return c;
}

Cites parse_cites(ByteSource& src) {
  Cites c;
  c.file = src.name();
  LineReader lines(src);
  std::string_view line;
  std::vector<std::string_view> f;
  while (lines.next(line)) {
    split_blanks(line, f);
    if (f.empty()) continue;
    STRATA_CHECK(f.size() == 2, "{}: expected '<cited_id> TAB <citing_id>', found {} field(s): '{}'",
                 lines.where().str(), f.size(), excerpt(line));
    c.pairs.emplace_back(std::string(f[0]), std::string(f[1]));
    c.lines.push_back(lines.line_number());
  }
  return c;
}

}  // namespace

Dataset load_linqs(const fs::path& path, const SourceOptions& opt) {
  std::optional<Content> content;
  std::optional<Cites> cites;
  auto take = [&](const std::string& base, ByteSource& src) {
    if (ends_with(base, ".content")) {
      STRATA_CHECK(!content, "'{}': more than one .content file ({} and {})", path.string(), content->file,
                   src.name());
      content = parse_content(src);
    } else if (ends_with(base, ".cites")) {
      STRATA_CHECK(!cites, "'{}': more than one .cites file ({} and {})", path.string(), cites->file, src.name());
      cites = parse_cites(src);
    }
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(path)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      const std::string base = p.filename().string();
      if (ends_with(base, ".content") || ends_with(base, ".cites")) {
        auto src = open_input(p);
        take(base, *src);
      }
    }
  } else {
    STRATA_CHECK(fs::exists(path, ec), "LINQS dataset '{}' does not exist (expected a .tgz archive or a folder)",
                 path.string());
    STRATA_CHECK(is_archive_path(path),
                 "'{}': expected a LINQS .tgz archive or a folder holding <name>.content and <name>.cites",
                 path.string());
    for_each_archive_member(path, [&](const std::string& m, ByteSource& src) { take(member_basename(m), src); });
  }
  STRATA_CHECK(content.has_value(), "'{}': no <name>.content file found (LINQS layout: <name>.content + <name>.cites)",
               path.string());
  STRATA_CHECK(cites.has_value(), "'{}': no <name>.cites file found (LINQS layout: <name>.content + <name>.cites)",
               path.string());

  // Node ids: content order, then ids seen only in .cites.
  const int64_t n_content = static_cast<int64_t>(content->ids.size());
  std::unordered_map<std::string, int64_t> index;
  index.reserve(static_cast<size_t>(n_content) * 2);
  for (int64_t i = 0; i < n_content; ++i) {
    auto [it, fresh] = index.emplace(content->ids[i], i);
    STRATA_CHECK(fresh, "{}: paper id '{}' appears twice (rows {} and {})", content->file, excerpt(content->ids[i]),
                 it->second + 1, i + 1);
  }
  std::vector<std::string> names = content->ids;
  std::vector<int64_t> dst, src;
  dst.reserve(cites->pairs.size());
  src.reserve(cites->pairs.size());
  int64_t loops = 0;
  auto node_of = [&](const std::string& id) {
    auto [it, fresh] = index.emplace(id, static_cast<int64_t>(names.size()));
    if (fresh) names.push_back(id);
    return it->second;
  };
  for (const auto& [cited, citing] : cites->pairs) {
    const int64_t d = node_of(cited), s = node_of(citing);
    dst.push_back(d);
    src.push_back(s);
    loops += d == s;
  }
  const int64_t n = static_cast<int64_t>(names.size());

  Dataset ds;
  ds.name = opt.name.empty() ? path.stem().string() : opt.name;
  ds.format = "linqs";
  ds.source = path.string();
  ds.task = Task::NodeClassification;
  CooOptions co;
  co.source = cites->file;
  ds.graph = Graph::from_coo(n, n, Tensor::from_vector(dst), Tensor::from_vector(src), co);
  ds.undirected = opt.undirected.value_or(false);

  Tensor x = Tensor::zeros({n, content->dim}, DType::F32);
  std::copy(content->x.begin(), content->x.end(), x.data<float>());
  ds.features = FeatureMatrix::dense(std::move(x));

  std::map<std::string, int64_t> classes;
  for (const auto& l : content->labels) classes.emplace(l, 0);
  for (auto& [name, id] : classes) {
    id = static_cast<int64_t>(ds.class_names.size());
    ds.class_names.push_back(name);
  }
  ds.num_classes = static_cast<int64_t>(classes.size());
  ds.labels = Tensor::full({n}, DType::I64, -1);
  for (int64_t i = 0; i < n_content; ++i) ds.labels.data<int64_t>()[i] = classes.at(content->labels[i]);
  ds.node_names = std::move(names);

  ds.notes = opt.notes;
  ds.notes.push_back(fmt::format("{} papers with content, {} citation lines (edge citing -> cited)", n_content,
                                 cites->pairs.size()));
  if (n > n_content)
    ds.notes.push_back(fmt::format("{} cited ids have no .content row: added with zero features and label -1",
                                   n - n_content));
  if (loops > 0) ds.notes.push_back(fmt::format("{} citation lines are self-loops (kept)", loops));
  ds.notes.push_back(
      "no train/val/test split in the LINQS files (Planetoid's public split, the one published accuracies use, comes "
      "with Planetoid's ind.<name>.* files: scripts/planetoid_convert.py makes them a folder Strata reads)");
  ds.validate();
  return ds;
}

}  // namespace strata::data
