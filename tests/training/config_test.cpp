// Training configs: defaults, the resolved config, `--set`, and every rejection
// with its message (key path, line and column, nearest valid key).
#include <gtest/gtest.h>

#include "apps/training/config.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

using testing::expect_user_error;
using train::Config;

const char* kMinimal = "version: 1\ndata:\n  dataset: sbm:nodes=200,classes=2\n";

Config parse(const std::string& yaml, std::vector<std::string> sets = {}) { return Config::parse(yaml, "cfg.yaml", sets); }

TEST(ConfigTest, DefaultsFillEveryKey) {
  const Config c = parse(kMinimal);
  EXPECT_EQ(c.get_string("data.dataset"), "sbm:nodes=200,classes=2");
  EXPECT_EQ(c.get_string("model.name"), "graphsage");
  EXPECT_EQ(c.get_int("model.hidden"), 16);
  EXPECT_EQ(c.get_float("optimizer.lr"), 0.01);
  EXPECT_EQ(c.get_float("optimizer.eps"), 1e-8);
  EXPECT_FALSE(c.get_bool("runtime.tuning"));
  EXPECT_EQ(c.get_string("output.run_dir"), "runs/{config}");
  EXPECT_TRUE(c.is_default("model.hidden"));
  EXPECT_FALSE(c.is_default("data.dataset"));
  const train::TrainingConfig t = train::typed(c);
  EXPECT_EQ(t.model.kind, nn::ModelKind::GraphSage);
  EXPECT_EQ(t.training.epochs, 200);
  EXPECT_EQ(t.data.split.kind, train::SplitKind::Auto);
  EXPECT_EQ(t.runtime.kernels.backend, sc::Backend::Generated);
}

TEST(ConfigTest, ValuesOfEveryTypeAreParsed) {
  const Config c = parse(
      "version: 1\n"
      "data: {dataset: cora, undirected: true, self_loops: remove, normalize_features: yes,\n"
      "       split: {kind: random, train_ratio: 0.5, val_ratio: 0.25, seed: 7}}\n"
      "model: {name: gcn, layers: 3, hidden: 64, activation: leaky_relu, negative_slope: 0.2, norm: right}\n"
      "optimizer: {name: sgd, lr: 1e-3, momentum: 0, nesterov: false, weight_decay: 5.0e-4, decay_scope: first_layer}\n"
      "runtime: {backend: reference, tuning: on, threads: 1}\n"
      "output: {checkpoint: last, overwrite: off}\n");
  const train::TrainingConfig t = train::typed(c);
  EXPECT_EQ(t.data.undirected, train::Tristate::Yes);
  EXPECT_EQ(t.data.self_loops, train::SelfLoops::Remove);
  EXPECT_TRUE(t.data.normalize_features);
  EXPECT_EQ(t.data.split.kind, train::SplitKind::Random);
  EXPECT_EQ(t.data.split.seed, 7u);
  EXPECT_EQ(t.model.kind, nn::ModelKind::Gcn);
  EXPECT_EQ(t.model.layers, 3);
  EXPECT_EQ(t.model.activation, nn::Activation::LeakyRelu);
  EXPECT_FLOAT_EQ(t.model.negative_slope, 0.2f);
  EXPECT_EQ(t.model.norm, nn::GcnNorm::Right);
  EXPECT_EQ(t.optimizer.kind, nn::OptimizerKind::Sgd);
  EXPECT_DOUBLE_EQ(t.optimizer.lr, 1e-3);
  EXPECT_DOUBLE_EQ(t.optimizer.weight_decay, 5e-4);
  EXPECT_EQ(t.optimizer.decay_scope, nn::DecayScope::FirstLayer);
  EXPECT_EQ(t.runtime.kernels.backend, sc::Backend::Reference);
  EXPECT_TRUE(t.runtime.kernels.tuning);
  EXPECT_EQ(t.output.checkpoint, train::CheckpointPolicy::Last);
  EXPECT_FALSE(t.output.overwrite);
}

TEST(ConfigTest, ResolvedYamlRoundTrips) {
  const Config c = parse(kMinimal, {"model.hidden=64", "data.split.kind=planetoid"});
  const std::string yaml = c.to_yaml();
  EXPECT_NE(yaml.find("  hidden: 64"), std::string::npos);
  EXPECT_NE(yaml.find("# width of the hidden layers"), std::string::npos);
  EXPECT_NE(yaml.find("with --set model.hidden=64 --set data.split.kind=planetoid"), std::string::npos);
  const Config back = Config::parse(yaml, "resolved.yaml");
  EXPECT_EQ(back.hash(), c.hash());
  EXPECT_EQ(back.get_int("model.hidden"), 64);
  EXPECT_NE(parse(kMinimal).hash(), c.hash());
}

TEST(ConfigTest, SetOverridesTheFileAndIsValidated) {
  const Config c = parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  hidden: 16\n",
                         {"model.hidden=128", "training.runs=3", "data.dataset='sbm:nodes=100'"});
  EXPECT_EQ(c.get_int("model.hidden"), 128);
  EXPECT_EQ(c.get_int("training.runs"), 3);
  EXPECT_EQ(c.get_string("data.dataset"), "sbm:nodes=100");
  expect_user_error([] { parse(kMinimal, {"model.hiden=64"}); },
                    {"--set model.hiden=64", "unknown key 'model.hiden'", "did you mean 'model.hidden'?"});
  expect_user_error([] { parse(kMinimal, {"model.hidden=big"}); },
                    {"--set model.hidden=big", "'model.hidden' expects an integer in [1, 65536], got 'big'"});
  expect_user_error([] { parse(kMinimal, {"model.hidden"}); }, {"--set 'model.hidden'", "expected key=value"});
  expect_user_error([] { parse(kMinimal, {"model=3"}); }, {"--set model=3", "'model' is a section"});
  expect_user_error([] { parse(kMinimal, {"optimizer.name=adamw"}); },
                    {"'optimizer.name' expects one of: adam, sgd, got 'adamw'", "did you mean 'adam'?"});
}

TEST(ConfigTest, HelpListsEveryKeyWithItsDefault) {
  const std::string help = train::schema_help();
  for (const train::KeySpec& k : train::config_schema()) EXPECT_NE(help.find(k.path), std::string::npos) << k.path;
  EXPECT_NE(help.find("model.hidden                 16"), std::string::npos) << help;
  EXPECT_NE(help.find("expects one of: generated, reference"), std::string::npos);
  EXPECT_GE(train::config_schema().size(), 45u);
}

TEST(ConfigErrorTest, UnknownKeysNameLineColumnAndNearestKey) {
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  hiden: 64\n"); },
                    {"cfg.yaml:5:3:", "unknown key 'model.hiden'", "did you mean 'model.hidden'?"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\ntraining:\n  lr: 0.1\n"); },
                    {"cfg.yaml:5:3:", "unknown key 'training.lr'", "did you mean 'optimizer.lr'?",
                     "'lr' belongs in section 'optimizer'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodle:\n  hidden: 64\n"); },
                    {"cfg.yaml:4:1:", "unknown key 'modle'", "did you mean 'model'?"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\n  split:\n    kinds: random\n"); },
                    {"cfg.yaml:5:5:", "unknown key 'data.split.kinds'", "did you mean 'data.split.kind'?"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nzzz: 1\n"); },
                    {"cfg.yaml:4:1:", "unknown key 'zzz'", "valid sections: data, model, optimizer, output, runtime, "
                                                            "training, version"});
}

// Names a GraphGym, DGL-Go or PyG user brings get Strata's name, which edit distance
// would not find.
TEST(ConfigErrorTest, OtherToolsNamesGetStrataName) {
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\noptim:\n  base_lr: 0.01\n"); },
                    {"cfg.yaml:4:1:", "unknown key 'optim'",
                     "did you mean 'optimizer'? (Strata's name for what other GNN tools call 'optim')"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\noptimizer:\n  base_lr: 0.01\n"); },
                    {"cfg.yaml:5:3:", "unknown key 'optimizer.base_lr'", "did you mean 'optimizer.lr'?"});
  expect_user_error([] { parse(kMinimal, {"model.dim_inner=64"}); },
                    {"unknown key 'model.dim_inner'", "did you mean 'model.hidden'?"});
  expect_user_error([] { parse(kMinimal, {"training.max_epoch=10"}); },
                    {"unknown key 'training.max_epoch'", "did you mean 'training.epochs'?"});
  expect_user_error([] { parse(kMinimal, {"data.name=cora"}); },
                    {"unknown key 'data.name'", "did you mean 'data.dataset'?"});
  // A name both tools use keeps the ordinary hint.
  expect_user_error([] { parse(kMinimal, {"model.nme=gcn"}); }, {"did you mean 'model.name'?"});
}

TEST(ConfigErrorTest, BadValuesNameTheExpectation) {
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  hidden: sixteen\n"); },
                    {"cfg.yaml:5:11:", "'model.hidden' expects an integer in [1, 65536], got 'sixteen'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  dropout: 1.5\n"); },
                    {"cfg.yaml:5:12:", "'model.dropout' expects a number in [0, 1), got '1.5'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  aggregator: maen\n"); },
                    {"cfg.yaml:5:15:", "expects one of: mean, gcn, sum, max, got 'maen'", "did you mean 'mean'?"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\noptimizer:\n  lr: 0\n"); },
                    {"'optimizer.lr' expects a number > 0, got '0'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nruntime:\n  tuning: maybe\n"); },
                    {"cfg.yaml:5:11:", "'runtime.tuning' expects true or false, got 'maybe'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nruntime:\n  backend: interpreter\n"); },
                    {"'runtime.backend' expects one of: generated, reference, got 'interpreter'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\ntraining:\n  epochs:\n"); },
                    {"cfg.yaml:5:3:", "'training.epochs' has no value"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel: 5\n"); },
                    {"cfg.yaml:4:8:", "'model' is a section", "e.g. 'model.name'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  hidden: [16, 32]\n"); },
                    {"cfg.yaml:5:11:", "'model.hidden' expects an integer in [1, 65536], got a list"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  hidden: 16\n  hidden: 32\n"); },
                    {"cfg.yaml:6:3:", "duplicate key 'model.hidden'"});
  expect_user_error(
      [] { train::typed(parse("version: 1\ndata:\n  dataset: cora\n  split:\n    train_ratio: 0.8\n    val_ratio: 0.3\n")); },
      {"data.split.train_ratio (0.8) + data.split.val_ratio (0.3) must be below 1"});
  // A key only another model reads would do nothing: refused, by where it was set.
  expect_user_error(
      [] { train::typed(parse("version: 1\ndata:\n  dataset: cora\nmodel:\n  name: gcn\n  aggregator: max\n")); },
      {"cfg.yaml:6:15", "model.aggregator is max, but only model.name: graphsage reads it", "(the model is 'gcn')",
       "set it to its default mean"});
  expect_user_error([] { train::typed(parse(kMinimal, {"model.gat.heads=4"})); },
                    {"--set model.gat.heads=4", "only model.name: gat reads it", "(the model is 'graphsage')"});
  expect_user_error(
      [] {
        train::typed(parse(kMinimal, {"model.name=gat", "model.norm=right"}));
      },
      {"model.norm is right, but only model.name: gcn reads it"});
  expect_user_error([] { train::typed(parse(kMinimal, {"model.num_bases=2"})); },
                    {"model.num_bases is 2, but only model.name: rgcn reads it"});
  // At their defaults (a resolved config lists every key) they are accepted.
  EXPECT_EQ(train::typed(parse(kMinimal, {"model.name=gcn", "model.aggregator=mean", "model.gat.heads=8"})).model.kind,
            nn::ModelKind::Gcn);
  EXPECT_EQ(train::typed(parse(kMinimal, {"model.name=gat", "model.gat.heads=4"})).model.gat.heads, 4);
}

TEST(ConfigErrorTest, VersionRequiredKeysAndSyntax) {
  expect_user_error([] { parse("data:\n  dataset: cora\n"); }, {"cfg.yaml", "missing 'version'", "version: 1"});
  expect_user_error([] { parse("version: 2\ndata:\n  dataset: cora\n"); },
                    {"cfg.yaml:1:10:", "config version 2 is not supported (this Strata reads version 1)"});
  expect_user_error([] { parse("version: 1\nmodel:\n  hidden: 8\n"); },
                    {"cfg.yaml: missing required key 'data.dataset'"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: \"\"\n"); }, {"'data.dataset' must not be empty"});
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: [cora\n"); }, {"cfg.yaml:", "YAML syntax error"});
  expect_user_error([] { parse(""); }, {"cfg.yaml: the config is empty"});
  // A second document is refused, not dropped; a bare '---' before or after the one is fine.
  expect_user_error([] { parse("version: 1\ndata:\n  dataset: cora\n---\nversion: 7\n"); },
                    {"cfg.yaml:5:1: a second YAML document (after '---'); a config is one document"});
  EXPECT_EQ(parse("---\nversion: 1\ndata:\n  dataset: cora\n---\n").get_string("data.dataset"), "cora");
  expect_user_error([] { parse("- 1\n- 2\n"); }, {"the config must be a mapping of keys to values, got a list"});
  expect_user_error([] { Config::load("/nonexistent/strata.yaml"); }, {"config '/nonexistent/strata.yaml' does not exist"});
}

}  // namespace
}  // namespace strata
