#include "datasets/registry.h"

#include <algorithm>
#include <cctype>

#include <fmt/ranges.h>

#include "core/error.h"
#include "core/file_util.h"
#include "datasets/archive.h"
#include "datasets/generator_params.h"
#include "datasets/text_fields.h"

namespace strata::data {

const std::vector<KnownDataset>& known_datasets() {
  static const std::vector<KnownDataset> table = {
      {"cora", {}, "linqs", "citation/cora.tgz", false, "Cora citation graph (LINQS), 7 classes", {}},
      {"citeseer", {}, "linqs", "citation/citeseer.tgz", false, "Citeseer citation graph (LINQS), 6 classes", {}},
      {"pubmed", {"pubmed-diabetes"}, "pubmed", "citation/pubmed-diabetes", false, "Pubmed-Diabetes citation graph", {}},
      {"aifb", {}, "rdf", "rdf/aifb", false, "AIFB RDF entity classification (R-GCN)", {}},
      {"mutag", {}, "rdf", "rdf/mutag", false, "MUTAG RDF entity classification (R-GCN)", {}},
      {"bgs", {}, "rdf", "rdf/bgs", false, "BGS RDF entity classification (R-GCN)", {}},
      {"am", {}, "rdf", "rdf/am", false, "AM RDF entity classification (R-GCN)", {}},
      {"acm", {}, "hgb", "hgb/ACM.zip", false, "HGB ACM heterograph, 3 classes", {}},
      {"dblp", {}, "hgb", "hgb/DBLP.zip", false, "HGB DBLP heterograph, 4 classes", {}},
      {"imdb", {}, "hgb", "hgb/IMDB.zip", false, "HGB IMDB heterograph, 5 classes (multi-label)", {}},
      {"ddi", {"ogbl_ddi", "ogbl-ddi"}, "ogb", "ogb/ogbl_ddi", true, "OGB ogbl-ddi drug interactions (link prediction)", {}},
      {"karate", {}, "mtx", "suitesparse/karate.mtx", true, "Zachary's karate club (SuiteSparse)", {}},
      {"bcsstk13", {}, "mtx", "suitesparse/bcsstk13.mtx", true, "HB/bcsstk13 stiffness matrix (SuiteSparse)", {}},
      {"ca-grqc", {}, "mtx", "suitesparse/ca-GrQc.mtx", true, "SNAP ca-GrQc co-authorship (SuiteSparse)", {}},
      {"luxembourg", {"luxembourg_osm", "luxembourg-osm"}, "mtx", "suitesparse/luxembourg_osm.mtx", true,
       "DIMACS10 Luxembourg road network (SuiteSparse)", {}},
      {"facebook", {"musae-facebook"}, "musae", "graphs/musae-facebook", true,
       "MUSAE Facebook page-page, 4 classes, sparse features", {"undirected, each edge stored once"}},
      {"github", {"musae-github"}, "musae", "graphs/musae-github", true, "MUSAE GitHub developers, 2 classes",
       {"undirected, each edge stored once"}},
      {"squirrel", {"wikipedia-squirrel"}, "musae", "graphs/wikipedia-squirrel", true,
       "Wikipedia squirrel article network",
       {"undirected per its source, but 18,580 records are reverse copies of others: symmetrize and deduplicate, or "
        "use the records as a directed graph"}},
      {"deezer-hu", {"deezer"}, "csv", "graphs/deezer-HU/HU_edges.csv", true, "Deezer Hungary friendships",
       {"undirected, each edge stored once; the genre labels (HU_genres.json) are not included"}},
      {"enron", {"email-enron"}, "edgelist", "graphs/snap-email-Enron/email-Enron.txt.gz", true,
       "SNAP email-Enron", {"undirected, both directions stored"}},
      {"condmat", {"ca-condmat"}, "edgelist", "graphs/snap-ca-CondMat/CA-CondMat.txt", true, "SNAP ca-CondMat",
       {"undirected, both directions stored (self-loops once)"}},
      {"gnutella", {"p2p-gnutella31"}, "edgelist", "graphs/snap-p2p-Gnutella31/p2p-Gnutella31.txt", false,
       "SNAP p2p-Gnutella31 (directed)", {}},
  };
  return table;
}

const std::vector<std::string>& path_formats() {
  static const std::vector<std::string> f = {"linqs", "pubmed",   "ogb", "rdf",   "hgb",
                                             "mtx",   "edgelist", "csv", "musae", "dglcsv"};
  return f;
}

const std::vector<std::string>& generator_formats() {
  static const std::vector<std::string> f = {"rmat", "er", "sbm", "rsbm"};
  return f;
}

bool ResolvedSource::is_generator() const {
  const auto& g = generator_formats();
  return std::find(g.begin(), g.end(), format) != g.end();
}

std::string ResolvedSource::describe() const {
  return is_generator() ? format + ":" + params : format + ":" + path.string();
}

fs::path default_data_root() {
  if (auto v = env_value("STRATA_DATA_ROOT")) return *v;
  std::error_code ec;
  const fs::path here = fs::current_path(ec) / ".." / "shared" / "datasets";
  if (!ec && fs::is_directory(here, ec)) return fs::weakly_canonical(here, ec);
  const fs::path built = STRATA_DATASETS_SOURCE_DATA_ROOT;
  if (fs::is_directory(built, ec)) return fs::weakly_canonical(built, ec);
  return here;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (const auto& k : known_datasets()) names.push_back(k.name);
  return names;
}

std::string known_list() {
  return fmt::format("known datasets: {}; or a path as FORMAT:PATH with FORMAT one of {}; or a generator as "
                     "KIND:key=value,... with KIND one of {}",
                     fmt::join(all_names(), ", "), fmt::join(path_formats(), ", "), fmt::join(generator_formats(), ", "));
}

// A path from a prefixed spec: as given when it exists, else under the data root.
fs::path locate(const std::string& text, const fs::path& root, const std::string& format) {
  std::error_code ec;
  const fs::path p(text);
  if (p.is_absolute() || fs::exists(p, ec)) {
    STRATA_CHECK(fs::exists(p, ec), "{}: '{}' does not exist", format, p.string());
    return p;
  }
  const fs::path under = root / p;
  STRATA_CHECK(fs::exists(under, ec), "{}: '{}' not found (looked in the current directory and under the data root "
               "'{}')", format, text, root.string());
  return under;
}

bool folder_has_suffix(const fs::path& dir, std::string_view suffix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (ends_with(e.path().filename().string(), suffix)) return true;
  return false;
}

// The format of an unprefixed existing path, or "" when it cannot be told.
std::string guess_format(const fs::path& p) {
  std::error_code ec;
  const std::string f = p.filename().string();
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "meta.yaml")) return "dglcsv";
    if (fs::exists(p / "raw" / "edge.csv.gz") || fs::exists(p / "raw" / "edge.csv")) return "ogb";
    if (fs::exists(p / "node.dat") && fs::exists(p / "link.dat")) return "hgb";
    if (folder_has_suffix(p, ".DIRECTED.cites.tab")) return "pubmed";
    if (folder_has_suffix(p, "_edges.csv")) return "musae";
    if (folder_has_suffix(p, ".content")) return "linqs";
    if (folder_has_suffix(p, ".nt.gz") || folder_has_suffix(p, ".nt")) return "rdf";
    return "";
  }
  if (f == "meta.yaml") return "dglcsv";
  if (ends_with(f, ".mtx") || ends_with(f, ".mtx.gz")) return "mtx";
  if (ends_with(f, ".nt") || ends_with(f, ".nt.gz")) return "rdf";
  if (ends_with(f, ".zip")) return "hgb";
  if (ends_with(f, ".tgz") || ends_with(f, ".tar.gz")) return "linqs";
  if (ends_with(f, ".csv") || ends_with(f, ".csv.gz")) return "csv";
  if (ends_with(f, ".txt") || ends_with(f, ".txt.gz") || ends_with(f, ".edges") || ends_with(f, ".el") ||
      ends_with(f, ".tsv"))
    return "edgelist";
  return "";
}

// Planetoid's files (ind.<name>.x, .graph, ...) are Python pickles, which Strata does not
// read; scripts/planetoid_convert.py turns them into a DGL CSVDataset. The name infix when
// `p` is one of those files or a folder holding them, else "".
std::string planetoid_name(const fs::path& p) {
  static const char* kSuffixes[] = {".x", ".tx", ".allx", ".y", ".ty", ".ally", ".graph", ".test.index"};
  auto name_of = [](const std::string& f) -> std::string {
    if (!starts_with(f, "ind.")) return "";
    for (const char* suffix : kSuffixes)
      if (ends_with(f, suffix) && f.size() > 4 + std::string_view(suffix).size())
        return f.substr(4, f.size() - 4 - std::string_view(suffix).size());
    return "";
  };
  std::error_code ec;
  if (!fs::is_directory(p, ec)) return name_of(p.filename().string());
  std::string first;  // the first in name order, where a folder holds several datasets
  for (const auto& e : fs::directory_iterator(p, ec)) {
    const std::string f = e.path().filename().string(), name = ends_with(f, ".graph") ? name_of(f) : "";
    if (!name.empty() && (first.empty() || name < first)) first = name;
  }
  return first;
}

[[noreturn]] void planetoid_unreadable(const fs::path& p, const std::string& name) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(p, ec) ? p : p.parent_path();
  STRATA_FAIL(
      "'{}' holds Planetoid's pickled files (ind.{}.x, ind.{}.graph, ...), which Strata does not read: "
      "convert them once with 'python3 scripts/planetoid_convert.py {} {} OUT' (in Strata's source tree), "
      "then name the dataset dglcsv:OUT (it keeps Planetoid's public split)",
      p.string(), name, name, dir.empty() ? "." : dir.string(), name);
}

// A DGL CSVDataset named by its meta.yaml is the folder holding it (the files the
// cache key hashes are the folder's).
ResolvedSource dgl_csv_folder(ResolvedSource r) {
  if (r.format == "dglcsv" && r.path.filename() == "meta.yaml") r.path = r.path.parent_path();
  return r;
}

}  // namespace

ResolvedSource resolve_source(const std::string& spec_in, const fs::path& root) {
  const std::string spec(trim(spec_in));
  STRATA_CHECK(!spec.empty(), "empty dataset name ({})", known_list());
  ResolvedSource r;
  const size_t colon = spec.find(':');
  if (colon != std::string::npos && colon > 1) {
    const std::string prefix = lower(spec.substr(0, colon));
    const std::string rest = spec.substr(colon + 1);
    const auto& gens = generator_formats();
    const auto& paths = path_formats();
    if (std::find(gens.begin(), gens.end(), prefix) != gens.end()) {
      r.format = prefix;
      r.params = rest;
      r.options.name = prefix;
      return r;
    }
    if (std::find(paths.begin(), paths.end(), prefix) != paths.end()) {
      STRATA_CHECK(!trim(rest).empty(), "{}: missing path after '{}:'", spec, prefix);
      r.format = prefix;
      r.path = locate(std::string(trim(rest)), root, prefix);
      return dgl_csv_folder(r);
    }
    std::error_code ec;
    if (prefix == "planetoid") {
      STRATA_CHECK(!trim(rest).empty(), "{}: missing path after 'planetoid:'", spec);
      const fs::path p = locate(std::string(trim(rest)), root, prefix);
      const std::string name = planetoid_name(p);
      planetoid_unreadable(p, name.empty() ? "NAME" : name);
    }
    std::vector<std::string> prefixes = paths;
    prefixes.insert(prefixes.end(), gens.begin(), gens.end());
    const std::string hint = nearest_name(prefix, prefixes);
    if (!fs::exists(spec, ec))  // a path that merely contains ':' falls through below
      STRATA_FAIL("unknown dataset prefix '{}:' in '{}'{} ({})", prefix, spec,
                hint.empty() ? "" : fmt::format(", did you mean '{}:'?", hint), known_list());
  }
  const std::string key = lower(spec);
  for (const auto& k : known_datasets()) {
    if (k.name != key && std::find(k.aliases.begin(), k.aliases.end(), key) == k.aliases.end()) continue;
    r.format = k.format;
    r.path = root / k.relative;
    r.options.name = k.name;
    r.options.undirected = k.undirected;
    r.options.notes = k.notes;
    std::error_code ec;
    STRATA_CHECK(fs::exists(r.path, ec), "dataset '{}': '{}' not found under the data root '{}' (set --data-root or "
                 "STRATA_DATA_ROOT to the folder holding {})", k.name, k.relative, root.string(), k.relative);
    return r;
  }
  std::error_code ec;
  if (fs::exists(spec, ec)) {
    r.format = guess_format(spec);
    if (r.format.empty())
      if (const std::string name = planetoid_name(spec); !name.empty()) planetoid_unreadable(spec, name);
    STRATA_CHECK(!r.format.empty(), "'{}': cannot tell the format from the name; write FORMAT:{} with FORMAT one of {}",
                 spec, spec, fmt::join(path_formats(), ", "));
    r.path = spec;
    return dgl_csv_folder(r);
  }
  const std::string hint = nearest_name(key, all_names());
  STRATA_FAIL("unknown dataset '{}'{} ({})", spec, hint.empty() ? "" : fmt::format(", did you mean '{}'?", hint),
              known_list());
}

}  // namespace strata::data
