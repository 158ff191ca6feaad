// `strata train --resume` (apps/training/resume_point.h) in process: an interrupted
// run is simulated exactly by copying the run's staging folder at a chosen console
// line, which is what a SIGKILL at that moment would leave behind (every file in it
// is written atomically or flushed line by line), under the name a dead process's
// folder has. Resumed from that copy, the run must end with the same metrics,
// byte-identical checkpoints and the same summary as the uninterrupted run. Then
// every way a resume can be refused, by its message. tests/apps/resume_test.sh kills
// a real process.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "apps/training/resume_point.h"
#include "apps/training/trainer.h"
#include "core/file_util.h"
#include "models/checkpoint.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::expect_user_error;
using train::Config;

// Above any Linux pid_max (2^22): no process can have it, so its folder is an interrupted run's.
constexpr int64_t kDeadPid = 2147483000;

const std::string kSbm =
    "version: 1\n"
    "data:\n"
    "  dataset: sbm:nodes=400,classes=4,avg_degree=8,feature_dim=16,seed=3\n"
    "model:\n"
    "  hidden: 16\n"
    "  dropout: 0.5\n"
    "training:\n"
    "  epochs: 30\n"
    "  runs: 2\n"
    "  patience: 0\n"
    "runtime:\n"
    "  threads: 2\n"
    "output:\n"
    "  log_every: 1\n"
    "  resume_every: 4\n";

// A tiny HGB-format heterograph (as tests/apps/rgcn_test.sh writes it): 90 papers with 12
// features, 30 featureless terms, paper->term, term->paper and paper->paper links.
void write_hgb(const fs::path& dir) {
  fs::create_directories(dir);
  std::ostringstream node, link, train, test;
  for (int i = 0; i < 90; ++i) {
    const int c = (i * 7) % 10 < 7 ? i % 3 : 3 + (i * 5) % 9;
    node << i << "\tp" << i << "\t0\t";
    for (int k = 0; k < 12; ++k) node << (k ? "," : "") << (k == c ? 1 : 0);
    node << "\n";
    const int t = 90 + (i % 3) * 10 + (i * 7) % 10;
    link << i << "\t" << t << "\t0\t1\n" << t << "\t" << i << "\t1\t1\n" << i << "\t" << (i + 3) % 90 << "\t2\t1\n";
    (i < 60 ? train : test) << i << "\tp" << i << "\t0\t" << i % 3 << "\n";
  }
  for (int t = 0; t < 30; ++t) node << 90 + t << "\tterm" << t << "\t1\n";
  write_file_atomic(dir / "node.dat", node.str());
  write_file_atomic(dir / "link.dat", link.str());
  write_file_atomic(dir / "label.dat", train.str());
  write_file_atomic(dir / "label.dat.test_full", test.str());
}

class ResumeFixture : public testing::TempDirTest {
 protected:
  ResumeFixture() : TempDirTest("resume-test") {}

  fs::path run_dir() const { return dir_ / "run"; }
  fs::path dead_staging() const { return fs::path(run_dir().string() + fmt::format(".partial-{}", kDeadPid)); }
  fs::path own_staging() const { return fs::path(run_dir().string() + fmt::format(".partial-{}", ::getpid())); }

  Config config(const std::string& yaml, std::vector<std::string> sets = {}) {
    sets.push_back("output.run_dir=" + run_dir().string());
    return Config::parse(yaml, (dir_ / "test.yaml").string(), sets);
  }

  // Trains; when the console prints a line that contains, in order, every part of
  // one of `at` (e.g. {"Run 2/2", "Epoch 0010"}: the line "Epoch 0010" after the
  // line "Run 2/2"), the staging folder is copied to dir_/<name>.
  using Snapshots = std::vector<std::pair<std::string, std::vector<std::string>>>;
  void train(const Config& c, const Snapshots& at = {}, bool resume = false) {
    lines_.clear();
    std::vector<size_t> matched(at.size(), 0);
    train::run_training(
        c, "test",
        [&](const std::string& line) {
          lines_.push_back(line);
          for (size_t i = 0; i < at.size(); ++i) {
            const auto& [name, parts] = at[i];
            if (matched[i] == parts.size() || line.find(parts[matched[i]]) == std::string::npos) continue;
            if (++matched[i] == parts.size()) fs::copy(own_staging(), dir_ / name, fs::copy_options::recursive);
          }
        },
        resume);
    for (size_t i = 0; i < at.size(); ++i) ASSERT_EQ(matched[i], at[i].second.size()) << "no snapshot " << at[i].first;
  }
  // Puts a snapshot where a killed process would have left it.
  void interrupted_at(const std::string& snapshot) {
    fs::remove_all(dead_staging());
    fs::copy(dir_ / snapshot, dead_staging(), fs::copy_options::recursive);
  }
  bool printed(const std::string& part) const {
    for (const auto& l : lines_)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }

  std::vector<std::string> lines_;
};

class ResumeTest : public ResumeFixture {};
class ResumeErrorTest : public ResumeFixture {};

// metrics.jsonl without the timings, which differ from run to run.
std::string metrics_without_times(const fs::path& file) {
  static const std::regex times(R"re(,"(epoch_ms|eval_ms|sample_ms)":[^,}]*)re");
  return std::regex_replace(read_file(file), times, "");
}

// Everything but the timings of a run dir must equal the uninterrupted run's.
void expect_same_run(const fs::path& ref, const fs::path& got, int runs) {
  EXPECT_EQ(metrics_without_times(ref / "metrics.jsonl"), metrics_without_times(got / "metrics.jsonl"));
  for (int r = 1; r <= runs; ++r) {
    const std::string ck = fmt::format("checkpoints/run-{:02d}.ckpt", r);
    EXPECT_TRUE(read_file(ref / ck) == read_file(got / ck)) << ck << " differs";
  }
  EXPECT_EQ(read_file(ref / "split.json"), read_file(got / "split.json"));
  EXPECT_EQ(read_file(ref / "config.yaml"), read_file(got / "config.yaml"));
  const auto a = nlohmann::json::parse(read_file(ref / "summary.json"));
  const auto b = nlohmann::json::parse(read_file(got / "summary.json"));
  EXPECT_EQ(a["test_acc"], b["test_acc"]);
  EXPECT_EQ(a["val_acc"], b["val_acc"]);
  ASSERT_EQ(a["runs"].size(), static_cast<size_t>(runs));
  ASSERT_EQ(b["runs"].size(), static_cast<size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    for (const char* key : {"run", "seed", "best_epoch", "epochs", "train_acc", "val_acc", "test_acc", "checkpoint"})
      EXPECT_EQ(a["runs"][r][key], b["runs"][r][key]) << "run " << r + 1 << " " << key;
  }
  EXPECT_FALSE(fs::exists(got / train::kResumeFile)) << "a finished run dir keeps no resume point";
}

TEST_F(ResumeTest, GnnRunResumedAnywhereEndsAsTheUninterruptedRun) {
  const Config c = config(kSbm);
  // Three kills: mid-run 2 (two epochs after its resume point at epoch 8), between the
  // runs (run 1's last resume point), and after run 1's checkpoint but before its final
  // resume point (the epoch-28 one: epochs 29 and 30 and the checkpoint are redone).
  train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0010"}},
            {"between-runs", {"Run 2/2 (seed 1)"}},
            {"after-checkpoint", {"Run 1/2: best epoch"}}});
  fs::rename(run_dir(), dir_ / "ref");
  for (const auto& [snapshot, resumed_after] : std::vector<std::pair<std::string, std::string>>{
           {"mid-run", "Run 2/2 (seed 1): resumed after epoch 0008"},
           {"between-runs", "Run 2/2 (seed 1)"},
           {"after-checkpoint", "Run 1/2 (seed 0): resumed after epoch 0028"}}) {
    SCOPED_TRACE(snapshot);
    interrupted_at(snapshot);
    train(c, {}, /*resume=*/true);
    EXPECT_TRUE(
        printed(fmt::format("resuming the run that process {} left in '{}'", kDeadPid, dead_staging().string())));
    EXPECT_TRUE(printed(resumed_after)) << resumed_after;
    expect_same_run(dir_ / "ref", run_dir(), 2);
    EXPECT_FALSE(fs::exists(dead_staging())) << "the interrupted folder was adopted, not copied";
    // log.txt holds the interrupted session's lines, then the resumed one's.
    const std::string log = read_file(run_dir() / "log.txt");
    EXPECT_NE(log.find("Run 1/2 (seed 0)"), std::string::npos);
    EXPECT_NE(log.find("resuming the run that process"), std::string::npos);
    fs::remove_all(run_dir());
  }
}

TEST_F(ResumeTest, LastCheckpointPolicyAndPerRunSplitsResumeExactly) {
  const Config c = config(kSbm, {"output.checkpoint=last", "data.split.kind=planetoid", "data.split.train_per_class=10",
                                 "data.split.val_size=100", "data.split.test_size=100", "data.split.per_run=true",
                                 "output.resume_every=3"});
  train(c, {{"mid-run", {"Run 2/2 (seed 1", "Epoch 0017"}}});
  fs::rename(run_dir(), dir_ / "ref");
  interrupted_at("mid-run");
  train(c, {}, true);
  EXPECT_TRUE(printed("resumed after epoch 0015"));
  expect_same_run(dir_ / "ref", run_dir(), 2);
  EXPECT_EQ(read_file(dir_ / "ref/split_run2.json"), read_file(run_dir() / "split_run2.json"));
}

TEST_F(ResumeTest, MiniBatchRunResumesItsBatchOrderAndSamples) {
  // The sampling stream (batch order, sampled neighbours) continues where it stopped.
  const Config c = config(kSbm, {"training.batch_size=32", "training.fanouts=3,5", "training.epochs=12"});
  train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0006"}}});
  fs::rename(run_dir(), dir_ / "ref");
  interrupted_at("mid-run");
  train(c, {}, true);
  EXPECT_TRUE(printed("Run 2/2 (seed 1): resumed after epoch 0004"));
  expect_same_run(dir_ / "ref", run_dir(), 2);
}

// An R-GCN config on write_hgb's graph in `hgb`.
std::string rgcn_yaml(const fs::path& hgb) {
  return "version: 1\n"
         "data:\n"
         "  dataset: \"hgb:" +
         hgb.string() +
         "\"\n"
         "model:\n"
         "  name: rgcn\n"
         "  hidden: 8\n"
         "  num_bases: 2\n"
         "  embedding_dim: 8\n"
         "  dropout: 0.3\n"
         "training:\n"
         "  epochs: 12\n"
         "  runs: 2\n"
         "runtime:\n"
         "  threads: 2\n"
         "output:\n"
         "  log_every: 1\n"
         "  resume_every: 5\n";
}

TEST_F(ResumeTest, RgcnRunResumedMidRunEndsAsTheUninterruptedRun) {
  write_hgb(dir_ / "hgb");
  const Config c = config(rgcn_yaml(dir_ / "hgb"));
  train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0007"}}, {"between-runs", {"Run 2/2 (seed 1)"}}});
  fs::rename(run_dir(), dir_ / "ref");
  for (const std::string snapshot : {"mid-run", "between-runs"}) {
    SCOPED_TRACE(snapshot);
    interrupted_at(snapshot);
    train(c, {}, true);
    EXPECT_TRUE(printed("resuming the run that process"));
    if (snapshot == "mid-run") {
      EXPECT_TRUE(printed("Run 2/2 (seed 1): resumed after epoch 0005"));
    }
    expect_same_run(dir_ / "ref", run_dir(), 2);
    fs::remove_all(run_dir());
  }
}

// Link prediction: the sampling stream (step order and each step's non-edges) and the
// MLP decoder's parameters continue where they stopped; eval_period 2 puts the resume
// point (epoch 8, resume_every 4) between evaluations, and the kill falls before the next
// evaluation at epoch 10.
TEST_F(ResumeTest, LinkRunResumedMidRunEndsAsTheUninterruptedRun) {
  const Config c =
      config(kSbm, {"data.task=link", "training.epochs=12", "training.eval_period=2", "training.link.hits_k=10",
                    "training.link.batch_pairs=500", "model.link.predictor=mlp", "model.link.predictor_layers=2"});
  train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0009"}}, {"between-runs", {"Run 2/2 (seed 1)"}}});
  fs::rename(run_dir(), dir_ / "ref");
  const fs::path ref = dir_ / "ref";
  for (const std::string snapshot : {"mid-run", "between-runs"}) {
    SCOPED_TRACE(snapshot);
    interrupted_at(snapshot);
    train(c, {}, true);
    EXPECT_TRUE(printed("resuming the run that process"));
    if (snapshot == "mid-run") {
      EXPECT_TRUE(printed("Run 2/2 (seed 1): resumed after epoch 0008"));
    }
    EXPECT_EQ(metrics_without_times(ref / "metrics.jsonl"), metrics_without_times(run_dir() / "metrics.jsonl"));
    for (const char* f : {"checkpoints/run-01.ckpt", "checkpoints/run-02.ckpt", "link_split.json", "config.yaml"})
      EXPECT_TRUE(read_file(ref / f) == read_file(run_dir() / f)) << f << " differs";
    const auto a = nlohmann::json::parse(read_file(ref / "summary.json"));
    const auto b = nlohmann::json::parse(read_file(run_dir() / "summary.json"));
    for (const char* key : {"test_acc", "val_acc", "test_rocauc", "metric"}) EXPECT_EQ(a[key], b[key]) << key;
    ASSERT_EQ(a["runs"].size(), 2u);
    ASSERT_EQ(b["runs"].size(), 2u);
    for (int r = 0; r < 2; ++r)
      for (const char* key : {"run", "seed", "best_epoch", "epochs", "val", "test", "test_scores_hash", "checkpoint"})
        EXPECT_EQ(a["runs"][r][key], b["runs"][r][key]) << "run " << r + 1 << " " << key;
    EXPECT_FALSE(fs::exists(run_dir() / train::kResumeFile));
    fs::remove_all(run_dir());
  }
}

TEST_F(ResumeTest, TunedRunsResumeOnTheInterruptedSessionsChoices) {
  // Tuning again could choose other kernels, whose sums round differently from the
  // epochs already run: a resumed run replays the interrupted session's kernels.json.
  const std::string cache = "runtime.cache_dir=" + (dir_ / "cache").string();
  {
    SCOPED_TRACE("gnn");
    const Config c = config(kSbm, {"runtime.tuning=true", cache, "training.epochs=10"});
    train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0006"}}});
    fs::rename(run_dir(), dir_ / "ref");
    interrupted_at("mid-run");
    train(c, {}, true);
    EXPECT_TRUE(printed("plans tuned by the interrupted session, replayed from its kernels.json (not tuned again)"));
    expect_same_run(dir_ / "ref", run_dir(), 2);
    const auto k = nlohmann::json::parse(read_file(run_dir() / "kernels.json"));
    EXPECT_EQ(k["tuning"], true);
    EXPECT_EQ(k["plans"], "kernels.json");
    for (const char* d : {"run", "ref", "mid-run"}) fs::remove_all(dir_ / d);
  }
  SCOPED_TRACE("rgcn");
  write_hgb(dir_ / "hgb");
  const Config c = config(rgcn_yaml(dir_ / "hgb"), {"runtime.tuning=true", cache});
  train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0007"}}});
  fs::rename(run_dir(), dir_ / "ref");
  interrupted_at("mid-run");
  train(c, {}, true);
  EXPECT_TRUE(printed("orders and plans tuned by the interrupted session, replayed from its kernels.json"));
  expect_same_run(dir_ / "ref", run_dir(), 2);
  fs::remove_all(run_dir());
  // The order comes from the interrupted session's file, not from tuning or a record:
  // rewritten there, the resumed run runs the rewritten one.
  interrupted_at("mid-run");
  const fs::path file = dead_staging() / "kernels.json";
  auto k = nlohmann::json::parse(read_file(file));
  std::string was;
  for (auto& e : k["kernels"])
    if (e["role"] == "rgms 8->8 forward") {
      was = e["order"].get<std::string>();
      e["order"] = was == "transform-first" ? "aggregate-first" : "transform-first";
    }
  ASSERT_FALSE(was.empty()) << k.dump(2);
  const std::string now = was == "transform-first" ? "aggregate-first" : "transform-first";
  write_file_atomic(file, k.dump(2));
  train(c, {}, true);
  const std::regex line("^ +rgms 8->8 forward +G +" + now + " .*, replayed$");
  EXPECT_TRUE(
      std::any_of(lines_.begin(), lines_.end(), [&](const std::string& l) { return std::regex_search(l, line); }))
      << "no line for the rewritten order " << now;
  const nlohmann::json kernels = nlohmann::json::parse(read_file(run_dir() / "kernels.json"));  // outlives the loop
  for (const auto& e : kernels["kernels"]) {
    if (e["role"] == "rgms 8->8 forward") {
      EXPECT_EQ(e["order"], now);
    }
  }
}

TEST_F(ResumeErrorTest, ResumesThatCannotGoOnAreRefusedByName) {
  const Config c = config(kSbm);
  expect_user_error([&] { train(c, {}, true); },
                    {"nothing to resume: no interrupted run of output.run_dir '", "(no such run dir;",
                     "an interrupted run leaves its staging folder '", "run.partial-<pid>'"});
  train(c, {{"mid-run", {"Run 2/2 (seed 1)", "Epoch 0010"}}, {"early", {"Epoch 0002"}}});
  expect_user_error([&] { train(c, {}, true); }, {"that run dir is a finished run"});

  // Killed before its first resume point.
  interrupted_at("early");
  expect_user_error([&] { train(c, {}, true); },
                    {"cannot resume '", "its run stopped before its first resume point",
                     "every output.resume_every epochs of the config it ran with", "start it again without --resume"});

  // Another config: the key, both values and where the new one came from.
  interrupted_at("mid-run");
  expect_user_error([&] { train(config(kSbm, {"training.epochs=31"}), {}, true); },
                    {"the interrupted run was started with training.epochs=30, but the config gives 31",
                     "(--set training.epochs=31)", "resume with the same config and --set overrides"});
  // The keys that change nothing computed may differ.
  train(config(kSbm, {"output.log_every=5", "output.resume_every=7"}), {}, true);
  EXPECT_TRUE(printed("resumed after epoch 0008"));

  // A corrupt resume point is named, never half-loaded.
  interrupted_at("mid-run");
  {
    std::string bytes = read_file(dead_staging() / train::kResumeFile);
    bytes[bytes.size() / 2] ^= 0x01;
    write_file_atomic(dead_staging() / train::kResumeFile, bytes);
  }
  expect_user_error([&] { train(c, {}, true); }, {"resume.ckpt", "checksum mismatch"});

  // metrics.jsonl cut shorter than the resume point recorded.
  interrupted_at("mid-run");
  write_file_atomic(dead_staging() / "metrics.jsonl", "{}\n");
  expect_user_error([&] { train(c, {}, true); },
                    {"metrics.jsonl holds 3 bytes, fewer than the", "the folder was changed after the run stopped"});

  EXPECT_TRUE(fs::exists(dead_staging() / train::kResumeFile)) << "a refused resume leaves the folder as it was";
  // The same length, other bytes: the recorded digest tells.
  interrupted_at("mid-run");
  {
    std::string m = read_file(dead_staging() / "metrics.jsonl");
    m[m.find("\"loss\":") + 8] ^= 0x01;
    write_file_atomic(dead_staging() / "metrics.jsonl", m);
  }
  expect_user_error([&] { train(c, {}, true); },
                    {"cannot resume '", "the first", "bytes of metrics.jsonl are not those its resume point recorded"});

  // A folder whose process still runs (pid 1 always does) is not taken over.
  fs::remove_all(dead_staging());
  const fs::path running = fs::path(run_dir().string() + ".partial-1");
  fs::copy(dir_ / "mid-run", running, fs::copy_options::recursive);
  expect_user_error([&] { train(c, {}, true); }, {"nothing to resume: the run in '", "is still going (process 1)"});
  fs::remove_all(running);

  // A resume that fails after adopting the folder keeps it, resumable again: here its
  // progress is malformed (a valid checkpoint file, so only the progress check sees it).
  interrupted_at("mid-run");
  {
    nn::Checkpoint ck = nn::read_checkpoint(dead_staging() / train::kResumeFile);
    ck.meta["progress"]["current"].erase("selection");
    nn::write_checkpoint(dead_staging() / train::kResumeFile, ck);
  }
  expect_user_error([&] { train(c, {}, true); }, {"resume point '", "the run in progress is malformed"});
  EXPECT_FALSE(fs::exists(dead_staging()));
  EXPECT_TRUE(fs::exists(own_staging() / "metrics.jsonl")) << "kept under this process's name";
  EXPECT_TRUE(fs::exists(own_staging() / train::kResumeFile));
  fs::remove_all(own_staging());

  // The best epoch's model and optimizer state are kept aside for the run's checkpoint:
  // a damaged one (re-sealed, so the checksum passes) is refused at resume, by name.
  const auto damage_best = [&](bool optimizer, const std::string& entry) {
    interrupted_at("mid-run");
    nn::Checkpoint ck = nn::read_checkpoint(dead_staging() / train::kResumeFile);
    auto& tensors = optimizer ? ck.optimizer : ck.model;
    bool found = false;
    for (auto& [name, t] : tensors) {
      if (name != entry) continue;
      t = t.clone();
      t.data<float>()[t.numel() - 1] = std::numeric_limits<float>::quiet_NaN();
      found = true;
    }
    ASSERT_TRUE(found) << "no tensor '" << entry << "' in the resume point";
    nn::write_checkpoint(dead_staging() / train::kResumeFile, ck);
  };
  damage_best(false, "best/layers.1.bias");
  expect_user_error([&] { train(c, {}, true); },
                    {"resume.ckpt (its best epoch's model)", "'layers.1.bias' holds 1 NaN or infinite values"});
  fs::remove_all(own_staging());
  damage_best(true, "best/adam.v/layers.0.weight_self");
  expect_user_error([&] { train(c, {}, true); },
                    {"optimizer state 'adam.v/layers.0.weight_self' in '", "resume.ckpt (its best epoch's state)'",
                     "holds 1 NaN or infinite values"});
  fs::remove_all(own_staging());
}

TEST_F(ResumeTest, LeftoversOfThisPidTemporariesAndKillsWhileCommittingAreHandled) {
  const Config c =
      config(kSbm, {"data.split.kind=random", "data.split.per_run=true", "training.runs=3", "training.epochs=8"});
  // The last console line before the run dir is written: every run finished.
  train(c, {{"mid-run", {"Run 2/3 (seed 1", "Epoch 0006"}}, {"committing", {"Test accuracy over 3 runs"}}});
  fs::rename(run_dir(), dir_ / "ref");
  // A folder named with this process's pid was left by an earlier process with that pid
  // (containers restart with the same pids): resumable like any other.
  fs::copy(dir_ / "mid-run", own_staging(), fs::copy_options::recursive);
  // Temporaries a kill left mid-write never reach the run dir.
  write_file_atomic(own_staging() / "checkpoints/run-01.ckpt.tmp.4242.7", "torn");
  write_file_atomic(own_staging() / "summary.json.tmp.4242.8", "torn");
  train(c, {}, true);
  EXPECT_TRUE(printed("Run 2/3 (seed 1): resumed after epoch 0004"));
  expect_same_run(dir_ / "ref", run_dir(), 3);
  EXPECT_FALSE(fs::exists(run_dir() / "checkpoints/run-01.ckpt.tmp.4242.7"));
  EXPECT_FALSE(fs::exists(run_dir() / "summary.json.tmp.4242.8"));
  // log.txt has the epoch lines (output.log_every: 1) of both sessions.
  const std::string log = read_file(run_dir() / "log.txt");
  EXPECT_NE(log.find("Epoch 0001 | loss"), std::string::npos);
  EXPECT_NE(log.find("Epoch 0008 | loss"), std::string::npos);
  fs::remove_all(run_dir());

  // Killed when every run had finished (while committing): the resume writes the same
  // summary, naming the last run's split.
  interrupted_at("committing");
  train(c, {}, true);
  expect_same_run(dir_ / "ref", run_dir(), 3);
  const auto a = nlohmann::json::parse(read_file(dir_ / "ref/summary.json"));
  const auto b = nlohmann::json::parse(read_file(run_dir() / "summary.json"));
  EXPECT_EQ(a["dataset"]["split"], b["dataset"]["split"]);
  EXPECT_NE(b["dataset"]["split"]["origin"].get<std::string>().find("seed 2"), std::string::npos);
}

TEST_F(ResumeTest, AFinishedRunRemovesInterruptedRunsAndSaysSo) {
  const Config c = config(kSbm, {"training.runs=1", "training.epochs=10"});
  train(c, {{"mid-run", {"Epoch 0006"}}, {"later", {"Epoch 0009"}}});
  // A fresh start that fails (the run dir may not be replaced) loses nothing.
  interrupted_at("mid-run");
  expect_user_error(
      [&] {
        train(config(kSbm, {"training.runs=1", "training.epochs=10", "output.overwrite=false"}));
      },
      {"already exists"});
  EXPECT_TRUE(fs::exists(dead_staging() / train::kResumeFile));
  // A finished run dir whose name looks like a staging folder is not an interrupted run.
  const fs::path lookalike = fs::path(run_dir().string() + ".partial-2147483002");
  fs::copy(dir_ / "mid-run", lookalike, fs::copy_options::recursive);
  fs::remove(lookalike / train::kResumeFile);
  write_file_atomic(lookalike / "summary.json", "{}\n");
  // One that finishes removes it, and says so first and last.
  train(c);
  EXPECT_TRUE(fs::exists(lookalike / "summary.json")) << "a finished run was taken for an interrupted one";
  EXPECT_FALSE(printed(lookalike.string()));
  fs::remove_all(lookalike);
  EXPECT_TRUE(
      printed(fmt::format("found '{}', left by an interrupted run (process {}), which `strata train … --resume` "
                          "would continue; removed once this run finishes",
                          dead_staging().string(), kDeadPid)));
  EXPECT_TRUE(printed(fmt::format("removed '{}', an interrupted run (process {}) this run supersedes",
                                  dead_staging().string(), kDeadPid)));
  EXPECT_FALSE(fs::exists(dead_staging()));
  // A resume removes the other interrupted runs too: a second --resume finds none.
  interrupted_at("mid-run");
  const fs::path older = fs::path(run_dir().string() + ".partial-2147483001");
  fs::copy(dir_ / "later", older, fs::copy_options::recursive);
  fs::last_write_time(older / train::kResumeFile, fs::file_time_type::clock::now() - std::chrono::hours(1));
  train(c, {}, true);
  EXPECT_TRUE(printed("Run 1/1 (seed 0): resumed after epoch 0004")) << "the newest resume point";
  EXPECT_FALSE(fs::exists(older));
  expect_user_error([&] { train(c, {}, true); }, {"that run dir is a finished run"});
  // Without resume points (output.resume_every: 0) a run writes none.
  train(config(kSbm, {"training.runs=1", "training.epochs=10", "output.resume_every=0"}),
        {{"no-points", {"Epoch 0009"}}});
  EXPECT_FALSE(fs::exists(dir_ / "no-points" / train::kResumeFile));
  EXPECT_TRUE(fs::exists(dir_ / "mid-run" / train::kResumeFile));
}

}  // namespace
}  // namespace strata
