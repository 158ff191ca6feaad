// The trainer end to end on small synthetic graphs: learning, the run dir, exact
// reproduction by evaluation, determinism, early stopping, and every error path
// (diverging loss, missing dataset, wrong or corrupt checkpoints, existing run dir).
#include "apps/training/trainer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/training/data.h"
#include "apps/training/split_file.h"
#include "core/file_util.h"
#include "core/host_memory.h"
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
    "  epochs: 40\n"
    "  runs: 2\n"
    "runtime:\n"
    "  threads: 2\n"
    "output:\n"
    "  log_every: 10\n";

class TrainerFixture : public testing::TempDirTest {
 protected:
  TrainerFixture() : TempDirTest("trainer-test") {}

  Config config(const std::string& yaml, std::vector<std::string> sets = {}) {
    sets.push_back("output.run_dir=" + (dir_ / "run").string());
    return Config::parse(yaml, (dir_ / "test.yaml").string(), sets);
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
  // Nothing but `keep` in the test folder: no run dir, no staging leftovers.
  void expect_only(std::set<std::string> keep) {
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_TRUE(keep.count(e.path().filename().string())) << "left behind: " << e.path();
  }

  std::vector<std::string> lines_;
};

class TrainerTest : public TrainerFixture {};
class TrainerErrorTest : public TrainerFixture {};

TEST_F(TrainerTest, GraphSageLearnsTheBlocksAndWritesTheRunDir) {
  const train::Summary s = train(config(kSbm));
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_GT(s.test_mean, 0.85) << "GraphSAGE should separate the SBM blocks";
  for (const auto& r : s.runs) {
    EXPECT_EQ(r.epochs, 40);
    EXPECT_GE(r.best_epoch, 1);
    EXPECT_GT(r.profile.ms[static_cast<int>(ag::OpCategory::Sparse)], 0.0);
    EXPECT_GT(r.profile.ms[static_cast<int>(ag::OpCategory::Dense)], 0.0);
  }
  EXPECT_NE(s.runs[0].best.test_logits_hash, s.runs[1].best.test_logits_hash) << "runs use different seeds";
  // Console: header, epoch lines, per-run and final summaries.
  EXPECT_TRUE(printed("strata train "));
  EXPECT_TRUE(printed("2 kernels") || printed("4 kernels"));
  EXPECT_TRUE(printed("mean f=16 forward"));
  EXPECT_TRUE(printed("Epoch 0010 | loss "));
  EXPECT_TRUE(printed("Run 2/2: best epoch "));
  EXPECT_TRUE(printed("Test accuracy over 2 runs: "));
  // The run dir.
  const fs::path run = dir_ / "run";
  for (const char* f : {"config.yaml", "metrics.jsonl", "summary.json", "kernels.json", "log.txt",
                        "checkpoints/run-01.ckpt", "checkpoints/run-02.ckpt"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  expect_only({"run"});
  std::ifstream metrics(run / "metrics.jsonl");
  int lines = 0;
  for (std::string l; std::getline(metrics, l); ++lines) {
    const auto j = nlohmann::json::parse(l);
    EXPECT_TRUE(j.contains("loss") && j.contains("val_acc") && j.contains("epoch_ms"));
  }
  EXPECT_EQ(lines, 80);
  const auto summary = nlohmann::json::parse(read_file(run / "summary.json"));
  EXPECT_DOUBLE_EQ(summary["test_acc"]["mean"].get<double>(), s.test_mean);
  EXPECT_EQ(summary["runs"].size(), 2u);
  EXPECT_EQ(summary["runs"][0]["checkpoint"], "checkpoints/run-01.ckpt");
  const auto kernels = nlohmann::json::parse(read_file(run / "kernels.json"));
  EXPECT_EQ(kernels["backend"], "generated");
  EXPECT_EQ(kernels["kernels"][0]["graph"], "A");
  EXPECT_EQ(kernels["kernels"][1]["graph"], "Aᵀ");
  EXPECT_EQ(kernels["kernels"][0]["plan"]["format"], "csr");
  // The resolved config reads back to the same config.
  EXPECT_EQ(Config::load(run / "config.yaml").hash(), config(kSbm).hash());
}

TEST_F(TrainerTest, EvalReproducesTheCheckpointBitForBit) {
  const Config c = config(kSbm);
  const train::Summary s = train(c);
  for (int run = 1; run <= 2; ++run) {
    std::vector<std::string> out;
    const train::EvalReport r = train::run_evaluation(c, dir_ / "run" / fmt::format("checkpoints/run-{:02d}.ckpt", run),
                                                      [&](const std::string& l) { out.push_back(l); });
    EXPECT_TRUE(r.identical);
    EXPECT_EQ(r.eval.test_acc, s.runs[run - 1].best.test_acc);
    EXPECT_EQ(r.eval.val_acc, s.runs[run - 1].best.val_acc);
    EXPECT_EQ(r.eval.test_logits_hash, s.runs[run - 1].best.test_logits_hash);
    EXPECT_NE(out.back().find("reproduced bit for bit"), std::string::npos) << out.back();
  }
}

TEST_F(TrainerTest, TrainingIsDeterministic) {
  const train::Summary a = train(config(kSbm, {"training.runs=1"}));
  fs::remove_all(dir_ / "run");
  const train::Summary b = train(config(kSbm, {"training.runs=1"}));
  EXPECT_EQ(a.runs[0].best_epoch, b.runs[0].best_epoch);
  EXPECT_EQ(a.runs[0].best.test_logits_hash, b.runs[0].best.test_logits_hash);
  EXPECT_EQ(a.test_mean, b.test_mean);
}

TEST_F(TrainerTest, GcnSparseInputsReferenceBackendAndLastCheckpoint) {
  // GCN, features forced through the sparse path with input dropout, and the
  // reference backend; the generated kernels must give the same losses.
  const std::vector<std::string> sets = {"model.name=gcn", "data.feature_storage=sparse", "model.input_dropout=0.2",
                                         "training.runs=1", "training.epochs=15", "output.checkpoint=last"};
  const train::Summary gen = train(config(kSbm, sets));
  EXPECT_TRUE(printed("self-loops added"));
  EXPECT_TRUE(printed("features f=16 forward"));
  auto losses = [&] {
    std::vector<double> v;
    std::ifstream m(dir_ / "run" / "metrics.jsonl");
    for (std::string l; std::getline(m, l);) v.push_back(nlohmann::json::parse(l)["loss"].get<double>());
    return v;
  };
  const std::vector<double> lg = losses();
  std::vector<std::string> ref_sets = sets;
  ref_sets.push_back("runtime.backend=reference");
  const train::Summary ref = train(config(kSbm, ref_sets));
  EXPECT_TRUE(printed("reference path"));
  const std::vector<double> lr = losses();
  ASSERT_EQ(lg.size(), lr.size());
  for (size_t i = 0; i < lg.size(); ++i) EXPECT_NEAR(lg[i], lr[i], 1e-4 * std::max(1.0, std::abs(lg[i]))) << i;
  EXPECT_GT(gen.test_mean, 0.6);
  // output.checkpoint=last stores the last epoch; eval reproduces that epoch's accuracy.
  const train::EvalReport r = train::run_evaluation(config(kSbm, ref_sets), dir_ / "run/checkpoints/run-01.ckpt",
                                                    [](const std::string&) {});
  EXPECT_TRUE(r.identical);
}

TEST_F(TrainerTest, EarlyStoppingAndEvalPeriod) {
  const train::Summary s =
      train(config(kSbm, {"training.runs=1", "training.epochs=200", "training.patience=3", "training.eval_period=2",
                          "optimizer.lr=0.05"}));
  EXPECT_TRUE(s.runs[0].stopped_early);
  EXPECT_LT(s.runs[0].epochs, 200);
  EXPECT_EQ(s.runs[0].best_epoch % 2, 0) << "only evaluated epochs can be best";
  EXPECT_TRUE(printed("Early stopping at epoch "));
}

TEST_F(TrainerTest, PlanetoidAndRandomSplits) {
  const Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, -1, 0, 1, 2, 0, 1, 2, 2});
  const data::Splits s = train::planetoid_split(labels, 3, 2, 4, 5, 11);
  EXPECT_EQ(s.train_size(), 6);
  EXPECT_EQ(s.val_size(), 4);
  EXPECT_EQ(s.test_size(), 5);
  std::vector<int> per_class(3, 0);
  std::set<int64_t> seen;
  for (const Tensor* t : {&s.train, &s.val, &s.test})
    for (int64_t i = 0; i < t->numel(); ++i) {
      EXPECT_TRUE(seen.insert(t->data<int64_t>()[i]).second) << "splits overlap";
      EXPECT_NE(t->data<int64_t>()[i], 12) << "unlabelled node in a split";
    }
  for (int64_t i = 0; i < 6; ++i) ++per_class[labels.data<int64_t>()[s.train.data<int64_t>()[i]]];
  EXPECT_EQ(per_class, (std::vector<int>{2, 2, 2}));
  const data::Splits again = train::planetoid_split(labels, 3, 2, 4, 5, 11);
  EXPECT_EQ(max_abs_diff(s.test, again.test), 0.0);
  expect_user_error([&] { train::planetoid_split(labels, 3, 2, 10, 10, 1); },
                    {"needs 10 validation + 10 test nodes, but only 13 labelled nodes remain"});
  // Through the trainer: the SBM's own split by default, planetoid on request.
  train(config(kSbm, {"training.runs=1", "training.epochs=2", "data.split.kind=planetoid",
                      "data.split.train_per_class=10", "data.split.val_size=100", "data.split.test_size=200"}));
  EXPECT_TRUE(printed("planetoid: 10 per class, 100 val, 200 test, seed 0: 40 train / 100 val / 200 test"));
  train(config(kSbm, {"training.runs=1", "training.epochs=2", "data.split.kind=random", "data.split.train_ratio=0.5"}));
  EXPECT_TRUE(printed("200 train / 80 val / 120 test"));
}

// data.split.per_run: run k trains and tests on the split of seed data.split.seed + k - 1,
// written to the run dir, recorded in the checkpoint and used again by eval.
TEST_F(TrainerTest, PerRunSplitsTrainEachRunOnItsOwnSplit) {
  const std::vector<std::string> planetoid = {"training.runs=3", "training.epochs=3", "data.split.kind=planetoid",
                                              "data.split.train_per_class=10", "data.split.val_size=100",
                                              "data.split.test_size=200", "data.split.seed=5"};
  std::vector<std::string> sets = planetoid;
  sets.push_back("data.split.per_run=true");
  const Config c = config(kSbm, sets);
  const train::Summary s = train(c);
  ASSERT_EQ(s.runs.size(), 3u);
  EXPECT_TRUE(printed("a new split for every run (data.split.per_run): run k from seed 5 + k - 1"));
  EXPECT_TRUE(printed("Run 3/3 (seed 2, split planetoid: 10 per class, 100 val, 200 test, seed 7)"));
  // Each run's split is the planetoid split of its own seed, drawn independently here.
  const train::TrainingData td = train::prepare_data(train::typed(c).data, nn::ModelKind::GraphSage, "test");
  const fs::path run_dir = dir_ / "run";
  std::set<std::string> texts;
  for (int run = 1; run <= 3; ++run) {
    EXPECT_EQ(s.runs[run - 1].split_seed, 4u + run);
    const data::Splits want = train::planetoid_split(td.labels, td.num_classes, 10, 100, 200, 4 + run);
    const std::string file = run == 1 ? "split.json" : fmt::format("split_run{}.json", run);
    const std::string text = read_file(run_dir / file);
    EXPECT_EQ(text, train::split_json(want)) << file;
    texts.insert(text);
    // Eval rebuilds the run's split from the checkpoint's run and reproduces it exactly.
    const train::EvalReport r =
        train::run_evaluation(c, run_dir / fmt::format("checkpoints/run-{:02d}.ckpt", run), [](const std::string&) {});
    EXPECT_TRUE(r.identical) << "run " << run;
    EXPECT_EQ(r.eval.test_acc, s.runs[run - 1].best.test_acc);
  }
  EXPECT_EQ(texts.size(), 3u) << "the three runs should have three different splits";
  EXPECT_FALSE(fs::exists(run_dir / "split_run1.json"));
  // A config that gives run 2 another split is refused, naming both seeds.
  expect_user_error(
      [&] {
        train::run_evaluation(config(kSbm, planetoid), run_dir / "checkpoints/run-02.ckpt",
                              [](const std::string&) {});
      },
      {"(run 2) was trained and tested on the split of seed 6, but the config gives run 2 the split of seed 5",
       "data.split.per_run false"});
}

TEST_F(TrainerErrorTest, PerRunSplitsNeedAPlanetoidOrRandomSplit) {
  // The SBM comes with its own split, which auto picks.
  expect_user_error([&] { train(config(kSbm, {"data.split.per_run=true"})); },
                    {"data.split.per_run draws a new planetoid or random split for every run",
                     "is trained on its own split (data.split.kind: auto)"});
  expect_only({});
}

// data.split.kind: file trains every run on the split a file names (the format of a
// run dir's split.json, so a split made elsewhere, or by an earlier run, is reused);
// the run dir records it and eval reproduces the run from it.
TEST_F(TrainerTest, SplitFromAFileIsUsedRecordedAndEvaluated) {
  // 400 nodes: train 0..39, val 100..139, test the odd nodes from 201.
  std::vector<int64_t> tr, va, te;
  for (int64_t i = 0; i < 40; ++i) tr.push_back(i);
  for (int64_t i = 100; i < 140; ++i) va.push_back(i);
  for (int64_t i = 201; i < 400; i += 2) te.push_back(i);
  data::Splits want;
  want.train = Tensor::from_vector(tr);
  want.val = Tensor::from_vector(va);
  want.test = Tensor::from_vector(te);
  want.origin = "hand-made";
  const fs::path file = dir_ / "my_split.json";
  write_file_atomic(file, train::split_json(want));
  const Config c = config(kSbm, {"data.split.kind=file", "data.split.file=" + file.string(), "training.runs=1"});
  const train::Summary s = train(c);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_TRUE(printed("split file '" + file.string() + "' (xxh3 ")) << "the header names the file";
  EXPECT_TRUE(printed(": 40 train / 40 val / 100 test"));
  const auto recorded = nlohmann::json::parse(read_file(dir_ / "run" / "split.json"));
  EXPECT_EQ(recorded["train"].get<std::vector<int64_t>>(), tr);
  EXPECT_EQ(recorded["val"].get<std::vector<int64_t>>(), va);
  EXPECT_EQ(recorded["test"].get<std::vector<int64_t>>(), te);
  const train::EvalReport r =
      train::run_evaluation(c, dir_ / "run" / "checkpoints/run-01.ckpt", [](const std::string&) {});
  EXPECT_TRUE(r.identical);
  EXPECT_EQ(r.eval.test_acc, s.runs[0].best.test_acc);
  // The file edited after training: eval refuses to test other nodes.
  want.test = Tensor::from_vector(std::vector<int64_t>{201, 203});
  write_file_atomic(file, train::split_json(want));
  expect_user_error(
      [&] { train::run_evaluation(c, dir_ / "run" / "checkpoints/run-01.ckpt", [](const std::string&) {}); },
      {"was trained on the split of file '" + file.string() + "' (xxh3 ", "the file changed"});
}

// optimizer.schedule: every epoch's updates use the schedule's rate, which the header
// announces and metrics.jsonl records.
TEST_F(TrainerTest, LearningRateScheduleIsAppliedPerEpochAndRecorded) {
  const Config c = config(kSbm, {"optimizer.schedule=step", "optimizer.step_size=2", "optimizer.gamma=0.25",
                                 "training.epochs=5", "training.runs=1"});
  train(c);
  EXPECT_TRUE(printed(", lr x0.25 every 2 epochs"));
  auto metrics = [&](const char* field) {
    std::istringstream lines(read_file(dir_ / "run" / "metrics.jsonl"));
    std::vector<double> v;
    for (std::string line; std::getline(lines, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.contains(field)) v.push_back(j.at(field).get<double>());
    }
    return v;
  };
  const std::vector<double> lrs = metrics("lr"), scheduled_loss = metrics("loss");
  ASSERT_EQ(lrs.size(), 5u);
  const double base = train::typed(c).optimizer.lr;
  const std::vector<double> want = {base, base, base * 0.25, base * 0.25, base * 0.0625};
  for (size_t e = 0; e < 5; ++e) EXPECT_DOUBLE_EQ(lrs[e], want[e]) << "epoch " << e + 1;
  // The step schedule's knobs under another schedule would do nothing: refused.
  expect_user_error(
      [&] {
        train(config(kSbm, {"optimizer.schedule=cosine", "optimizer.gamma=0.1"}));
      },
      {"--set optimizer.gamma=0.1", "optimizer.gamma is 0.1, but only optimizer.schedule: step reads it",
       "(the schedule is 'cosine')"});
  // A constant rate adds no "lr" field. Its losses agree for the epochs whose
  // parameters came from full-rate updates only (1-3), and differ after the first
  // quarter-rate update (epoch 4 on): the schedule reaches the optimizer.
  train(config(kSbm, {"training.epochs=5", "training.runs=1"}));
  EXPECT_TRUE(metrics("lr").empty());
  const std::vector<double> constant_loss = metrics("loss");
  ASSERT_EQ(constant_loss.size(), 5u);
  for (size_t e = 0; e < 3; ++e) EXPECT_EQ(constant_loss[e], scheduled_loss[e]) << "epoch " << e + 1;
  for (size_t e = 3; e < 5; ++e) EXPECT_NE(constant_loss[e], scheduled_loss[e]) << "epoch " << e + 1;
}

// data.edge_weights: use trains GCN over the dataset's weights (the weighted
// program, weighted degrees); other models, weightless datasets and negative weights
// are refused before anything is written.
TEST_F(TrainerTest, GcnTrainsWithEdgeWeightsWhenAsked) {
  // A weighted 40-node ring with chords, as Matrix Market (1-based).
  std::string mtx = "%%MatrixMarket matrix coordinate real general\n40 40 80\n";
  for (int i = 0; i < 40; ++i) {
    mtx += fmt::format("{} {} {}\n", i + 1, (i + 1) % 40 + 1, 0.5 + 0.1 * (i % 7));
    mtx += fmt::format("{} {} {}\n", i + 1, (i + 7) % 40 + 1, 2.0 - 0.2 * (i % 5));
  }
  write_file_atomic(dir_ / "w.mtx", mtx);
  const std::string yaml = "version: 1\ndata:\n  dataset: mtx:" + (dir_ / "w.mtx").string() +
                           "\n  task: random\n  random_features: 8\n  random_classes: 3\nmodel:\n  name: gcn\n"
                           "  hidden: 8\ntraining:\n  epochs: 3\n  runs: 1\n";
  const train::Summary s = train(config(yaml, {"data.edge_weights=use"}));
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_TRUE(printed("edge weights used: weighted aggregation and degrees"));
  const std::string kernels = read_file(dir_ / "run" / "kernels.json");
  EXPECT_NE(kernels.find("\"program\": \"spmm_f8_i32_w_rs_cs\""), std::string::npos) << kernels;
  // Ignored (the default): the unweighted program, and the note says how to use them.
  train(config(yaml));
  EXPECT_TRUE(printed("edge weights ignored (unweighted aggregation; data.edge_weights: use for GCN)"));
  EXPECT_EQ(read_file(dir_ / "run" / "kernels.json").find("_w_rs_cs"), std::string::npos);

  fs::remove_all(dir_ / "run");
  expect_user_error(
      [&] {
        train(config(yaml, {"data.edge_weights=use", "model.name=graphsage"}));
      },
      {"data.edge_weights: use applies to GCN", "graphsage aggregates without edge weights"});
  expect_user_error(
      [&] {
        train(config(kSbm, {"data.edge_weights=use", "model.name=gcn"}));
      },
      {"data.edge_weights is 'use', but dataset 'sbm:", "has no edge weights"});
  expect_user_error(
      [&] {
        train(config(yaml, {"data.edge_weights=use", "model.norm=right"}));
      },
      {"data.edge_weights: use needs model.norm: both", "got 'right'"});
  write_file_atomic(dir_ / "w.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n2 3 -0.5\n");
  expect_user_error([&] { train(config(yaml, {"data.edge_weights=use"})); },
                    {"data.edge_weights: use needs non-negative weights", "has weight -0.5 on stored edge"});
  expect_only({"w.mtx"});
}

// model.aggregator: max trains GraphSAGE through the compiler's max row programs
// (forward and gradient), learns the blocks, and eval reproduces the run.
TEST_F(TrainerTest, GraphSageWithTheMaxAggregatorTrainsAndEvaluates) {
  const Config c = config(kSbm, {"model.aggregator=max", "training.runs=1"});
  const train::Summary s = train(c);
  EXPECT_TRUE(printed("(max aggregator, root weight)"));
  EXPECT_TRUE(printed("spmm_max_grad_f16_i32"));
  EXPECT_GT(s.test_mean, 0.6) << "4 blocks: chance is 0.25";
  const train::EvalReport r =
      train::run_evaluation(c, dir_ / "run" / "checkpoints/run-01.ckpt", [](const std::string&) {});
  EXPECT_TRUE(r.identical);
}

TEST_F(TrainerErrorTest, SplitFilesThatCannotBeUsedAreNamed) {
  const fs::path file = dir_ / "s.json";
  auto with = [&](const std::string& text, std::vector<std::string> sets = {}) {
    write_file_atomic(file, text);
    sets.push_back("data.split.kind=file");
    sets.push_back("data.split.file=" + file.string());
    return config(kSbm, sets);
  };
  const std::string f = "split file '" + file.string() + "'";
  expect_user_error([&] { train(with("{\"train\": [1, 2], \"val\": [3], \"test\": [2, 4]}")); },
                    {"data.split.file: " + f + ": node 2 is listed in two parts (in \"train\" and \"test\")"});
  expect_user_error([&] { train(with("{\"train\": [1], \"val\": [3], \"test\": [4], \"tset\": [5]}")); },
                    {f + ": unknown key \"tset\" (a split file holds \"train\", \"val\" and \"test\" lists"});
  expect_user_error([&] { train(with("{\"train\": [1, 1], \"val\": [3], \"test\": [4]}")); },
                    {f + ": node 1 is listed twice (in \"train\" and \"train\")"});
  expect_user_error([&] { train(with("{\"train\": [1], \"val\": [3], \"test\": [400]}")); },
                    {f + ": test[0] is node 400, outside 0..399 (the graph has 400 nodes)"});
  expect_user_error([&] { train(with("{\"train\": [1], \"val\": [\"x\"], \"test\": [4]}")); },
                    {f + ": val[0] is \"x\", expected an integer node id"});
  expect_user_error([&] { train(with("{\"train\": [1], \"test\": [4]}")); }, {f + ": no \"val\" list"});
  expect_user_error([&] { train(with("{\"train\": [], \"val\": [3], \"test\": [4]}")); },
                    {f + ": the \"train\" list is empty"});
  expect_user_error([&] { train(with("[1, 2")); }, {f + ": not valid JSON"});
  expect_user_error([&] { train(with("{\"train\": [1], \"val\": [3], \"test\": [4]}", {"data.split.per_run=true"})); },
                    {"data.split.kind 'file' trains every run on the file's split; set per_run to false"});
  expect_user_error([&] { train(config(kSbm, {"data.split.kind=file"})); },
                    {"data.split.kind is 'file', but data.split.file is empty (name the split file)"});
  // A key given twice (JSON keeps the last list) and a file that is not a file.
  expect_user_error([&] { train(with("{\"train\": [1, 2], \"val\": [3], \"test\": [4], \"train\": [5]}")); },
                    {f + ": the key \"train\" appears twice"});
  expect_user_error(
      [&] {
        train(config(kSbm, {"data.split.kind=file", "data.split.file=/dev/null"}));
      },
      {"split file '/dev/null' is not a regular file"});
  expect_user_error([&] { train(config(kSbm, {"data.split.file=" + file.string()})); },
                    {"data.split.file is set, but only data.split.kind: file reads it"});
  fs::remove(file);
  expect_user_error(
      [&] {
        train(config(kSbm, {"data.split.kind=file", "data.split.file=" + file.string()}));
      },
      {"data.split.file: cannot open '" + file.string() + "'"});
  expect_only({});
}

TEST_F(TrainerTest, FeaturelessDatasetTrainsOnOneHotIds) {
  // A MUSAE folder without *_features.json: two communities of 30 nodes, labels by
  // community. The first layer reads the identity matrix as sparse features.
  const fs::path folder = dir_ / "tiny";
  fs::create_directories(folder);
  std::string edges = "id_1,id_2\n", target = "id,page_type\n";
  Rng rng(5);
  for (int v = 0; v < 60; ++v) {
    const int base = v < 30 ? 0 : 30;
    for (int k = 0; k < 4; ++k) edges += fmt::format("{},{}\n", v, base + static_cast<int>(rng.below(30)));
    target += fmt::format("{},{}\n", v, v < 30 ? "left" : "right");
  }
  write_file_atomic(folder / "tiny_edges.csv", edges);
  write_file_atomic(folder / "tiny_target.csv", target);
  const train::Summary s = train(config(kSbm, {"data.dataset=musae:" + folder.string(), "training.runs=1",
                                               "training.epochs=30", "data.split.kind=planetoid",
                                               "data.split.train_per_class=8", "data.split.val_size=14",
                                               "data.split.test_size=30"}));
  EXPECT_TRUE(printed("no node features: one-hot node ids (a sparse identity)"));
  EXPECT_TRUE(printed("features sparse binary [60, 60], 60 non-zeros"));
  EXPECT_GT(s.test_mean, 0.7);
}

// An OGB raw layout in `folder`: raw/<stem>.csv for each (stem, text).
fs::path write_ogb_raw(const fs::path& folder, const std::vector<std::pair<std::string, std::string>>& files) {
  fs::create_directories(folder / "raw");
  for (const auto& [stem, text] : files) write_file_atomic(folder / "raw" / (stem + ".csv"), text);
  return folder;
}

// data.node_features: edge_mean (OGB's ogbn-proteins recipe) and one_hot, on an OGB
// layout with 2-wide edge features; the means worked out by hand.
TEST_F(TrainerTest, NodeFeaturesFromEdgeMeansAndOneHotIds) {
  // Edges 0->1 (1, 2), 2->1 (3, 4), 1->2 (5, 6), 3->3 (7, 8): node 4 has no edge.
  const fs::path folder = write_ogb_raw(dir_ / "edgy", {{"edge", "0,1\n2,1\n1,2\n3,3\n"},
                                                        {"edge-feat", "1,2\n3,4\n5,6\n7,8\n"},
                                                        {"num-node-list", "5\n"},
                                                        {"num-edge-list", "4\n"},
                                                        {"node-feat", "9\n9\n9\n9\n9\n"},
                                                        {"node-label", "0\n1\n0\n1\n0\n"}});
  const auto data = [&](std::vector<std::string> sets) {
    sets.push_back("data.dataset=ogb:" + folder.string());
    sets.push_back("data.feature_storage=dense");
    sets.push_back("data.split.kind=random");
    return train::prepare_data(train::typed(config(kSbm, sets)).data, nn::ModelKind::GraphSage, "test.yaml");
  };
  const auto row = [](const train::TrainingData& td, int64_t i) {
    const float* x = td.dense_features.data<float>() + i * td.dense_features.dim(1);
    return std::vector<float>(x, x + td.dense_features.dim(1));
  };
  // Directed (in-edges: a row's entries): node 1 gets edges 0 and 1, node 2 edge 2, node 3
  // its loop, nodes 0 and 4 nothing.
  const train::TrainingData in = data({"data.node_features=edge_mean", "data.undirected=false"});
  ASSERT_EQ(in.dense_features.dim(1), 2);
  EXPECT_EQ(row(in, 0), (std::vector<float>{0, 0}));
  EXPECT_EQ(row(in, 1), (std::vector<float>{2, 3}));
  EXPECT_EQ(row(in, 2), (std::vector<float>{5, 6}));
  EXPECT_EQ(row(in, 3), (std::vector<float>{7, 8}));
  EXPECT_EQ(row(in, 4), (std::vector<float>{0, 0}));
  // Symmetrized: both ends; node 1 has edges 0, 1, 2; node 2 edges 1 and 2; the loop once.
  const train::TrainingData both = data({"data.node_features=edge_mean", "data.undirected=true"});
  EXPECT_EQ(row(both, 0), (std::vector<float>{1, 2}));
  EXPECT_EQ(row(both, 1), (std::vector<float>{3, 4}));
  EXPECT_EQ(row(both, 2), (std::vector<float>{4, 5}));
  EXPECT_EQ(row(both, 3), (std::vector<float>{7, 8}));
  bool noted = false;
  for (const std::string& n : both.notes)
    noted |= n ==
             "node features: the mean of each node's incident edges' 2 features (the dataset's node features "
             "not used)";
  EXPECT_TRUE(noted);
  // one_hot ignores the node features the dataset has.
  const train::TrainingData ids = data({"data.node_features=one_hot"});
  EXPECT_EQ(ids.in_features(), 5);
  EXPECT_TRUE(ids.sparse_input());
  // auto reads the dataset's node features.
  EXPECT_EQ(row(data({}), 2), (std::vector<float>{9}));
  // Trains end to end.
  const train::Summary s = train(config(kSbm, {"data.dataset=ogb:" + folder.string(), "data.node_features=edge_mean",
                                               "data.split.kind=random", "training.runs=1", "training.epochs=2"}));
  EXPECT_TRUE(printed("node features: the mean of each node's"));
  ASSERT_EQ(s.runs.size(), 1u);
}

TEST_F(TrainerErrorTest, EdgeMeanNeedsEdgeFeaturesAndHomogeneousModels) {
  const fs::path folder = write_ogb_raw(
      dir_ / "plain",
      {{"edge", "0,1\n1,2\n"}, {"num-node-list", "3\n"}, {"num-edge-list", "2\n"}, {"node-label", "0\n1\n0\n"}});
  expect_user_error(
      [&] {
        train(config(kSbm, {"data.dataset=ogb:" + folder.string(), "data.node_features=edge_mean"}));
      },
      {"data.node_features is edge_mean (each node the mean of its edges' features), but 'ogb:" + folder.string() +
       "' has no edge features"});
  expect_user_error(
      [&] {
        train(config(kSbm, {"data.task=random", "data.node_features=one_hot"}));
      },
      {"data.node_features applies to the dataset's features, but data.task: random trains on random "
       "ones"});
  expect_only({"plain"});
}

// data.task: random trains on a graph without node classes (here R-MAT) with seeded
// random features and labels and a random split, so its epochs can be timed.
TEST_F(TrainerFixture, RandomTaskTrainsOnAGraphWithoutClasses) {
  const train::Summary s = train(config(kSbm, {"data.dataset=rmat:scale=8,edge_factor=8,seed=2", "data.task=random",
                                               "data.random_features=24", "data.random_classes=5",
                                               "training.runs=1", "training.epochs=3"}));
  EXPECT_TRUE(printed("data.task random: random features and labels over 5 classes"));
  EXPECT_TRUE(printed("dense [256, 24] (random normal)"));
  ASSERT_EQ(s.runs.size(), 1u);
  // The split is random by ratio over all 256 nodes: 60% / 20% / 20%.
  train::DataConfig dc;
  dc.dataset = "rmat:scale=8,edge_factor=8,seed=2";
  dc.random_task = true;
  dc.random_features = 24;
  dc.random_classes = 5;
  const train::TrainingData td = train::prepare_data(dc, nn::ModelKind::GraphSage, "test.yaml");
  EXPECT_EQ(td.in_features(), 24);
  EXPECT_EQ(td.num_classes, 5);
  EXPECT_EQ(data::Splits::size_of(td.splits.train) + data::Splits::size_of(td.splits.val) +
                data::Splits::size_of(td.splits.test),
            256);
  EXPECT_NEAR(static_cast<double>(data::Splits::size_of(td.splits.train)), 0.6 * 256, 1.0);
  for (int64_t i = 0; i < td.labels.numel(); ++i) {
    EXPECT_GE(td.labels.data<int64_t>()[i], 0);
    EXPECT_LT(td.labels.data<int64_t>()[i], 5);
  }
}

TEST_F(TrainerErrorTest, DivergingLossNamesEpochAndLayerAndWritesNothing) {
  try {
    train(config(kSbm, {"optimizer.name=sgd", "optimizer.lr=1e30", "optimizer.momentum=0", "model.dropout=0"}));
    FAIL() << "expected the run to diverge";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("training diverged: run 1, epoch 00"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the loss is NaN"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the first non-finite values appeared in layer 'layers."), std::string::npos) << msg;
    EXPECT_NE(msg.find("Lower optimizer.lr (now 1e+30)"), std::string::npos) << msg;
  }
  expect_only({});
}

TEST_F(TrainerErrorTest, OutOfMemoryNamesTheConfigTheRunAndTheWidth) {
  // A hidden layer of nodes × 65,536 floats, a quarter more than the machine has
  // available: refused at its allocation (host_memory.h), and the error says where
  // the run was and which key sized it. The reference backend: nothing to compile.
  const int64_t available = available_host_bytes();
  ASSERT_GE(available, 0) << "/proc/meminfo has no MemAvailable: the allocation check would be off";
  const int64_t nodes = available / 4 / 65536 * 5 / 4 + 1000;
  const std::vector<std::string> sets = {
      fmt::format("data.dataset=sbm:nodes={},classes=4,avg_degree=2,feature_dim=4,seed=3", nodes), "model.hidden=65536",
      "runtime.backend=reference", "training.runs=1"};
  expect_user_error([&] { train(config(kSbm, sets)); },
                    {"test.yaml: run 1, epoch 0001 (training): out of host memory: a buffer of",
                     fmt::format("a layer's buffers hold a row per node ({} nodes) of model.hidden = 65536 floats "
                                 "(model.hidden: --set model.hidden=65536): lower it, or train on sampled mini-batches "
                                 "(training.batch_size)",
                                 train::commas(nodes))});
  // Link prediction's encoder ends in a hidden × hidden layer: 8192 wide here, whose
  // weights fit where nodes × 8192 does not.
  const int64_t link_nodes = available / 4 / 8192 * 5 / 4 + 1000;
  expect_user_error(
      [&] {
        train(config(kSbm,
                     {fmt::format("data.dataset=sbm:nodes={},classes=4,avg_degree=2,feature_dim=4,seed=3", link_nodes),
                      "model.hidden=8192", "runtime.backend=reference", "training.runs=1", "data.task=link"}));
      },
      {"test.yaml: run 1, epoch 0001 (training): out of host memory: a buffer of", "of model.hidden = 8192 floats",
       "or score fewer pairs per step (training.link.batch_pairs)"});
  // Before the first epoch: one-hot inputs make the first layer's weights nodes × 65,536.
  std::vector<std::string> one_hot = sets;
  one_hot.push_back("data.node_features=one_hot");
  expect_user_error([&] { train(config(kSbm, one_hot)); },
                    {"test.yaml: before the first epoch (data, parameters, kernels): out of host memory: a buffer of",
                     "model.hidden = 65536 (--set model.hidden=65536) sets the width of the weights and of each "
                     "layer's buffers: lower it"});
  expect_only({});
}

TEST_F(TrainerErrorTest, MissingDatasetAndUnusableDatasets) {
  expect_user_error([&] { train(config(kSbm, {"data.dataset=linqs:/nonexistent/cora.tgz"})); },
                    {"test.yaml: data.dataset 'linqs:/nonexistent/cora.tgz' could not be loaded", "/nonexistent/cora.tgz"});
  expect_user_error([&] { train(config(kSbm, {"data.dataset=no-such-dataset"})); },
                    {"data.dataset 'no-such-dataset' could not be loaded"});
  expect_user_error([&] { train(config(kSbm, {"data.dataset=rmat:scale=6,edge_factor=4"})); },
                    {"dataset 'rmat:scale=6,edge_factor=4' has no node classes (task: none)",
                     "(data.task: random trains on random labels, for timing)"});

  expect_user_error([&] { train(config(kSbm, {"data.split.kind=planetoid"})); },
                    {"a planetoid split needs 500 validation + 1000 test nodes"});
  expect_only({});
}

TEST_F(TrainerErrorTest, ExistingRunDirWithoutOverwrite) {
  fs::create_directories(dir_ / "run");
  write_file_atomic(dir_ / "run" / "keep.txt", "previous run");
  expect_user_error([&] { train(config(kSbm, {"output.overwrite=false"})); },
                    {"output.run_dir '", "already exists", "output.overwrite: true"});
  EXPECT_EQ(read_file(dir_ / "run" / "keep.txt"), "previous run");
  // Overwrite replaces an earlier run only: a folder holding something else is left alone.
  expect_user_error(
      [&] {
        train(config(kSbm, {"training.runs=1", "training.epochs=2"}));
      },
      {"output.run_dir '", "is a folder that holds no earlier output (no metrics.jsonl)"});
  EXPECT_EQ(read_file(dir_ / "run" / "keep.txt"), "previous run");
  // With overwrite, the old run is replaced only once the new one has finished.
  write_file_atomic(dir_ / "run" / "metrics.jsonl", "{}\n");
  train(config(kSbm, {"training.runs=1", "training.epochs=2"}));
  EXPECT_FALSE(fs::exists(dir_ / "run" / "keep.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "run" / "summary.json"));
  expect_only({"run"});
}

TEST_F(TrainerErrorTest, EvalRejectsWrongAndCorruptCheckpoints) {
  const Config c = config(kSbm, {"training.runs=1", "training.epochs=3"});
  train(c);
  const fs::path ckpt = dir_ / "run/checkpoints/run-01.ckpt";
  auto quiet = [](const std::string&) {};
  // The config's data and model keys must be those the checkpoint was trained with.
  expect_user_error([&] { train::run_evaluation(config(kSbm, {"model.hidden=32"}), ckpt, quiet); },
                    {"checkpoint '", "run-01.ckpt' was trained with model.hidden=16, but the config gives 32",
                     "model.hidden=32", "evaluate with the config the run dir holds (config.yaml)"});
  expect_user_error([&] { train::run_evaluation(config(kSbm, {"data.normalize_features=true"}), ckpt, quiet); },
                    {"was trained with data.normalize_features=false, but the config gives true"});
  // How the features are stored is not the model: a dense read evaluates the same weights.
  const train::EvalReport dense = train::run_evaluation(config(kSbm, {"data.feature_storage=dense"}), ckpt, quiet);
  EXPECT_NEAR(dense.eval.test_acc, dense.recorded_test_acc, 0.02);
  expect_user_error([&] { train::run_evaluation(config(kSbm, {"model.name=gcn"}), ckpt, quiet); },
                    {"architecture mismatch: checkpoint", "holds a graphsage model, but the config builds gcn"});
  expect_user_error(
      [&] { train::run_evaluation(config(kSbm, {"data.dataset=sbm:nodes=300,classes=4,feature_dim=16"}), ckpt, quiet); },
      {"was trained on 'sbm' (400 nodes, 4 classes), but the config loads 'sbm' (300 nodes, 4 classes)"});
  std::string bytes = read_file(ckpt);
  bytes[bytes.size() / 3] ^= 0x01;
  write_file_atomic(dir_ / "bad.ckpt", bytes);
  expect_user_error([&] { train::run_evaluation(c, dir_ / "bad.ckpt", quiet); },
                    {"bad.ckpt", "checksum mismatch", "corrupt or truncated"});
  expect_user_error([&] { train::run_evaluation(c, dir_ / "none.ckpt", quiet); }, {"none.ckpt", "does not exist"});
}

}  // namespace
}  // namespace strata
