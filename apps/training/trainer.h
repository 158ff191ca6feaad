// Full-graph node-classification training and evaluation, driven by a Config:
// what `strata train`, `strata eval` and `strata infer` run, and what the training
// benchmark times.
//
// One training run (per seed):
//   epoch: forward (train mode: dropout) -> log-softmax -> NLL over the training
//          nodes (+ the L2 weight-decay term) -> backward -> optimizer step;
//   every eval_period epochs: forward in eval mode, accuracy on train / val / test,
//          validation loss; the best epoch is the highest validation accuracy (ties:
//          lower validation loss), or the lowest validation loss (training.select_by);
//          test accuracy is reported at that epoch;
//   early stopping after `patience` evaluations without a better best epoch.
// A non-finite loss stops everything with the run, the epoch and the layer where
// non-finite values first appeared.
//
// Console output (one Printer line each): a header (resolved config, dataset
// statistics, model, optimizer, every kernel's plan and the compile time), a line
// per epoch `Epoch 0007 | loss 0.5321 | train 0.912 | val 0.784 | 1.23 ms`, a
// best-epoch line per run and the mean ± std of test accuracy over runs.
//
// The run dir (output.run_dir) receives config.yaml (resolved), metrics.jsonl (one
// object per epoch), summary.json, kernels.json (plans), log.txt (the console
// lines) and checkpoints/run-NN.ckpt (models/checkpoint.h), all or nothing (see
// run_dir.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/training/config.h"
#include "apps/training/data.h"
#include "apps/training/inference.h"
#include "apps/training/node_classification.h"
#include "apps/training/run_report.h"
#include "core/autograd.h"
#include "layers/graph_kernels.h"
#include "models/checkpoint.h"
#include "models/gnn.h"
#include "models/optimizer.h"

namespace strata::train {


// Applies runtime.threads and runtime.cache_dir (STRATA_CACHE_DIR) to the process.
// Call before anything compiles or loads; the kernel cache reads the directory once.
void apply_runtime(const RuntimeConfig& runtime);

// The kernel lines of a run's header (and of `strata eval` and `strata infer`): the
// batch, each kernel's plan, and each GAT attention configuration's choice.
void print_kernels(const Printer& out, const TrainingConfig& c, const nn::GraphKernels& k);
// kernels.json: every kernel's role, graph, program and plan, and the batch's times.
nlohmann::ordered_json kernels_json(const nn::GraphKernels& k);
// summary.json's "kernels": program count, compile and build times, and the kernels.json it details.
nlohmann::ordered_json kernels_summary_json(const nn::GraphKernels& k);

// Data and kernels for one config: what every run of a session shares.
struct Context {
  TrainingConfig config;
  TrainingData data;
  Metric metric = Metric::Accuracy;  // training.metric, resolved for the data (node_classification.h)
  std::unique_ptr<nn::GraphKernels> kernels;

  nn::NodeFeatures input() const;
  // training.batch_size > 0: mini-batch epochs over sampled blocks (core/neighbor_sampler.h).
  bool sampling() const { return config.training.batch_size > 0; }
  // Kernels for `config.model` on the data (built in one compiler batch); without
  // `backward` (evaluation, and mini-batch training, whose steps run over each
  // batch's blocks), the forward kernels only.
  void build_kernels(const nn::GnnModel& model, bool backward = true);
};

// A model with its optimizer, dropout stream and sampling stream, for one run.
struct RunState {
  std::unique_ptr<nn::GnnModel> model;
  std::unique_ptr<nn::Optimizer> optimizer;
  Rng dropout{0};
  Rng sampler{0};  // batch order and sampled neighbours (training.batch_size > 0)
  RunState(const Context& ctx, uint64_t seed);
};

// The loss's value; a UserError naming the run, the epoch (and `batch`, e.g. ", batch
// 3") and the first layer with non-finite values when it is not finite.
float finite_loss(ag::Tape& tape, const ag::Var& loss, const nn::Optimizer& optimizer, int run, int64_t epoch,
                  const std::string& batch);
// Backward from `loss`, then one optimizer step (and zeroed gradients, a cleared
// tape); returns the step's time in ms.
double step_optimizer(ag::Tape& tape, const ag::Var& loss, nn::Optimizer& optimizer);

// Where a `strata train` session is, for an out-of-memory error raised in it: the
// driver fills it in (run 0: before the first epoch) and run_training reports it.
struct LoopPosition {
  int run = 0;
  int64_t epoch = 0;
  const char* phase = "training";  // or "evaluation"
  int64_t nodes = 0;               // the graph's, once loaded
  std::string remedy;              // the driver's own, ", or ..."
};
// Out of host memory: a UserError with the error's text, the config, where the
// session was, and the key that sizes a layer's buffers (a row of model.hidden floats
// per node).
[[noreturn]] void rethrow_out_of_memory(const OutOfMemoryError& e, const Config& config, const LoopPosition& at);

struct StepResult {
  double loss = 0;          // mini-batches: the mean over the epoch's training nodes
  double ms = 0;            // forward + backward + optimizer step (mini-batches: also sampling and kernel binding)
  double optimizer_ms = 0;  // of which the optimizer step
  int64_t batches = 0;      // mini-batches: optimizer steps in the epoch
  double sample_ms = 0;     // mini-batches: sampling the blocks and binding their kernels
};

// One training epoch: a full-graph step, or with training.batch_size one step per
// mini-batch of training nodes (shuffled by the run's sampling stream), each over its
// sampled blocks with kernels bound to them. Throws a UserError naming the run, the
// epoch (and batch) and the layer when a loss is not finite. `tape` is cleared first
// and keeps the profile.
StepResult train_step(const Context& ctx, RunState& state, ag::Tape& tape, int run, int64_t epoch);

struct Evaluation {
  double train_acc = 0, val_acc = 0, test_acc = 0;
  double train_loss = 0, val_loss = 0, test_loss = 0;
  double test_macro_f1 = 0;      // over the classes (node_classification.h)
  std::string test_logits_hash;  // XXH3 of the test nodes' logits (bit-exact reproduction check)
  double ms = 0;
};
Evaluation evaluate(const Context& ctx, const nn::GnnModel& model);

struct RunResult {
  int run = 0;
  uint64_t seed = 0;
  uint64_t split_seed = 0;  // planetoid and random splits (data.split.per_run: one per run)
  int64_t best_epoch = 0, epochs = 0;
  bool stopped_early = false;
  Evaluation best;
  double mean_epoch_ms = 0, median_epoch_ms = 0;
  ag::OpProfile profile;  // training steps only
  double optimizer_ms = 0;
  double train_ms = 0;    // all training steps
  std::string checkpoint;  // path inside the run dir, or ""
};

struct Summary {
  std::vector<RunResult> runs;
  double test_mean = 0, test_std = 0, val_mean = 0, val_std = 0;
  double test_macro_f1_mean = 0, test_macro_f1_std = 0;  // node classification (0 for link prediction)
  double mean_epoch_ms = 0;    // mean over runs of each run's mean epoch time
  double median_epoch_ms = 0;  // median over runs of each run's median epoch time
  std::string run_dir;
};

// `strata train`: runs every seed and writes the run dir. `config_name` replaces
// {config} in output.run_dir. With `resume`, continues the interrupted run of that
// run dir from its resume point (resume_point.h) instead of starting afresh.
Summary run_training(const Config& config, const std::string& config_name, const Printer& print, bool resume = false);

struct EvalReport {
  Evaluation eval;
  double recorded_test_acc = 0;
  std::string recorded_logits_hash;
  bool identical = false;  // same test accuracy and same test logits, bit for bit
  // What this evaluation runs differently from the recorded run, which explains a
  // difference ("backend reference (the run: generated)"); empty when nothing does.
  std::string runtime_changes;
};

// `strata eval`: rebuilds the data and the model from `config`, loads the
// checkpoint's parameters (architecture checked by name and shape) and evaluates.
EvalReport run_evaluation(const Config& config, const fs::path& checkpoint, const Printer& print);

// `strata infer`: the checkpoint's model restored as for `strata eval`, one forward
// pass over the graph (forward kernels only), and a prediction for every node of
// the batch (options.batch: ids of the graph's nodes), written to options.out.
// R-GCN configs go to run_rgcn_inference.
InferReport run_inference(const Config& config, const InferOptions& options, const Printer& print);

// Mean and unbiased standard deviation (0 for fewer than two values).
std::pair<double, double> mean_std(const std::vector<double>& v);

}  // namespace strata::train
