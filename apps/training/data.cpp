#include "apps/training/data.h"

#include <algorithm>

#include "apps/training/run_report.h"
#include "apps/training/split_file.h"
#include "core/rng.h"
#include "core/timer.h"

namespace strata::train {
namespace {

std::string percent(double v) { return fmt::format("{:.2f}%", 100.0 * v); }

// Sparse features from a FeatureMatrix, optionally row-normalised.
nn::SparseFeatures sparse_from(const data::FeatureMatrix& f, bool normalize, bool* binary) {
  Tensor values = f.values();
  if (normalize) {
    const int64_t* ip = f.indptr().data<int64_t>();
    Tensor v = Tensor::empty({f.stored()}, DType::F32);
    for (int64_t r = 0; r < f.rows(); ++r) {
      double sum = 0;
      for (int64_t p = ip[r]; p < ip[r + 1]; ++p) sum += values.defined() ? values.data<float>()[p] : 1.0;
      for (int64_t p = ip[r]; p < ip[r + 1]; ++p) {
        const double x = values.defined() ? values.data<float>()[p] : 1.0;
        v.data<float>()[p] = static_cast<float>(sum != 0 ? x / sum : x);
      }
    }
    values = v;
  }
  *binary = !values.defined();
  return nn::SparseFeatures::from_csr(f.rows(), f.cols(), f.indptr(), f.indices(), values);
}

// CSR of a dense matrix (binary when every stored value is 1).
nn::SparseFeatures sparse_from_dense(const Tensor& x, bool* binary) {
  const int64_t n = x.dim(0), d = x.dim(1);
  const float* p = x.data<float>();
  std::vector<int64_t> indptr = {0};
  std::vector<int32_t> indices;
  std::vector<float> values;
  bool all_ones = true;
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < d; ++c)
      if (p[r * d + c] != 0.0f) {
        indices.push_back(static_cast<int32_t>(c));
        values.push_back(p[r * d + c]);
        all_ones = all_ones && p[r * d + c] == 1.0f;
      }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  *binary = all_ones;
  return nn::SparseFeatures::from_csr(n, d, Tensor::from_vector(indptr), Tensor::from_vector(indices),
                                      all_ones ? Tensor() : Tensor::from_vector(values));
}

void normalize_rows(Tensor& x) {
  auto m = x.as_matrix<float>();
  for (int64_t r = 0; r < m.rows(); ++r) {
    const double sum = m.row(r).cast<double>().sum();
    if (sum != 0) m.row(r) /= static_cast<float>(sum);
  }
}

int64_t count_self_loops(const Graph& g) {
  int64_t k = 0;
  for (int64_t r = 0; r < g.num_rows(); ++r)
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p) k += g.column(p) == r;
  return k;
}

}  // namespace

Graph remove_self_loops(const Graph& g) {
  std::vector<int64_t> indptr = {0};
  std::vector<int64_t> cols;
  cols.reserve(static_cast<size_t>(g.nnz()));
  for (int64_t r = 0; r < g.num_rows(); ++r) {
    for (int64_t p = g.row_begin(r); p < g.row_end(r); ++p)
      if (g.column(p) != r) cols.push_back(g.column(p));
    indptr.push_back(static_cast<int64_t>(cols.size()));
  }
  Tensor indices = Tensor::from_vector(cols);
  if (g.index_dtype() == DType::I32) indices = indices.cast(DType::I32);
  return Graph::from_csr(g.num_rows(), g.num_cols(), Tensor::from_vector(indptr), indices);
}

data::Splits planetoid_split(const Tensor& labels, int64_t num_classes, int64_t per_class, int64_t val, int64_t test,
                             uint64_t seed) {
  STRATA_ASSERT(labels.ndim() == 1, "planetoid_split needs one class per node, got labels {}", labels.describe());
  const int64_t* y = labels.data<int64_t>();
  std::vector<int64_t> labelled;
  for (int64_t i = 0; i < labels.numel(); ++i)
    if (y[i] >= 0) labelled.push_back(i);
  Rng rng(seed);
  const std::vector<int64_t> perm = rng.permutation(static_cast<int64_t>(labelled.size()));
  std::vector<int64_t> taken(static_cast<size_t>(num_classes), 0), tr, va, te, rest;
  for (int64_t k : perm) {
    const int64_t node = labelled[k];
    if (taken[y[node]] < per_class) {
      ++taken[y[node]];
      tr.push_back(node);
    } else {
      rest.push_back(node);
    }
  }
  STRATA_CHECK(static_cast<int64_t>(rest.size()) >= val + test,
               "data.split: a planetoid split needs {} validation + {} test nodes, but only {} labelled nodes remain "
               "after the {} training nodes (lower data.split.val_size / test_size, or use data.split.kind: random)",
               val, test, rest.size(), tr.size());
  va.assign(rest.begin(), rest.begin() + val);
  te.assign(rest.begin() + val, rest.begin() + val + test);
  for (auto* v : {&tr, &va, &te}) std::sort(v->begin(), v->end());
  data::Splits s;
  s.train = Tensor::from_vector(tr);
  s.val = Tensor::from_vector(va);
  s.test = Tensor::from_vector(te);
  s.origin = fmt::format("planetoid: {} per class, {} val, {} test, seed {}", per_class, val, test, seed);
  return s;
}

StoredFeatures store_features(const data::FeatureMatrix& f, const DataConfig& c) {
  StoredFeatures out;
  const double cells = static_cast<double>(f.rows()) * static_cast<double>(f.cols());
  if (f.is_sparse()) {
    const double density = static_cast<double>(f.stored()) / cells;
    if (c.feature_storage == FeatureStorage::Dense) {
      Tensor x = f.to_dense();
      if (c.normalize_features) normalize_rows(x);
      out.dense = x;
      out.note = fmt::format("sparse features densified ({} non-zero)", percent(density));
    } else {
      out.sparse = sparse_from(f, c.normalize_features, &out.binary);
    }
    return out;
  }
  Tensor x = f.dense_values();
  int64_t nonzero = 0;
  for (int64_t i = 0; i < x.numel(); ++i) nonzero += x.data<float>()[i] != 0.0f;
  const double density = static_cast<double>(nonzero) / cells;
  const bool to_sparse =
      c.feature_storage == FeatureStorage::Sparse || (c.feature_storage == FeatureStorage::Auto && density <= 0.10);
  if (c.normalize_features) {
    x = x.clone();
    normalize_rows(x);
  }
  if (to_sparse) {
    out.sparse = sparse_from_dense(x, &out.binary);
    out.note = fmt::format("dense features stored sparse for the first layer ({} non-zero)", percent(density));
  } else {
    out.dense = x;
  }
  return out;
}

namespace {

// data.node_features: edge_mean: per node, the mean of the features of the edges
// stored in its row (its in-edges), and with `both_ends` also of those in its column,
// counting a self-loop once; zeros for a node without edges.
data::FeatureMatrix edge_mean_features(const data::Dataset& ds, bool both_ends) {
  const Graph& g = ds.graph;
  const Tensor ids = g.edge_ids();
  const int64_t n = g.num_rows(), d = ds.edge_features.dim(1);
  Tensor x = Tensor::zeros({n, d}, DType::F32);
  std::vector<int64_t> count(static_cast<size_t>(n), 0);
  const float* f = ds.edge_features.data<float>();
  float* out = x.data<float>();
  const auto add = [&](int64_t node, int64_t edge) {
    for (int64_t k = 0; k < d; ++k) out[node * d + k] += f[edge * d + k];
    ++count[static_cast<size_t>(node)];
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = g.row_begin(i); p < g.row_end(i); ++p) {
      const int64_t j = g.column(p), e = ids.data<int64_t>()[p];
      STRATA_ASSERT(e >= 0 && e < ds.edge_features.dim(0), "edge id {} outside the {} edge feature rows", e,
                    ds.edge_features.dim(0));
      add(i, e);
      if (both_ends && j != i) add(j, e);
    }
  for (int64_t i = 0; i < n; ++i)
    if (count[static_cast<size_t>(i)] > 1)
      for (int64_t k = 0; k < d; ++k) out[i * d + k] /= static_cast<float>(count[static_cast<size_t>(i)]);
  return data::FeatureMatrix::dense(x);
}

// The dataset's node features in the storage the first layer reads (sparse when
// data.feature_storage says so or when they are mostly zeros), and its labels.
// `symmetrized`: the training graph is A ∪ Aᵀ (edge_mean then averages both ends).
void read_features_and_labels(const data::Dataset& ds, const DataConfig& c, const std::string& config_source,
                              bool symmetrized, TrainingData& td) {
  const int64_t n = td.graph.num_rows();
  bool binary = false;
  data::FeatureMatrix features = ds.features;
  if (c.node_features == NodeFeatureSource::OneHot) {
    features = {};
  } else if (c.node_features == NodeFeatureSource::EdgeMean) {
    STRATA_CHECK(ds.edge_features.defined(),
                 "{}: data.node_features is edge_mean (each node the mean of its edges' features), but '{}' has no "
                 "edge features",
                 config_source, c.dataset);
    features = edge_mean_features(ds, symmetrized);
    td.notes.push_back(fmt::format("node features: the mean of each node's {} edges' {} features{}",
                                   symmetrized ? "incident" : "incoming", ds.edge_features.dim(1),
                                   ds.features.defined() ? " (the dataset's node features not used)" : ""));
  }
  if (!features.defined()) {
    std::vector<int64_t> indptr(static_cast<size_t>(n) + 1);
    std::vector<int32_t> indices(static_cast<size_t>(n));
    for (int64_t i = 0; i <= n; ++i) indptr[i] = i;
    for (int64_t i = 0; i < n; ++i) indices[i] = static_cast<int32_t>(i);
    STRATA_CHECK(n < (int64_t{1} << 31), "{}: '{}' has no node features and too many nodes for one-hot ids",
                 config_source, c.dataset);
    td.sparse_features = nn::SparseFeatures::from_csr(n, n, Tensor::from_vector(indptr), Tensor::from_vector(indices), {});
    binary = true;
    td.notes.push_back(c.node_features == NodeFeatureSource::OneHot
                           ? "node features: one-hot node ids (a sparse identity; data.node_features: one_hot)"
                           : "no node features: one-hot node ids (a sparse identity)");
    STRATA_CHECK(c.feature_storage != FeatureStorage::Dense || n <= 50000,
                 "{}: data.feature_storage is dense, but '{}' has no features and one-hot ids for {} nodes would take "
                 "{} GB dense",
                 config_source, c.dataset, n, 4.0 * static_cast<double>(n) * static_cast<double>(n) / 1e9);
  } else {
    STRATA_CHECK(features.rows() == n, "{}: '{}' has features for {} nodes but the graph has {}", config_source,
                 c.dataset, features.rows(), n);
    StoredFeatures sf = store_features(features, c);
    td.dense_features = sf.dense;
    td.sparse_features = std::move(sf.sparse);
    binary = sf.binary;
    if (!sf.note.empty()) td.notes.push_back(sf.note);
    if (c.normalize_features) td.notes.push_back("features row-normalized");
  }
  if (td.sparse_features) {
    const auto& s = td.sparse_features->S;
    td.features_text = fmt::format("sparse{} [{}, {}], {} non-zeros ({})", binary ? " binary" : "", s.num_rows(),
                                   s.num_cols(), s.nnz(),
                                   percent(static_cast<double>(s.nnz()) / (static_cast<double>(s.num_rows()) * static_cast<double>(s.num_cols()))));
  } else {
    td.features_text = fmt::format("dense [{}, {}]", td.dense_features.dim(0), td.dense_features.dim(1));
  }

  td.labels = ds.labels;
  td.num_classes = ds.num_classes;
  td.class_names = ds.class_names;
  td.node_names = ds.node_names;
}

// Seeded normal features [N, features] and uniform labels over `classes`.
void random_features_and_labels(TrainingData& td, int64_t features, int64_t classes, uint64_t seed) {
  const int64_t n = td.graph.num_rows();
  Rng rng(seed);
  td.dense_features = Tensor::normal({n, features}, 0.0, 1.0, rng);
  td.features_text = fmt::format("dense [{}, {}] (random normal)", n, features);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[i] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(classes)));
  td.labels = Tensor::from_vector(labels);
  td.num_classes = classes;
}

// Every part of the split is non-empty and holds labelled nodes of the graph only.
void check_split(const data::Splits& splits, const TrainingData& td, const DataConfig& c,
                 const std::string& config_source) {
  const std::pair<const char*, const Tensor*> parts[] = {
      {"train", &splits.train}, {"validation", &splits.val}, {"test", &splits.test}};
  for (const auto& [what, t] : parts) {
    STRATA_CHECK(data::Splits::size_of(*t) > 0, "{}: the {} split of '{}' is empty ({})", config_source, what,
                 c.dataset, splits.origin);
    for (int64_t i = 0; i < t->numel(); ++i) {
      const int64_t node = t->data<int64_t>()[i];
      STRATA_CHECK(node >= 0 && node < td.num_nodes() && is_labelled(td.labels, node),
                   "{}: the {} split of '{}' holds node {}, which has no label", config_source, what, c.dataset, node);
    }
  }
}

}  // namespace

data::Dataset load_configured_dataset(const DataConfig& c, const std::string& config_source, data::LoadReport* report) {
  data::LoadOptions lo;
  if (!c.data_root.empty()) lo.data_root = c.data_root;
  lo.use_cache = c.cache;
  lo.seed = c.split.seed;
  try {
    return data::load_dataset(c.dataset, lo, report);
  } catch (const UserError& e) {
    STRATA_FAIL("{}: data.dataset '{}' could not be loaded: {}", config_source, c.dataset, e.what());
  }
}

namespace {

// data.dataset loaded, its name, source and metric kept in `td`; a heterograph is refused
// with `why_not` ("GraphSAGE, GCN and GAT train on homogeneous graphs ...").
data::Dataset load_homogeneous(const DataConfig& c, const std::string& config_source, TrainingData& td,
                               const std::string& why_not) {
  data::Dataset ds = load_configured_dataset(c, config_source, &td.load);
  td.name = ds.name;
  td.source = ds.source;
  td.eval_metric = ds.eval_metric;
  STRATA_CHECK(!ds.is_hetero(), "{}: dataset '{}' is heterogeneous (a typed graph, loaded as {}); {}", config_source,
               c.dataset, ds.format, why_not);
  return ds;
}

// data.self_loops applied to the training graph (auto: add for GCN), with a note of what changed.
Graph apply_self_loops(Graph g, SelfLoops loops, nn::ModelKind model, std::vector<std::string>& notes) {
  if (loops == SelfLoops::Auto) loops = model == nn::ModelKind::Gcn ? SelfLoops::Add : SelfLoops::Keep;
  if (loops == SelfLoops::Add) {
    const int64_t before = g.nnz();
    g = g.with_self_loops();
    notes.push_back(fmt::format("self-loops added: {} -> {} edges", before, g.nnz()));
  } else if (loops == SelfLoops::Remove) {
    const int64_t found = count_self_loops(g);
    if (found > 0) g = remove_self_loops(g);
    notes.push_back(fmt::format("self-loops removed: {}", found));
  }
  return g;
}

}  // namespace

TrainingData prepare_data(const DataConfig& c, nn::ModelKind model, const std::string& config_source) {
  Timer total;
  TrainingData td;
  const data::Dataset ds = load_homogeneous(c, config_source, td,
                                            "GraphSAGE, GCN and GAT train on homogeneous graphs (model.name: rgcn "
                                            "trains on heterogeneous ones)");
  STRATA_CHECK(c.random_task || ((ds.task == data::Task::NodeClassification ||
                                  ds.task == data::Task::MultiLabelNodeClassification) &&
                                 ds.labels.defined()),
               "{}: dataset '{}' has no node classes (task: {}); strata train trains node classifiers "
               "(data.task: random trains on random labels, for timing)",
               config_source, c.dataset, data::task_name(ds.task));
  STRATA_CHECK(c.random_task || ds.num_classes >= 2, "{}: dataset '{}' has {} class(es); classification needs at least 2", config_source,
               c.dataset, ds.num_classes);
  STRATA_CHECK(ds.graph.num_rows() == ds.graph.num_cols(), "{}: dataset '{}' is not a square graph ({})",
               config_source, c.dataset, ds.graph.describe());

  // The training graph.
  Graph g = ds.graph;
  if (c.edge_weights) {
    STRATA_CHECK(model == nn::ModelKind::Gcn,
                 "{}: data.edge_weights: use applies to GCN (GraphConv, like PyG's GCNConv edge_weight); {} aggregates "
                 "without edge weights (set data.edge_weights: ignore)",
                 config_source, nn::model_kind_name(model));
    STRATA_CHECK(ds.graph.has_values(), "{}: data.edge_weights is 'use', but dataset '{}' has no edge weights",
                 config_source, c.dataset);
    // GCN's normalisation takes square roots of weighted degrees.
    const float* w = ds.graph.values().data<float>();
    for (int64_t k = 0; k < ds.graph.nnz(); ++k)
      STRATA_CHECK(w[k] >= 0,
                   "{}: data.edge_weights: use needs non-negative weights (GCN normalises by the square "
                   "root of weighted degrees), but '{}' has weight {} on stored edge {}",
                   config_source, c.dataset, w[k], k);
    td.notes.push_back("edge weights used: weighted aggregation and degrees; self-loops added with weight 1");
  } else if (ds.graph.has_values()) {
    g = ds.graph.without_values();
    td.notes.push_back("edge weights ignored (unweighted aggregation; data.edge_weights: use for GCN)");
  }
  const bool symmetrize = c.undirected == Tristate::Yes || (c.undirected == Tristate::Auto && ds.undirected);
  if (symmetrize) {
    const int64_t before = g.nnz();
    g = g.symmetrized();
    td.notes.push_back(fmt::format("symmetrized (A ∪ Aᵀ): {} -> {} edges", before, g.nnz()));
  }
  td.graph = apply_self_loops(g, c.self_loops, model, td.notes);

  // Input features, labels and the split.
  STRATA_CHECK(!c.random_task || c.node_features == NodeFeatureSource::Auto,
               "{}: data.node_features applies to the dataset's features, but data.task: random trains on random ones; "
               "leave data.node_features at auto",
               config_source);
  if (c.random_task) {
    random_features_and_labels(td, c.random_features, c.random_classes, c.split.seed);
    td.notes.push_back(fmt::format("data.task random: random features and labels over {} classes (accuracy is "
                                   "chance; for timing)",
                                   c.random_classes));
  } else {
    read_features_and_labels(ds, c, config_source, symmetrize, td);
  }
  SplitKind kind = c.split.kind;
  // Multi-label nodes have no one class to draw 20 of per class: auto draws a random split.
  if (kind == SplitKind::Auto)
    kind = c.random_task || (td.multilabel() && ds.splits.empty()) ? SplitKind::Random
           : ds.splits.empty()                                     ? SplitKind::Planetoid
                                                                   : SplitKind::Dataset;
  STRATA_CHECK(kind != SplitKind::Planetoid || !td.multilabel(),
               "{}: data.split.kind is 'planetoid' ({} per class), but '{}' is multi-label (a node carries several "
               "classes); use random (data.split.train_ratio, val_ratio) or the dataset's own split",
               config_source, c.split.train_per_class, c.dataset);
  td.split_kind = kind;
  if (kind == SplitKind::Dataset) {
    STRATA_CHECK(!ds.splits.empty(), "{}: data.split.kind is 'dataset', but '{}' comes without a split (use {})",
                 config_source, c.dataset, td.multilabel() ? "random" : "planetoid or random");
    STRATA_CHECK(!c.split.per_run,
                 "{}: data.split.per_run draws a new planetoid or random split for every run, but '{}' is trained on "
                 "its own split (data.split.kind: {}); set data.split.kind to {}, or per_run to false",
                 config_source, c.dataset, c.split.kind == SplitKind::Auto ? "auto" : "dataset",
                 td.multilabel() ? "random" : "planetoid or random");
    td.splits = ds.splits;
    check_split(td.splits, td, c, config_source);
  } else if (kind == SplitKind::File) {
    STRATA_CHECK(!c.split.per_run,
                 "{}: data.split.per_run draws a new planetoid or random split for every run, but data.split.kind "
                 "'file' trains every run on the file's split; set per_run to false",
                 config_source);
    try {
      td.splits = read_split_json(c.split.file, td.num_nodes());
    } catch (const UserError& e) {
      STRATA_FAIL("{}: data.split.file: {}", config_source, e.what());
    }
    check_split(td.splits, td, c, config_source);
  } else {
    td.splits = split_for_run(td, c, config_source, 1);
  }
  td.prepare_ms = total.ms();
  return td;
}

TrainingData prepare_link_data(const DataConfig& c, nn::ModelKind model, const std::string& config_source,
                               LinkSplit& split) {
  Timer total;
  TrainingData td;
  const data::Dataset ds =
      load_homogeneous(c, config_source, td, "link prediction (data.task: link) trains on homogeneous graphs");
  STRATA_CHECK(ds.graph.num_rows() == ds.graph.num_cols(), "{}: dataset '{}' is not a square graph ({})", config_source,
               c.dataset, ds.graph.describe());
  STRATA_CHECK(c.undirected != Tristate::No,
               "{}: data.undirected is false, but link prediction (data.task: link) predicts undirected edges and "
               "passes messages both ways; set data.undirected to auto or true",
               config_source);
  STRATA_CHECK(c.node_features != NodeFeatureSource::EdgeMean,
               "{}: data.node_features is edge_mean, which would average the features of held-out edges into the "
               "input of link prediction (data.task: link); use auto or one_hot",
               config_source);
  split = split_links(ds.graph, c.link.val_ratio, c.link.test_ratio, c.split.seed, config_source);
  Graph g = symmetric_pair_graph(ds.graph.num_rows(), split.train);
  td.notes.push_back(
      fmt::format("link prediction: {} undirected edges held out for validation and {} for testing "
                  "(with as many non-edges each); message passing over the {} training edges both "
                  "ways ({} non-zeros)",
                  commas(split.val.size()), commas(split.test.size()), commas(split.train.size()), commas(g.nnz())));
  td.graph = apply_self_loops(g, c.self_loops, model, td.notes);
  read_features_and_labels(ds, c, config_source, /*symmetrized=*/true, td);
  td.labels = Tensor();  // link prediction has pairs, not node classes
  td.num_classes = 0;
  td.class_names.clear();
  td.splits.origin = split.origin();
  td.split_kind = SplitKind::Random;
  td.prepare_ms = total.ms();
  return td;
}

data::Splits split_for_run(const TrainingData& td, const DataConfig& c, const std::string& config_source, int run) {
  if (td.split_is_fixed() || (run > 1 && !c.split.per_run)) return td.splits;
  const uint64_t seed = c.split.seed_for_run(run);
  data::Splits drawn;
  if (td.split_kind == SplitKind::Planetoid) {
    drawn = planetoid_split(td.labels, td.num_classes, c.split.train_per_class, c.split.val_size,
                                   c.split.test_size, seed);
  } else {
    drawn =
        data::random_split(labelled_nodes(td.labels, 0, td.num_nodes()), c.split.train_ratio, c.split.val_ratio, seed);
  }
  check_split(drawn, td, c, config_source);
  return drawn;
}

TrainingData random_task(const std::string& spec, int64_t features, int64_t classes, uint64_t seed) {
  data::LoadReport rep;
  data::LoadOptions lo;
  data::Dataset ds = data::load_dataset(spec, lo, &rep);
  TrainingData td;
  td.name = spec.substr(0, spec.find(':'));
  td.source = ds.source;
  td.load = rep;
  td.graph = ds.graph.has_values() ? ds.graph.without_values() : ds.graph;
  random_features_and_labels(td, features, classes, seed);
  std::vector<int64_t> ids(static_cast<size_t>(td.graph.num_rows()));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  td.splits = data::random_split(ids, 0.6, 0.2, seed);
  return td;
}

}  // namespace strata::train
