#include "sparse_compiler/tune/gat_tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sparse_compiler/codegen/jit_compiler.h"
#include "sparse_compiler/tune/graph_fingerprint.h"
#include "sparse_compiler/tune/interleaved_timing.h"
#include "sparse_compiler/tune/records.h"
#include "sparse_compiler/tune/tuner.h"

namespace strata::sc {

const char* fused_form_name(FusedSoftmax f) { return f == FusedSoftmax::Online ? "online" : "two-pass"; }

GatTuneResult tune_gat(const GatKernels& k, bool use_records, double min_gain) {
  Timer total;
  GatTuneResult res;
  const Graph& A = k.graph();
  const GatSpec& s = k.spec();
  const std::string fp = GraphFingerprint::of(A).digest();
  const bool training = k.kernel_set() == GatKernelSet::Training;
  // Keyed on the generated code too: a choice measured on code that has since
  // changed is measured again. An inference set reads a training set's record
  // when there is one (its inference choice is the same measurement), else
  // measures the forwards alone under a key of its own.
  const std::string compiler = compiler_identity(default_compiler())->digest;
  const std::string code = " code " + k.code_key();
  const std::string both_op = "gat_" + s.suffix() + " inference+training";
  const std::string op = training ? both_op : "gat_" + s.suffix() + " inference";
  const std::string key = record_key(fp, op + code, cpu_target(), compiler);
  if (use_records) {
    res.record_file = record_path(key).string();
    std::optional<TuningRecord> rec;
    if (!training) {
      const std::string both_key = record_key(fp, both_op + code, cpu_target(), compiler);
      rec = load_record(both_key);
      if (rec && !rec->choice.empty()) res.record_file = record_path(both_key).string();
    }
    if (!rec || rec->choice.empty()) rec = load_record(key);
    if (rec && !rec->choice.empty()) {
      res.fused = rec->choice.find("inference fused") != std::string::npos;
      res.saving_training = rec->choice.find("training fused-saving") != std::string::npos;
      res.fused_training = !res.saving_training && rec->choice.find("training fused") != std::string::npos;
      res.fused_form = rec->choice.find("fused form online") != std::string::npos ? FusedSoftmax::Online
                                                                                  : FusedSoftmax::TwoPass;
      res.from_record = true;
      res.tune_ms = total.ms();
      return res;
    }
  }
  const int64_t H = s.heads, F = s.feat;
  Rng rng(5);
  Tensor XL = Tensor::uniform({A.num_rows(), H}, -1, 1, rng), XR = Tensor::uniform({A.num_cols(), H}, -1, 1, rng);
  Tensor X = Tensor::uniform({A.num_cols(), H, F}, -1, 1, rng);
  Tensor E = Tensor::empty({A.nnz(), H}, DType::F32), P = Tensor::empty({A.nnz(), H}, DType::F32);
  Tensor M = Tensor::empty({A.num_rows(), H}, DType::F32), S = Tensor::empty({A.num_rows(), H}, DType::F32);
  Tensor Yu = Tensor::empty({A.num_rows(), H, F}, DType::F32), Yf = Tensor::empty({A.num_rows(), H, F}, DType::F32);
  Tensor Yo = Tensor::empty({A.num_rows(), H, F}, DType::F32);
  auto unfused = [&] {
    k.score(XL, XR, E);
    k.softmax(E, P, M, S);
    k.aggregate(P, X, Yu);
  };
  auto two_pass = [&] { k.fused(XL, XR, X, Yf, M, S, FusedSoftmax::TwoPass); };
  auto online = [&] { k.fused(XL, XR, X, Yo, M, S, FusedSoftmax::Online); };
  Tensor Er = Tensor::empty({A.nnz(), H}, DType::F32), Pr = Tensor::empty({A.nnz(), H}, DType::F32);
  auto recompute = [&] { k.recompute(XL, XR, M, S, Er, Pr); };
  Tensor Ys = Tensor::empty({A.num_rows(), H, F}, DType::F32), Es = Tensor::empty({A.nnz(), H}, DType::F32),
         Ps = Tensor::empty({A.nnz(), H}, DType::F32);
  auto saving = [&] { k.fused_saving(XL, XR, X, Ys, M, S, Es, Ps); };
  unfused();
  two_pass();
  online();
  std::vector<std::pair<const char*, const Tensor*>> fused_outputs = {{"two-pass", &Yf}, {"online", &Yo}};
  if (training) {
    saving();
    fused_outputs.emplace_back("saving", &Ys);
  }
  for (const auto& [form, Y] : fused_outputs) {
    const CloseReport agree = all_close(*Y, Yu, 1e-3, 1e-3);
    STRATA_CHECK(agree.ok, "gat tuner: fused ({}) and unfused attention disagree on this graph: {}", form, agree.str());
  }
  // Timed interleaved, so a change in the machine's load hits all alike, each
  // sample after an untimed call of its own (interleaved_timing.h).
  std::vector<std::function<void()>> candidates = {unfused, two_pass, online};
  if (training) candidates.insert(candidates.end(), {recompute, saving});
  const std::vector<double> ms = time_interleaved(candidates, {}, {7, 0});
  res.unfused_ms = ms[0];
  res.two_pass_ms = ms[1];
  res.online_ms = ms[2];
  if (training) {
    res.recompute_ms = ms[3];
    res.saving_ms = ms[4];
  }
  res.fused_form = res.online_ms < res.two_pass_ms ? FusedSoftmax::Online : FusedSoftmax::TwoPass;
  res.fused_ms = std::min(res.two_pass_ms, res.online_ms);
  res.fused = res.fused_ms * (1 + min_gain) <= res.unfused_ms;
  // Training: the fastest of fused + recompute and fused-saving, if it clears the
  // margin over unfused (an inference set has no training to choose for).
  if (training) {
    const double recomputing = res.fused_ms + res.recompute_ms;
    const double best_fused_training = std::min(recomputing, res.saving_ms);
    const bool fused_wins = best_fused_training * (1 + min_gain) <= res.unfused_ms;
    res.saving_training = fused_wins && res.saving_ms < recomputing;
    res.fused_training = fused_wins && !res.saving_training;
  } else {
    res.saving_training = res.fused_training = false;
  }
  res.tune_ms = total.ms();
  if (use_records) {
    TuningRecord rec;
    rec.key = key;
    rec.graph = fp;
    rec.op = op;
    rec.target = cpu_target();
    rec.compiler = compiler_identity(default_compiler())->digest;
    const std::string training_choice = !training             ? ""
                                        : res.saving_training ? ", training fused-saving"
                                        : res.fused_training  ? ", training fused"
                                                              : ", training unfused";
    rec.choice = fmt::format("inference {}{}, fused form {}", res.fused ? "fused" : "unfused", training_choice,
                             fused_form_name(res.fused_form));
    rec.tune_ms = res.tune_ms;
    MeasuredCandidate f, o, u, r, sv;
    sv.measured_ms = res.saving_ms;
    sv.status = "fused, keeping scores and attention (training)";
    f.measured_ms = res.two_pass_ms;
    f.status = "fused (two-pass softmax)";
    o.measured_ms = res.online_ms;
    o.status = "fused (online softmax)";
    u.measured_ms = res.unfused_ms;
    u.status = "unfused";
    r.measured_ms = res.recompute_ms;
    r.status = "recompute (fused training's backward)";
    rec.candidates = {f, o, u};
    if (training) rec.candidates.insert(rec.candidates.end(), {r, sv});
    save_record(rec);
  }
  return res;
}

}  // namespace strata::sc
