// `strata infer --batch FILE` over the batch's receptive field (its in-neighbours
// within the model's layers, every one kept): the predictions, labels and test counts
// are those of the whole graph's forward (--full-graph), for GraphSAGE, GCN and GAT, with
// repeated nodes in the batch, GCN's symmetric norm with the whole graph's source
// degrees (weighted ones for a weighted GCN); a batch whose field is most of the graph runs the whole graph and says
// why. Link prediction's --pairs embeds the pairs' endpoints over their field alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/training/trainer.h"
#include "core/file_util.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using train::Config;

// 3,000 nodes of average in-degree 3: a 2-hop field of a few dozen nodes is a small
// share of the graph. Ten blocks and weak features, so that predictions differ from
// node to node.
const std::string kSbm =
    "version: 1\n"
    "data:\n"
    "  dataset: sbm:nodes=3000,classes=10,avg_degree=3,feature_dim=12,seed=5\n"
    "model:\n"
    "  hidden: 24\n"
    "training:\n"
    "  epochs: 6\n"
    "  runs: 1\n"
    "runtime:\n"
    "  threads: 2\n"
    "output:\n"
    "  log_every: 0\n";

class InferBatchTest : public testing::TempDirTest {
 protected:
  InferBatchTest() : TempDirTest("infer-batch-test") {}

  Config config(std::vector<std::string> sets) {
    sets.push_back("output.run_dir=" + (dir_ / "run").string());
    return Config::parse(kSbm, (dir_ / "test.yaml").string(), sets);
  }
  // Trains one run, then writes a batch of `count` test nodes, each listed twice, and
  // `count` training nodes.
  fs::path train_and_write_batch(const Config& c, size_t count) {
    train::run_training(c, "test", [](const std::string&) {});
    const nlohmann::json split = nlohmann::json::parse(read_file(dir_ / "run/split.json"));
    std::ofstream batch(dir_ / "batch.txt");
    for (size_t i = 0; i < count; ++i) {
      batch << split["test"][i].get<int64_t>() << "\n" << split["train"][i].get<int64_t>() << "\n";
      batch << split["test"][i].get<int64_t>() << "  # again\n";
    }
    return dir_ / "batch.txt";
  }
  train::InferReport infer(const Config& c, const fs::path& batch, bool full_graph, const std::string& out) {
    lines_.clear();
    train::InferOptions o;
    o.checkpoint = dir_ / "run/checkpoints/run-01.ckpt";
    o.batch = batch.string();
    o.full_graph = full_graph;
    o.out = (dir_ / out).string();
    return train::run_inference(c, o, [this](const std::string& l) { lines_.push_back(l); });
  }
  bool printed(const std::string& part) const {
    for (const auto& l : lines_)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }

  std::vector<std::string> lines_;
};

TEST_F(InferBatchTest, TheReceptiveFieldPredictsWhatTheWholeGraphDoes) {
  for (const std::vector<std::string>& model :
       {std::vector<std::string>{"model.name=graphsage", "model.aggregator=mean"},
        std::vector<std::string>{"model.name=graphsage", "model.aggregator=gcn"},
        std::vector<std::string>{"model.name=gcn", "model.norm=right"},
        std::vector<std::string>{"model.name=gcn", "model.norm=both"},
        std::vector<std::string>{"model.name=gat", "model.hidden=4", "model.gat.heads=2"}}) {
    SCOPED_TRACE(model[0] + " " + model[1]);
    const Config c = config(model);
    const fs::path batch = train_and_write_batch(c, 20);
    const train::InferReport field = infer(c, batch, false, "field.csv");
    EXPECT_TRUE(printed("(forward over the batch's 2-hop in-neighbourhood, ")) << lines_.back();
    EXPECT_TRUE(printed("block      layer 1: ")) << "each block's kernels are listed";
    EXPECT_FALSE(printed("over the whole graph"));
    const train::InferReport whole = infer(c, batch, true, "whole.csv");
    EXPECT_TRUE(printed("(forward over all 3,000 nodes)"));
    EXPECT_TRUE(printed("forward    over the whole graph: --full-graph"));
    // node, name, predicted class, label, correct: row for row, repeats included.
    const std::string field_csv = read_file(dir_ / "field.csv");
    EXPECT_EQ(field_csv, read_file(dir_ / "whole.csv"));
    EXPECT_EQ(std::count(field_csv.begin(), field_csv.end(), '\n'), 1 + 60);
    EXPECT_EQ(field.predicted, 60);
    EXPECT_EQ(field.labelled, whole.labelled);
    EXPECT_EQ(field.correct, whole.correct);
    EXPECT_EQ(field.tests, 40);  // each test node twice
    EXPECT_EQ(field.tests_correct, whole.tests_correct);
    // Not every prediction the same class: the comparison above has something to compare.
    EXPECT_GT(field.correct, 0);
    EXPECT_LT(field.correct, 60) << "a model this weak should miss some nodes";
  }
}

// GCN with edge weights (data.edge_weights: use): the blocks carry each edge's weight
// and the sources take their weighted out-degrees from the whole graph, so the field
// predicts what the whole graph does on a directed graph whose weights span 40×.
TEST_F(InferBatchTest, AWeightedGcnsFieldPredictsWhatTheWholeGraphDoes) {
  Rng rng(17);
  const int64_t n = 3000;
  std::string mtx = fmt::format("%%MatrixMarket matrix coordinate real general\n{} {} {}\n", n, n, 3 * n);
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k)  // three in-edges a node, from anywhere (a repeat keeps its first weight)
      mtx += fmt::format("{} {} {:.3f}\n", i + 1, rng.below(static_cast<uint64_t>(n)) + 1, 0.1 + 3.9 * rng.uniform());
  write_file_atomic(dir_ / "w.mtx", mtx);
  const Config c = config({"data.dataset=mtx:" + (dir_ / "w.mtx").string(), "data.task=random",
                           "data.random_features=12", "data.random_classes=4", "data.edge_weights=use",
                           "model.name=gcn", "model.norm=both", "training.epochs=30"});
  const fs::path batch = train_and_write_batch(c, 20);
  const train::InferReport field = infer(c, batch, false, "field.csv");
  EXPECT_TRUE(printed("(forward over the batch's 2-hop in-neighbourhood, ")) << lines_.back();
  EXPECT_TRUE(printed("spmm_f12_i32_w_rs_cs")) << "the blocks run the weighted program";
  const train::InferReport whole = infer(c, batch, true, "whole.csv");
  EXPECT_EQ(read_file(dir_ / "field.csv"), read_file(dir_ / "whole.csv"));
  EXPECT_EQ(field.predicted, 60);
  EXPECT_EQ(field.correct, whole.correct);
  EXPECT_GT(field.correct, 0);
  EXPECT_LT(field.correct, 60);
}

TEST_F(InferBatchTest, ALargeFieldRunsTheWholeGraphAndSaysWhy) {
  // Every test node: the 2-hop field is most of the graph, where one forward over the
  // whole graph costs less than binding blocks as large.
  const Config sage = config({"model.name=graphsage"});
  train::run_training(sage, "test", [](const std::string&) {});
  const nlohmann::json split = nlohmann::json::parse(read_file(dir_ / "run/split.json"));
  {
    std::ofstream all(dir_ / "test_nodes.txt");
    for (const auto& v : split["test"]) all << v.get<int64_t>() << "\n";
  }
  const train::InferReport r = infer(sage, dir_ / "test_nodes.txt", false, "test.csv");
  EXPECT_TRUE(printed("forward    over the whole graph: the batch's 2-hop in-neighbourhood holds ")) << lines_[0];
  EXPECT_TRUE(printed(" of the 3,000 nodes"));
  EXPECT_EQ(r.tests, static_cast<int64_t>(split["test"].size()));
  // The test accuracy strata eval reproduces.
  const train::EvalReport e =
      train::run_evaluation(sage, dir_ / "run/checkpoints/run-01.ckpt", [](const std::string&) {});
  EXPECT_DOUBLE_EQ(static_cast<double>(r.tests_correct) / static_cast<double>(r.tests), e.eval.test_acc);
}

// --names and --full-graph without a file to apply to, and an --out that is one of the
// command's inputs, are refused before anything runs; the inputs are left as they were.
TEST_F(InferBatchTest, OptionsThatCannotWorkAreRefusedAndInputsAreNeverOverwritten) {
  const Config c = config({"model.name=graphsage"});
  const fs::path batch = train_and_write_batch(c, 3);
  const fs::path ckpt = dir_ / "run/checkpoints/run-01.ckpt";
  const std::string ckpt_bytes = read_file(ckpt), batch_bytes = read_file(batch);
  auto run = [&](train::InferOptions o) {
    o.checkpoint = ckpt;
    train::run_inference(c, o, [](const std::string&) {});
  };
  train::InferOptions o;
  o.names = true;
  testing::expect_user_error([&] { run(o); }, {"--names says how a --batch or --pairs file names its nodes"});
  o = {};
  o.full_graph = true;
  testing::expect_user_error([&] { run(o); }, {"--full-graph runs a --batch or --pairs file over the whole graph"});
  o = {};
  o.out = ckpt.string();
  testing::expect_user_error([&] { run(o); }, {"--out '" + ckpt.string() + "' is the checkpoint"});
  o = {};
  o.batch = batch.string();
  o.out = batch.string();
  testing::expect_user_error([&] { run(o); }, {"is the --batch file", "choose another path"});
  fs::create_symlink(ckpt, dir_ / "alias.csv");  // the checkpoint under another name
  o.out = (dir_ / "alias.csv").string();
  testing::expect_user_error([&] { run(o); }, {"alias.csv' is the checkpoint"});
  o = {};
  o.batch = dir_.string();
  testing::expect_user_error([&] { run(o); }, {"--batch '" + dir_.string() + "' is a folder"});
  EXPECT_EQ(read_file(ckpt), ckpt_bytes);
  EXPECT_EQ(read_file(batch), batch_bytes);
}

// The rows of a scores CSV: u, v, score, probability, known, u_name, v_name.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string cell; std::getline(cols, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TEST_F(InferBatchTest, LinkPairsAreScoredFromTheirEndpointsReceptiveField) {
  for (const std::string predictor : {"dot", "mlp"}) {
    SCOPED_TRACE(predictor);
    const Config c = config({"data.task=link", "model.link.predictor=" + predictor});
    train::run_training(c, "test", [](const std::string&) {});
    // Held-out edges, a repeated pair, a pair in both directions, and a loop.
    const nlohmann::json split = nlohmann::json::parse(read_file(dir_ / "run/link_split.json"));
    {
      std::ofstream pairs(dir_ / "pairs.txt");
      for (int i = 0; i < 10; ++i)
        pairs << split["test"]["u"][i].get<int64_t>() << " " << split["test"]["v"][i].get<int64_t>() << "\n";
      pairs << "7 8\n8 7\n7 8\n9 9\n";
    }
    train::InferOptions o;
    o.checkpoint = dir_ / "run/checkpoints/run-01.ckpt";
    o.pairs = (dir_ / "pairs.txt").string();
    o.out = (dir_ / "field.csv").string();
    lines_.clear();
    train::run_inference(c, o, [this](const std::string& l) { lines_.push_back(l); });
    EXPECT_TRUE(printed("(forward over the pairs' 2-hop in-neighbourhood, ")) << lines_.back();
    o.full_graph = true;
    o.out = (dir_ / "whole.csv").string();
    lines_.clear();
    train::run_inference(c, o, [this](const std::string& l) { lines_.push_back(l); });
    EXPECT_TRUE(printed("(forward over all 3,000 nodes; "));
    const auto field = csv_rows(read_file(dir_ / "field.csv")), whole = csv_rows(read_file(dir_ / "whole.csv"));
    ASSERT_EQ(field.size(), 15u);
    ASSERT_EQ(whole.size(), 15u);
    EXPECT_EQ(field[0], whole[0]);  // the header
    int tests = 0;
    for (size_t r = 1; r < field.size(); ++r) {
      ASSERT_EQ(field[r].size(), 7u);
      EXPECT_EQ(field[r][0], whole[r][0]);
      EXPECT_EQ(field[r][1], whole[r][1]);
      EXPECT_EQ(field[r][4], whole[r][4]);  // train / val / test / none
      tests += field[r][4] == "test";
      // Sums over the same neighbours in another order: rounding only.
      const double a = std::stod(field[r][2]), b = std::stod(whole[r][2]);
      EXPECT_NEAR(a, b, 1e-4 * std::max(1.0, std::abs(b))) << "pair " << field[r][0] << " " << field[r][1];
    }
    EXPECT_EQ(tests, 10);
    EXPECT_EQ(field[11][2], field[13][2]) << "a repeated pair gets the same score";
  }
}

}  // namespace
}  // namespace strata
