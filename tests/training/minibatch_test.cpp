// Mini-batch training over sampled blocks (training.batch_size, training.fanouts):
// one batch of every training node with every in-neighbour is exactly a full-graph
// step (GraphSAGE's aggregators, dense and sparse inputs, GCN, GAT); sampled training learns,
// repeats bit for bit, and reports its batches; bad settings are refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/training/trainer.h"
#include "core/file_util.h"
#include "models/checkpoint.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::expect_user_error;
using train::Config;

const std::string kSbm =
    "version: 1\n"
    "data:\n"
    "  dataset: sbm:nodes=400,classes=4,avg_degree=8,feature_dim=16,seed=3\n"
    "model:\n"
    "  hidden: 16\n"
    "training:\n"
    "  runs: 1\n"
    "runtime:\n"
    "  threads: 2\n"
    "output:\n"
    "  log_every: 0\n";

class MiniBatchFixture : public testing::TempDirTest {
 protected:
  MiniBatchFixture() : TempDirTest("minibatch-test") {}

  Config config(std::vector<std::string> sets, const std::string& run = "run") {
    sets.push_back("output.run_dir=" + (dir_ / run).string());
    return Config::parse(kSbm, (dir_ / "test.yaml").string(), sets);
  }
  train::Summary train(const Config& c) {
    lines_.clear();
    return train::run_training(c, "test", [this](const std::string& l) { lines_.push_back(l); });
  }
  bool printed(const std::string& part) const {
    for (const auto& l : lines_)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
  std::vector<nlohmann::json> metrics(const std::string& run) const {
    std::vector<nlohmann::json> out;
    std::istringstream in(read_file(dir_ / run / "metrics.jsonl"));
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  std::vector<std::string> lines_;
};

class MiniBatchTest : public MiniBatchFixture {};
class MiniBatchErrorTest : public MiniBatchFixture {};

TEST_F(MiniBatchTest, OneBatchOfEveryNodeWithEveryNeighbourIsAFullGraphStep) {
  // Plain SGD, no dropout: the parameters after one epoch are a function of the
  // gradient alone (Adam's first step would be lr * sign(g), rounding's sign on tiny g).
  const std::vector<std::string> common = {
      "training.epochs=1",    "model.dropout=0",        "optimizer.name=sgd",          "optimizer.lr=0.5",
      "optimizer.momentum=0", "output.checkpoint=last", "optimizer.weight_decay=0.001"};
  for (const std::string aggregator : {"mean", "gcn", "sum"}) {
    for (const std::string storage : {"dense", "sparse"}) {
      SCOPED_TRACE(aggregator + ", " + storage + " input");
      std::vector<std::string> sets = common;
      sets.push_back("model.aggregator=" + aggregator);
      sets.push_back("data.feature_storage=" + storage);
      train(config(sets, "full"));
      sets.push_back("training.batch_size=100000");  // one batch: every training node
      train(config(sets, "batch"));
      EXPECT_TRUE(
          printed("mini-batches of 100000 training nodes (1 per epoch), in-neighbours sampled per layer "
                  "all,all (input layer first)"));
      const nn::Checkpoint a = nn::read_checkpoint(dir_ / "full/checkpoints/run-01.ckpt");
      const nn::Checkpoint b = nn::read_checkpoint(dir_ / "batch/checkpoints/run-01.ckpt");
      ASSERT_EQ(a.model.size(), b.model.size());
      for (size_t i = 0; i < a.model.size(); ++i) {
        EXPECT_EQ(a.model[i].first, b.model[i].first);
        // Sums in another order (the batch's rows are in sampling order): float rounding only.
        const double scale = max_abs_diff(a.model[i].second, Tensor::zeros(a.model[i].second.shape(), DType::F32));
        EXPECT_LT(max_abs_diff(a.model[i].second, b.model[i].second), 1e-6 * std::max(1.0, scale))
            << a.model[i].first << " (largest value " << scale << ")";
      }
      const auto ma = metrics("full"), mb = metrics("batch");
      EXPECT_NEAR(ma[0]["loss"].get<double>(), mb[0]["loss"].get<double>(), 1e-6);
      EXPECT_EQ(mb[0]["batches"], 1);
      EXPECT_FALSE(ma[0].contains("batches"));
    }
  }
}

TEST_F(MiniBatchTest, SampledTrainingLearnsRepeatsAndCountsItsBatches) {
  const std::vector<std::string> sets = {"training.epochs=40", "training.batch_size=32", "training.fanouts=3,5",
                                         "model.aggregator=mean"};
  const train::Summary s1 = train(config(sets, "a"));
  EXPECT_GT(s1.test_mean, 0.9) << "four blocks of 100 nodes are easy to tell apart";
  EXPECT_TRUE(printed("mini-batches of 32 training nodes"));
  EXPECT_TRUE(printed("in-neighbours sampled per layer 3,5 (input layer first)"));
  const auto m = metrics("a");
  ASSERT_EQ(m.size(), 40u);
  const int64_t batches = m[0]["batches"].get<int64_t>();
  EXPECT_GE(batches, 2);
  EXPECT_GT(m[0]["sample_ms"].get<double>(), 0.0);
  for (const auto& line : m) EXPECT_EQ(line["batches"], batches);
  // The same config repeats bit for bit (batch order and samples come from the run's seed).
  const train::Summary s2 = train(config(sets, "b"));
  EXPECT_EQ(s1.runs[0].best.test_logits_hash, s2.runs[0].best.test_logits_hash);
  EXPECT_EQ(s1.runs[0].best_epoch, s2.runs[0].best_epoch);
  // Another seed samples other neighbourhoods.
  std::vector<std::string> other = sets;
  other.push_back("training.seed=5");
  const train::Summary s3 = train(config(other, "c"));
  EXPECT_NE(s1.runs[0].best.test_logits_hash, s3.runs[0].best.test_logits_hash);
  // GCN trains over blocks too, normalised by each block's degrees (as DGL's GraphConv and
  // PyG's GCNConv on sampled graphs), which the header says.
  std::vector<std::string> gcn = sets;
  gcn.push_back("model.name=gcn");
  EXPECT_GT(train(config(gcn, "gcn")).test_mean, 0.9);
  EXPECT_TRUE(printed("GCN normalises by each block's degrees"));
}

TEST_F(MiniBatchTest, GatOverOneBatchOfEveryNodeIsAFullGraphStepAndSampledGatLearns) {
  // Attention over a block with every in-neighbour, plus the self-loops, is the
  // full graph's attention for the block's destinations.
  const std::vector<std::string> common = {"model.name=gat",       "model.hidden=4",        "model.gat.heads=2",
                                           "model.dropout=0",      "model.input_dropout=0", "model.gat.attn_dropout=0",
                                           "training.epochs=1",    "optimizer.name=sgd",    "optimizer.lr=0.5",
                                           "optimizer.momentum=0", "output.checkpoint=last"};
  for (const std::string residual : {"false", "true"}) {
    SCOPED_TRACE("residual " + residual);
    std::vector<std::string> sets = common;
    sets.push_back("model.gat.residual=" + residual);
    train(config(sets, "full"));
    sets.push_back("training.batch_size=100000");
    train(config(sets, "batch"));
    const nn::Checkpoint a = nn::read_checkpoint(dir_ / "full/checkpoints/run-01.ckpt");
    const nn::Checkpoint b = nn::read_checkpoint(dir_ / "batch/checkpoints/run-01.ckpt");
    ASSERT_EQ(a.model.size(), b.model.size());
    for (size_t i = 0; i < a.model.size(); ++i) {
      const double scale = max_abs_diff(a.model[i].second, Tensor::zeros(a.model[i].second.shape(), DType::F32));
      EXPECT_LT(max_abs_diff(a.model[i].second, b.model[i].second), 1e-6 * std::max(1.0, scale)) << a.model[i].first;
    }
    EXPECT_NEAR(metrics("full")[0]["loss"].get<double>(), metrics("batch")[0]["loss"].get<double>(), 1e-6);
  }
  // Sampled, with attention and feature dropout on, it learns and repeats bit for bit.
  const std::vector<std::string> sampled = {"model.name=gat",     "model.hidden=8",         "model.gat.heads=2",
                                            "training.epochs=40", "training.batch_size=32", "training.fanouts=3,5"};
  const train::Summary s1 = train(config(sampled, "a"));
  EXPECT_GT(s1.test_mean, 0.9);
  EXPECT_GE(metrics("a")[0]["batches"].get<int64_t>(), 2);
  EXPECT_TRUE(printed("and the unfused attention forward (not tuned per block)"));
  const train::Summary s2 = train(config(sampled, "b"));
  EXPECT_EQ(s1.runs[0].best.test_logits_hash, s2.runs[0].best.test_logits_hash);
  // runtime.attention: tuned measures the full graph's kernels; blocks are not measured one by one.
  std::vector<std::string> tuned = sampled;
  tuned.push_back("runtime.attention=tuned");
  tuned.push_back("training.epochs=3");
  train(config(tuned, "tuned"));
  EXPECT_TRUE(printed("and the unfused attention forward (not tuned per block)"));
  std::vector<std::string> fused = sampled;
  fused.push_back("runtime.attention=fused");
  EXPECT_GT(train(config(fused, "fused")).test_mean, 0.5);
  EXPECT_TRUE(printed("and the fused attention forward (runtime.attention)"));
}

TEST_F(MiniBatchTest, GcnWithoutSourceDegreesIsAFullGraphStepAndFanoutsReadAsAList) {
  // norm right (D^-1 Â) uses only the destinations' degrees: one batch of every node with
  // every neighbour is the full-graph step, as for GraphSAGE.
  const std::vector<std::string> common = {"model.name=gcn",       "model.norm=right",      "training.epochs=1",
                                           "model.dropout=0",      "optimizer.name=sgd",    "optimizer.lr=0.5",
                                           "optimizer.momentum=0", "output.checkpoint=last"};
  train(config(common, "full"));
  std::vector<std::string> sets = common;
  sets.push_back("training.batch_size=100000");
  train(config(sets, "batch"));
  EXPECT_FALSE(printed("GCN normalises by each block's degrees"));
  const nn::Checkpoint a = nn::read_checkpoint(dir_ / "full/checkpoints/run-01.ckpt");
  const nn::Checkpoint b = nn::read_checkpoint(dir_ / "batch/checkpoints/run-01.ckpt");
  for (size_t i = 0; i < a.model.size(); ++i) {
    const double scale = max_abs_diff(a.model[i].second, Tensor::zeros(a.model[i].second.shape(), DType::F32));
    EXPECT_LT(max_abs_diff(a.model[i].second, b.model[i].second), 1e-6 * std::max(1.0, scale)) << a.model[i].first;
  }
  // A YAML list, as DGL and PyG users write fanouts, reads as the comma-joined text.
  const std::string listed =
      "version: 1\n"
      "data:\n"
      "  dataset: sbm:nodes=400,classes=4,avg_degree=8,feature_dim=16,seed=3\n"
      "training:\n"
      "  batch_size: 32\n"
      "  fanouts: [3, 5]\n";
  const Config from_list = Config::parse(listed, "listed.yaml");
  EXPECT_EQ(from_list.text("training.fanouts"), "3,5");
  EXPECT_EQ(train::typed(from_list).training.fanouts, (std::vector<int64_t>{3, 5}));
  const Config from_set = Config::parse(kSbm, "x.yaml", {"training.batch_size=32", "training.fanouts=[-1, 4]"});
  EXPECT_EQ(train::typed(from_set).training.fanouts, (std::vector<int64_t>{-1, 4}));
  std::string nested = listed;
  nested.replace(nested.find("[3, 5]"), 6, "[[3], 5]");
  expect_user_error([&] { Config::parse(nested, "nested.yaml"); }, {"nested.yaml:6:", "'training.fanouts' expects"});
}

// data.edge_weights: use, on the full graph and in mini-batches (whose sampled blocks
// carry the edges' weights into GCN's weighted aggregation and degrees). On a graph
// where a node's few same-class in-neighbours carry weight 1 and its many other-class
// ones 0.02, and features are class centroids under heavy noise, the weights are what
// tells the classes apart. (Edge rows arrive unsorted: a weight left at its input
// position by the CSR build scored at chance here.)
TEST_F(MiniBatchTest, GcnAggregatesOverEdgeWeightsOnTheFullGraphAndInSampledBlocks) {
  Rng rng(8);
  const int64_t n = 400, classes = 4, dim = 8;
  std::string nodes = "node_id,label,feat\n", edges = "src_id,dst_id,weight\n";
  for (int64_t v = 0; v < n; ++v) {
    std::string feat;
    for (int64_t f = 0; f < dim; ++f)
      feat += fmt::format("{}{:.4f}", f ? "," : "", (f % classes == v % classes ? 1.0 : 0.0) + 2.0 * rng.normal());
    nodes += fmt::format("{},{},\"{}\"\n", v, v % classes, feat);
    for (int k = 0; k < 12; ++k) {  // 4 same-class in-neighbours, 8 from other classes
      const auto u = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n / classes)));
      const int64_t shift = k < 4 ? 0 : 1 + k % (classes - 1);
      edges += fmt::format("{},{},{}\n", u * classes + (v + shift) % classes, v, k < 4 ? 1.0 : 0.02);
    }
  }
  const fs::path data = dir_ / "weighted-graph";
  fs::create_directories(data);
  write_file_atomic(data / "meta.yaml",
                    "dataset_name: weighted\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n");
  write_file_atomic(data / "nodes.csv", nodes);
  write_file_atomic(data / "edges.csv", edges);
  const std::vector<std::string> common = {"data.dataset=dglcsv:" + data.string(),
                                           "data.split.kind=planetoid",
                                           "data.split.val_size=100",
                                           "data.split.test_size=200",
                                           "model.name=gcn",
                                           "training.epochs=60"};
  for (const std::vector<std::string>& batches :
       {std::vector<std::string>{}, std::vector<std::string>{"training.batch_size=16", "training.fanouts=-1,6"}}) {
    SCOPED_TRACE(batches.empty() ? "full graph" : "mini-batches");
    std::vector<std::string> sets = common;
    sets.insert(sets.end(), batches.begin(), batches.end());
    const train::Summary u = train(config(sets, "unweighted"));
    EXPECT_TRUE(printed("edge weights ignored"));
    sets.push_back("data.edge_weights=use");
    const train::Summary w = train(config(sets, "weighted"));
    EXPECT_TRUE(printed("edge weights used: weighted aggregation and degrees"));
    EXPECT_NE(read_file(dir_ / "weighted/kernels.json").find("_w_rs_cs"), std::string::npos) << "the weighted program";
    EXPECT_GT(w.test_mean, 0.8) << "same-class neighbours outweigh the others 12:1";
    EXPECT_GT(w.test_mean, u.test_mean + 0.15) << "unweighted, two thirds of a node's neighbours are of other classes";
  }
}

TEST_F(MiniBatchErrorTest, SettingsThatCannotSampleAreRefusedByName) {
  expect_user_error([&] { train(config({"training.fanouts=10,25"})); },
                    {"training.fanouts is '10,25', but training.batch_size is 0", "set training.batch_size"});
  expect_user_error(
      [&] {
        train(config({"training.batch_size=64", "training.fanouts=10"}));
      },
      {"training.fanouts '10' gives 1 fanout, but the model has 2 layers (model.layers)"});
  expect_user_error(
      [&] {
        train(config({"training.batch_size=64", "training.fanouts=10,x"}));
      },
      {"training.fanouts '10,x': 'x' is not a fanout", "comma-separated positive integers or -1 for all neighbours"});
  expect_user_error(
      [&] {
        train(config({"training.batch_size=64", "training.fanouts=0,5"}));
      },
      {"'0' is not a fanout"});
  expect_user_error([&] { train(config({"training.batch_size=64", "training.fanouts=5,"})); }, {"'' is not a fanout"});
  // YAML reads a lone comma as nothing; it is not "all neighbours".
  expect_user_error(
      [&] {
        train(config({"training.batch_size=64", "training.fanouts=,"}));
      },
      {"training.fanouts ',': '' is not a fanout"});
  // Blanks alone are no value, as before: a required string refuses them.
  expect_user_error([&] { train::typed(Config::parse(kSbm, "x.yaml", {"output.run_dir= "})); },
                    {"output.run_dir must not be empty"});
  expect_user_error(
      [&] {
        train(config({"training.batch_size=64", "model.name=rgcn"}));
      },
      {"training.batch_size 64: mini-batch training runs GraphSAGE, GCN and GAT; rgcn trains on the full graph"});
  expect_user_error([&] { train(config({"training.batch_size=-3"})); }, {"training.batch_size"});
  EXPECT_FALSE(fs::exists(dir_ / "run")) << "nothing written";
}

}  // namespace
}  // namespace strata
