#include "datasets/load.h"

#include <algorithm>
#include <chrono>

#include "core/file_util.h"
#include "core/log.h"
#include "core/timer.h"
#include "datasets/dataset_cache.h"
#include "datasets/dgl_csv.h"
#include "datasets/edge_list.h"
#include "datasets/erdos_renyi.h"
#include "datasets/hgb.h"
#include "datasets/linqs.h"
#include "datasets/matrix_market.h"
#include "datasets/musae.h"
#include "datasets/ogb.h"
#include "datasets/pubmed.h"
#include "datasets/rdf.h"
#include "datasets/relational_sbm.h"
#include "datasets/rmat.h"
#include "datasets/sbm.h"

namespace strata::data {

std::string_view cache_status_name(CacheStatus s) {
  switch (s) {
    case CacheStatus::Disabled: return "disabled";
    case CacheStatus::Generated: return "not cached (generator)";
    case CacheStatus::Hit: return "hit";
    case CacheStatus::Written: return "miss (parsed, cache written)";
    case CacheStatus::Rebuilt: return "rebuilt";
    case CacheStatus::Unwritable: return "miss (parsed, cache not writable)";
  }
  return "disabled";
}

namespace {
Dataset load_from_source(const ResolvedSource& src) {
  const std::string& f = src.format;
  const SourceOptions& o = src.options;
  if (f == "rmat") return generate_rmat(parse_rmat_params(src.params));
  if (f == "er") return generate_er(parse_er_params(src.params));
  if (f == "sbm") return generate_sbm(parse_sbm_params(src.params));
  if (f == "rsbm") return generate_relational_sbm(parse_relational_sbm_params(src.params));
  if (f == "linqs") return load_linqs(src.path, o);
  if (f == "pubmed") return load_pubmed(src.path, o);
  if (f == "ogb") return load_ogb(src.path, o);
  if (f == "rdf") return load_rdf(src.path, o);
  if (f == "hgb") return load_hgb(src.path, o);
  if (f == "mtx") return load_matrix_market(src.path, o);
  if (f == "edgelist") return load_edge_list(src.path, EdgeListStyle::Blank, o);
  if (f == "csv") return load_edge_list(src.path, EdgeListStyle::Csv, o);
  if (f == "musae") return load_musae(src.path, o);
  if (f == "dglcsv") return load_dgl_csv(src.path, o);
  STRATA_UNREACHABLE("no loader for format '{}'", f);
}
}  // namespace

Dataset load_uncached(const ResolvedSource& src) {
  try {
    return load_from_source(src);
  } catch (const std::bad_alloc&) {
    // Sizes declared by a file (node counts, size lines) drive allocations.
    STRATA_FAIL("out of memory loading '{}': the dataset, or a size its files declare, is too large for this machine",
                src.describe());
  }
}

namespace {

// Every regular file the source may read: the file, or all files under the folder.
// An RDF graph given as a file also reads the label files beside it.
std::vector<fs::path> input_files(const ResolvedSource& src) {
  std::vector<fs::path> files;
  std::error_code ec;
  const fs::path& p = src.path;
  if (src.format == "rdf" && fs::is_regular_file(p, ec)) {
    for (const auto& e : fs::directory_iterator(p.parent_path(), ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else if (fs::is_directory(p, ec)) {
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file()) files.push_back(it->path());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(p);
  }
  return files;
}

std::string sanitized(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out.empty() ? "dataset" : out.substr(0, 48);
}

// What names the entry (its file name); the key adds what validates its content.
Hasher& identity(Hasher& h, const ResolvedSource& src) {
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(src.path, ec), ec);
  h.add(src.format).add(abs.string()).add(src.options.name);
  h.add_u64(src.options.undirected ? (*src.options.undirected ? 2 : 1) : 0).add_u64(src.options.seed);
  return h;
}

}  // namespace

fs::path dataset_cache_file(const ResolvedSource& src, const fs::path& cache_dir) {
  Hasher h;
  identity(h, src);
  const std::string name = src.options.name.empty() ? src.path.filename().string() : src.options.name;
  return cache_dir / fmt::format("{}-{}.sds", sanitized(name), h.digest().hex().substr(0, 16));
}

Hash128 dataset_cache_key(const ResolvedSource& src) {
  Hasher h;
  h.add_u64(kDatasetCacheFormatVersion).add_u64(kLoaderVersion);
  identity(h, src);
  h.add_u64(src.options.notes.size());  // registry notes end up in Dataset::notes
  for (const auto& n : src.options.notes) h.add(n);
  for (const auto& f : input_files(src)) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    const auto mtime = fs::last_write_time(f, ec).time_since_epoch();
    h.add(f.lexically_relative(src.path).string());
    h.add_u64(static_cast<uint64_t>(size));
    h.add_u64(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(mtime).count()));
  }
  return h.digest();
}

Dataset load_dataset(const std::string& spec, const LoadOptions& opt, LoadReport* report) {
  Timer timer;
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  rep = LoadReport{};
  const fs::path root = opt.data_root ? *opt.data_root : default_data_root();
  ResolvedSource src = resolve_source(spec, root);
  src.options.seed = opt.seed;
  rep.resolved = src.describe();

  auto finish = [&](Dataset ds, CacheStatus status) {
    rep.cache = status;
    rep.seconds = timer.seconds();
    return ds;
  };
  if (src.is_generator()) return finish(load_uncached(src), CacheStatus::Generated);
  if (!opt.use_cache || env_flag("STRATA_NO_DATASET_CACHE")) return finish(load_uncached(src), CacheStatus::Disabled);

  const fs::path dir = opt.cache_dir ? *opt.cache_dir : cache_root() / "datasets";
  rep.cache_file = dataset_cache_file(src, dir);
  const Hash128 key = dataset_cache_key(src);
  CacheRead cached = read_dataset_cache(rep.cache_file, key);
  if (cached.status == CacheProbe::Hit) {
    rep.cache_bytes = cached.file_bytes;
    return finish(std::move(*cached.dataset), CacheStatus::Hit);
  }
  CacheStatus status = CacheStatus::Written;
  if (cached.status != CacheProbe::Missing) {
    status = CacheStatus::Rebuilt;
    rep.cache_detail = fmt::format("{}: {}", cache_probe_name(cached.status), cached.reason);
    log_warn("dataset cache '{}' is {} ({}); rebuilding it from the source files", rep.cache_file.string(),
             cache_probe_name(cached.status), cached.reason);
  }
  Dataset ds = load_uncached(src);
  try {
    rep.cache_bytes = write_dataset_cache(rep.cache_file, ds, key);
  } catch (const UserError& e) {
    status = CacheStatus::Unwritable;
    rep.cache_detail = e.what();
    rep.cache_bytes = 0;
    log_warn("dataset cache not written: {}", e.what());
  }
  return finish(std::move(ds), status);
}

}  // namespace strata::data
