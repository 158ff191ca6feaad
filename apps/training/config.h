// Training configs: the YAML schema, its validation, `--set` overrides, and the
// typed view the trainer reads.
//
// One table (config_schema()) defines every key: its dotted path, type, default,
// allowed values or range, and a one-line help. Everything else derives from it:
// validation, the defaults filled into the resolved config, `strata train
// --help-config`, and the commented config.yaml written into every run dir.
//
// Validation rejects, with the file, line and column of the offending node:
//   - YAML syntax errors;
//   - unknown keys and sections, naming the nearest valid key (edit distance), or
//     the section a misplaced key belongs to;
//   - values of the wrong type or outside their range, naming the expectation;
//   - duplicate keys, a scalar where a section is expected and the reverse;
//   - a missing or unsupported `version`, a missing required key.
// `--set a.b=value` overrides a key after the file is read; it is parsed as a YAML
// scalar and validated the same way, its errors naming the --set argument.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/hash.h"
#include "layers/graph_kernels.h"
#include "models/gnn.h"
#include "models/optimizer.h"

namespace strata::train {

namespace fs = std::filesystem;

inline constexpr int kConfigVersion = 1;

enum class ValueType : uint8_t { Int, Float, Bool, String, Enum };

struct KeySpec {
  std::string path;  // "model.hidden"
  ValueType type = ValueType::String;
  std::string default_value;  // YAML text; empty with `required`
  std::string help;
  std::vector<std::string> choices;  // Enum
  double min = 0, max = 0;           // Int / Float, when has_range
  bool has_range = false;
  bool min_open = false, max_open = false;  // exclusive bounds
  bool required = false;
  bool list = false;  // String: a YAML list of scalars is read as their comma-joined text ([10, 25] = "10,25")
  std::string expectation() const;  // "an integer in [1, 16]", "one of: mean, gcn, sum"
};

// Every key, in the order configs and the resolved config list them.
const std::vector<KeySpec>& config_schema();
// The schema as a table for --help-config.
std::string schema_help();

// A validated config: every key of the schema with its value (given or default).
class Config {
 public:
  // Reads and validates `file`, then applies `overrides` ("key=value").
  static Config load(const fs::path& file, const std::vector<std::string>& overrides = {});
  // The same for YAML text; `source` names it in messages.
  static Config parse(const std::string& yaml, const std::string& source,
                      const std::vector<std::string>& overrides = {});

  int64_t get_int(const std::string& path) const;
  double get_float(const std::string& path) const;
  bool get_bool(const std::string& path) const;
  const std::string& get_string(const std::string& path) const;  // strings and enums
  bool is_default(const std::string& path) const;
  // A key's canonical text ("64", "true", "mean") and where it came from
  // ("config.yaml:4:3", "--set model.hidden=64", "default").
  const std::string& text(const std::string& path) const;
  const std::string& origin(const std::string& path) const;

  const std::string& source() const { return source_; }
  const std::vector<std::string>& overrides() const { return overrides_; }
  // The resolved config as YAML, every key commented with its help; reading it back
  // gives the same config.
  std::string to_yaml() const;
  // "data: dataset=cora, undirected=true, ..." one line per top-level section.
  std::vector<std::string> summary_lines() const;
  // XXH3 of the resolved values (not of comments or formatting).
  Hash128 hash() const;

 private:
  struct Value {
    std::string text;    // canonical text
    std::string origin;  // "config.yaml:4:3", "--set model.hidden=64", "default"
  };
  const Value& value(const std::string& path, ValueType type) const;
  std::string source_;
  std::vector<std::string> overrides_;
  std::map<std::string, Value> values_;
  friend class ConfigBuilder;
};

// ---- the typed view --------------------------------------------------------

enum class Tristate : uint8_t { Auto, Yes, No };
enum class SelfLoops : uint8_t { Auto, Add, Remove, Keep };
enum class FeatureStorage : uint8_t { Auto, Dense, Sparse };
enum class SplitKind : uint8_t { Auto, Dataset, Planetoid, Random, File };
enum class CheckpointPolicy : uint8_t { Best, Last, None };

struct SplitConfig {
  SplitKind kind = SplitKind::Auto;
  int64_t train_per_class = 20, val_size = 500, test_size = 1000;
  double train_ratio = 0.6, val_ratio = 0.2;
  uint64_t seed = 0;
  std::string file;      // kind File: a split.json-style file (split_file.h)
  bool per_run = false;  // run k draws its split from seed + k - 1
  double holdout = 0.2;  // rgcn: share of training nodes for validation when the dataset has none

  // The seed of run k's split (runs count from 1).
  uint64_t seed_for_run(int run) const { return per_run ? seed + static_cast<uint64_t>(run - 1) : seed; }
};

// data.node_features: what GraphSAGE, GCN and GAT read as input.
enum class NodeFeatureSource { Auto, OneHot, EdgeMean };

struct DataConfig {
  std::string dataset;
  std::string data_root;  // "" = the default data root
  bool cache = true;
  Tristate undirected = Tristate::Auto;
  SelfLoops self_loops = SelfLoops::Auto;
  bool normalize_features = false;
  FeatureStorage feature_storage = FeatureStorage::Auto;
  bool edge_weights = false;  // GCN: aggregate with the dataset's edge weights
  NodeFeatureSource node_features = NodeFeatureSource::Auto;
  SplitConfig split;
  // data.task: random: seeded random features and labels on the dataset's graph, for
  // timing on graphs that have no node classes (R-MAT, edge lists).
  bool random_task = false;
  int64_t random_features = 128, random_classes = 8;
  // data.task: link: link prediction over the graph's undirected edges (link_prediction.h).
  struct Link {
    bool enabled = false;
    double val_ratio = 0.05, test_ratio = 0.1;  // shares of the edges held out
  } link;
};

struct LoopConfig {
  int64_t epochs = 200, eval_period = 1, patience = 0, runs = 1;
  bool select_by_loss = false;  // training.select_by: val_loss
  std::string metric = "auto";  // training.metric, resolved per dataset by resolve_metric (node_classification.h)
  uint64_t seed = 0;
  int64_t batch_size = 0;        // > 0: mini-batches over sampled neighbourhoods
  std::vector<int64_t> fanouts;  // per layer, input layer first; -1: all (core/neighbor_sampler.h)
  // training.link.*: link prediction (data.task: link)
  int64_t link_negatives = 1;    // non-edges per training edge, every epoch
  int64_t link_batch_pairs = 0;  // training edges per step (0: all)
  int64_t link_hits_k = 0;       // K of Hits@K (0: the dataset's, else 20)
};

struct RuntimeConfig {
  int threads = 0;
  nn::KernelRuntime kernels;
  std::string cache_dir;
};

struct OutputConfig {
  std::string run_dir = "runs/{config}";
  bool overwrite = true;
  CheckpointPolicy checkpoint = CheckpointPolicy::Best;
  int64_t log_every = 1;
  int64_t resume_every = 50;  // epochs between resume points (resume_point.h); 0: none
};

struct TrainingConfig {
  DataConfig data;
  nn::ModelConfig model;
  nn::OptimizerConfig optimizer;
  LoopConfig training;
  RuntimeConfig runtime;
  OutputConfig output;
};

TrainingConfig typed(const Config& config);

}  // namespace strata::train
