// strata export --graph <dataset> --feat 32,64 --out <dir> [--as-stored] [--train [--split-ratios T,V]] [--hetero]
// strata export --stream-only [--threads N]
//
// Writes the inputs every peer in benchmarks/peers/ is timed on, so that all systems
// see the same matrix and the same features, and Strata's reference outputs to check
// them against (sparse_compiler/ops/reference_kernels.h), as NumPy .npy files:
//
//   indptr.npy              int64 [rows + 1]      the benchmark adjacency (apps/bench_graph.h:
//   indices.npy             int32|int64 [nnz]      symmetrized when the dataset is undirected)
//   x_F<F>.npy              float32 [cols, F]      SpMM input; the column side of SDDMM
//   y_F<F>.npy              float32 [rows, F]      the row side of SDDMM
//   ref_spmm_sum_F<F>.npy   float32 [rows, F]      Y[i] = sum_j X[j] over row i
//   ref_spmm_mean_F<F>.npy  float32 [rows, F]      the same divided by the row's non-zeros (0 for empty rows)
//   ref_sddmm_dot_F<F>.npy  float32 [nnz]          O[p] = Y[i] . X[j] for non-zero p = (i, j)
//   meta.json               name, rows, cols, nnz, symmetrized, index dtype, feature sizes, seed
//
// --train adds train_indptr.npy / train_indices.npy (the symmetrized graph training
// runs on), train_x.npy (float32 [N, D]: the dataset's node features when it has
// them, else seeded uniform [N, 128]) and train_y.npy (int64 [N]: its class ids, with
// unlabelled nodes and label-less datasets given seeded random classes; multi-label
// datasets: int64 [N, C] of 0/1 as loaded, -1 rows unlabelled), for the
// full-graph training benchmarks, and the split `strata train` uses by default:
// train_idx.npy / val_idx.npy / test_idx.npy (int64 node ids; the dataset's own split
// when it ships one, else the seeded Planetoid-style split of the configs, 20 per
// class / 500 / 1000 (multi-label: the configs' random 60/20/20), with --split-seed
// as data.split.seed; with --split-ratios
// TRAIN,VAL the random split of data.split.kind: random instead), so a peer can train and
// test on exactly the nodes Strata does (split.json holds the same ids, as the run
// dir of `strata train` does). On a heterograph the labels and split name the labelled
// type's nodes by their rows in the flattened graph (meta.json: labelled_type), where
// the dataset and R-GCN's split.json number them within their type. --hetero adds, for heterographs, the flattened
// typed graph (hetero_indptr.npy, hetero_indices.npy, hetero_etype.npy int64 per
// non-zero) for the RGCN benchmarks.
//
// --stream-only prints {"threads": T, "stream_gbs": G}: the STREAM-like triad that
// `strata bench` uses as the memory-bandwidth floor, on the requested threads.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/bench_graph.h"
#include "apps/commands.h"
#include "apps/option_checks.h"
#include "apps/training/data.h"
#include "apps/training/run_report.h"
#include "apps/training/split_file.h"
#include "benchmarks/baselines/baselines.h"
#include "core/file_util.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/staged_directory.h"
#include "datasets/load.h"
#include "sparse_compiler/ops/reference_kernels.h"

namespace strata::apps {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct ExportArgs {
  std::string graph;
  std::string feats = "32,64";
  std::string out;
  std::optional<std::string> data_root;
  uint64_t seed = 1;
  uint64_t split_seed = 0;
  std::string split_ratios;  // "TRAIN,VAL": a random split of the labelled nodes (data.split.kind: random)
  int threads = 0;
  bool as_stored = false, train = false, hetero = false, stream_only = false;
};

// "0.6,0.2" -> (0.6, 0.2): two fractions in (0, 1) whose sum is below 1.
std::pair<double, double> parse_split_ratios(const std::string& text) {
  const size_t comma = text.find(',');
  double r[2] = {0, 0};
  bool ok = comma != std::string::npos && text.find(',', comma + 1) == std::string::npos;
  for (int k = 0; ok && k < 2; ++k) {
    const std::string part = k == 0 ? text.substr(0, comma) : text.substr(comma + 1);
    size_t used = 0;
    try {
      r[k] = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    ok = !part.empty() && used == part.size() && r[k] > 0 && r[k] < 1;
  }
  STRATA_CHECK(ok && r[0] + r[1] < 1,
               "export --split-ratios '{}': expected TRAIN,VAL, two fractions in (0, 1) whose sum is below 1 "
               "(e.g. 0.6,0.2)",
               text);
  return {r[0], r[1]};
}

const char* npy_descr(DType d) {
  switch (d) {
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    default: break;
  }
  STRATA_FAIL("export: no .npy type for dtype {}", dtype_name(d));
}

// NumPy format 1.0: magic, version, a little-endian u16 header length, a Python dict
// literal padded with spaces to a multiple of 64 bytes and ended by '\n', then the
// C-order data.
void write_npy(const fs::path& path, const Tensor& t) {
  std::string shape = "(";
  for (int i = 0; i < t.ndim(); ++i) shape += std::to_string(t.shape()[i]) + (t.ndim() == 1 || i + 1 < t.ndim() ? "," : "");
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npy_descr(t.dtype()), shape);
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  AtomicFile f(path);  // checked writes and flush: a full disk is an error, not a short file
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char lenb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(lenb, 2);
  f.write(header);
  f.write(t.raw_data(), t.nbytes());
  f.commit();
}

int run_stream_only(const ExportArgs& a) {
  if (a.threads > 0) set_num_threads(a.threads);
  const double gbs = baselines::measure_stream_triad_gbs();
  std::printf("%s\n", json{{"threads", num_threads()}, {"stream_gbs", gbs}}.dump().c_str());
  return 0;
}

int run_export(const ExportArgs& a) {
  if (a.stream_only) return run_stream_only(a);
  STRATA_CHECK(!a.graph.empty(), "export: --graph is required (or --stream-only)");
  STRATA_CHECK(!a.out.empty(), "export: --out is required");
  if (a.threads > 0) set_num_threads(a.threads);
  const std::vector<int64_t> feats = parse_int_list(a.feats, "--feat", kMaxFeatureSize);
  STRATA_CHECK(a.split_ratios.empty() || a.train,
               "export --split-ratios: the split is written with the training inputs; add --train");
  std::optional<std::pair<double, double>> ratios;  // refused before anything is read
  if (!a.split_ratios.empty()) ratios = parse_split_ratios(a.split_ratios);
  // Everything is written into a staging folder that replaces --out (an earlier
  // export, or an empty folder) only once every file is there.
  StagedDirectory out(a.out, "meta.json", "--out");
  const fs::path dir = out.staging_path();
  const BenchGraph bg = load_bench_graph(a.graph, a.data_root, a.as_stored);
  const Graph& A = bg.graph;

  write_npy(dir / "indptr.npy", A.indptr());
  write_npy(dir / "indices.npy", A.indices());
  Rng rng(a.seed);
  for (int64_t F : feats) {
    const Tensor X = Tensor::uniform({A.num_cols(), F}, -1, 1, rng);
    const Tensor Y = Tensor::uniform({A.num_rows(), F}, -1, 1, rng);
    Tensor sum = Tensor::empty({A.num_rows(), F}, DType::F32);
    Tensor mean = Tensor::empty({A.num_rows(), F}, DType::F32);
    Tensor dot = Tensor::empty({A.nnz()}, DType::F32);
    sc::reference_spmm(A, X, Tensor(), Tensor(), Tensor(), false, sum);
    sc::reference_spmm(A, X, Tensor(), Tensor(), Tensor(), true, mean);
    sc::reference_sddmm_dot(A, Y, X, dot);
    const std::string f = std::to_string(F);
    write_npy(dir / ("x_F" + f + ".npy"), X);
    write_npy(dir / ("y_F" + f + ".npy"), Y);
    write_npy(dir / ("ref_spmm_sum_F" + f + ".npy"), sum);
    write_npy(dir / ("ref_spmm_mean_F" + f + ".npy"), mean);
    write_npy(dir / ("ref_sddmm_dot_F" + f + ".npy"), dot);
  }

  const bool symmetrized = bg.description.find("(symmetrized)") != std::string::npos;
  json meta = {{"name", a.graph},
               {"description", bg.description},
               {"rows", A.num_rows()},
               {"cols", A.num_cols()},
               {"nnz", A.nnz()},
               {"symmetrized", symmetrized},
               {"index_dtype", std::string(dtype_name(A.index_dtype()))},
               {"feats", feats},
               {"seed", a.seed},
               {"spmm", "Y[i] = sum (mean) of X[j] over the non-zeros (i, j) of row i"},
               {"sddmm", "O[p] = Y[i] . X[j] for the p-th non-zero (i, j), CSR order"}};

  if (a.train || a.hetero) {
    data::LoadOptions opt;
    if (a.data_root) opt.data_root = *a.data_root;
    const data::Dataset ds = data::load_dataset(a.graph, opt);
    if (a.train) {
      const int64_t N = A.num_rows();
      STRATA_CHECK(A.num_rows() == A.num_cols(), "export --train: '{}' is not square ({} x {})", a.graph,
                   A.num_rows(), A.num_cols());
      Rng trng(a.seed + 1000);
      Tensor x;
      std::string xsrc;
      if (ds.features.defined() && ds.features.rows() == N) {
        x = ds.features.to_dense();
        xsrc = "dataset (" + ds.features.describe() + ")";
      } else {
        x = Tensor::uniform({N, 128}, -1, 1, trng);
        xsrc = "random uniform [-1, 1), 128 per node (the dataset has no homogeneous node features)";
      }
      int64_t classes = ds.num_classes;
      // A heterograph's labels and split name its target type's nodes by local id: they are
      // written at the flattened graph's rows of that type, [first, first + M).
      const int64_t M = ds.num_label_nodes();
      int64_t first = 0;
      for (int t = 0; ds.is_hetero() && t < ds.target_node_type; ++t) first += ds.hetero->node_types()[t].count;
      STRATA_ASSERT(first + M <= N, "export --train: {} labelled rows from row {} in a graph of {}", M, first, N);
      // Multi-label classes are written as they are, int64 [N, C] of 0/1 (-1 rows unlabelled).
      const bool multilabel = ds.labels.defined() && ds.multilabel() && ds.labels.dim(0) == M;
      const bool have_labels =
          ds.labels.defined() && (multilabel || (ds.labels.numel() == M && ds.labels.ndim() == 1)) && classes > 1;
      if (!have_labels) classes = 8;
      Tensor labels_out;
      int64_t from_dataset = 0;
      if (multilabel) {
        const int64_t C = ds.labels.dim(1);
        labels_out = Tensor::full({N, C}, DType::I64, -1);
        std::copy_n(ds.labels.data<int64_t>(), M * C, labels_out.data<int64_t>() + first * C);
        from_dataset = static_cast<int64_t>(train::labelled_nodes(ds.labels, 0, M).size());
      } else {
        std::vector<int64_t> y(static_cast<size_t>(N));
        for (int64_t i = 0; i < N; ++i) {
          const int64_t l = have_labels && i >= first && i < first + M ? ds.labels.data<int64_t>()[i - first] : -1;
          if (l >= 0) ++from_dataset;
          y[static_cast<size_t>(i)] =
              l >= 0 ? l : static_cast<int64_t>(trng.next_u64() % static_cast<uint64_t>(classes));
        }
        labels_out = Tensor::from_vector(y);
      }
      // Training runs on A ∪ Aᵀ, as PyG and DGL users (and `strata train`'s data.undirected) do.
      const Graph tg = A.symmetrized().without_values();
      write_npy(dir / "train_indptr.npy", tg.indptr());
      write_npy(dir / "train_indices.npy", tg.indices());
      write_npy(dir / "train_x.npy", x);
      write_npy(dir / "train_y.npy", labels_out);
      meta["train"] = {{"in_feats", x.shape()[1]},
                       {"num_classes", classes},
                       {"multilabel", multilabel},
                       {"features", xsrc},
                       {"nnz", tg.nnz()},
                       {"graph", "symmetrized (A + A^T, duplicates merged)"},
                       {"labels_from_dataset", from_dataset},
                       {"labels_random", multilabel ? 0 : N - from_dataset}};
      if (ds.is_hetero())
        meta["train"]["labelled_type"] = {{"name", ds.hetero->node_types()[ds.target_node_type].name},
                                          {"first_row", first},
                                          {"rows", M},
                                          {"note", "labels and split ids are rows of the flattened graph"}};
      // The split of `strata train` with data.split.kind: auto on a dataset (its own, else
      // Planetoid-style with the configs' sizes, or for multi-label classes random with
      // the configs' ratios); written only where it is defined.
      data::Splits split = ds.splits;
      if (ratios) {
        STRATA_CHECK(have_labels, "export --split-ratios: '{}' has no class labels to split", a.graph);
        const auto [train_ratio, val_ratio] = *ratios;
        split = data::random_split(train::labelled_nodes(ds.labels, 0, M), train_ratio, val_ratio, a.split_seed);
      } else if (split.empty() && multilabel) {
        const train::SplitConfig ratios_of_configs;
        split = data::random_split(train::labelled_nodes(ds.labels, 0, M), ratios_of_configs.train_ratio,
                                   ratios_of_configs.val_ratio, a.split_seed);
      } else if (split.empty() && have_labels) {
        const train::SplitConfig sizes;  // the configs' defaults
        split = train::planetoid_split(ds.labels, ds.num_classes, sizes.train_per_class, sizes.val_size,
                                       sizes.test_size, a.split_seed);
      }
      if (!split.empty()) {
        for (Tensor* ids : {&split.train, &split.val, &split.test}) {  // local ids of the target type -> rows
          if (!ids->defined() || first == 0) continue;
          Tensor rows = ids->clone();
          for (int64_t k = 0; k < rows.numel(); ++k) rows.data<int64_t>()[k] += first;
          *ids = rows;
        }
        const std::pair<const char*, const Tensor*> parts[] = {
            {"train_idx.npy", &split.train}, {"val_idx.npy", &split.val}, {"test_idx.npy", &split.test}};
        for (const auto& [file, ids] : parts)
          write_npy(dir / file, ids->defined() ? *ids : Tensor::empty({0}, DType::I64));
        write_file_atomic(dir / "split.json", train::split_json(split));
        meta["train"]["split"] = {{"origin", split.origin}, {"train", split.train_size()},
                                  {"val", split.val_size()}, {"test", split.test_size()}};
      }
    }
    if (a.hetero) {
      STRATA_CHECK(ds.is_hetero(), "export --hetero: '{}' is not a heterograph (RDF and HGB datasets are)", a.graph);
      const HomogeneousView hv = ds.hetero->to_homogeneous();
      Tensor et = Tensor::empty({hv.graph.nnz()}, DType::I64);
      for (int64_t p = 0; p < hv.graph.nnz(); ++p) et.data<int64_t>()[p] = hv.edge_relation.data<int32_t>()[p];
      write_npy(dir / "hetero_indptr.npy", hv.graph.indptr());
      write_npy(dir / "hetero_indices.npy", hv.graph.indices());
      write_npy(dir / "hetero_etype.npy", et);
      json rels = json::array();
      for (const auto& r : ds.hetero->relations()) rels.push_back(r.str());
      meta["hetero"] = {{"num_nodes", hv.graph.num_rows()}, {"nnz", hv.graph.nnz()},
                        {"num_relations", ds.hetero->num_relations()}, {"num_node_types", ds.hetero->num_node_types()},
                        {"relations", rels}};
    }
  }
  write_file_atomic(dir / "meta.json", meta.dump(2) + "\n");
  out.commit();
  std::printf("%s -> %s\n", bg.description.c_str(), out.final_path().string().c_str());
  return 0;
}

RegisterCommand reg({"export", "Write a benchmark graph, seeded features and reference outputs as .npy for peers",
                     [](CLI::App& app) {
                       auto a = std::make_shared<ExportArgs>();
                       app.add_option("--graph", a->graph, "dataset string");
                       app.add_option("--feat", a->feats, "feature sizes")->capture_default_str();
                       app.add_option("--out", a->out, "output folder (created)");
                       app.add_option("--data-root", a->data_root, "dataset folder (default: ../shared/datasets)");
                       app.add_option("--seed", a->seed, "seed of the random features")
                           ->check(integer_at_least(0))
                           ->capture_default_str();
                       app.add_option("--split-seed", a->split_seed,
                                      "with --train: data.split.seed of the split written (Planetoid-style, or "
                                      "random with --split-ratios)")
                           ->check(integer_at_least(0))
                           ->capture_default_str();
                       app.add_option("--split-ratios", a->split_ratios,
                                      "with --train: TRAIN,VAL fractions of a random split of the labelled nodes, "
                                      "as data.split.kind: random with data.split.train_ratio and val_ratio (the "
                                      "rest test)");
                       app.add_option("--threads", a->threads, "threads (default: all cores)")
                           ->check(integer_in(1, 4096));
                       app.add_flag("--as-stored", a->as_stored, "do not symmetrize undirected datasets");
                       app.add_flag("--train", a->train, "also write node features and labels for training");
                       app.add_flag("--hetero", a->hetero, "also write the typed graph of a heterograph (RGCN)");
                       app.add_flag("--stream-only", a->stream_only,
                                    "only measure the STREAM triad bandwidth and print it as JSON");
                       return [a] { return run_export(*a); };
                     }});

}  // namespace
}  // namespace strata::apps
