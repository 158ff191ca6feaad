#include "layers/gat_ops.h"

#include "core/autograd_ops.h"
#include "core/timer.h"

namespace strata::nn {
namespace {

// s[i,h] = Σ_f x[i,h,f]·a[h,f].
Tensor head_scores(const Tensor& x, const Tensor& a, int64_t H, int64_t F) {
  const int64_t n = x.dim(0);
  Tensor s = ag::empty({n, H});
  const float* xp = x.data<float>();
  const float* ap = a.data<float>();
  float* sp = s.data<float>();
#pragma omp parallel for schedule(static) if (n * H * F >= ag::kParallelWork)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < H; ++h) {
      float acc = 0;
      for (int64_t f = 0; f < F; ++f) acc += xp[(i * H + h) * F + f] * ap[h * F + f];
      sp[i * H + h] = acc;
    }
  return s;
}

// dx[i,h,f] += dl[i,h]·al[h,f] + dr[i,h]·ar[h,f].
void add_score_terms(Tensor& dx, const Tensor& dl, const Tensor& al, const Tensor& dr, const Tensor& ar, int64_t H,
                     int64_t F) {
  const int64_t n = dx.dim(0);
  float* d = dx.data<float>();
  const float *lp = dl.data<float>(), *rp = dr.data<float>(), *alp = al.data<float>(), *arp = ar.data<float>();
#pragma omp parallel for schedule(static) if (n * H * F >= ag::kParallelWork)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < H; ++h) {
      const float l = lp[i * H + h], r = rp[i * H + h];
      for (int64_t f = 0; f < F; ++f) d[(i * H + h) * F + f] += l * alp[h * F + f] + r * arp[h * F + f];
    }
}

// da[h,f] = Σ_i ds[i,h]·x[i,h,f] (accumulated in double; small).
Tensor att_grad(const Tensor& ds, const Tensor& x, int64_t H, int64_t F) {
  const int64_t n = x.dim(0);
  std::vector<double> acc(static_cast<size_t>(H * F), 0.0);
  const float *sp = ds.data<float>(), *xp = x.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < H; ++h) {
      const double s = sp[i * H + h];
      if (s == 0) continue;
      for (int64_t f = 0; f < F; ++f) acc[h * F + f] += s * xp[(i * H + h) * F + f];
    }
  Tensor out = ag::empty({H, F});
  for (int64_t k = 0; k < H * F; ++k) out.data<float>()[k] = static_cast<float>(acc[k]);
  return out;
}

}  // namespace

ag::Var gat_attention(ag::Tape& tape, const AttentionKernels& k, const ag::Var& x, const ag::Var& att_dst,
                      const ag::Var& att_src, float attn_dropout, uint64_t seed, AttentionPath* path) {
  Timer t;
  const int64_t H = k.request.heads, F = k.request.feat;
  const sc::GatKernels& g = *k.kernels;
  const int64_t n = k.graph.num_rows(), nnz = k.graph.nnz();
  STRATA_ASSERT(x.value().ndim() == 2 && x.dim(0) == n && x.dim(1) == H * F,
                "gat_attention: input {} for {} nodes and {} heads x {} features", shape_str(x.shape()), n, H, F);
  STRATA_ASSERT(att_dst.value().ndim() == 2 && att_dst.dim(0) == H && att_dst.dim(1) == F,
                "gat_attention: att_dst {} for {} heads x {} features", shape_str(att_dst.shape()), H, F);
  STRATA_ASSERT(att_src.value().ndim() == 2 && att_src.dim(0) == H && att_src.dim(1) == F,
                "gat_attention: att_src {} for {} heads x {} features", shape_str(att_src.shape()), H, F);
  STRATA_ASSERT(attn_dropout >= 0.0f && attn_dropout < 1.0f, "gat_attention: attention dropout {} outside [0, 1)",
                attn_dropout);
  const bool drop = tape.training() && attn_dropout > 0.0f;
  // A pass whose backward will run recomputes what a fused forward did not keep, so
  // it takes the choice made for training.
  const bool backward = tape.needs_grad({&x, &att_dst, &att_src});
  STRATA_CHECK(!backward || g.kernel_set() == sc::GatKernelSet::Training,
               "gat_attention: a pass that needs gradients over kernels built for inference ({}); build the graph's "
               "kernels with their backward (KernelRequests::backward) to train",
               g.describe());
  // With a backward, the fused forward that keeps scores and attention needs no
  // recompute there.
  const bool saving = backward && k.saving_training && !drop;
  const bool fused = !saving && (backward ? k.fused_training : k.fused) && !drop;
  if (path) *path = saving ? AttentionPath::FusedSaving : fused ? AttentionPath::Fused : AttentionPath::Unfused;

  const Tensor X3 = x.value().reshape({n, H, F});
  const Tensor XL = head_scores(X3, att_dst.value(), H, F);
  const Tensor XR = head_scores(X3, att_src.value(), H, F);
  Tensor Y = ag::empty({n, H * F});
  Tensor Y3 = Y.reshape({n, H, F});
  Tensor M = ag::empty({n, H}), S = ag::empty({n, H});
  Tensor E, P, Pd;  // unfused: kept for backward
  {
    ag::SerialIfSmall serial(nnz * H * F);
    if (fused) {
      g.fused(XL, XR, X3, Y3, M, S, k.fused_form);
    } else if (saving) {
      E = ag::empty({nnz, H});
      P = ag::empty({nnz, H});
      g.fused_saving(XL, XR, X3, Y3, M, S, E, P);
      Pd = P;
    } else {
      E = ag::empty({nnz, H});
      P = ag::empty({nnz, H});
      g.score(XL, XR, E);
      g.softmax(E, P, M, S);
      Pd = P;
      if (drop) {
        Pd = ag::empty({nnz, H});
        ag::apply_dropout(P.data<float>(), Pd.data<float>(), nnz * H, attn_dropout, seed);
      }
      g.aggregate(Pd, X3, Y3);
    }
  }
  ag::Var out = ag::Var::result(std::move(Y), tape.needs_grad({&x, &att_dst, &att_src}));
  std::function<void()> back;
  if (out.requires_grad()) {
    const AttentionKernels* kp = &k;
    back = [kp, x, att_dst, att_src, out, XL, XR, M, S, E, P, Pd, fused, drop, attn_dropout, seed] {
      const int64_t H = kp->request.heads, F = kp->request.feat;
      const sc::GatKernels& g = *kp->kernels;
      const int64_t n = kp->graph.num_rows(), nnz = kp->graph.nnz();
      ag::SerialIfSmall serial(nnz * H * F);
      const Tensor X3 = x.value().reshape({n, H, F});
      const Tensor dY3 = out.grad().reshape({n, H, F});
      Tensor e = E, p = P, pd = Pd;
      if (fused) {
        e = ag::empty({nnz, H});
        p = ag::empty({nnz, H});
        g.recompute(XL, XR, M, S, e, p);
        pd = p;
      }
      Tensor dP = ag::empty({nnz, H});
      g.attention_grad(dY3, X3, dP);
      if (drop) ag::apply_dropout(dP.data<float>(), dP.data<float>(), nnz * H, attn_dropout, seed);
      Tensor dPre = ag::empty({nnz, H}), dXL = ag::empty({n, H}), dXR = ag::empty({n, H});
      g.softmax_backward(p, dP, e, dPre, dXL);
      g.source_grad(dPre, dXR);
      if (x.requires_grad()) {
        Tensor dX = ag::empty({n, H * F});
        Tensor dX3 = dX.reshape({n, H, F});
        g.aggregate_transposed(pd, dY3, dX3);
        add_score_terms(dX3, dXL, att_dst.value(), dXR, att_src.value(), H, F);
        x.accumulate_grad(dX, true);
      }
      if (att_dst.requires_grad()) att_dst.accumulate_grad(att_grad(dXL, X3, H, F), true);
      if (att_src.requires_grad()) att_src.accumulate_grad(att_grad(dXR, X3, H, F), true);
    };
  }
  tape.record("gat_attention", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

ag::Var head_mean(ag::Tape& tape, const ag::Var& x, int64_t heads) {
  Timer t;
  STRATA_ASSERT(heads >= 1 && x.value().ndim() == 2 && x.dim(1) % heads == 0,
                "head_mean: input {} is not {} heads wide", shape_str(x.shape()), heads);
  if (heads == 1) return x;
  const int64_t n = x.dim(0), F = x.dim(1) / heads;
  Tensor y = ag::empty({n, F});
  const float* xp = x.value().data<float>();
  float* yp = y.data<float>();
  const float inv = 1.0f / static_cast<float>(heads);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < F; ++f) {
      float acc = 0;
      for (int64_t h = 0; h < heads; ++h) acc += xp[(i * heads + h) * F + f];
      yp[i * F + f] = acc * inv;
    }
  ag::Var out = ag::Var::result(std::move(y), tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [x, out, heads, n, F, inv] {
      Tensor dx = ag::empty({n, heads * F});
      const float* g = out.grad().data<float>();
      float* d = dx.data<float>();
      for (int64_t i = 0; i < n; ++i)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t f = 0; f < F; ++f) d[(i * heads + h) * F + f] = g[i * F + f] * inv;
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("head_mean", ag::OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

}  // namespace strata::nn
