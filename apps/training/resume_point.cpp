#include "apps/training/resume_point.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "apps/training/run_checkpoint.h"
#include "core/error.h"
#include "core/file_util.h"
#include "models/checkpoint.h"
#include "sparse_compiler/ops/recorded_plans.h"

namespace strata::train {
namespace {

using json = nlohmann::ordered_json;

// Keys that may change between the interrupted session and the resumed one: they
// change neither a number the run computes nor where its outputs go.
const std::set<std::string> kMayDiffer = {"output.log_every", "output.resume_every", "runtime.cache_dir"};

void check_same_config(const Config& config, const json& meta, const std::string& file) {
  STRATA_CHECK(meta.contains("config") && meta["config"].is_string(), "resume point '{}' records no config", file);
  std::optional<Config> started;
  try {
    started = Config::parse(meta["config"].get<std::string>(), fmt::format("resume point '{}'", file));
  } catch (const UserError& e) {
    STRATA_FAIL(
        "resume point '{}' was written by a build with other config keys ({}); start the run again without "
        "--resume",
        file, e.what());
  }
  for (const KeySpec& k : config_schema()) {
    if (kMayDiffer.count(k.path) || config.text(k.path) == started->text(k.path)) continue;
    STRATA_FAIL(
        "cannot resume '{}': the interrupted run was started with {}={}, but the config gives {} ({}); resume with "
        "the same config and --set overrides ({} holds the config it ran with)",
        file, k.path, started->text(k.path), config.text(k.path), config.origin(k.path),
        (fs::path(file).parent_path() / "config.yaml").string());
  }
}

ResumePoint read_resume_point(const fs::path& path, const Config& config) {
  const std::string file = path.string();
  nn::Checkpoint ck = read_training_checkpoint(path);  // checksum first: a torn or corrupt file is named as such
  const json& meta = ck.meta;
  STRATA_CHECK(meta.value("format", std::string()) == "strata-resume",
               "'{}' is a checkpoint but not a resume point (format '{}')", file,
               meta.value("format", std::string("?")));
  const int version = meta.value("version", 0);
  STRATA_CHECK(version == kResumeVersion, "resume point '{}' has version {}, this build reads version {}", file,
               version, kResumeVersion);
  check_same_config(config, meta, file);
  ResumePoint p;
  p.file = file;
  try {
    p.progress = meta.at("progress");
    p.console = meta.at("console").get<std::vector<std::string>>();
    p.metrics_bytes = meta.at("metrics_bytes").get<uint64_t>();
    p.metrics_digest = meta.at("metrics_digest").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("resume point '{}' is malformed: {}", file, e.what());
  }
  p.model = std::move(ck.model);
  p.optimizer = std::move(ck.optimizer);
  return p;
}

std::vector<std::pair<std::string, Tensor>> take_prefixed(std::vector<std::pair<std::string, Tensor>>& from,
                                                          const std::string& prefix) {
  std::vector<std::pair<std::string, Tensor>> taken, kept;
  const std::string head = prefix + "/";
  for (auto& [name, t] : from) {
    if (name.starts_with(head))
      taken.emplace_back(name.substr(head.size()), std::move(t));
    else
      kept.emplace_back(std::move(name), std::move(t));
  }
  from = std::move(kept);
  return taken;
}

json profile_state(const ag::OpProfile& p) {
  json ms = json::array(), calls = json::array();
  for (int c = 0; c < ag::kNumOpCategories; ++c) {
    ms.push_back(exact_json(p.ms[c]));
    calls.push_back(p.calls[c]);
  }
  return {{"ms", ms}, {"calls", calls}};
}

ag::OpProfile profile_from_state(const nlohmann::json& j, const std::string& source) {
  ag::OpProfile p;
  try {
    const auto ms = j.at("ms").get<std::vector<double>>();
    const auto calls = j.at("calls").get<std::vector<int64_t>>();
    STRATA_CHECK(ms.size() == ag::kNumOpCategories && calls.size() == ag::kNumOpCategories,
                 "resume point '{}': the time profile has {} categories, expected {}", source, ms.size(),
                 ag::kNumOpCategories);
    for (int c = 0; c < ag::kNumOpCategories; ++c) {
      p.ms[c] = ms[c];
      p.calls[c] = calls[c];
    }
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("resume point '{}': the time profile is malformed ({})", source, e.what());
  }
  return p;
}

json progress_state(const RunProgress& p) {
  return {{"run", p.run},
          {"epoch", p.epoch},
          {"best_epoch", p.best_epoch},
          {"epoch_ms", p.epoch_ms},
          {"optimizer_ms", exact_json(p.optimizer_ms)},
          {"sample_ms", exact_json(p.sample_ms)},
          {"best", p.best},
          {"last", p.last},
          {"dropout", p.dropout},
          {"sampler", p.sampler},
          {"selection", p.selection},
          {"profile", profile_state(p.profile)}};
}

RunProgress progress_from_state(const nlohmann::json& j, const std::string& source) {
  RunProgress p;
  try {
    p.run = j.at("run").get<int>();
    p.epoch = j.at("epoch").get<int64_t>();
    p.best_epoch = j.at("best_epoch").get<int64_t>();
    p.epoch_ms = j.at("epoch_ms").get<std::vector<double>>();
    p.best = j.at("best");
    p.last = j.at("last");
    p.dropout = j.at("dropout").get<std::string>();
    p.sampler = j.at("sampler").get<std::string>();
    p.selection = j.at("selection");
    p.profile = profile_from_state(j.at("profile"), source);
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("resume point '{}': the run in progress is malformed ({})", source, e.what());
  }
  p.optimizer_ms = exact_double(j, "optimizer_ms", source);
  if (j.contains("sample_ms")) p.sample_ms = exact_double(j, "sample_ms", source);  // not in points before link runs
  STRATA_CHECK(p.run >= 1 && p.epoch >= 1 && static_cast<int64_t>(p.epoch_ms.size()) == p.epoch,
               "resume point '{}': the run in progress is malformed (run {}, epoch {}, {} epoch times)", source, p.run,
               p.epoch, p.epoch_ms.size());
  return p;
}

bool has_resume_point(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(folder / kResumeFile, ec);
}

}  // namespace

void write_resume_point(RunDirectory& dir, const Config& config, ResumePoint point) {
  nn::Checkpoint ck;
  ck.meta = {{"format", "strata-resume"},
             {"version", kResumeVersion},
             {"config_hash", config.hash().hex()},
             {"config", config.to_yaml()},
             {"metrics_bytes", dir.metrics_bytes()},
             {"metrics_digest", dir.metrics_digest()},
             {"console", point.console},
             {"progress", std::move(point.progress)}};
  ck.model = std::move(point.model);
  ck.optimizer = std::move(point.optimizer);
  nn::write_checkpoint(dir.staging_path() / kResumeFile, ck);
}

// Temporaries (file_util.h names them <file>.tmp.<pid>.<n>) that a killed process
// left in a staging folder: never part of a run dir.
void remove_temporaries(const fs::path& folder) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && is_temporary_sibling(it->path())) found.push_back(it->path());
  for (const fs::path& f : found) fs::remove(f, ec);
}

// The staging folders an interrupted run of `final_dir` left (StagedDirectory::leftovers),
// without the finished run dirs whose names merely look like one (a run dir named
// "exp.partial-12" beside "exp"): those hold a summary and no resume point.
static std::vector<StagedDirectory::Leftover> interrupted_runs(const fs::path& final_dir) {
  std::vector<StagedDirectory::Leftover> out;
  std::error_code ec;
  for (const StagedDirectory::Leftover& l : StagedDirectory::leftovers(final_dir))
    if (!fs::exists(l.path / "summary.json", ec) || fs::exists(l.path / kResumeFile, ec)) out.push_back(l);
  return out;
}

void commit_run_dir(RunDirectory& dir, Console& out) {
  dir.commit();
  // Kept until the run dir was in place, so a kill while committing leaves a resumable folder.
  std::error_code ec;
  fs::remove(dir.final_path() / kResumeFile, ec);
  // Interrupted runs of this run dir are superseded by the finished one.
  for (const StagedDirectory::Leftover& l : interrupted_runs(dir.final_path())) {
    if (l.running) continue;
    fs::remove_all(l.path, ec);
    if (!ec)
      out(fmt::format("removed '{}', an interrupted run (process {}) this run supersedes", l.path.string(), l.pid));
  }
}

OpenedRunDir start_training_session(const Config& config, const TrainingConfig& c, const std::string& config_name,
                                    Console& out, bool resume) {
  apply_runtime(c.runtime);
  OpenedRunDir opened = open_run_dir(expand_run_dir(c.output.run_dir, config_name), c.output.overwrite, config, resume);
  if (opened.resumed) out.lines = opened.resumed->console;  // log.txt continues the interrupted session's
  opened.dir->write("config.yaml", config.to_yaml());
  out(train_banner(config));
  for (const std::string& note : opened.notes) out(note);
  return opened;
}

bool replay_interrupted_session_plans(const RunDirectory& dir, nn::KernelRuntime& runtime, bool resumed) {
  const fs::path tuned = dir.staging_path() / "kernels.json";
  std::error_code ec;
  if (!resumed || !runtime.tuning || runtime.plans || runtime.backend != sc::Backend::Generated ||
      !fs::exists(tuned, ec))
    return false;
  runtime.plans = std::make_shared<const sc::RecordedPlans>(sc::RecordedPlans::read(tuned));
  return true;
}

std::string replayed_plans_note(const std::string& what) {
  return what + " tuned by the interrupted session, replayed from its kernels.json (not tuned again)";
}

void write_kernels_json(RunDirectory& dir, nlohmann::ordered_json kernels, bool replayed) {
  if (replayed) {
    kernels["tuning"] = true;
    kernels["plans"] = "kernels.json";  // this file: the interrupted session's choices, the same
  }
  dir.write("kernels.json", kernels.dump(2) + "\n");
}

OpenedRunDir open_run_dir(const fs::path& final_dir, bool overwrite, const Config& config, bool resume) {
  OpenedRunDir o;
  const std::vector<StagedDirectory::Leftover> leftovers = interrupted_runs(final_dir);
  if (!resume) {
    for (const StagedDirectory::Leftover& l : leftovers)
      if (!l.running)
        o.notes.push_back(
            fmt::format("found '{}', left by an interrupted run (process {}){}; removed once this run "
                        "finishes",
                        l.path.string(), l.pid,
                        has_resume_point(l.path) ? ", which `strata train … --resume` would continue" : ""));
    o.dir = std::make_unique<RunDirectory>(final_dir, overwrite);
    return o;
  }

  const StagedDirectory::Leftover* newest = nullptr;
  fs::file_time_type newest_time{};
  for (const StagedDirectory::Leftover& l : leftovers) {
    if (l.running || !has_resume_point(l.path)) continue;
    std::error_code ec;
    const fs::file_time_type t = fs::last_write_time(l.path / kResumeFile, ec);
    if (!ec && (!newest || t > newest_time)) newest = &l, newest_time = t;
  }
  if (!newest) {
    for (const StagedDirectory::Leftover& l : leftovers)
      STRATA_CHECK(!l.running, "nothing to resume: the run in '{}' is still going (process {})", l.path.string(),
                   l.pid);
    for (const StagedDirectory::Leftover& l : leftovers)
      STRATA_FAIL(
          "cannot resume '{}': its run stopped before its first resume point (one is written every "
          "output.resume_every epochs of the config it ran with, and after each run; none with 0); start it again "
          "without --resume",
          l.path.string());
    std::error_code ec;
    STRATA_FAIL(
        "nothing to resume: no interrupted run of output.run_dir '{}' ({}; an interrupted run leaves its "
        "staging folder '{}.partial-<pid>')",
        final_dir.string(), fs::exists(final_dir, ec) ? "that run dir is a finished run" : "no such run dir",
        final_dir.string());
  }
  ResumePoint point = read_resume_point(newest->path / kResumeFile, config);
  o.notes.push_back(fmt::format("resuming the run that process {} left in '{}'", newest->pid, newest->path.string()));
  o.dir = std::make_unique<RunDirectory>(final_dir, overwrite, newest->path, point.metrics_bytes, point.metrics_digest);
  remove_temporaries(o.dir->staging_path());
  point.file = (o.dir->staging_path() / kResumeFile).string();
  o.resumed = std::move(point);
  return o;
}

void ResumeRecorder::write(json current, std::vector<std::pair<std::string, Tensor>> model,
                           std::vector<std::pair<std::string, Tensor>> optimizer) {
  ResumePoint p;
  p.progress = {{"finished", finished_}, {"current", std::move(current)}};
  p.console = out_.lines;
  p.model = std::move(model);
  p.optimizer = std::move(optimizer);
  write_resume_point(dir_, config_, std::move(p));
}

void ResumeRecorder::save(const RunProgress& progress, const std::vector<nn::Parameter>& params,
                          const nn::Optimizer& optimizer,
                          const std::vector<std::pair<std::string, Tensor>>& best_params,
                          const std::vector<std::pair<std::string, Tensor>>& best_optimizer) {
  std::vector<std::pair<std::string, Tensor>> model, state;
  for (const nn::Parameter& p : params) model.emplace_back("now/" + p.name, p.var.value());
  for (const auto& [name, t] : best_params) model.emplace_back("best/" + name, t);
  for (const auto& [name, t] : optimizer.state()) state.emplace_back("now/" + name, t);
  for (const auto& [name, t] : best_optimizer) state.emplace_back("best/" + name, t);
  write(progress_state(progress), std::move(model), std::move(state));
}

void ResumeRecorder::finish_run(json entry) {
  finished_.push_back(std::move(entry));
  if (every_ > 0) write(nullptr, {}, {});
}

ResumedRuns resumed_runs(const ResumePoint& point) {
  const json& progress = point.progress;
  STRATA_CHECK(progress.is_object() && progress.contains("finished") && progress["finished"].is_array() &&
                   progress.contains("current"),
               "resume point '{}' is malformed: it lists no finished runs or run in progress", point.file);
  ResumedRuns r;
  r.finished = progress["finished"];
  if (!progress["current"].is_null()) {
    r.current = progress_from_state(progress["current"], point.file);
    STRATA_CHECK(r.current->run == static_cast<int>(r.finished.size()) + 1,
                 "resume point '{}' is malformed: run {} is in progress, but {} runs are finished", point.file,
                 r.current->run, r.finished.size());
  }
  return r;
}

RunTensors restore_run_tensors(ResumePoint& point, const std::vector<nn::Parameter>& params, nn::Optimizer& optimizer) {
  RunTensors t;
  t.best_params = take_prefixed(point.model, "best");
  t.best_optimizer = take_prefixed(point.optimizer, "best");
  // The best epoch's model and optimizer state become the run's checkpoint when no later
  // epoch validates better: check them now, not when they are written.
  if (!t.best_params.empty()) nn::check_parameters(t.best_params, params, point.file + " (its best epoch's model)");
  if (!t.best_optimizer.empty()) optimizer.check_state(t.best_optimizer, point.file + " (its best epoch's state)");
  nn::Checkpoint now;
  now.model = take_prefixed(point.model, "now");
  nn::load_parameters(now, params, point.file);
  optimizer.load_state(take_prefixed(point.optimizer, "now"), point.file);
  point.model.clear();
  point.optimizer.clear();
  return t;
}

RunTensors restore_run_in_progress(const RunProgress& p, ResumePoint& point, Rng& dropout, Rng* sampler,
                                   ModelSelection& selection, ag::Tape& tape, const std::vector<nn::Parameter>& params,
                                   nn::Optimizer& optimizer) {
  dropout.restore_state(p.dropout, point.file);
  if (sampler) sampler->restore_state(p.sampler, point.file);
  selection.restore(p.selection, point.file);
  tape.profile() = p.profile;
  return restore_run_tensors(point, params, optimizer);
}

json exact_json(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

double exact_double(const nlohmann::json& j, const char* key, const std::string& source) {
  STRATA_CHECK(j.is_object() && j.contains(key), "resume point '{}': '{}' is missing", source, key);
  const nlohmann::json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v == "nan") return std::nan("");
  if (v == "inf") return INFINITY;
  if (v == "-inf") return -INFINITY;
  STRATA_FAIL("resume point '{}': '{}' is {}, expected a number", source, key, v.dump());
}

json evaluation_state(const Evaluation& e) {
  return {{"train_acc", exact_json(e.train_acc)},
          {"val_acc", exact_json(e.val_acc)},
          {"test_acc", exact_json(e.test_acc)},
          {"train_loss", exact_json(e.train_loss)},
          {"val_loss", exact_json(e.val_loss)},
          {"test_loss", exact_json(e.test_loss)},
          {"test_macro_f1", exact_json(e.test_macro_f1)},
          {"test_logits_hash", e.test_logits_hash},
          {"ms", exact_json(e.ms)}};
}

Evaluation evaluation_from_state(const nlohmann::json& j, const std::string& source) {
  Evaluation e;
  e.train_acc = exact_double(j, "train_acc", source);
  e.val_acc = exact_double(j, "val_acc", source);
  e.test_acc = exact_double(j, "test_acc", source);
  e.train_loss = exact_double(j, "train_loss", source);
  e.val_loss = exact_double(j, "val_loss", source);
  e.test_loss = exact_double(j, "test_loss", source);
  e.test_macro_f1 = exact_double(j, "test_macro_f1", source);
  e.ms = exact_double(j, "ms", source);
  STRATA_CHECK(j.contains("test_logits_hash") && j["test_logits_hash"].is_string(),
               "resume point '{}': 'test_logits_hash' is missing", source);
  e.test_logits_hash = j["test_logits_hash"].get<std::string>();
  return e;
}

json run_result_state(const RunResult& r) {
  return {{"run", r.run},
          {"seed", r.seed},
          {"split_seed", r.split_seed},
          {"best_epoch", r.best_epoch},
          {"epochs", r.epochs},
          {"stopped_early", r.stopped_early},
          {"best", evaluation_state(r.best)},
          {"mean_epoch_ms", exact_json(r.mean_epoch_ms)},
          {"median_epoch_ms", exact_json(r.median_epoch_ms)},
          {"profile", profile_state(r.profile)},
          {"optimizer_ms", exact_json(r.optimizer_ms)},
          {"train_ms", exact_json(r.train_ms)},
          {"checkpoint", r.checkpoint}};
}

RunResult run_result_from_state(const nlohmann::json& j, const std::string& source) {
  RunResult r;
  try {
    r.run = j.at("run").get<int>();
    r.seed = j.at("seed").get<uint64_t>();
    r.split_seed = j.at("split_seed").get<uint64_t>();
    r.best_epoch = j.at("best_epoch").get<int64_t>();
    r.epochs = j.at("epochs").get<int64_t>();
    r.stopped_early = j.at("stopped_early").get<bool>();
    r.checkpoint = j.at("checkpoint").get<std::string>();
    r.best = evaluation_from_state(j.at("best"), source);
    r.profile = profile_from_state(j.at("profile"), source);
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("resume point '{}': a finished run's result is malformed ({})", source, e.what());
  }
  r.mean_epoch_ms = exact_double(j, "mean_epoch_ms", source);
  r.median_epoch_ms = exact_double(j, "median_epoch_ms", source);
  r.optimizer_ms = exact_double(j, "optimizer_ms", source);
  r.train_ms = exact_double(j, "train_ms", source);
  return r;
}

}  // namespace strata::train
