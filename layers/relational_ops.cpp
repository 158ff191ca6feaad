#include "layers/relational_ops.h"

#include <algorithm>
#include <cstring>
#include <future>

#include "core/parallel.h"
#include "core/timer.h"
#include "sparse_compiler/tune/rgms_tuner.h"

namespace strata::nn {
namespace {

// W [R, a·b] or [R, a, b] as a [R, a, b] view.
Tensor as_3d(const Tensor& w, int64_t R, int64_t a, int64_t b, const char* op) {
  STRATA_ASSERT(w.numel() == R * a * b && w.dim(0) == R, "{}: weight {} for {} relations of {} x {}", op,
                shape_str(w.shape()), R, a, b);
  return w.reshape({R, a, b});
}

// [R, a, b] -> [R, b, a].
Tensor transpose_each(const Tensor& w) {
  const int64_t R = w.dim(0), a = w.dim(1), b = w.dim(2);
  Tensor t = ag::empty({R, b, a});
  const float* src = w.data<float>();
  float* dst = t.data<float>();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j) dst[(r * b + j) * a + i] = src[(r * a + i) * b + j];
  return t;
}

}  // namespace

void widen_indices(sc::RelationalGraph& g) {
  for (Tensor* t : {&g.rel_rows, &g.col_ids, &g.src_ids, &g.jloc}) *t = t->cast(DType::I64);
  g.index_dtype = DType::I64;
}

void RelationalKernelRequests::add_matmul(int64_t fin, int64_t fout) {
  const auto key = std::make_pair(fin, fout);
  if (std::find(matmuls.begin(), matmuls.end(), key) == matmuls.end()) matmuls.push_back(key);
}

void RelationalKernelRequests::add_embed(int64_t fout) {
  if (std::find(embeds.begin(), embeds.end(), fout) == embeds.end()) embeds.push_back(fout);
}

void RelationalKernelRequests::add_basis_embed(int64_t bases, int64_t fout) {
  const auto key = std::make_pair(bases, fout);
  if (std::find(basis_embeds.begin(), basis_embeds.end(), key) == basis_embeds.end()) basis_embeds.push_back(key);
}

sc::RgmsOrder RelationalKernels::choose(const sc::RelationalGraph& g, const sc::RgmsSpec& spec,
                                        RelationalKernelRecord& rec) {
  if (force_) {
    rec.origin = "forced";
    return *force_;
  }
  if (runtime_.plans && runtime_.backend == sc::Backend::Generated) {
    rec.origin = "replayed";
    return sc::parse_rgms_order(runtime_.plans->order_for(rec.role, "runtime.plans"), runtime_.plans->file());
  }
  if (!runtime_.tuning || runtime_.backend != sc::Backend::Generated) {
    rec.origin = "default";
    return sc::rgms_default_order(g, spec);
  }
  const sc::RgmsTuneResult t = sc::tune_rgms(g, spec);
  rec.tune_ms = t.tune_ms;
  tune_ms_ += t.tune_ms;
  if (t.from_record) {
    rec.origin = "tuning record";
  } else {
    std::string m;
    for (const auto& [o, ms] : t.measured_ms) m += fmt::format("{}{} {:.3f} ms", m.empty() ? "" : ", ", sc::rgms_order_name(o), ms);
    rec.origin = "tuned (" + m + ")";
  }
  return t.chosen;
}

RelationalKernels::RelationalKernels(sc::RelationalGraph g, const RelationalKernelRequests& req,
                                     const KernelRuntime& runtime, std::optional<sc::RgmsOrder> force_order)
    : g_(std::move(g)), runtime_(runtime), force_(force_order) {
  Timer total;
  rev_ = g_.reversed();
  if (g_.index_dtype == DType::I64) widen_indices(rev_);  // keep both directions on the same index type
  const sc::Backend backend = runtime.backend == sc::Backend::Reference ? sc::Backend::Interpreter : runtime.backend;
  // Every kernel set to build: its graph, spec, set and, for a matmul's, the order
  // (tuned when tuning is on; one-hot layers have no order to choose). Orders are
  // chosen first, one after another, so that no compile disturbs the tuner's
  // measurements; then every set compiles on its own thread (separate compiler
  // invocations: with cores to spare a load waits for the slowest, not the sum).
  struct Job {
    const sc::RelationalGraph* graph;
    sc::RgmsSpec spec;
    sc::RgmsKernelSet set;
    sc::RgmsOrder order;
    RelationalKernelRecord rec;
    std::unique_ptr<sc::RgmsKernels>* slot;
  };
  std::vector<Job> jobs;
  auto add = [&](const sc::RelationalGraph& graph, const char* gname, sc::RgmsSpec spec, const std::string& role,
                 sc::RgmsKernelSet set, std::unique_ptr<sc::RgmsKernels>* slot) {
    Job j{&graph, spec, set, sc::RgmsOrder::Fused, {}, slot};
    j.rec.role = role;
    j.rec.graph = gname;
    j.spec.index_dtype = graph.index_dtype;
    const bool matmul =
        set == sc::RgmsKernelSet::All || set == sc::RgmsKernelSet::Forward || set == sc::RgmsKernelSet::Training;
    if (matmul) {
      j.order = choose(graph, j.spec, j.rec);
      j.rec.order = sc::rgms_order_name(j.order);
    } else {
      j.rec.origin = j.rec.order = "-";
    }
    jobs.push_back(std::move(j));
  };
  // Without gradients (inference) only what the forward passes run is compiled:
  // the chosen order's kernels, embed, the basis rows, and nothing on the reverse
  // but those rows. With them, the kernels the gradients run besides.
  const bool grads = req.backward;
  using Set = sc::RgmsKernelSet;
  for (const auto& [fin, fout] : req.matmuls) {
    // The layer runs the chosen order's forward on g (and, training, aggregate +
    // weight_grad for dW) and the forward on the reverse for dX: the other orders'
    // kernels are not compiled (the tuner builds its own to measure them).
    Pair& p = mm_[{fin, fout}];  // std::map: the slots stay where they are
    add(g_, "G", {fin, fout}, fmt::format("rgms {}->{} forward", fin, fout), grads ? Set::Training : Set::Forward,
        &p.fwd);
    if (grads) add(rev_, "Gᵀ", {fout, fin}, fmt::format("rgms {}->{} backward dX", fin, fout), Set::Forward, &p.bwd);
  }
  for (int64_t fout : req.embeds) {
    Pair& p = emb_[fout];
    add(g_, "G", {1, fout}, fmt::format("rgms one-hot->{} forward", fout), grads ? Set::OneHot : Set::Embed, &p.fwd);
    if (grads) add(rev_, "Gᵀ", {1, fout}, fmt::format("rgms one-hot->{} backward dW", fout), Set::OneHot, &p.bwd);
  }
  for (const auto& [bases, fout] : req.basis_embeds) {
    Pair& p = basis_[{bases, fout}];
    add(g_, "G", {bases, fout}, fmt::format("rgms {} bases->{} gather", bases, fout), Set::BasisGather, &p.fwd);
    add(rev_, "Gᵀ", {bases, fout}, fmt::format("rgms {} bases->{} {}", bases, fout, grads ? "rows, grads" : "rows"),
        grads ? Set::BasisPairs : Set::BasisRows, &p.bwd);
  }
  Timer compiling;
  std::vector<std::future<std::unique_ptr<sc::RgmsKernels>>> built;
  // OpenMP's thread count is per thread: each builder takes this one's (its
  // inspectors and compile units follow it).
  const int threads = num_threads();
  for (const Job& j : jobs)
    built.push_back(std::async(std::launch::async, [&j, backend, threads] {
      set_num_threads(threads);
      return std::make_unique<sc::RgmsKernels>(*j.graph, j.spec, j.order, backend, std::nullopt, j.set);
    }));
  for (size_t i = 0; i < jobs.size(); ++i) *jobs[i].slot = built[i].get();
  compile_ms_ = compiling.ms();
  for (Job& j : jobs) {
    j.rec.describe = (*j.slot)->describe();
    j.rec.compile_ms = (*j.slot)->compile_ms();
    records_.push_back(std::move(j.rec));
  }
  build_ms_ = total.ms();
}

const sc::RgmsKernels& RelationalKernels::forward(int64_t fin, int64_t fout) const {
  auto it = mm_.find({fin, fout});
  STRATA_ASSERT(it != mm_.end(), "relational kernels: no rgms kernels for {} -> {} were requested", fin, fout);
  return *it->second.fwd;
}
const sc::RgmsKernels& RelationalKernels::backward(int64_t fin, int64_t fout) const {
  auto it = mm_.find({fin, fout});
  STRATA_ASSERT(it != mm_.end(), "relational kernels: no rgms kernels for {} -> {} were requested", fin, fout);
  STRATA_ASSERT(it->second.bwd, "relational kernels: {} -> {} was built for inference (no backward kernels)", fin,
                fout);
  return *it->second.bwd;
}
const sc::RgmsKernels& RelationalKernels::embed(int64_t fout) const {
  auto it = emb_.find(fout);
  STRATA_ASSERT(it != emb_.end(), "relational kernels: no one-hot kernels of width {} were requested", fout);
  return *it->second.fwd;
}
const sc::RgmsKernels& RelationalKernels::embed_backward(int64_t fout) const {
  auto it = emb_.find(fout);
  STRATA_ASSERT(it != emb_.end(), "relational kernels: no one-hot kernels of width {} were requested", fout);
  STRATA_ASSERT(it->second.bwd, "relational kernels: one-hot width {} was built for inference (no backward kernels)",
                fout);
  return *it->second.bwd;
}

const sc::RgmsKernels& RelationalKernels::basis_gather(int64_t bases, int64_t fout) const {
  auto it = basis_.find({bases, fout});
  STRATA_ASSERT(it != basis_.end(),
                "relational kernels: no basis embedding kernels ({} bases, width {}) were requested", bases, fout);
  return *it->second.fwd;
}
const sc::RgmsKernels& RelationalKernels::basis_pairs(int64_t bases, int64_t fout) const {
  auto it = basis_.find({bases, fout});
  STRATA_ASSERT(it != basis_.end(),
                "relational kernels: no basis embedding kernels ({} bases, width {}) were requested", bases, fout);
  return *it->second.bwd;
}

ag::Var relational_matmul(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x, const ag::Var& w,
                          int64_t fout) {
  Timer t;
  const sc::RelationalGraph& g = k.graph();
  STRATA_ASSERT(x.value().ndim() == 2 && x.dim(0) == g.cols, "relational_matmul: input {} for a graph with {} columns",
                shape_str(x.shape()), g.cols);
  const int64_t fin = x.dim(1), R = g.relations;
  const Tensor W = as_3d(w.value(), R, fin, fout, "relational_matmul");
  Tensor y = ag::empty({g.rows, fout});
  {
    ag::SerialIfSmall serial(g.nnz * fin + g.pairs * fin * fout);
    k.forward(fin, fout).forward(x.value(), W, y);
  }
  ag::Var out = ag::Var::result(std::move(y), tape.needs_grad({&x, &w}));
  std::function<void()> back;
  if (out.requires_grad()) {
    const RelationalKernels* kp = &k;
    back = [kp, x, w, out, fin, fout, R] {
      const sc::RelationalGraph& g = kp->graph();
      ag::SerialIfSmall serial(g.nnz * fin + g.pairs * fin * fout);
      const Tensor& dy = out.grad();
      if (x.requires_grad()) {
        const Tensor Wt = transpose_each(as_3d(w.value(), R, fin, fout, "relational_matmul"));
        Tensor dx = ag::empty({g.cols, fin});
        kp->backward(fin, fout).forward(dy, Wt, dx);
        x.accumulate_grad(dx, true);
      }
      if (w.requires_grad()) {
        Tensor H = ag::empty({g.pairs, fin});
        const sc::RgmsKernels& f = kp->forward(fin, fout);
        f.aggregate(x.value(), H);
        Tensor dw = ag::empty({R, fin, fout});
        f.weight_grad(H, dy, dw);
        w.accumulate_grad(dw.reshape(w.shape()), true);
      }
    };
  }
  tape.record("relational_matmul", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

ag::Var relational_embed(ag::Tape& tape, const RelationalKernels& k, const ag::Var& w, int64_t fout) {
  Timer t;
  const sc::RelationalGraph& g = k.graph();
  const int64_t R = g.relations;
  const Tensor W = as_3d(w.value(), R, g.cols, fout, "relational_embed");
  Tensor y = ag::empty({g.rows, fout});
  {
    ag::SerialIfSmall serial(g.nnz * fout);
    k.embed(fout).forward_embed(W, y);
  }
  ag::Var out = ag::Var::result(std::move(y), tape.needs_grad({&w}));
  std::function<void()> back;
  if (out.requires_grad()) {
    const RelationalKernels* kp = &k;
    back = [kp, w, out, fout, R] {
      const sc::RelationalGraph& g = kp->graph();
      ag::SerialIfSmall serial(g.nnz * fout + R * g.cols * fout);
      Tensor dw = ag::empty({R, g.cols, fout});
      kp->embed_backward(fout).embed_grad(out.grad(), dw);
      w.accumulate_grad(dw.reshape(w.shape()), true);
    };
  }
  tape.record("relational_embed", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

ag::Var relational_basis_embed(ag::Tape& tape, const RelationalKernels& k, const ag::Var& coeff, const ag::Var& basis,
                               int64_t fout) {
  Timer t;
  const sc::RelationalGraph& g = k.graph();
  const int64_t R = g.relations, B = coeff.dim(1);
  STRATA_ASSERT(coeff.value().ndim() == 2 && coeff.dim(0) == R,
                "relational_basis_embed: coefficients {} for {} relations", shape_str(coeff.shape()), R);
  const Tensor V = as_3d(basis.value(), B, g.cols, fout, "relational_basis_embed");
  Tensor y = ag::empty({g.rows, fout});
  {
    ag::SerialIfSmall serial(g.nnz * fout + g.sources * B * fout);
    Tensor rows = ag::empty({g.sources, fout});
    k.basis_pairs(B, fout).basis_rows(coeff.value(), V, rows);
    k.basis_gather(B, fout).gather(rows, y);
  }
  ag::Var out = ag::Var::result(std::move(y), tape.needs_grad({&coeff, &basis}));
  std::function<void()> back;
  if (out.requires_grad()) {
    const RelationalKernels* kp = &k;
    back = [kp, coeff, basis, out, fout, R, B] {
      const sc::RelationalGraph& g = kp->graph();
      ag::SerialIfSmall serial(g.nnz * fout + 2 * g.sources * B * fout);
      Tensor dc = ag::empty({R, B}), dv = ag::empty({B, g.cols, fout});
      kp->basis_pairs(B, fout).basis_embed_grad(coeff.value(), basis.value().reshape({B, g.cols, fout}), out.grad(), dc,
                                                dv);
      if (coeff.requires_grad()) coeff.accumulate_grad(dc, true);
      if (basis.requires_grad()) basis.accumulate_grad(dv.reshape(basis.shape()), true);
    };
  }
  tape.record("relational_basis_embed", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

ag::Var concat_rows(ag::Tape& tape, const std::vector<ag::Var>& xs) {
  Timer t;
  STRATA_ASSERT(!xs.empty(), "concat_rows: no inputs");
  const int64_t cols = xs[0].dim(1);
  int64_t rows = 0;
  for (const ag::Var& x : xs) {
    STRATA_ASSERT(x.value().ndim() == 2 && x.dim(1) == cols, "concat_rows: {} among inputs of {} columns",
                  shape_str(x.shape()), cols);
    rows += x.dim(0);
  }
  Tensor y = ag::empty({rows, cols});
  int64_t at = 0;
  for (const ag::Var& x : xs) {
    std::memcpy(y.data<float>() + at * cols, x.value().data<float>(), sizeof(float) * x.value().numel());
    at += x.dim(0);
  }
  bool needs = false;
  for (const ag::Var& x : xs) needs = needs || tape.needs_grad({&x});
  ag::Var out = ag::Var::result(std::move(y), needs);
  std::function<void()> back;
  if (needs) {
    back = [xs, out, cols] {
      int64_t at = 0;
      for (const ag::Var& x : xs) {
        if (x.requires_grad()) {
          Tensor d = ag::empty({x.dim(0), cols});
          std::memcpy(d.data<float>(), out.grad().data<float>() + at * cols, sizeof(float) * d.numel());
          x.accumulate_grad(d, true);
        }
        at += x.dim(0);
      }
    };
  }
  tape.record("concat_rows", ag::OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

}  // namespace strata::nn
