// RunBook (apps/training/run_book.h): what every training driver's loop keeps of a
// run: the best epoch's snapshots (taken only when output.checkpoint keeps the best),
// early stopping, and the run's times and counters. Resume points restored and saved
// through it are checked end to end in resume_test.cpp.
#include "apps/training/run_book.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace strata {
namespace {

using train::CheckpointPolicy;
using train::RunBook;
using train::RunResult;
using train::TrainingConfig;

std::vector<nn::Parameter> one_parameter(float value) {
  return {
      {"layers.0.weight", ag::Var::parameter(Tensor::from_vector(std::vector<float>{value, -value}), "W"), 0, false}};
}

void set_value(const std::vector<nn::Parameter>& ps, float value) {
  float* w = ps[0].var.value().data<float>();
  w[0] = value;
  w[1] = -value;
}

float snapshot_value(const RunBook& book) { return book.best_params().at(0).second.data<float>()[0]; }

TEST(RunBook, SnapshotsTheBestEpochsParametersAndOptimizerWhenCheckpointsKeepTheBest) {
  TrainingConfig c;
  c.training.epochs = 10;
  c.output.checkpoint = CheckpointPolicy::Best;
  const std::vector<nn::Parameter> ps = one_parameter(1);
  std::unique_ptr<nn::Optimizer> optimizer = nn::make_optimizer({}, ps);
  RunBook book(c, 1, 7);
  EXPECT_TRUE(book.offer(1, 0.5, 1.0, ps, optimizer.get()));
  EXPECT_EQ(book.best_epoch(), 1);
  EXPECT_FLOAT_EQ(snapshot_value(book), 1);
  EXPECT_EQ(book.best_optimizer().size(), optimizer->state().size());
  set_value(ps, 2);
  EXPECT_FALSE(book.offer(2, 0.4, 1.0, ps, optimizer.get()));  // worse: the snapshot keeps epoch 1's values
  EXPECT_EQ(book.best_epoch(), 1);
  EXPECT_FLOAT_EQ(snapshot_value(book), 1);
  set_value(ps, 3);
  EXPECT_TRUE(book.offer(3, 0.6, 1.0, ps, nullptr));
  EXPECT_EQ(book.best_epoch(), 3);
  EXPECT_FLOAT_EQ(snapshot_value(book), 3);
}

TEST(RunBook, TakesNoSnapshotWhenCheckpointsKeepTheLastEpochOrNone) {
  for (CheckpointPolicy policy : {CheckpointPolicy::Last, CheckpointPolicy::None}) {
    TrainingConfig c;
    c.output.checkpoint = policy;
    const std::vector<nn::Parameter> ps = one_parameter(1);
    std::unique_ptr<nn::Optimizer> optimizer = nn::make_optimizer({}, ps);
    RunBook book(c, 1, 7);
    EXPECT_TRUE(book.offer(1, 0.5, 1.0, ps, optimizer.get()));
    EXPECT_EQ(book.best_epoch(), 1);
    EXPECT_TRUE(book.best_params().empty());
    EXPECT_TRUE(book.best_optimizer().empty());
  }
}

TEST(RunBook, StopsEarlyAfterPatienceEvaluationsWithoutABetterOneAndSaysSo) {
  TrainingConfig c;
  c.training.epochs = 10;
  c.training.patience = 2;
  const std::vector<nn::Parameter> ps = one_parameter(1);
  RunBook book(c, 2, 8);
  std::vector<std::string> lines;
  const train::Printer out = [&](const std::string& line) { lines.push_back(line); };
  EXPECT_TRUE(book.offer(1, 0.5, 1.0, ps, nullptr));
  EXPECT_FALSE(book.end_epoch(1, true, out));
  EXPECT_FALSE(book.offer(2, 0.5, 1.0, ps, nullptr));  // a tie on score and loss is no better
  EXPECT_FALSE(book.end_epoch(2, true, out));
  EXPECT_FALSE(book.end_epoch(3, false, out));  // no evaluation after epoch 3: no decision
  EXPECT_FALSE(book.offer(4, 0.3, 2.0, ps, nullptr));
  EXPECT_TRUE(book.end_epoch(4, true, out));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "Early stopping at epoch 0004: no better validation score in 2 evaluations");
  RunResult r;
  book.fill(r);
  EXPECT_EQ(r.run, 2);
  EXPECT_EQ(r.seed, 8u);
  EXPECT_EQ(r.best_epoch, 1);
  EXPECT_EQ(r.epochs, 4);
  EXPECT_TRUE(r.stopped_early);
}

TEST(RunBook, EvaluatesEveryPeriodAndAfterTheLastEpoch) {
  TrainingConfig c;
  c.training.epochs = 7;
  c.training.eval_period = 3;
  RunBook book(c, 1, 0);
  std::vector<int64_t> evaluated;
  for (int64_t e = 1; e <= 7; ++e)
    if (book.evaluates_after(e)) evaluated.push_back(e);
  EXPECT_EQ(evaluated, (std::vector<int64_t>{3, 6, 7}));
}

TEST(RunBook, FillsTheRunsTimesFromItsEpochs) {
  TrainingConfig c;
  c.training.epochs = 3;
  RunBook book(c, 1, 0);
  EXPECT_EQ(book.first_epoch(), 1);
  book.add_epoch(1.0, 0.25, 0.5);
  book.add_epoch(4.0, 0.5, 0.25);
  book.add_epoch(2.5, 0.25);
  book.end_epoch(3, false, [](const std::string&) {});
  RunResult r;
  book.fill(r);
  EXPECT_DOUBLE_EQ(r.train_ms, 7.5);
  EXPECT_DOUBLE_EQ(r.mean_epoch_ms, 2.5);
  EXPECT_DOUBLE_EQ(r.median_epoch_ms, 2.5);
  EXPECT_DOUBLE_EQ(r.optimizer_ms, 1.0);
  EXPECT_DOUBLE_EQ(book.sample_ms(), 0.75);
  EXPECT_EQ(r.epochs, 3);
  EXPECT_FALSE(r.stopped_early);
  EXPECT_EQ(r.best_epoch, 0);  // never evaluated
}

}  // namespace
}  // namespace strata
