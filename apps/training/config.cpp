#include "apps/training/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "core/file_util.h"
#include "datasets/generator_params.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::train {
namespace {

KeySpec make_key(std::string path, ValueType type, std::string def, std::string help) {
  KeySpec k;
  k.path = std::move(path);
  k.type = type;
  k.default_value = std::move(def);
  k.help = std::move(help);
  return k;
}

KeySpec key_int(std::string path, std::string def, double lo, double hi, std::string help) {
  KeySpec k = make_key(std::move(path), ValueType::Int, std::move(def), std::move(help));
  k.has_range = true;
  k.min = lo;
  k.max = hi;
  return k;
}

KeySpec key_float(std::string path, std::string def, double lo, double hi, bool lo_open, bool hi_open,
                  std::string help) {
  KeySpec k = make_key(std::move(path), ValueType::Float, std::move(def), std::move(help));
  k.has_range = true;
  k.min = lo;
  k.max = hi;
  k.min_open = lo_open;
  k.max_open = hi_open;
  return k;
}

KeySpec key_bool(std::string path, std::string def, std::string help) {
  return make_key(std::move(path), ValueType::Bool, std::move(def), std::move(help));
}

KeySpec key_string(std::string path, std::string def, std::string help) {
  return make_key(std::move(path), ValueType::String, std::move(def), std::move(help));
}

KeySpec key_enum(std::string path, std::string def, std::vector<std::string> choices, std::string help) {
  KeySpec k = make_key(std::move(path), ValueType::Enum, std::move(def), std::move(help));
  k.choices = std::move(choices);
  return k;
}

KeySpec required(KeySpec k) {
  k.required = true;
  return k;
}

constexpr double kBig = 9.2e18;  // integer keys without a natural upper bound

std::vector<KeySpec> build_schema() {
  std::vector<KeySpec> s;
  s.push_back(required(key_int("version", "", 1, kBig, "config schema version; this Strata reads version 1")));
  // data
  s.push_back(required(key_string(
      "data.dataset", "",
      "dataset: a short name (cora, citeseer, facebook, ...), prefix:path (linqs:, ogb:, musae:, mtx:, edgelist:, ...) "
      "or a generator (sbm:nodes=2000,classes=5,seed=1; rmat:scale=17,edge_factor=16,seed=1; for R-GCN "
      "rsbm:nodes=2000,relations=6,seed=1)")));
  s.push_back(key_string("data.data_root", "",
                         "folder holding the datasets; empty: --data-root, $STRATA_DATA_ROOT or ../shared/datasets"));
  s.push_back(
      key_enum("data.task", "dataset", {"dataset", "random", "link"},
               "dataset: the dataset's node features and classes; random: seeded random normal features "
               "(data.random_features per node) and uniform labels over data.random_classes classes on the "
               "dataset's graph, split by data.split (auto: random ratios); for timing epochs on graphs without "
               "node classes (R-MAT, edge lists), where accuracy is chance; link: link prediction, the graph's "
               "undirected edges split by data.link into training, validation and test pairs, scored by the "
               "dot product of the model's node embeddings (GraphSAGE, GCN, GAT)"));
  s.push_back(
      key_float("data.link.val_ratio", "0.05", 0, 1, true, true,
                "link: share of the undirected edges held out for validation (with as many sampled non-edges)"));
  s.push_back(key_float("data.link.test_ratio", "0.1", 0, 1, true, true,
                        "link: share of the undirected edges held out for testing (with as many sampled non-edges)"));
  s.push_back(key_int("data.random_features", "128", 1, 65536, "data.task random: input features per node"));
  s.push_back(key_int("data.random_classes", "8", 2, 65536, "data.task random: number of classes"));
  s.push_back(key_bool("data.cache", "true", "read and write the binary dataset cache ($STRATA_CACHE_DIR/datasets)"));
  s.push_back(key_enum("data.undirected", "auto", {"auto", "true", "false"},
                       "true: train on A ∪ Aᵀ (symmetrize); false: keep the files' edge direction; auto: symmetrize "
                       "when the dataset says its edges are undirected"));
  s.push_back(key_enum("data.self_loops", "auto", {"auto", "add", "remove", "keep"},
                       "self-loops of the training graph; auto: add for gcn, keep for graphsage and gat (GATConv adds its own, model.gat.self_loops)"));
  s.push_back(key_bool("data.normalize_features", "false", "divide each node's features by their sum (row-normalize)"));
  s.push_back(key_enum("data.feature_storage", "auto", {"auto", "dense", "sparse"},
                       "how the first layer reads the features; auto: sparse (never densified) when at most 10% of "
                       "the entries are non-zero"));
  s.push_back(key_enum("data.node_features", "auto", {"auto", "one_hot", "edge_mean"},
                       "the input of GraphSAGE, GCN and GAT: auto, the dataset's node features (one-hot node ids when "
                       "it has none); one_hot, one-hot node ids; edge_mean, each node the mean of its edges' "
                       "features (both directions when the graph is symmetrized: OGB's ogbn-proteins recipe)"));
  s.push_back(key_enum("data.edge_weights", "ignore", {"ignore", "use"},
                       "use: GCN aggregates with the dataset's edge weights (the destination's weighted in-degree, the "
                       "source's weighted out-degree, as DGL's GraphConv; on a symmetric graph the same as PyG's "
                       "GCNConv with edge_weight, which takes in-degrees at both ends); ignore: every edge counts 1"));
  s.push_back(key_enum("data.split.kind", "auto", {"auto", "dataset", "planetoid", "random", "file"},
                       "dataset: the dataset's own split; planetoid: train_per_class per class, then val_size and "
                       "test_size nodes; random: train_ratio / val_ratio / rest; file: data.split.file; auto: dataset "
                       "if it has one, else planetoid (random for multi-label classes)"));
  s.push_back(key_string("data.split.file", "",
                         "file: a JSON file {\"train\": [...], \"val\": [...], \"test\": [...]} of node ids, as "
                         "a run dir's split.json"));
  s.push_back(key_int("data.split.train_per_class", "20", 1, kBig, "planetoid: labelled training nodes per class"));
  s.push_back(key_int("data.split.val_size", "500", 1, kBig, "planetoid: validation nodes"));
  s.push_back(key_int("data.split.test_size", "1000", 1, kBig, "planetoid: test nodes"));
  s.push_back(key_float("data.split.train_ratio", "0.6", 0, 1, true, true, "random: share of labelled nodes for training"));
  s.push_back(key_float("data.split.val_ratio", "0.2", 0, 1, true, true, "random: share of labelled nodes for validation"));
  s.push_back(key_int("data.split.seed", "0", 0, kBig,
                      "seed of planetoid and random splits (the same for every run unless data.split.per_run)"));
  s.push_back(key_bool("data.split.per_run", "false",
                       "planetoid and random splits: draw a new split for every run, run k from seed data.split.seed + "
                       "k - 1 (the random-split protocol of Shchur et al. 2018); false: every run uses one split"));
  s.push_back(key_float("data.split.holdout", "0.2", 0, 1, true, true,
                        "rgcn: a dataset split without validation nodes (RDF) gives this share of its training nodes "
                        "to validation"));  // rgcn
  // model
  s.push_back(key_enum("model.name", "graphsage", {"graphsage", "gcn", "gat", "rgcn"},
                       "architecture: GraphSAGE (SAGEConv), GCN (GraphConv), GAT (GATConv; model.hidden is per head) "
                       "or R-GCN (RelGraphConv, heterographs)"));
  s.push_back(key_int("model.layers", "2", 1, 16, "number of graph layers"));
  s.push_back(key_int("model.hidden", "16", 1, 65536, "width of the hidden layers"));
  s.push_back(key_enum("model.activation", "relu", {"relu", "elu", "leaky_relu"}, "activation between layers"));
  s.push_back(key_float("model.negative_slope", "0.01", 0, 1, false, false, "leaky_relu: slope for negative inputs"));
  s.push_back(key_float("model.dropout", "0.5", 0, 1, false, true, "dropout on hidden representations"));
  s.push_back(key_float("model.input_dropout", "0", 0, 1, false, true,
                        "dropout on the input features (sparse inputs: on their stored entries)"));
  s.push_back(key_enum("model.aggregator", "mean", {"mean", "gcn", "sum", "max"},
                       "graphsage: neighbour aggregator (gcn: mean over the node and its neighbours; max: the "
                       "feature-wise maximum, as PyG's aggr=\"max\", needs a dense first-layer input)"));
  s.push_back(key_bool("model.root_weight", "true", "graphsage: add a separate weight for the node's own features"));
  s.push_back(key_enum("model.norm", "both", {"both", "right", "none"},
                       "gcn: normalisation, both: D^-1/2 A D^-1/2, right: D^-1 A, none: A"));
  s.push_back(key_bool("model.l2_normalize", "false", "L2-normalise each hidden representation"));
  s.push_back(key_bool("model.bias", "true", "learn a bias in every layer"));
  // ---- model.gat: GAT only ----
  s.push_back(key_enum("model.link.predictor", "dot", {"dot", "mlp"},
                       "link: the pair score from the two embeddings; dot: their dot product (the compiled SDDMM); "
                       "mlp: OGB's LinkPredictor, an MLP over their element-wise product"));
  s.push_back(key_int("model.link.predictor_layers", "3", 1, 16,
                      "link, mlp: Linear layers of the predictor (model.hidden wide, relu and model.dropout between)"));
  s.push_back(key_int("model.gat.heads", "8", 1, 256, "gat: attention heads of each hidden layer"));
  s.push_back(key_int("model.gat.output_heads", "1", 1, 256, "gat: attention heads of the output layer (averaged)"));
  s.push_back(key_bool("model.gat.concat", "true", "gat: hidden layers concatenate their heads (false: average them)"));
  s.push_back(key_float("model.gat.negative_slope", "0.2", 0, 1, false, false,
                        "gat: slope of the attention scores' LeakyReLU"));
  s.push_back(key_float("model.gat.attn_dropout", "0.6", 0, 1, false, true,
                        "gat: dropout on the attention probabilities (training only)"));
  s.push_back(key_bool("model.gat.residual", "false", "gat: add a projected residual connection in every layer"));
  s.push_back(key_bool("model.gat.self_loops", "true",
                       "gat: attend over A + I (a self-loop for every node, as PyG's GATConv); false: over A"));
  // ---- end model.gat ----
  // ---- rgcn (models/rgcn.h) ----
  s.push_back(key_int("model.num_bases", "0", 0, 65536,
                      "rgcn: basis decomposition W_r = sum_b c_rb V_b with this many bases; 0: a full weight per relation"));
  s.push_back(key_bool("model.self_loop", "true", "rgcn: add a separate weight for the node's own representation"));
  s.push_back(key_enum("model.input", "auto", {"auto", "one_hot", "embedding"},
                       "rgcn: featureless nodes; one_hot: R-GCN's identity input (every type featureless); embedding: "
                       "a learned embedding per featureless type, featured types projected; auto: one_hot when no "
                       "type has features"));
  s.push_back(key_int("model.embedding_dim", "16", 1, 65536,
                      "rgcn: width of the learned embeddings and projected type features (the first layer's input)"));
  s.push_back(key_enum("model.type_features", "all", {"all", "target"},
                       "rgcn: node types whose features are used (target: only the labelled type's; others embedded)"));
  // ---- end rgcn ----
  // optimizer
  s.push_back(key_enum("optimizer.name", "adam", {"adam", "sgd"}, "optimizer"));
  s.push_back(key_float("optimizer.lr", "0.01", 0, 1e30, true, false, "learning rate"));
  s.push_back(key_float("optimizer.weight_decay", "0", 0, 1e30, false, false,
                        "weight decay (L2 coefficient, PyTorch semantics)"));
  s.push_back(key_bool("optimizer.decoupled", "false",
                       "false: L2, wd·p added to the gradient (PyTorch's weight_decay); true: decoupled shrinkage (AdamW)"));
  s.push_back(key_enum("optimizer.decay_scope", "all", {"all", "weights", "first_layer"},
                       "parameters weight decay applies to (first_layer: Kipf & Welling's GCN)"));
  s.push_back(key_float("optimizer.beta1", "0.9", 0, 1, false, true, "adam: first-moment decay"));
  s.push_back(key_float("optimizer.beta2", "0.999", 0, 1, false, true, "adam: second-moment decay"));
  s.push_back(key_float("optimizer.eps", "1e-08", 0, 1, true, false, "adam: denominator epsilon"));
  s.push_back(key_float("optimizer.momentum", "0.9", 0, 1, false, true, "sgd: momentum (0: plain SGD)"));
  s.push_back(key_bool("optimizer.nesterov", "false", "sgd: Nesterov momentum"));
  s.push_back(key_enum("optimizer.schedule", "constant", {"constant", "cosine", "step"},
                       "learning rate per epoch: constant; cosine from lr to 0 over training.epochs; step: times "
                       "gamma every step_size epochs"));
  s.push_back(key_int("optimizer.step_size", "50", 1, kBig, "step schedule: epochs between decays"));
  s.push_back(key_float("optimizer.gamma", "0.5", 0, 1, true, false, "step schedule: the factor of each decay"));
  // training
  s.push_back(key_int("training.epochs", "200", 1, 1e7, "full-graph training epochs per run"));
  s.push_back(key_int("training.eval_period", "1", 1, kBig, "evaluate (train/val/test accuracy) every this many epochs"));
  s.push_back(key_enum("training.select_by", "val_acc", {"val_acc", "val_loss"},
                       "the best epoch (its test score reported, checkpoint kept): highest validation score "
                       "(training.metric; ties: lower loss) or lowest validation loss"));
  s.push_back(
      key_enum("training.metric", "auto", {"auto", "accuracy", "micro_f1", "rocauc"},
               "the score runs report and select by: accuracy (multi-label: the exact class set), micro_f1 "
               "(single-label: the accuracy) or rocauc (multi-label: OGB's mean ROC-AUC over the classes); "
               "auto: the dataset's OGB metric (ogbn-proteins: rocauc), else accuracy or, multi-label, micro_f1"));
  s.push_back(key_int("training.patience", "0", 0, kBig,
                      "stop a run after this many evaluations without a better best epoch; 0: never"));
  s.push_back(key_int("training.runs", "1", 1, 1000, "independent runs (seeds seed, seed+1, ...); mean ± std reported"));
  s.push_back(key_int("training.seed", "0", 0, kBig, "seed of the first run: initial weights and dropout masks"));
  s.push_back(key_int("training.batch_size", "0", 0, kBig,
                      "training nodes per mini-batch, each over its sampled neighbourhood (GraphSAGE, GCN, GAT); 0: "
                      "full-graph epochs"));
  s.push_back(key_int("training.link.negatives", "1", 1, 1000,
                      "link: non-edges sampled per training edge, afresh every epoch (uniform node pairs that are "
                      "not training edges)"));
  s.push_back(key_int("training.link.batch_pairs", "0", 0, kBig,
                      "link: training edges per optimizer step, each step a full-graph forward (as OGB's link "
                      "examples); 0: all in one step per epoch"));
  s.push_back(key_int("training.link.hits_k", "0", 0, 100000,
                      "link: K of Hits@K, the share of held-out edges scored above the K-th best non-edge (OGB); 0: "
                      "the dataset's own K (ogbl-ddi: 20), else 20"));
  s.push_back(key_string("training.fanouts", "",
                         "in-neighbours sampled per node and layer, input layer first: \"10,25\" or [10, 25] (-1: "
                         "all); empty: all (needs training.batch_size)"));
  s.back().list = true;
  // runtime
  s.push_back(key_int("runtime.threads", "0", 0, 4096, "OpenMP threads; 0: OpenMP's default (OMP_NUM_THREADS, else all cores)"));
  s.push_back(key_enum("runtime.backend", "generated", {"generated", "reference"},
                       "sparse kernels: generated by the compiler, or the plain reference loops"));
  s.push_back(key_bool(
      "runtime.tuning", "false",
      "measure kernel formats and schedules on this graph (records reused); off: untuned plans chosen by size"));
  s.push_back(key_enum("runtime.attention", "auto", {"auto", "tuned", "fused", "unfused"},
                       "gat: attention forward; tuned: measured per graph (tune_gat); auto: tuned with runtime.tuning, "
                       "else unfused"));
  s.push_back(key_string("runtime.plans", "",
                         "an earlier run's kernels.json: every SpMM kernel runs the plan, every R-GCN kernel set the "
                         "order, recorded for its role (no tuning, no size rules); empty: choose them"));
  s.push_back(key_string("runtime.cache_dir", "", "kernel and dataset cache; empty: $STRATA_CACHE_DIR or ~/.cache/strata"));
  // output
  s.push_back(key_string("output.run_dir", "runs/{config}",
                         "where results go; {config} is the config file's name without extension"));
  s.push_back(key_bool("output.overwrite", "true", "replace an existing run dir once the new run has finished"));
  s.push_back(key_enum("output.checkpoint", "best", {"best", "last", "none"},
                       "checkpoint per run: the best-validation epoch's model, the last epoch's, or none"));
  s.push_back(key_int("output.log_every", "1", 0, kBig, "print one epoch line every this many epochs; 0: none"));
  s.push_back(key_int("output.resume_every", "50", 0, kBig,
                      "write a resume point every this many epochs and after each run (strata train --resume "
                      "continues a killed run from it); 0: none"));
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string format_number(double v) { return fmt::format("{}", v); }

std::string range_text(const KeySpec& k) {
  auto num = [&](double v) { return k.type == ValueType::Int && std::abs(v) < 1e15 ? fmt::format("{}", static_cast<int64_t>(v)) : format_number(v); };
  if (k.max >= kBig) return fmt::format("{} {}", k.min_open ? ">" : ">=", num(k.min));
  if (k.max >= 1e30) return fmt::format("{} {}", k.min_open ? ">" : ">=", num(k.min));
  return fmt::format("in {}{}, {}{}", k.min_open ? "(" : "[", num(k.min), num(k.max), k.max_open ? ")" : "]");
}

bool in_range(const KeySpec& k, double v) {
  if (!k.has_range) return true;
  if (k.min_open ? v <= k.min : v < k.min) return false;
  if (k.max_open ? v >= k.max : v > k.max) return false;
  return true;
}

// Canonical text for a raw scalar, or an error message (empty text) when invalid.
std::optional<std::string> canonical(const KeySpec& k, const std::string& raw, std::string* why) {
  switch (k.type) {
    case ValueType::Int: {
      int64_t v = 0;
      const char* end = raw.data() + raw.size();
      auto r = std::from_chars(raw.data() + (!raw.empty() && raw[0] == '+'), end, v);
      if (raw.empty() || r.ec != std::errc() || r.ptr != end || !in_range(k, static_cast<double>(v))) return std::nullopt;
      return std::to_string(v);
    }
    case ValueType::Float: {
      char* end = nullptr;
      const double v = std::strtod(raw.c_str(), &end);
      if (raw.empty() || end != raw.c_str() + raw.size() || !std::isfinite(v) || !in_range(k, v)) return std::nullopt;
      return format_number(v);
    }
    case ValueType::Bool: {
      const std::string l = lower(raw);
      if (l == "true" || l == "yes" || l == "on") return std::string("true");
      if (l == "false" || l == "no" || l == "off") return std::string("false");
      return std::nullopt;
    }
    case ValueType::String: return raw;
    case ValueType::Enum: {
      const std::string l = lower(raw);
      // YAML writes booleans for `true`/`yes`/`on`: accept them for true/false choices.
      const std::string b = l == "yes" || l == "on" ? "true" : l == "no" || l == "off" ? "false" : l;
      for (const auto& c : k.choices)
        if (c == l || c == b) return c;
      const std::string hint = data::nearest_name(l, k.choices);
      if (!hint.empty() && why) *why = fmt::format(" (did you mean '{}'?)", hint);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

const KeySpec* find_key(const std::string& path) {
  for (const KeySpec& k : config_schema())
    if (k.path == path) return &k;
  return nullptr;
}

// The sections: every proper prefix of a key path ("data", "data.split", ...).
const std::set<std::string>& sections() {
  static const std::set<std::string> s = [] {
    std::set<std::string> out;
    for (const KeySpec& k : config_schema())
      for (size_t p = k.path.find('.'); p != std::string::npos; p = k.path.find('.', p + 1)) out.insert(k.path.substr(0, p));
    return out;
  }();
  return s;
}

std::string parent_of(const std::string& path) {
  const size_t p = path.rfind('.');
  return p == std::string::npos ? "" : path.substr(0, p);
}

std::string leaf_of(const std::string& path) {
  const size_t p = path.rfind('.');
  return p == std::string::npos ? path : path.substr(p + 1);
}

// What other GNN tools call a section or key (GraphGym's optim/gnn/train sections,
// DGL-Go's and PyG examples' key names), and Strata's path for it: a user bringing
// such a config gets the one name to use, which edit distance would not find
// ('optim' is four edits from 'optimizer'). Sections by name, keys by their last part.
std::optional<std::string> strata_name_for(const std::string& path) {
  static const std::map<std::string, std::string> sections = {
      {"optim", "optimizer"}, {"train", "training"}, {"dataset", "data"}, {"gnn", "model"}, {"out", "output"}};
  static const std::map<std::string, std::string> keys = {
      {"base_lr", "optimizer.lr"},           {"learning_rate", "optimizer.lr"},
      {"max_epoch", "training.epochs"},      {"num_epochs", "training.epochs"},
      {"dim_inner", "model.hidden"},         {"hidden_channels", "model.hidden"},
      {"hidden_size", "model.hidden"},       {"hidden_dim", "model.hidden"},
      {"layers_mp", "model.layers"},         {"num_layers", "model.layers"},
      {"num_heads", "model.gat.heads"},      {"attn_drop", "model.gat.attn_dropout"},
      {"feat_drop", "model.dropout"},        {"act", "model.activation"},
      {"agg", "model.aggregator"},           {"aggregator_type", "model.aggregator"},
      {"out_dir", "output.run_dir"},         {"num_runs", "training.runs"},
      {"fan_out", "training.fanouts"},       {"neighbor_sizes", "training.fanouts"},
      {"num_neighbors", "training.fanouts"}, {"num_threads", "runtime.threads"},
      {"scheduler", "optimizer.schedule"},   {"lr_decay", "optimizer.gamma"},
      {"optimizer", "optimizer.name"},       {"name", "data.dataset"}};
  const std::string parent = parent_of(path), leaf = leaf_of(path);
  if (parent.empty()) {
    if (auto it = sections.find(leaf); it != sections.end()) return it->second;
  }
  auto it = keys.find(leaf);
  if (it == keys.end()) return std::nullopt;
  // 'name' and 'optimizer' are Strata names too; only their foreign sections mean these.
  if (leaf == "name" && parent != "dataset" && parent != "data") return std::nullopt;
  if (leaf == "optimizer" && parent != "optim") return std::nullopt;
  return it->second;
}

// "; did you mean 'model.hidden'?" for an unknown key or section, or "".
std::string suggestion(const std::string& path) {
  if (const auto ours = strata_name_for(path))
    return fmt::format("; did you mean '{}'? (Strata's name for what other GNN tools call '{}')", *ours, path);
  const std::string parent = parent_of(path), leaf = leaf_of(path);
  std::vector<std::string> siblings;
  for (const KeySpec& k : config_schema())
    if (parent_of(k.path) == parent) siblings.push_back(leaf_of(k.path));
  for (const std::string& s : sections())
    if (parent_of(s) == parent) siblings.push_back(leaf_of(s));
  const std::string near = data::nearest_name(leaf, siblings);
  if (!near.empty()) return fmt::format("; did you mean '{}'?", parent.empty() ? near : parent + "." + near);
  // The same name in another section: a misplaced key.
  for (const KeySpec& k : config_schema())
    if (leaf_of(k.path) == leaf) return fmt::format("; did you mean '{}'? ('{}' belongs in section '{}')", k.path, leaf, parent_of(k.path));
  std::vector<std::string> all;
  for (const KeySpec& k : config_schema()) all.push_back(k.path);
  const std::string full = data::nearest_name(path, all);
  if (!full.empty()) return fmt::format("; did you mean '{}'?", full);
  if (siblings.empty()) return "";
  std::sort(siblings.begin(), siblings.end());
  siblings.erase(std::unique(siblings.begin(), siblings.end()), siblings.end());
  return fmt::format(" (valid {}: {})", parent.empty() ? "sections" : "keys in '" + parent + "'", fmt::join(siblings, ", "));
}

std::string where(const std::string& source, const YAML::Mark& m) {
  if (m.line < 0) return source;
  return SourceLocation{source, m.line + 1, m.column + 1}.str();
}

}  // namespace

std::string KeySpec::expectation() const {
  switch (type) {
    case ValueType::Int: return fmt::format("an integer {}", range_text(*this));
    case ValueType::Float: return fmt::format("a number {}", range_text(*this));
    case ValueType::Bool: return "true or false";
    case ValueType::String: return "a string";
    case ValueType::Enum: return fmt::format("one of: {}", fmt::join(choices, ", "));
  }
  return "?";
}

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = build_schema();
  return schema;
}

std::string schema_help() {
  std::string out =
      "Training config keys (YAML; version 1). Every key but version and data.dataset has a default.\n"
      "Override any key with --set key=value.\n\n";
  std::string section;
  for (const KeySpec& k : config_schema()) {
    const std::string top = k.path.substr(0, k.path.find('.'));
    if (top != section && k.path.find('.') != std::string::npos) {
      section = top;
      out += fmt::format("{}:\n", section);
    }
    const std::string def = k.required ? "(required)" : k.default_value.empty() ? "\"\"" : k.default_value;
    out += fmt::format("  {:<28} {:<14} {}\n", k.path, def, k.help);
    out += fmt::format("  {:<28} {:<14} expects {}\n", "", "", k.expectation());
  }
  return out;
}

// Builds a Config from YAML and overrides, validating as it goes.
class ConfigBuilder {
 public:
  explicit ConfigBuilder(Config& c) : c_(c) {}

  void walk(const YAML::Node& node, const std::string& prefix, const std::string& source) {
    if (!node.IsMap()) {
      STRATA_FAIL("{}: {} must be a mapping of keys to values, got a {}", where(source, node.Mark()),
                  prefix.empty() ? "the config" : "section '" + prefix + "'", kind(node));
    }
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      // Handles, not references: `it->` is a proxy that dies with the statement, so a
      // reference into it dangles (AddressSanitizer: stack-use-after-scope).
      const YAML::Node key = it->first;
      const YAML::Node val = it->second;
      STRATA_CHECK(key.IsScalar(), "{}: keys must be plain names", where(source, key.Mark()));
      const std::string path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
      STRATA_CHECK(seen.insert(key.Scalar()).second, "{}: duplicate key '{}'", where(source, key.Mark()), path);
      if (sections().count(path)) {
        STRATA_CHECK(val.IsMap(), "{}: '{}' is a section; it needs keys under it (e.g. '{}'), not a {}",
                     where(source, val.Mark().line >= 0 ? val.Mark() : key.Mark()), path, example_key(path), kind(val));
        walk(val, path, source);
        continue;
      }
      const KeySpec* spec = find_key(path);
      STRATA_CHECK(spec != nullptr, "{}: unknown key '{}'{}", where(source, key.Mark()), path, suggestion(path));
      if (const auto joined = joined_list(*spec, val)) {
        set(*spec, *joined, false, where(source, val.Mark()));
        continue;
      }
      STRATA_CHECK(val.IsScalar() || val.IsNull(), "{}: '{}' expects {}, got a {}",
                   where(source, val.Mark().line >= 0 ? val.Mark() : key.Mark()), path, spec->expectation(), kind(val));
      const YAML::Mark m = val.IsNull() ? key.Mark() : val.Mark();
      set(*spec, val.IsNull() ? std::string() : val.Scalar(), val.IsNull(), where(source, m));
    }
  }

  void override(const std::string& arg) {
    const size_t eq = arg.find('=');
    STRATA_CHECK(eq != std::string::npos && eq > 0, "--set '{}': expected key=value (e.g. --set model.hidden=64)", arg);
    const std::string path = arg.substr(0, eq), text = arg.substr(eq + 1);
    const std::string origin = "--set " + arg;
    STRATA_CHECK(!sections().count(path), "{}: '{}' is a section; set one of its keys (e.g. {}=...)", origin, path,
                 example_key(path));
    const KeySpec* spec = find_key(path);
    STRATA_CHECK(spec != nullptr, "{}: unknown key '{}'{}", origin, path, suggestion(path));
    YAML::Node v;
    try {
      v = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      STRATA_FAIL("{}: the value is not valid YAML: {}", origin, e.msg);
    }
    if (const auto joined = joined_list(*spec, v)) return set(*spec, *joined, false, origin);
    // YAML reads some texts as nothing (",", "# x"); only an empty value or a null
    // spelled out means none: the rest are checked as the text they are.
    static const std::set<std::string> nulls = {"", "~", "null", "Null", "NULL"};
    const size_t first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
    const std::string trimmed = first == std::string::npos ? "" : text.substr(first, last - first + 1);
    if (v.IsNull() && !nulls.count(trimmed)) return set(*spec, text, false, origin);
    STRATA_CHECK(v.IsScalar() || v.IsNull(), "{}: '{}' expects {}, got a {}", origin, path, spec->expectation(), kind(v));
    set(*spec, v.IsNull() ? std::string() : v.Scalar(), v.IsNull(), origin);
  }

  void finish(const std::string& source) {
    for (const KeySpec& k : config_schema()) {
      if (c_.values_.count(k.path)) continue;
      STRATA_CHECK(!k.required, "{}: missing required key '{}' ({})", source, k.path, k.help);
      c_.values_[k.path] = {*canonical(k, k.default_value, nullptr), "default"};
    }
  }

 private:
  // A list of scalars for a key that takes one as comma-joined text (KeySpec::list).
  static std::optional<std::string> joined_list(const KeySpec& spec, const YAML::Node& n) {
    if (!spec.list || !n.IsSequence()) return std::nullopt;
    std::string text;
    for (const YAML::Node& item : n) {
      if (!item.IsScalar()) return std::nullopt;  // refused below as a list
      text += (text.empty() ? "" : ",") + item.Scalar();
    }
    return text;
  }
  static std::string kind(const YAML::Node& n) {
    if (n.IsMap()) return "mapping";
    if (n.IsSequence()) return "list";
    if (n.IsNull()) return "null";
    return fmt::format("value '{}'", n.Scalar());
  }
  static std::string example_key(const std::string& section) {
    for (const KeySpec& k : config_schema())
      if (k.path.rfind(section + ".", 0) == 0) return k.path;
    return section;
  }

  void set(const KeySpec& spec, const std::string& raw, bool null, const std::string& origin) {
    if (null && spec.type != ValueType::String)
      STRATA_FAIL("{}: '{}' has no value; it expects {}", origin, spec.path, spec.expectation());
    if (spec.path == "version" && raw != std::to_string(kConfigVersion) && canonical(spec, raw, nullptr))
      STRATA_FAIL("{}: config version {} is not supported (this Strata reads version {})", origin, raw, kConfigVersion);
    std::string why;
    auto text = canonical(spec, raw, &why);
    STRATA_CHECK(text.has_value(), "{}: '{}' expects {}, got '{}'{}", origin, spec.path, spec.expectation(), raw, why);
    if (spec.required && spec.type == ValueType::String)
      STRATA_CHECK(!text->empty(), "{}: '{}' must not be empty ({})", origin, spec.path, spec.help);
    c_.values_[spec.path] = {*text, origin};
  }

  Config& c_;
};

Config Config::parse(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides) {
  Config c;
  c.source_ = source;
  c.overrides_ = overrides;
  YAML::Node root;
  try {
    // Every document, so that one after a '---' is refused rather than silently dropped.
    const std::vector<YAML::Node> docs = YAML::LoadAll(yaml);
    for (size_t d = 1; d < docs.size(); ++d)
      STRATA_CHECK(docs[d].IsNull(),
                   "{}: a second YAML document (after '---'); a config is one document, and Strata would ignore "
                   "this one",
                   where(source, docs[d].Mark()));
    if (!docs.empty()) root = docs.front();
  } catch (const YAML::ParserException& e) {
    STRATA_FAIL("{}: YAML syntax error: {}", where(source, e.mark), e.msg);
  }
  ConfigBuilder b(c);
  if (root.IsNull()) {
    STRATA_FAIL("{}: the config is empty (it needs at least 'version: {}' and 'data.dataset')", source, kConfigVersion);
  }
  b.walk(root, "", source);
  STRATA_CHECK(c.values_.count("version"), "{}: missing 'version' (add 'version: {}' at the top; this Strata reads version {} configs)",
               source, kConfigVersion, kConfigVersion);
  for (const std::string& o : overrides) b.override(o);
  b.finish(source);
  return c;
}

Config Config::load(const fs::path& file, const std::vector<std::string>& overrides) {
  STRATA_CHECK(fs::exists(file), "config '{}' does not exist", file.string());
  return parse(read_file(file), file.string(), overrides);
}

const Config::Value& Config::value(const std::string& path, ValueType type) const {
  auto it = values_.find(path);
  STRATA_ASSERT(it != values_.end(), "config key '{}' not in the schema", path);
  const KeySpec* k = find_key(path);
  STRATA_ASSERT(k->type == type || (type == ValueType::String && k->type == ValueType::Enum),
                "config key '{}' read with the wrong type", path);
  return it->second;
}

int64_t Config::get_int(const std::string& path) const { return std::stoll(value(path, ValueType::Int).text); }
double Config::get_float(const std::string& path) const { return std::stod(value(path, ValueType::Float).text); }
bool Config::get_bool(const std::string& path) const { return value(path, ValueType::Bool).text == "true"; }
const std::string& Config::get_string(const std::string& path) const { return value(path, ValueType::String).text; }
bool Config::is_default(const std::string& path) const { return values_.at(path).origin == "default"; }
const std::string& Config::text(const std::string& path) const { return values_.at(path).text; }
const std::string& Config::origin(const std::string& path) const { return values_.at(path).origin; }

namespace {
std::string yaml_scalar(const KeySpec& k, const std::string& text) {
  if (k.type != ValueType::String) return text;
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}
}  // namespace

std::string Config::to_yaml() const {
  std::string out = fmt::format("# Resolved training config (every key, defaults filled in).\n# Read from {}{}\n", source_,
                                overrides_.empty() ? "" : fmt::format(" with --set {}", fmt::join(overrides_, " --set ")));
  std::vector<std::string> open;  // the currently open sections
  for (const KeySpec& k : config_schema()) {
    std::vector<std::string> parts;
    for (size_t b = 0, e; b <= k.path.size(); b = e + 1) {
      e = k.path.find('.', b);
      if (e == std::string::npos) e = k.path.size();
      parts.push_back(k.path.substr(b, e - b));
    }
    size_t common = 0;
    while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common]) ++common;
    open.resize(common);
    for (size_t d = common; d + 1 < parts.size(); ++d) {
      out += fmt::format("{:{}}{}:\n", "", 2 * d, parts[d]);
      open.push_back(parts[d]);
    }
    const size_t depth = parts.size() - 1;
    const std::string line = fmt::format("{:{}}{}: {}", "", 2 * depth, parts.back(), yaml_scalar(k, values_.at(k.path).text));
    out += fmt::format("{:<44} # {}\n", line, k.help);
  }
  return out;
}

std::vector<std::string> Config::summary_lines() const {
  std::vector<std::string> lines;
  std::string section, line;
  for (const KeySpec& k : config_schema()) {
    if (k.path == "version") continue;
    const std::string top = k.path.substr(0, k.path.find('.'));
    if (top != section) {
      if (!line.empty()) lines.push_back(line);
      section = top;
      line = top + ":";
    } else {
      line += ",";
    }
    line += fmt::format(" {}={}", k.path.substr(top.size() + 1), yaml_scalar(k, values_.at(k.path).text));
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

Hash128 Config::hash() const {
  Hasher h;
  for (const auto& [path, v] : values_) h.add(path).add("=").add(v.text).add("\n");
  return h.digest();
}

TrainingConfig typed(const Config& c) {
  TrainingConfig t;
  auto tri = [](const std::string& s) { return s == "auto" ? Tristate::Auto : s == "true" ? Tristate::Yes : Tristate::No; };
  DataConfig& d = t.data;
  d.dataset = c.get_string("data.dataset");
  d.data_root = c.get_string("data.data_root");
  d.cache = c.get_bool("data.cache");
  d.undirected = tri(c.get_string("data.undirected"));
  const std::string& loops = c.get_string("data.self_loops");
  d.self_loops = loops == "auto" ? SelfLoops::Auto : loops == "add" ? SelfLoops::Add : loops == "remove" ? SelfLoops::Remove : SelfLoops::Keep;
  d.normalize_features = c.get_bool("data.normalize_features");
  d.random_task = c.get_string("data.task") == "random";
  d.link.enabled = c.get_string("data.task") == "link";
  d.link.val_ratio = c.get_float("data.link.val_ratio");
  d.link.test_ratio = c.get_float("data.link.test_ratio");
  STRATA_CHECK(d.link.val_ratio + d.link.test_ratio < 1.0,
               "{}: data.link.val_ratio ({}) + data.link.test_ratio ({}) must be below 1 so training keeps edges",
               c.source(), d.link.val_ratio, d.link.test_ratio);
  d.random_features = c.get_int("data.random_features");
  d.random_classes = c.get_int("data.random_classes");
  const std::string& fs_ = c.get_string("data.feature_storage");
  d.feature_storage = fs_ == "auto" ? FeatureStorage::Auto : fs_ == "dense" ? FeatureStorage::Dense : FeatureStorage::Sparse;
  const std::string& sk = c.get_string("data.split.kind");
  d.split.kind = sk == "auto"        ? SplitKind::Auto
                 : sk == "dataset"   ? SplitKind::Dataset
                 : sk == "planetoid" ? SplitKind::Planetoid
                 : sk == "file"      ? SplitKind::File
                                     : SplitKind::Random;
  d.split.file = c.get_string("data.split.file");
  d.edge_weights = c.get_string("data.edge_weights") == "use";
  const std::string& nf = c.get_string("data.node_features");
  d.node_features = nf == "auto"      ? NodeFeatureSource::Auto
                    : nf == "one_hot" ? NodeFeatureSource::OneHot
                                      : NodeFeatureSource::EdgeMean;
  STRATA_CHECK(d.split.kind != SplitKind::File || !d.split.file.empty(),
               "{}: data.split.kind is 'file', but data.split.file is empty (name the split file)", c.source());
  STRATA_CHECK(d.split.kind == SplitKind::File || d.split.file.empty(),
               "{}: data.split.file is set, but only data.split.kind: file reads it (data.split.kind is '{}')",
               c.source(), sk);
  d.split.train_per_class = c.get_int("data.split.train_per_class");
  d.split.val_size = c.get_int("data.split.val_size");
  d.split.test_size = c.get_int("data.split.test_size");
  d.split.train_ratio = c.get_float("data.split.train_ratio");
  d.split.val_ratio = c.get_float("data.split.val_ratio");
  d.split.seed = static_cast<uint64_t>(c.get_int("data.split.seed"));
  d.split.per_run = c.get_bool("data.split.per_run");
  d.split.holdout = c.get_float("data.split.holdout");  // rgcn
  STRATA_CHECK(d.split.train_ratio + d.split.val_ratio < 1.0,
               "{}: data.split.train_ratio ({}) + data.split.val_ratio ({}) must be below 1 so the test split is not "
               "empty",
               c.source(), d.split.train_ratio, d.split.val_ratio);

  nn::ModelConfig& m = t.model;
  const std::string& kind = c.get_string("model.name");
  m.kind = kind == "gcn" ? nn::ModelKind::Gcn : kind == "gat" ? nn::ModelKind::Gat : nn::ModelKind::GraphSage;
  m.layers = static_cast<int>(c.get_int("model.layers"));
  m.hidden = c.get_int("model.hidden");
  const std::string& act = c.get_string("model.activation");
  m.activation = act == "relu" ? nn::Activation::Relu : act == "elu" ? nn::Activation::Elu : nn::Activation::LeakyRelu;
  m.negative_slope = static_cast<float>(c.get_float("model.negative_slope"));
  m.dropout = static_cast<float>(c.get_float("model.dropout"));
  m.input_dropout = static_cast<float>(c.get_float("model.input_dropout"));
  const std::string& agg = c.get_string("model.aggregator");
  m.aggregator = agg == "mean"  ? nn::SageAggregator::Mean
                 : agg == "gcn" ? nn::SageAggregator::Gcn
                 : agg == "max" ? nn::SageAggregator::Max
                                : nn::SageAggregator::Sum;
  m.root_weight = c.get_bool("model.root_weight");
  const std::string& norm = c.get_string("model.norm");
  m.norm = norm == "both" ? nn::GcnNorm::Both : norm == "right" ? nn::GcnNorm::Right : nn::GcnNorm::None;
  m.l2_normalize = c.get_bool("model.l2_normalize");
  m.bias = c.get_bool("model.bias");
  // GAT
  m.gat.heads = c.get_int("model.gat.heads");
  m.gat.output_heads = c.get_int("model.gat.output_heads");
  m.gat.concat = c.get_bool("model.gat.concat");
  m.gat.negative_slope = static_cast<float>(c.get_float("model.gat.negative_slope"));
  m.gat.attn_dropout = static_cast<float>(c.get_float("model.gat.attn_dropout"));
  m.gat.residual = c.get_bool("model.gat.residual");
  m.gat.add_self_loops = c.get_bool("model.gat.self_loops");
  // rgcn
  if (c.get_string("model.name") == "rgcn") m.kind = nn::ModelKind::Rgcn;
  m.rgcn.num_bases = c.get_int("model.num_bases");
  m.rgcn.self_loop = c.get_bool("model.self_loop");
  const std::string& rin = c.get_string("model.input");
  m.rgcn.input = rin == "one_hot" ? nn::RgcnInput::OneHot : rin == "embedding" ? nn::RgcnInput::Embedding : nn::RgcnInput::Auto;
  m.rgcn.embedding_dim = c.get_int("model.embedding_dim");
  m.rgcn.target_features_only = c.get_string("model.type_features") == "target";
  if (m.kind == nn::ModelKind::Rgcn) {
    // R-GCN's relational kernels keep a row of each layer's input and output in
    // registers (sc::Schedule::kMaxStagedElements floats at most).
    for (const char* key : {"model.hidden", "model.embedding_dim"})
      STRATA_CHECK(c.get_int(key) <= sc::Schedule::kMaxStagedElements,
                   "{}: {} is {}, but R-GCN's relational kernels hold a row of at most {} features in registers",
                   c.origin(key), key, c.get_int(key), sc::Schedule::kMaxStagedElements);
  }

  // A key that only another model reads would do nothing: refused unless it is at its
  // default (compared with the defaults, not by origin: a resolved config.yaml lists
  // every key, so a run's config can be replayed under another model.name).
  static const std::pair<const char*, const char*> kModelKeys[] = {{"model.aggregator", "graphsage"},
                                                                   {"model.root_weight", "graphsage"},
                                                                   {"model.norm", "gcn"},
                                                                   {"model.gat.", "gat"},
                                                                   {"model.num_bases", "rgcn"},
                                                                   {"model.self_loop", "rgcn"},
                                                                   {"model.input", "rgcn"},
                                                                   {"model.embedding_dim", "rgcn"},
                                                                   {"model.type_features", "rgcn"}};
  for (const auto& [prefix, owner] : kModelKeys)
    for (const KeySpec& k : config_schema()) {
      const bool whole = std::string_view(prefix).back() != '.';
      if (whole ? k.path != prefix : k.path.rfind(prefix, 0) != 0) continue;
      STRATA_CHECK(kind == owner || c.text(k.path) == k.default_value,
                   "{}: {} is {}, but only model.name: {} reads it (the model is '{}'); remove the key or set it to "
                   "its default {}",
                   c.origin(k.path), k.path, c.text(k.path), owner, kind, k.default_value);
    }

  nn::OptimizerConfig& o = t.optimizer;
  o.kind = c.get_string("optimizer.name") == "sgd" ? nn::OptimizerKind::Sgd : nn::OptimizerKind::Adam;
  o.lr = c.get_float("optimizer.lr");
  o.weight_decay = c.get_float("optimizer.weight_decay");
  o.decoupled = c.get_bool("optimizer.decoupled");
  const std::string& scope = c.get_string("optimizer.decay_scope");
  o.decay_scope = scope == "all" ? nn::DecayScope::All : scope == "weights" ? nn::DecayScope::Weights : nn::DecayScope::FirstLayer;
  o.beta1 = c.get_float("optimizer.beta1");
  o.beta2 = c.get_float("optimizer.beta2");
  o.eps = c.get_float("optimizer.eps");
  o.momentum = c.get_float("optimizer.momentum");
  o.nesterov = c.get_bool("optimizer.nesterov");
  const std::string& schedule = c.get_string("optimizer.schedule");
  o.schedule.kind = schedule == "cosine" ? nn::LrScheduleKind::Cosine
                    : schedule == "step" ? nn::LrScheduleKind::Step
                                         : nn::LrScheduleKind::Constant;
  o.schedule.step_size = c.get_int("optimizer.step_size");
  o.schedule.gamma = c.get_float("optimizer.gamma");
  // The step schedule's knobs changed for another schedule would do nothing. (Compared
  // with the defaults, not by origin: a resolved config.yaml lists every key.)
  for (const char* key : {"optimizer.step_size", "optimizer.gamma"}) {
    const KeySpec* k = find_key(key);
    STRATA_CHECK(o.schedule.kind == nn::LrScheduleKind::Step || !k || c.text(key) == k->default_value,
                 "{}: {} is {}, but only optimizer.schedule: step reads it (the schedule is '{}')", c.origin(key), key,
                 c.text(key), schedule);
  }

  LoopConfig& l = t.training;
  l.epochs = c.get_int("training.epochs");
  l.eval_period = c.get_int("training.eval_period");
  l.patience = c.get_int("training.patience");
  l.select_by_loss = c.get_string("training.select_by") == "val_loss";
  l.metric = c.get_string("training.metric");
  l.runs = c.get_int("training.runs");
  l.seed = static_cast<uint64_t>(c.get_int("training.seed"));
  l.batch_size = c.get_int("training.batch_size");
  if (const std::string& fanouts = c.get_string("training.fanouts"); !fanouts.empty()) {
    STRATA_CHECK(l.batch_size > 0,
                 "{}: training.fanouts is '{}', but training.batch_size is 0 (full-graph epochs "
                 "sample nothing); set training.batch_size",
                 c.origin("training.fanouts"), fanouts);
    size_t at = 0;
    while (at <= fanouts.size()) {
      const size_t comma = std::min(fanouts.find(',', at), fanouts.size());
      std::string item = fanouts.substr(at, comma - at);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      STRATA_CHECK(!item.empty() && ec == std::errc() && end == item.data() + item.size() && (v == -1 || v >= 1),
                   "{}: training.fanouts '{}': '{}' is not a fanout (expected comma-separated positive integers or -1 "
                   "for all neighbours, input layer first, e.g. \"10,25\")",
                   c.origin("training.fanouts"), fanouts, item);
      l.fanouts.push_back(v);
      at = comma + 1;
    }
    STRATA_CHECK(static_cast<int64_t>(l.fanouts.size()) == t.model.layers,
                 "{}: training.fanouts '{}' gives {} fanout{}, but the model has {} layers (model.layers): one per "
                 "layer, input layer first",
                 c.origin("training.fanouts"), fanouts, l.fanouts.size(), l.fanouts.size() == 1 ? "" : "s",
                 t.model.layers);
  } else if (l.batch_size > 0) {
    l.fanouts.assign(static_cast<size_t>(t.model.layers), -1);  // every in-neighbour
  }
  if (l.batch_size > 0) {
    STRATA_CHECK(t.model.kind == nn::ModelKind::GraphSage || t.model.kind == nn::ModelKind::Gcn ||
                     t.model.kind == nn::ModelKind::Gat,
                 "{}: training.batch_size {}: mini-batch training runs GraphSAGE, GCN and GAT; {} trains on the full "
                 "graph (training.batch_size: 0)",
                 c.origin("training.batch_size"), l.batch_size, c.get_string("model.name"));
  }

  t.model.link.mlp = c.get_string("model.link.predictor") == "mlp";
  t.model.link.layers = static_cast<int>(c.get_int("model.link.predictor_layers"));
  l.link_negatives = c.get_int("training.link.negatives");
  l.link_batch_pairs = c.get_int("training.link.batch_pairs");
  l.link_hits_k = c.get_int("training.link.hits_k");
  const std::string& task = c.get_string("data.task");
  if (t.data.link.enabled) {
    STRATA_CHECK(t.model.kind != nn::ModelKind::Rgcn && kind != "rgcn",
                 "{}: data.task is link, but model.name is rgcn; link prediction trains GraphSAGE, GCN or GAT "
                 "encoders on homogeneous graphs",
                 c.origin("model.name"));
    STRATA_CHECK(l.batch_size == 0,
                 "{}: training.batch_size {} samples mini-batches of nodes for node classification; link prediction "
                 "(data.task: link) batches training edges with training.link.batch_pairs",
                 c.origin("training.batch_size"), l.batch_size);
    STRATA_CHECK(l.metric == "auto" || l.metric == "rocauc",
                 "{}: training.metric is {}, a node-classification score; link prediction (data.task: link) is "
                 "scored by auto (Hits@K, training.link.hits_k) or rocauc",
                 c.origin("training.metric"), l.metric);
    for (const char* key : {"data.split.kind", "data.split.file", "data.split.train_per_class", "data.split.val_size",
                            "data.split.test_size", "data.split.train_ratio", "data.split.val_ratio",
                            "data.split.per_run", "data.random_features", "data.random_classes"}) {
      const KeySpec* k = find_key(key);
      STRATA_CHECK(!k || c.text(key) == k->default_value,
                   "{}: {} is {}, but link prediction (data.task: link) splits edges, not nodes: data.link.val_ratio "
                   "and test_ratio size the held-out edges and data.split.seed draws them",
                   c.origin(key), key, c.text(key));
    }
    STRATA_CHECK(t.model.link.mlp || c.text("model.link.predictor_layers") == "3",
                 "{}: model.link.predictor_layers is {}, but only model.link.predictor: mlp reads it (the predictor "
                 "is the dot product)",
                 c.origin("model.link.predictor_layers"), t.model.link.layers);
    STRATA_CHECK(!t.data.edge_weights,
                 "{}: data.edge_weights: use is not read by link prediction (data.task: link), which aggregates over "
                 "the unweighted training edges; set data.edge_weights: ignore",
                 c.origin("data.edge_weights"));
  } else {
    for (const char* key :
         {"data.link.val_ratio", "data.link.test_ratio", "model.link.predictor", "model.link.predictor_layers",
          "training.link.negatives", "training.link.batch_pairs", "training.link.hits_k"}) {
      const KeySpec* k = find_key(key);
      STRATA_CHECK(!k || c.text(key) == k->default_value,
                   "{}: {} is {}, but only data.task: link reads it (data.task is '{}')", c.origin(key), key,
                   c.text(key), task);
    }
  }

  RuntimeConfig& r = t.runtime;
  r.threads = static_cast<int>(c.get_int("runtime.threads"));
  r.kernels.backend = sc::parse_backend(c.get_string("runtime.backend"), "runtime.backend");
  r.kernels.tuning = c.get_bool("runtime.tuning");
  const std::string& attention = c.get_string("runtime.attention");  // GAT
  r.kernels.attention = attention == "fused"     ? nn::AttentionMode::Fused
                        : attention == "unfused" ? nn::AttentionMode::Unfused
                        : attention == "tuned"   ? nn::AttentionMode::Tuned
                                                 : nn::AttentionMode::Auto;
  r.cache_dir = c.get_string("runtime.cache_dir");
  if (const std::string& plans = c.get_string("runtime.plans"); !plans.empty()) {
    STRATA_CHECK(r.kernels.backend == sc::Backend::Generated,
                 "{}: runtime.plans replays the plans of generated kernels, but runtime.backend is '{}' (plain loops, "
                 "no plans)",
                 c.source(), c.get_string("runtime.backend"));
    try {
      r.kernels.plans = std::make_shared<const sc::RecordedPlans>(sc::RecordedPlans::read(plans));
    } catch (const UserError& e) {  // the file's own message, with the key that named it
      throw UserError(fmt::format("{}: runtime.plans: {}", c.origin("runtime.plans"), e.what()));
    }
  }
  // Edge weights enter GCN's symmetric normalisation; the other norms aggregate unweighted.
  STRATA_CHECK(!t.data.edge_weights || t.model.kind != nn::ModelKind::Gcn || t.model.norm == nn::GcnNorm::Both,
               "{}: data.edge_weights: use needs model.norm: both (weighted degrees in D^-1/2 A D^-1/2), got '{}'",
               c.source(), c.get_string("model.norm"));

  OutputConfig& out = t.output;
  out.run_dir = c.get_string("output.run_dir");
  out.overwrite = c.get_bool("output.overwrite");
  const std::string& ck = c.get_string("output.checkpoint");
  out.checkpoint = ck == "best" ? CheckpointPolicy::Best : ck == "last" ? CheckpointPolicy::Last : CheckpointPolicy::None;
  out.log_every = c.get_int("output.log_every");
  out.resume_every = c.get_int("output.resume_every");
  STRATA_CHECK(!out.run_dir.empty(), "{}: output.run_dir must not be empty", c.source());
  return t;
}

}  // namespace strata::train
