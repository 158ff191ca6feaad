#include "core/autograd_ops.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/fast_math.h"
#include "core/timer.h"

namespace strata::ag {
namespace {

// Element-wise loops go parallel only when there is enough work to pay for waking
// the threads (tiny OpenMP regions are a known slowdown; dmlc/dgl#2412).
constexpr int64_t kParallelElements = kParallelWork;

void check_matrix(const Var& v, const char* op, const char* what) {
  STRATA_ASSERT(v.defined(), "{}: {} is undefined", op, what);
  STRATA_ASSERT(v.value().dtype() == DType::F32 && v.value().ndim() == 2, "{}: {} must be a float32 matrix, got {}", op,
                what, v.value().describe());
}

Tensor empty_like(const Tensor& t) { return ag::empty(t.shape()); }

// ---- dense products ----------------------------------------------------------
// Eigen's own multi-threaded GEMM synchronises its threads with spin-waits per
// block; on a shared machine where a thread gets descheduled the others spin for
// the whole time slice (an R-MAT epoch went from 1.3 s on one thread to 12 s on
// two). So products are split here into one contiguous block of rows per thread,
// each an independent single-threaded Eigen GEMM, joined once at the end. The
// split depends only on the sizes and the thread count, so results are
// deterministic for a given thread count.

constexpr double kParallelFlops = 2.0 * static_cast<double>(kParallelWork);

using CMat = Eigen::Map<const RowMatrix<float>>;
using Mat = Eigen::Map<RowMatrix<float>>;

int gemm_threads(int64_t n, int64_t k, int64_t m, int64_t rows) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(m);
  if (flops < kParallelFlops) return 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), rows / 16)));
}

// Runs fn with Eigen's internal threading off (it reads the OpenMP thread count).
template <class F>
void serial_eigen(F&& fn) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  fn();
  omp_set_num_threads(saved);
}

std::pair<int64_t, int64_t> chunk(int64_t n, int t, int T) {
  return {n * t / T, n * (t + 1) / T};
}

// c [n, m] = a [n, k] · b [k, m]
void gemm_nn(const Tensor& a, const Tensor& b, Tensor& c) {
  const int64_t n = a.dim(0), k = a.dim(1), m = b.dim(1);
  const CMat A(a.data<float>(), n, k), B(b.data<float>(), k, m);
  Mat C(c.data<float>(), n, m);
  const int T = gemm_threads(n, k, m, n);
  if (T == 1) return serial_eigen([&] { C.noalias() = A * B; });
#pragma omp parallel num_threads(T)
  {
    const auto [r0, r1] = chunk(n, omp_get_thread_num(), omp_get_num_threads());
    C.middleRows(r0, r1 - r0).noalias() = A.middleRows(r0, r1 - r0) * B;
  }
}

// c [n, k] = a [n, m] · b [k, m]ᵀ
void gemm_nt(const Tensor& a, const Tensor& b, Tensor& c) {
  const int64_t n = a.dim(0), m = a.dim(1), k = b.dim(0);
  const CMat A(a.data<float>(), n, m), B(b.data<float>(), k, m);
  Mat C(c.data<float>(), n, k);
  const int T = gemm_threads(n, m, k, n);
  if (T == 1) return serial_eigen([&] { C.noalias() = A * B.transpose(); });
#pragma omp parallel num_threads(T)
  {
    const auto [r0, r1] = chunk(n, omp_get_thread_num(), omp_get_num_threads());
    C.middleRows(r0, r1 - r0).noalias() = A.middleRows(r0, r1 - r0) * B.transpose();
  }
}

// c [k, m] = a [n, k]ᵀ · b [n, m], computed as (bᵀ · a)ᵀ: per-thread partial sums
// over blocks of n, added in thread order. In that order Eigen's GEMM packs the
// long operand once per depth block instead of once per block of c's rows (for
// a weight gradient Xᵀ·dY, c has k = F_in rows): 1.05-1.12x on Facebook's 22,470 x
// 4,714 input at m = 128 and 256, the same at R-MAT's 131,072 x 128 x 128.
void gemm_tn(const Tensor& a, const Tensor& b, Tensor& c) {
  const int64_t n = a.dim(0), k = a.dim(1), m = b.dim(1);
  const CMat A(a.data<float>(), n, k), B(b.data<float>(), n, m);
  Mat C(c.data<float>(), k, m);
  const int T = gemm_threads(n, k, m, n);
  std::vector<RowMatrix<float>> partial(static_cast<size_t>(T));  // each [m, k]
  if (T == 1) {
    serial_eigen([&] { partial[0].noalias() = B.transpose() * A; });
    C = partial[0].transpose();
    return;
  }
  int used = T;
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
#pragma omp single
    used = omp_get_num_threads();
    const auto [r0, r1] = chunk(n, t, omp_get_num_threads());
    partial[t].noalias() = B.middleRows(r0, r1 - r0).transpose() * A.middleRows(r0, r1 - r0);
  }
  for (int t = 1; t < used; ++t) partial[0] += partial[t];
  C = partial[0].transpose();
}

// y = op(x) element by element, block by block on the threads: `block(xp, yp,
// begin, end)` fills yp[begin, end).
template <class B>
Var elementwise(Tape& tape, const Var& x, B block) {
  check_matrix(x, "element-wise op", "input");
  const Tensor& xv = x.value();
  Tensor y = empty_like(xv);
  const float* xp = xv.data<float>();
  float* yp = y.data<float>();
  for_blocks(xv.numel(), [xp, yp, block](int64_t begin, int64_t end) { block(xp, yp, begin, end); });
  return Var::result(std::move(y), tape.needs_grad({&x}));
}

template <class F>
Var unary(Tape& tape, const Var& x, F f) {
  // By value and restrict, as in record_unary's backward: through references the
  // loop stays scalar and f's select becomes a branch.
  return elementwise(tape, x, [f](const float* xp, float* yp, int64_t begin, int64_t end) {
    const float* __restrict__ xr = xp;
    float* __restrict__ yr = yp;
    const F fl = f;
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) yr[i] = fl(xr[i]);
  });
}

// As unary, sixteen elements at a time through fv (f32x16 -> f32x16), for ops
// whose scalar form would not vectorize (a call per element); the block's last
// few elements through lane 0, so every element gets the same arithmetic.
template <class FV>
Var unary16(Tape& tape, const Var& x, FV fv) {
  return elementwise(tape, x, [fv](const float* xp, float* yp, int64_t begin, int64_t end) {
    int64_t i = begin;
    for (; i + 16 <= end; i += 16) {
      f32x16 v;
      std::memcpy(&v, xp + i, sizeof v);
      v = fv(v);
      std::memcpy(yp + i, &v, sizeof v);
    }
    for (; i < end; ++i) yp[i] = fv(splat16(xp[i]))[0];
  });
}

// Records the backward of an element-wise op whose derivative is dfdx(x, y).
template <class D>
void record_unary(Tape& tape, const char* op, const Var& x, const Var& out, double ms, D dfdx) {
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [x, out, dfdx] {
      const Tensor& g = out.grad();
      Tensor dx = empty_like(g);
      const float* gp = g.data<float>();
      const float* xp = x.value().data<float>();
      const float* yp = out.value().data<float>();
      float* dp = dx.data<float>();
      const int64_t n = g.numel();
      // Pointers and dfdx by value, the output restrict: through references GCC
      // reloads them after every store, the loop stays scalar, and dfdx's select
      // becomes a branch mispredicted on half the elements (ELU's backward took
      // 7.2 ms over 22,470 x 64 values that way).
      for_blocks(n, [gp, xp, yp, dp, dfdx](int64_t begin, int64_t end) {
        const float* __restrict__ gr = gp;
        const float* __restrict__ xr = xp;
        const float* __restrict__ yr = yp;
        float* __restrict__ dr = dp;
        const D f = dfdx;
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) dr[i] = gr[i] * f(xr[i], yr[i]);
      });
      x.accumulate_grad(dx, true);
    };
  }
  tape.record(op, OpCategory::Other, out, ms, std::move(back));
}

}  // namespace

Var matmul(Tape& tape, const Var& a, const Var& b) {
  Timer t;
  check_matrix(a, "matmul", "left operand");
  check_matrix(b, "matmul", "right operand");
  STRATA_ASSERT(a.dim(1) == b.dim(0), "matmul: {} · {} (inner sizes differ)", shape_str(a.shape()),
                shape_str(b.shape()));
  Tensor y = ag::empty({a.dim(0), b.dim(1)});
  gemm_nn(a.value(), b.value(), y);
  Var out = Var::result(std::move(y), tape.needs_grad({&a, &b}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [a, b, out] {
      if (a.requires_grad()) {
        Tensor da = empty_like(a.value());
        gemm_nt(out.grad(), b.value(), da);
        a.accumulate_grad(da, true);
      }
      if (b.requires_grad()) {
        Tensor db = empty_like(b.value());
        gemm_tn(a.value(), out.grad(), db);
        b.accumulate_grad(db, true);
      }
    };
  }
  tape.record("matmul", OpCategory::Dense, out, t.ms(), std::move(back));
  return out;
}

Var add(Tape& tape, const Var& a, const Var& b) {
  Timer t;
  STRATA_ASSERT(a.shape() == b.shape(), "add: shapes {} and {} differ", shape_str(a.shape()), shape_str(b.shape()));
  Tensor y = empty_like(a.value());
  const float* ap = a.value().data<float>();
  const float* bp = b.value().data<float>();
  float* yp = y.data<float>();
  const int64_t n = y.numel();
  for_blocks(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) yp[i] = ap[i] + bp[i];
  });
  Var out = Var::result(std::move(y), tape.needs_grad({&a, &b}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [a, b, out] {
      a.accumulate_grad(out.grad(), false);
      b.accumulate_grad(out.grad(), false);
    };
  }
  tape.record("add", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var bias_add(Tape& tape, const Var& x, const Var& bias) {
  Timer t;
  check_matrix(x, "bias_add", "input");
  STRATA_ASSERT(bias.value().ndim() == 1 && bias.dim(0) == x.dim(1), "bias_add: bias {} for input {}",
                shape_str(bias.shape()), shape_str(x.shape()));
  Tensor y = empty_like(x.value());
  y.as_matrix<float>() = x.value().as_matrix<float>().rowwise() + bias.value().as_vector<float>().transpose();
  Var out = Var::result(std::move(y), tape.needs_grad({&x, &bias}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [x, bias, out] {
      x.accumulate_grad(out.grad(), false);
      if (bias.requires_grad()) {
        Tensor db = ag::empty(bias.shape());
        db.as_vector<float>() = out.grad().as_matrix<float>().colwise().sum().transpose();
        bias.accumulate_grad(db, true);
      }
    };
  }
  tape.record("bias_add", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var relu(Tape& tape, const Var& x) {
  Timer t;
  Var out = unary(tape, x, [](float v) { return v > 0.0f ? v : 0.0f; });
  record_unary(tape, "relu", x, out, t.ms(), [](float xv, float) { return xv > 0.0f ? 1.0f : 0.0f; });
  return out;
}

Var elu(Tape& tape, const Var& x, float alpha) {
  Timer t;
  // In vectors: std::expm1 was a call per element (core/fast_math.h).
  Var out = unary16(tape, x, [alpha](f32x16 v) { return v > 0.0f ? v : alpha * fast_expm1(v); });
  // d/dx alpha·(e^x - 1) = alpha·e^x = y + alpha.
  record_unary(tape, "elu", x, out, t.ms(), [alpha](float xv, float yv) { return xv > 0.0f ? 1.0f : yv + alpha; });
  return out;
}

Var leaky_relu(Tape& tape, const Var& x, float slope) {
  Timer t;
  Var out = unary(tape, x, [slope](float v) { return v > 0.0f ? v : slope * v; });
  record_unary(tape, "leaky_relu", x, out, t.ms(), [slope](float xv, float) { return xv > 0.0f ? 1.0f : slope; });
  return out;
}

// 512-bit vectors where the target has them (GCC prefers 256 on Intel): the hash's
// 32-bit multiplies issue at one vector a cycle either way, so twice the lanes take
// 0.69x the time (173,312 elements, Xeon VM: 97 -> 67 us); the bits are the same.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define STRATA_WIDE_VECTORS __attribute__((target("prefer-vector-width=512")))
#else
#define STRATA_WIDE_VECTORS
#endif
STRATA_WIDE_VECTORS void apply_dropout(const float* in, float* out, int64_t n, float p, uint64_t seed) {
  const uint32_t threshold = dropout_threshold(p);
  const float scale = 1.0f / (1.0f - p);
  const uint32_t lo = static_cast<uint32_t>(seed);
  // Blocks of 2^16 elements: the index's high word, and so the mixed-in term, is
  // constant within a block, which leaves a loop of 32-bit integer ops that
  // vectorises (the same bits as dropout_bits).
  constexpr int64_t kBlock = int64_t{1} << 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    const uint32_t hi = static_cast<uint32_t>(seed >> 32) +
                        static_cast<uint32_t>(static_cast<uint64_t>(begin) >> 32) * 0x85ebca6bU;
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
      const uint32_t bits = dropout_hash(dropout_hash(static_cast<uint32_t>(i) * 0x9e3779b9U + lo) ^ hi) >> 8;
      out[i] = bits >= threshold ? in[i] * scale : 0.0f;
    }
  }
}

Var dropout(Tape& tape, const Var& x, float p, uint64_t seed) {
  STRATA_ASSERT(p >= 0.0f && p < 1.0f, "dropout probability {} outside [0, 1)", p);
  if (!tape.training() || p == 0.0f) return x;
  Timer t;
  Tensor y = empty_like(x.value());
  apply_dropout(x.value().data<float>(), y.data<float>(), y.numel(), p, seed);
  Var out = Var::result(std::move(y), tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [x, out, p, seed] {
      const Tensor& g = out.grad();
      Tensor dx = empty_like(g);
      apply_dropout(g.data<float>(), dx.data<float>(), g.numel(), p, seed);
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("dropout", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var concat_cols(Tape& tape, const std::vector<Var>& xs) {
  Timer t;
  STRATA_ASSERT(!xs.empty(), "concat_cols of nothing");
  const int64_t rows = xs[0].dim(0);
  int64_t cols = 0;
  bool grad = false;
  for (const Var& x : xs) {
    check_matrix(x, "concat_cols", "an operand");
    STRATA_ASSERT(x.dim(0) == rows, "concat_cols: operands with {} and {} rows", rows, x.dim(0));
    cols += x.dim(1);
    grad = grad || tape.needs_grad({&x});
  }
  Tensor y = ag::empty({rows, cols});
  auto ym = y.as_matrix<float>();
  for (int64_t c = 0; const Var& x : xs) {
    ym.middleCols(c, x.dim(1)) = x.value().as_matrix<float>();
    c += x.dim(1);
  }
  Var out = Var::result(std::move(y), grad);
  std::function<void()> back;
  if (grad) {
    back = [xs, out] {
      const auto g = out.grad().as_matrix<float>();
      for (int64_t c = 0; const Var& x : xs) {
        if (x.requires_grad()) {
          Tensor dx = empty_like(x.value());
          dx.as_matrix<float>() = g.middleCols(c, x.dim(1));
          x.accumulate_grad(dx, true);
        }
        c += x.dim(1);
      }
    };
  }
  tape.record("concat_cols", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var narrow_cols(Tape& tape, const Var& x, int64_t begin, int64_t width) {
  Timer t;
  check_matrix(x, "narrow_cols", "input");
  STRATA_ASSERT(begin >= 0 && width >= 0 && begin + width <= x.dim(1), "narrow_cols: columns [{}, {}) of {}", begin,
                begin + width, shape_str(x.shape()));
  Tensor y = ag::empty({x.dim(0), width});
  y.as_matrix<float>() = x.value().as_matrix<float>().middleCols(begin, width);
  Var out = Var::result(std::move(y), tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [x, out, begin, width] {
      Tensor dx = ag::zeros(x.shape());
      dx.as_matrix<float>().middleCols(begin, width) = out.grad().as_matrix<float>();
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("narrow_cols", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var narrow_rows(Tape& tape, const Var& x, int64_t count) {
  Timer t;
  check_matrix(x, "narrow_rows", "input");
  STRATA_ASSERT(count >= 0 && count <= x.dim(0), "narrow_rows: rows [0, {}) of {}", count, shape_str(x.shape()));
  const int64_t cols = x.dim(1);
  Tensor y = ag::empty({count, cols});
  std::copy_n(x.value().data<float>(), count * cols, y.data<float>());  // row-major: the first rows are one span
  Var out = Var::result(std::move(y), tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [x, out, count, cols] {
      Tensor dx = ag::empty(x.shape());
      float* d = dx.data<float>();
      std::copy_n(out.grad().data<float>(), count * cols, d);
      std::fill(d + count * cols, d + x.dim(0) * cols, 0.0f);
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("narrow_rows", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

std::vector<Var> split_cols(Tape& tape, const Var& x, const std::vector<int64_t>& widths) {
  Timer t;
  check_matrix(x, "split_cols", "input");
  int64_t total = 0;
  for (int64_t w : widths) {
    STRATA_ASSERT(w >= 0, "split_cols: negative width {}", w);
    total += w;
  }
  STRATA_ASSERT(total == x.dim(1), "split_cols: widths sum to {} for {} columns", total, x.dim(1));
  const bool grad = tape.needs_grad({&x});
  std::vector<Var> outs;
  const auto xm = x.value().as_matrix<float>();
  for (int64_t c = 0; int64_t w : widths) {
    Tensor part = ag::empty({x.dim(0), w});
    part.as_matrix<float>() = xm.middleCols(c, w);
    outs.push_back(Var::result(std::move(part), grad));
    c += w;
  }
  std::function<void()> back;
  if (grad) {
    back = [x, outs] {
      Tensor dx = ag::empty(x.shape());
      auto dm = dx.as_matrix<float>();
      for (int64_t c = 0; const Var& o : outs) {
        const int64_t w = o.dim(1);
        if (o.has_grad())
          dm.middleCols(c, w) = o.grad().as_matrix<float>();
        else
          dm.middleCols(c, w).setZero();
        c += w;
      }
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("split_cols", OpCategory::Other, outs, t.ms(), std::move(back));
  return outs;
}

Var l2_normalize_rows(Tape& tape, const Var& x, float eps) {
  Timer t;
  check_matrix(x, "l2_normalize_rows", "input");
  const int64_t rows = x.dim(0);
  Tensor y = empty_like(x.value());
  Tensor inv = Tensor::empty({rows}, DType::F32);  // 1 / max(|x_i|, eps)
  {
    const auto xm = x.value().as_matrix<float>();
    auto ym = y.as_matrix<float>();
    float* ip = inv.data<float>();
#pragma omp parallel for schedule(static) if (rows * x.dim(1) >= kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      ip[r] = 1.0f / std::max(xm.row(r).norm(), eps);
      ym.row(r) = xm.row(r) * ip[r];
    }
  }
  Var out = Var::result(std::move(y), tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    // y = x / n with n = |x|: dx = (dy - y (y·dy)) / n; where n was clamped to eps
    // the map is linear, dx = dy / eps.
    back = [x, out, inv, eps] {
      const auto g = out.grad().as_matrix<float>();
      const auto ym = out.value().as_matrix<float>();
      const auto xm = x.value().as_matrix<float>();
      const float* ip = inv.data<float>();
      Tensor dx = empty_like(x.value());
      auto dm = dx.as_matrix<float>();
      const int64_t rows = g.rows();
#pragma omp parallel for schedule(static) if (rows * x.dim(1) >= kParallelElements)
      for (int64_t r = 0; r < rows; ++r) {
        if (xm.row(r).norm() > eps)
          dm.row(r) = (g.row(r) - ym.row(r) * ym.row(r).dot(g.row(r))) * ip[r];
        else
          dm.row(r) = g.row(r) * ip[r];
      }
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("l2_normalize_rows", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var log_softmax(Tape& tape, const Var& x) {
  Timer t;
  check_matrix(x, "log_softmax", "input");
  const int64_t rows = x.dim(0), cols = x.dim(1);
  STRATA_ASSERT(cols > 0, "log_softmax over zero columns");
  Tensor y = empty_like(x.value());
  {
    const float* xp = x.value().data<float>();
    float* yp = y.data<float>();
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = xp + r * cols;
      float* yr = yp + r * cols;
      float m = xr[0];
      for (int64_t c = 1; c < cols; ++c) m = std::max(m, xr[c]);
      float s = 0;
      for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
      const float lse = m + std::log(s);
      for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] - lse;
    }
  }
  Var out = Var::result(std::move(y), tape.needs_grad({&x}));
  std::function<void()> back;
  if (out.requires_grad()) {
    // dx = dy - softmax(x) · Σ dy, with softmax(x) = exp(y).
    back = [x, out] {
      const Tensor& g = out.grad();
      const int64_t rows = g.dim(0), cols = g.dim(1);
      Tensor dx = empty_like(g);
      const float* gp = g.data<float>();
      const float* yp = out.value().data<float>();
      float* dp = dx.data<float>();
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelElements)
      for (int64_t r = 0; r < rows; ++r) {
        float s = 0;
        for (int64_t c = 0; c < cols; ++c) s += gp[r * cols + c];
        for (int64_t c = 0; c < cols; ++c) dp[r * cols + c] = gp[r * cols + c] - std::exp(yp[r * cols + c]) * s;
      }
      x.accumulate_grad(dx, true);
    };
  }
  tape.record("log_softmax", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var nll_loss(Tape& tape, const Var& log_probs, const Tensor& labels, const Tensor& index) {
  Timer t;
  check_matrix(log_probs, "nll_loss", "log-probabilities");
  STRATA_ASSERT(labels.dtype() == DType::I64 && labels.ndim() == 1 && labels.dim(0) == log_probs.dim(0),
                "nll_loss: labels {} for log-probabilities {}", labels.describe(), shape_str(log_probs.shape()));
  STRATA_ASSERT(index.dtype() == DType::I64 && index.ndim() == 1 && index.numel() > 0,
                "nll_loss: index must be a non-empty int64 vector, got {}", index.describe());
  const int64_t cols = log_probs.dim(1), n = index.numel();
  const int64_t* ip = index.data<int64_t>();
  const int64_t* lp = labels.data<int64_t>();
  const float* xp = log_probs.value().data<float>();
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t r = ip[k];
    STRATA_ASSERT(r >= 0 && r < log_probs.dim(0), "nll_loss: row {} out of range", r);
    STRATA_ASSERT(lp[r] >= 0 && lp[r] < cols, "nll_loss: row {} has label {} (expected [0, {}))", r, lp[r], cols);
    sum -= xp[r * cols + lp[r]];
  }
  Var out = Var::result(Tensor::full({1}, DType::F32, sum / static_cast<double>(n)), tape.needs_grad({&log_probs}));
  std::function<void()> back;
  if (out.requires_grad()) {
    back = [log_probs, out, labels, index] {
      const float g = out.grad().data<float>()[0] / static_cast<float>(index.numel());
      Tensor dx = ag::zeros(log_probs.shape());
      float* dp = dx.data<float>();
      const int64_t cols = log_probs.dim(1);
      const int64_t* ip = index.data<int64_t>();
      const int64_t* lp = labels.data<int64_t>();
      for (int64_t k = 0; k < index.numel(); ++k) dp[ip[k] * cols + lp[ip[k]]] -= g;
      log_probs.accumulate_grad(dx, true);
    };
  }
  tape.record("nll_loss", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var bce_with_logits(Tape& tape, const Var& logits, const Tensor& labels, const Tensor& index) {
  Timer t;
  check_matrix(logits, "bce_with_logits", "logits");
  STRATA_ASSERT(labels.dtype() == DType::I64 && labels.ndim() == 2 && labels.dim(0) == logits.dim(0) &&
                    labels.dim(1) == logits.dim(1),
                "bce_with_logits: labels {} for logits {}", labels.describe(), shape_str(logits.shape()));
  STRATA_ASSERT(index.dtype() == DType::I64 && index.ndim() == 1 && index.numel() > 0,
                "bce_with_logits: index must be a non-empty int64 vector, got {}", index.describe());
  const int64_t cols = logits.dim(1), n = index.numel();
  STRATA_ASSERT(cols > 0, "bce_with_logits over zero columns");
  const int64_t* ip = index.data<int64_t>();
  const int64_t* yp = labels.data<int64_t>();
  const float* zp = logits.value().data<float>();
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t r = ip[k];
    STRATA_ASSERT(r >= 0 && r < logits.dim(0), "bce_with_logits: row {} out of range", r);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t y = yp[r * cols + c];
      STRATA_ASSERT(y == 0 || y == 1, "bce_with_logits: row {} column {} has label {} (expected 0 or 1)", r, c, y);
      const double z = zp[r * cols + c];
      sum += std::max(z, 0.0) - z * static_cast<double>(y) + std::log1p(std::exp(-std::abs(z)));
    }
  }
  const double count = static_cast<double>(n) * static_cast<double>(cols);
  Var out = Var::result(Tensor::full({1}, DType::F32, sum / count), tape.needs_grad({&logits}));
  std::function<void()> back;
  if (out.requires_grad()) {
    // d/dz = sigmoid(z) - y, per element, over the mean's count.
    back = [logits, out, labels, index, count] {
      const float g = static_cast<float>(out.grad().data<float>()[0] / count);
      Tensor dz = ag::zeros(logits.shape());
      float* dp = dz.data<float>();
      const int64_t cols = logits.dim(1);
      const int64_t* ip = index.data<int64_t>();
      const int64_t* yp = labels.data<int64_t>();
      const float* zp = logits.value().data<float>();
      for (int64_t k = 0; k < index.numel(); ++k) {
        const int64_t r = ip[k];
        for (int64_t c = 0; c < cols; ++c) {
          const float z = zp[r * cols + c];
          const float sigmoid = z >= 0 ? 1.0f / (1.0f + std::exp(-z)) : std::exp(z) / (1.0f + std::exp(z));
          dp[r * cols + c] += g * (sigmoid - static_cast<float>(yp[r * cols + c]));
        }
      }
      logits.accumulate_grad(dz, true);
    };
  }
  tape.record("bce_with_logits", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

Var l2_penalty(Tape& tape, const std::vector<Var>& params, float coeff) {
  Timer t;
  double sum = 0;
  bool grad = false;
  for (const Var& p : params) {
    sum += static_cast<double>(p.value().as_vector<float>().squaredNorm());
    grad = grad || tape.needs_grad({&p});
  }
  Var out = Var::result(Tensor::full({1}, DType::F32, 0.5 * coeff * sum), grad);
  std::function<void()> back;
  if (grad) {
    back = [params, out, coeff] {
      const float g = out.grad().data<float>()[0] * coeff;
      for (const Var& p : params) {
        if (!p.requires_grad()) continue;
        Tensor dp = empty_like(p.value());
        dp.as_vector<float>() = p.value().as_vector<float>() * g;
        p.accumulate_grad(dp, true);
      }
    };
  }
  tape.record("l2_penalty", OpCategory::Other, out, t.ms(), std::move(back));
  return out;
}

}  // namespace strata::ag
