// Resume points: what `strata train CONFIG --resume` continues an interrupted run from.
//
// While a session trains, its driver (trainer.cpp, rgcn.cpp, link_prediction.cpp) writes resume.ckpt into
// the run's staging folder every output.resume_every epochs and after each finished
// run: the run in progress's parameters, optimizer state and best-epoch snapshot, its
// dropout stream, model-selection counters and epoch times, the finished runs'
// results, the console lines so far and metrics.jsonl's length. A process that dies
// before it commits (SIGKILL, Ctrl-C, a crash, a lost machine) leaves that staging
// folder, <run_dir>.partial-<pid>, behind. `--resume` with the same config adopts
// it, cuts metrics.jsonl back to the resume point and goes on from the next epoch:
// the metrics, checkpoints and summary come out as an uninterrupted run's would
// (timings aside), since every random draw and every kernel is deterministic.
//
// Link-prediction runs (link_prediction.cpp) keep the same points; their sampling
// stream also draws each step's non-edges.
//
// The file uses the checkpoint format (models/checkpoint.h: versioned header,
// checksum, written atomically) with "format": "strata-resume" in its meta, so a
// kill while it is written leaves the previous resume point.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps/training/config.h"
#include "apps/training/model_selection.h"
#include "apps/training/run_dir.h"
#include "apps/training/run_report.h"
#include "apps/training/trainer.h"
#include "core/autograd.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "layers/parameter.h"
#include "models/optimizer.h"

namespace strata::train {

inline constexpr const char* kResumeFile = "resume.ckpt";
// 2: R-GCN runs keep the node-classification evaluation (train and test losses too).
inline constexpr int kResumeVersion = 2;

struct ResumePoint {
  nlohmann::ordered_json progress;   // the driver's own: finished runs and the run in progress
  std::vector<std::string> console;  // the console lines so far (log.txt)
  uint64_t metrics_bytes = 0;        // metrics.jsonl's length at this point
  std::string metrics_digest;        // and the XXH3 of those bytes (hex)
  std::vector<std::pair<std::string, Tensor>> model, optimizer;  // the run in progress's tensors
  std::string file;                                              // where it was read from (for messages)
};

// Writes `point` (with the config and metrics.jsonl's current length) as
// <staging>/resume.ckpt.
void write_resume_point(RunDirectory& dir, const Config& config, ResumePoint point);
// Moves the finished run dir into place, then removes its resume point (no use there;
// kept until the move, so a kill while committing leaves a resumable folder) and the
// folders interrupted runs of the same run dir left (each named on `out`).
void commit_run_dir(RunDirectory& dir, Console& out);

// The run dir of a `strata train` session.
struct OpenedRunDir {
  std::unique_ptr<RunDirectory> dir;
  std::optional<ResumePoint> resumed;  // with `resume`
  std::vector<std::string> notes;      // for the console, after the banner
};

// Without `resume`: a fresh staging folder; staging folders that interrupted runs of
// the same run dir left are named in `notes` and removed once this run has finished
// (commit_run_dir), so a run that fails first loses nothing.
// With `resume`: the newest interrupted run of the run dir that has a resume point,
// adopted, after checking that its config matches `config` (every key but
// output.log_every, output.resume_every and runtime.cache_dir); a UserError names
// what is missing: no interrupted run, one still running, one without a resume point
// yet, a corrupt resume point, or the first config key that differs.
OpenedRunDir open_run_dir(const fs::path& final_dir, bool overwrite, const Config& config, bool resume);

// How every `strata train` driver starts: applies the runtime settings, opens the run
// dir (open_run_dir, from the config's output keys), continues the console of the
// session it resumes, writes config.yaml and prints the banner and the run dir's notes.
OpenedRunDir start_training_session(const Config& config, const TrainingConfig& c, const std::string& config_name,
                                    Console& out, bool resume);

// A resumed run with tuning on replays the plans (and R-GCN orders) the interrupted
// session tuned, from the kernels.json in the adopted staging folder: tuning again
// could choose other kernels, whose sums round differently from the epochs already
// run. Sets runtime.plans to them and returns true; false when there is nothing to
// replay (not resumed, tuning off, plans given, the reference backend, or no
// kernels.json yet).
bool replay_interrupted_session_plans(const RunDirectory& dir, nn::KernelRuntime& runtime, bool resumed);
// What the kernels' header says of them then: "`what` tuned by the interrupted
// session, replayed from its kernels.json (not tuned again)".
std::string replayed_plans_note(const std::string& what);
// Writes kernels.json; with `replayed` (replay_interrupted_session_plans did) it
// says the kernels were tuned, by the interrupted session, whose file this replaces.
void write_kernels_json(RunDirectory& dir, nlohmann::ordered_json kernels, bool replayed);

// What a driver's loop keeps of a run in progress at a resume point.
struct RunProgress {
  int run = 0;
  int64_t epoch = 0;  // epochs done
  int64_t best_epoch = 0;
  std::vector<double> epoch_ms;
  double optimizer_ms = 0;
  nlohmann::ordered_json best, last;  // the evaluations, as the driver writes them
  std::string dropout;                // Rng::state() of the dropout stream
  std::string sampler;                // Rng::state() of the mini-batch stream (R-GCN: none)
  nlohmann::ordered_json selection;   // ModelSelection::state()
  ag::OpProfile profile;
  double sample_ms = 0;  // link prediction: drawing non-edges and binding each step's kernels
};

// The tensors of a run in progress: parameters and optimizer state now and at the
// best epoch (empty when output.checkpoint keeps no best snapshot).
struct RunTensors {
  std::vector<std::pair<std::string, Tensor>> params, optimizer, best_params, best_optimizer;
};

// Writes a driver's resume points into its run's staging folder: after
// output.resume_every epochs of a run (due()), and after each finished run, which it
// keeps in the order they finished (as the driver's JSON entries).
class ResumeRecorder {
 public:
  ResumeRecorder(RunDirectory& dir, const Config& config, const Console& out, int64_t every)
      : dir_(dir), config_(config), out_(out), every_(every) {}
  // Whether the loop saves a point after `epoch` (not after the last: the run's end does).
  bool due(int64_t epoch, int64_t epochs) const { return every_ > 0 && epoch % every_ == 0 && epoch < epochs; }
  void save(const RunProgress& progress, const std::vector<nn::Parameter>& params, const nn::Optimizer& optimizer,
            const std::vector<std::pair<std::string, Tensor>>& best_params,
            const std::vector<std::pair<std::string, Tensor>>& best_optimizer);
  // A run finished (its checkpoint written): recorded, and a point saved between runs.
  void finish_run(nlohmann::ordered_json entry);
  // The finished runs a resumed session starts from.
  void restore_finished(nlohmann::ordered_json entries) { finished_ = std::move(entries); }

 private:
  void write(nlohmann::ordered_json current, std::vector<std::pair<std::string, Tensor>> model,
             std::vector<std::pair<std::string, Tensor>> optimizer);
  RunDirectory& dir_;
  const Config& config_;
  const Console& out_;
  int64_t every_;
  nlohmann::ordered_json finished_ = nlohmann::ordered_json::array();
};

// A resumed session's view of its resume point: the finished runs' entries, and the
// run in progress (null when the point lies between runs).
struct ResumedRuns {
  nlohmann::ordered_json finished = nlohmann::ordered_json::array();
  std::optional<RunProgress> current;
};
ResumedRuns resumed_runs(const ResumePoint& point);
// Loads the run in progress's tensors into the driver's model and optimizer and
// returns the best epoch's snapshots; a missing or mis-shaped tensor is named.
RunTensors restore_run_tensors(ResumePoint& point, const std::vector<nn::Parameter>& params, nn::Optimizer& optimizer);

// What every driver restores of the run in progress `p` besides its own evaluations
// and counters: the dropout stream (and the sampling stream, where the driver has
// one), model selection, the time profile, and the tensors (restore_run_tensors).
RunTensors restore_run_in_progress(const RunProgress& p, ResumePoint& point, Rng& dropout, Rng* sampler,
                                   ModelSelection& selection, ag::Tape& tape, const std::vector<nn::Parameter>& params,
                                   nn::Optimizer& optimizer);

// Doubles in a resume point round-trip exactly: finite values as JSON numbers (17
// significant digits), the others as "inf", "-inf" and "nan".
nlohmann::ordered_json exact_json(double v);
double exact_double(const nlohmann::json& j, const char* key, const std::string& source);

// A run's results as a resume point keeps them, and back (trainer.h).
nlohmann::ordered_json evaluation_state(const Evaluation& e);
Evaluation evaluation_from_state(const nlohmann::json& j, const std::string& source);
nlohmann::ordered_json run_result_state(const RunResult& r);
RunResult run_result_from_state(const nlohmann::json& j, const std::string& source);

}  // namespace strata::train
