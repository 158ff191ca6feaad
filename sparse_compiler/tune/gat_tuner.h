// Choosing fused or unfused attention per graph, heads and feature size: DGL's
// fused edge softmax helped on small graphs and hurt on large ones, so Strata
// measures both on the graph at hand. Both forwards are checked against each
// other, timed, and the faster recorded (a second load measures nothing).
// Training is chosen apart from inference: the fused forward keeps no edge
// probabilities, so its backward first recomputes them (scores and softmax from the
// saved row max and sum), and that can cost more than fusion saved. Unfused is
// what GAT runs untuned, and fused replaces it only when it measures at least
// `min_gain` faster: closer than that is noise on a shared VM (R-MAT's one-head
// layer: fused 15.29 ms against unfused 15.51 ms in the tuner, then 12 ms slower
// per inference in the benchmark that followed).
// Training has a third candidate: the fused forward that keeps the scores and
// the attention (gat_fused_saving), whose backward needs no recompute.
// Fused means the faster of the two fused forms (two-pass and online softmax,
// attention_programs.h), both measured: online reads a row's edges once for a
// second exp per edge, which pays on some one-head layers and on none with 8 heads.
// Kernels built for inference only (GatKernelSet::Inference) choose the forward
// alone: a training set's record over the same code answers that too; without one,
// the three forwards are measured and recorded under an inference key.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ops/attention.h"

namespace strata::sc {

struct GatTuneResult {
  bool fused = true;           // forward only (inference, evaluation)
  bool fused_training = true;  // forward + the backward's recompute (false for an inference set)
  bool saving_training = false;  // training runs the fused forward that keeps E and P (then fused_training is false)
  FusedSoftmax fused_form = FusedSoftmax::TwoPass;  // the faster fused form, for both
  // Medians of interleaved calls; -1 when from a record. fused_ms is the faster
  // form's.
  double fused_ms = -1, unfused_ms = -1, recompute_ms = -1;
  double two_pass_ms = -1, online_ms = -1, saving_ms = -1;
  bool from_record = false;
  double tune_ms = 0;
  std::string record_file;  // the record read or written (empty without records)
};

const char* fused_form_name(FusedSoftmax f);  // "two-pass", "online"

// `kernels` must be GatKernels for `A` (so nothing is compiled twice).
GatTuneResult tune_gat(const GatKernels& kernels, bool use_records = true, double min_gain = 0.05);

}  // namespace strata::sc
