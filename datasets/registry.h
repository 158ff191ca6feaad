// One string names a dataset everywhere (command line, configs, benchmarks):
//   - a short name resolved under the data root: cora, citeseer, pubmed, aifb, mutag,
//     bgs, am, acm, dblp, imdb, ddi (ogbl_ddi), karate, bcsstk13, ca-grqc, luxembourg,
//     facebook, github, squirrel, deezer-hu, enron, condmat, gnutella;
//   - a path with a format prefix: linqs:, pubmed:, ogb:, rdf:, hgb:, mtx:,
//     edgelist:, csv:, musae:, dglcsv: (DGL's CSVDataset folder; relative paths are tried from the current directory,
//     then under the data root);
//   - a bare path whose format is clear from its name or content (x.mtx, a folder
//     with raw/edge.csv.gz, a folder with meta.yaml, ...);
//   - a generator: rmat:scale=16,edge_factor=16,seed=1, er:nodes=..,avg_degree=..,
//     sbm:nodes=..,classes=..,...
// The data root is --data-root, else $STRATA_DATA_ROOT, else ../shared/datasets
// relative to the current directory when it exists, else the one beside the source
// tree Strata was built from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "datasets/source_options.h"

namespace strata::data {

struct KnownDataset {
  std::string name;
  std::vector<std::string> aliases;
  std::string format;    // loader prefix
  std::string relative;  // path under the data root
  std::optional<bool> undirected;
  std::string description;
  std::vector<std::string> notes;
};

// The short names, in the order `strata info` lists them.
const std::vector<KnownDataset>& known_datasets();
// The format prefixes for paths, and the generator prefixes.
const std::vector<std::string>& path_formats();
const std::vector<std::string>& generator_formats();

struct ResolvedSource {
  std::string format;   // one of path_formats() or generator_formats()
  fs::path path;        // the resolved file or folder (path formats)
  std::string params;   // the text after "rmat:" (generators)
  SourceOptions options;
  bool is_generator() const;
  // "linqs:/data/citation/cora.tgz" or "sbm:nodes=2000,..." as given.
  std::string describe() const;
};

fs::path default_data_root();
// Resolves `spec` (see above). Throws UserError listing the known names and prefixes
// when `spec` is none of them, or naming the missing path.
ResolvedSource resolve_source(const std::string& spec, const fs::path& data_root);

}  // namespace strata::data
