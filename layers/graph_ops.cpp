#include "layers/graph_ops.h"

#include "core/autograd_ops.h"
#include "core/timer.h"

namespace strata::nn {
namespace {

// y += scale[row] * x, row-wise (the SageGcn self term and its backward).
void add_row_scaled(const Tensor& x, const Tensor& scale, Tensor& y) {
  const int64_t rows = x.dim(0), cols = x.dim(1);
  const float* xp = x.data<float>();
  const float* sp = scale.data<float>();
  float* yp = y.data<float>();
#pragma omp parallel for schedule(static) if (rows * cols >= ag::kParallelWork)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) yp[r * cols + c] += sp[r] * xp[r * cols + c];
}

}  // namespace

namespace {

// Max aggregation: Y and the ties C from the forward row program; the backward
// shares dY among the tied maxima (sparse_compiler/ops/max_aggregation.h).
ag::Var aggregate_max(ag::Tape& tape, const AggregationKernels& k, const ag::Var& x, Timer& t) {
  Tensor y = ag::empty({k.rows(), k.feat});
  Tensor c = ag::empty({k.rows(), k.feat});
  {
    ag::SerialIfSmall serial(k.max->rows() * k.feat);
    k.max->forward(x.value(), y, c);
  }
  ag::Var out = ag::Var::result(y, tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    const AggregationKernels* kp = &k;
    back = [kp, x, out, y, c] {
      Tensor dx = ag::empty({kp->cols(), kp->feat});
      Tensor shares = ag::empty({kp->rows(), kp->feat});  // pooled, like dx
      ag::SerialIfSmall serial(kp->cols() * kp->feat);
      kp->max->backward(x.value(), y, c, out.grad(), dx, &shares);
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("aggregate", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

}  // namespace

ag::Var aggregate(ag::Tape& tape, const AggregationKernels& k, const ag::Var& x) {
  Timer t;
  STRATA_ASSERT(x.value().ndim() == 2 && x.dim(1) == k.feat, "aggregate: input {} for a kernel of width {}",
                shape_str(x.shape()), k.feat);
  if (k.max) return aggregate_max(tape, k, x, t);
  Tensor y = ag::empty({k.forward->graph().num_rows(), k.feat});
  {
    ag::SerialIfSmall serial(k.forward->graph().nnz() * k.feat);
    k.forward->run_into(x.value(), y);
  }
  if (k.self_scale.defined()) add_row_scaled(x.value(), k.self_scale, y);
  ag::Var out = ag::Var::result(std::move(y), tape.needs_grad({&x}));
  STRATA_CHECK(!out.requires_grad() || k.backward,
               "aggregate: a pass that needs gradients over the {} f={} kernel, built without its backward (for "
               "inference); build the graph's kernels with their backward (KernelRequests::backward) to train",
               aggregation_name(k.kind), k.feat);
  std::function<void()> back;
  if (out.requires_grad()) {
    const AggregationKernels* kp = &k;
    back = [kp, x, out] {
      Tensor dx = ag::empty({kp->backward->graph().num_rows(), kp->feat});
      {
        ag::SerialIfSmall serial(kp->backward->graph().nnz() * kp->feat);
        kp->backward->run_into(out.grad(), dx);
      }
      if (kp->self_scale.defined()) add_row_scaled(out.grad(), kp->self_scale, dx);
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("aggregate", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

ag::Var sparse_features_matmul(ag::Tape& tape, const FeatureProductKernels& k, const ag::Var& w, float dropout,
                               uint64_t seed) {
  Timer t;
  STRATA_ASSERT(w.value().ndim() == 2 && w.dim(0) == k.features->cols() && w.dim(1) == k.feat,
                "sparse_features_matmul: weight {} for features [{}, {}] and width {}", shape_str(w.shape()),
                k.features->rows(), k.features->cols(), k.feat);
  const bool drop = tape.training() && dropout > 0.0f;
  STRATA_ASSERT(!drop || k.weighted, "sparse input dropout needs the weighted feature kernels");
  Tensor values = k.values;
  if (drop) {
    values = ag::empty({k.values.numel()});
    ag::apply_dropout(k.values.data<float>(), values.data<float>(), k.values.numel(), dropout, seed);
  }
  Tensor y = ag::empty({k.features->rows(), k.feat});
  {
    ag::SerialIfSmall serial(k.features->S.nnz() * k.feat);
    k.forward->run_into(w.value(), y, values);
  }
  ag::Var out = ag::Var::result(std::move(y), tape.needs_grad({&w}));
  STRATA_CHECK(!out.requires_grad() || k.backward,
               "sparse_features_matmul: a pass that needs gradients over the f={} feature product, built without "
               "its weight-gradient kernel (for inference); build the graph's kernels with their backward "
               "(KernelRequests::backward) to train",
               k.feat);
  std::function<void()> back;
  if (out.requires_grad()) {
    const FeatureProductKernels* kp = &k;
    back = [kp, w, out, values] {
      Tensor vt;
      if (kp->weighted) {
        // Sᵀ's values: S's (possibly dropped) values in Sᵀ's position order.
        const int64_t nnz = values.numel();
        vt = ag::empty({nnz});
        const float* v = values.data<float>();
        const int64_t* perm = kp->transpose.data<int64_t>();
        float* d = vt.data<float>();
#pragma omp parallel for schedule(static) if (nnz >= ag::kParallelWork)
        for (int64_t q = 0; q < nnz; ++q) d[q] = v[perm[q]];
      }
      Tensor dw = ag::empty({kp->features->cols(), kp->feat});
      {
        ag::SerialIfSmall serial(kp->features->St.nnz() * kp->feat);
        kp->backward->run_into(out.grad(), dw, vt);
      }
      w.accumulate_grad(dw, true);
    };
  }
  tape.record("sparse_matmul", ag::OpCategory::Sparse, out, t.ms(), std::move(back));
  return out;
}

}  // namespace strata::nn
