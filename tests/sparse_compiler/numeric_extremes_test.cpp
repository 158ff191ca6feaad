// Numerically extreme inputs for the generated kernels and the reference
// interpreter. The differential tests (differential_test, formats_test,
// attention_test, max_aggregation_test, rgms_test, training/gat_test) draw their
// inputs uniformly from small ranges, where a missing max shift, a zero weight
// multiplied into an infinity or a NaN that one backend drops and another keeps
// cannot show. These feed what they never do, to both backends, with int32 and
// int64 indices, over CSR and over decomposed formats (hyb, bsr):
//   - GAT attention: the unfused score / softmax / aggregation, the fused forward
//     (two-pass and online), the fused forward that saves E and P, the recompute
//     and every backward piece, and the single-pass programs over hyb and bsr,
//     with scores of 1e3..1e4 (exp overflows without the max shift), of -1e3..-1e4
//     and -1e30 (exp underflows to 0 without it), all equal, rows of one edge and
//     empty rows: E, P, M, S, Y and the gradients against a max-subtracted softmax
//     in long double, with no inf or NaN anywhere (the math is finite).
//   - SpMM (sum, mean, weighted) over csr, hyb and bsr with values of 1e35..1e36,
//     3e38 (sums of two overflow: inf is the IEEE answer; a mean scales each term
//     first and stays finite), subnormals (exact sums: nothing may flush them to
//     zero), and +inf, -inf and NaN entries: the values and the positions and signs
//     of inf and NaN that IEEE arithmetic gives.
//     A padding slot of a decomposed format must add nothing, not 0 * inf = NaN.
//   - Max aggregation on the same inputs: an empty row gives 0 (PyG's aggr="max"),
//     a row of -inf gives -inf, and a NaN among a row's inputs gives NaN whatever
//     its position in the row (torch.scatter_reduce "amax" and PyG propagate NaN).
//   - SDDMM dot products of large magnitude, with cancellation, overflowing, and
//     inf * 0. Generated code may contract a * b + c into a fused multiply-add
//     (GCC's default for C++), the interpreter rounds after every operation: both
//     must be within the error bound of the exact dot product (eps times the sum
//     of the terms' magnitudes), which under cancellation is far from the result.
//   - RGMS (gather, matmul, scatter) in every order with large inputs and with an
//     inf input (ELL3D pads its rows like hyb does).
// Run: build/tests/strata_compiler_tests --gtest_filter='NumericExtremes*'
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/decompose.h"
#include "sparse_compiler/formats/format_schedule.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ops/attention.h"
#include "sparse_compiler/ops/max_aggregation.h"
#include "sparse_compiler/ops/rgms.h"
#include "sparse_compiler/ops/sddmm.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/passes/pipeline.h"
#include "tests/sparse_compiler/edge_case_graphs.h"
#include "tests/sparse_compiler/gat_over_formats.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

using LD = long double;
const LD kInf = std::numeric_limits<LD>::infinity();
const LD kNaN = std::numeric_limits<LD>::quiet_NaN();

// Rows of every kind a kernel treats apart: one edge, empty, shorter than a vector,
// longer than one (17) and much longer (40), first and last columns.
Graph mixed_degrees(bool int64) {
  std::vector<int64_t> r, c;
  auto row = [&](int64_t i, std::vector<int64_t> cols) {
    for (int64_t j : cols) {
      r.push_back(i);
      c.push_back(j);
    }
  };
  row(0, {5});
  row(2, {1, 2, 3});
  std::vector<int64_t> seventeen, forty;
  for (int64_t j = 10; j < 27; ++j) seventeen.push_back(j);
  for (int64_t j = 20; j < 60; ++j) forty.push_back(j);
  row(3, seventeen);
  row(5, forty);
  row(6, {0, 59});
  row(7, {7, 14, 21, 28, 35});
  CooOptions o;
  o.force_int64 = int64;
  return Graph::from_coo(9, 60, Tensor::from_vector(r), Tensor::from_vector(c), o);  // rows 1, 4, 8 empty
}

std::vector<testing::GraphCase> graphs(bool int64) {
  std::vector<testing::GraphCase> out = {{"mixed_degrees", mixed_degrees(int64)}};
  testing::RandomGraphSpec s;
  s.int64_indices = int64;
  s.rows = 90;
  s.cols = 80;
  s.avg_degree = 6;
  s.empty_row_fraction = 0.2;
  s.long_row_length = 70;
  s.seed = 17;
  out.push_back({"random_long_row", testing::random_graph(s)});
  return out;
}

// got[k] against want[k]: NaN where want is NaN; where want, rounded to float, is
// infinite, that infinity; elsewhere finite and within atol + rtol * scale[k]
// (scale: the sum of the magnitudes of the terms making want[k]; |want[k]| when
// no scale is given). Reports the first few mismatches.
void expect_ieee(const Tensor& got, const std::vector<LD>& want, const std::vector<LD>* scale, double rtol, double atol,
                 const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  std::string first;
  for (size_t k = 0; k < want.size(); ++k) {
    const float g = got.data<float>()[k];
    const LD w = want[k];
    const float wf = static_cast<float>(w);
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(g);
    else if (std::isinf(wf))
      ok = g == wf;
    else
      ok = std::isfinite(g) && std::fabs(LD(g) - w) <= atol + rtol * (scale ? (*scale)[k] : std::fabs(w));
    if (!ok && bad++ < 4) first += fmt::format(" [{}] got {} want {};", k, g, double(w));
  }
  EXPECT_EQ(bad, 0) << what << ":" << first;
}

// ---------------------------------------------------------------- GAT attention

const double kSlope = 0.25;  // a power of two: slope * score is exact, so E is exact in every backend

// XL (rows) and XR (cols) for one regime; every sum XL + XR is exact in float.
struct Scores {
  std::string name;
  std::function<float(int64_t i, int64_t h, Rng&)> xl;
  std::function<float(int64_t j, int64_t h, Rng&)> xr;
};

float eighths(Rng& rng) { return static_cast<float>(std::floor(rng.uniform(-64, 64))) / 8; }

std::vector<Scores> score_regimes() {
  return {
      {"large_1e3_1e4", [](int64_t, int64_t, Rng& r) { return float(std::floor(r.uniform(1000, 10000))); },
       [](int64_t, int64_t, Rng& r) { return eighths(r); }},
      {"negative_1e3_1e4", [](int64_t, int64_t, Rng& r) { return -float(std::floor(r.uniform(4000, 40000))); },
       [](int64_t, int64_t, Rng& r) { return eighths(r); }},
      {"all_equal", [](int64_t, int64_t, Rng&) { return 3000.0f; }, [](int64_t, int64_t, Rng&) { return 0.0f; }},
      // Sums round to XL: every score of a row is -1e30 (or 1e30), exp(E - M) = 1.
      {"equal_minus_1e30", [](int64_t, int64_t, Rng&) { return -4e30f; },
       [](int64_t, int64_t, Rng& r) { return eighths(r); }},
      {"equal_plus_1e30", [](int64_t, int64_t, Rng&) { return 1e30f; },
       [](int64_t, int64_t, Rng& r) { return eighths(r); }},
  };
}

struct GatInputs {
  Tensor XL, XR, X, dY;
};

GatInputs gat_inputs(const Graph& A, const Scores& sc, int64_t H, int64_t F, uint64_t seed) {
  Rng rng(seed);
  GatInputs in;
  in.XL = Tensor::empty({A.num_rows(), H}, DType::F32);
  in.XR = Tensor::empty({A.num_cols(), H}, DType::F32);
  for (int64_t i = 0; i < A.num_rows(); ++i)
    for (int64_t h = 0; h < H; ++h) in.XL.data<float>()[i * H + h] = sc.xl(i, h, rng);
  for (int64_t j = 0; j < A.num_cols(); ++j)
    for (int64_t h = 0; h < H; ++h) in.XR.data<float>()[j * H + h] = sc.xr(j, h, rng);
  in.X = Tensor::uniform({A.num_cols(), H, F}, -1, 1, rng);
  in.dY = Tensor::uniform({A.num_rows(), H, F}, -1, 1, rng);
  return in;
}

// The dense reference: E in float as the kernels compute it (exact here), the
// softmax max-shifted in long double, and the gradients of sum(Y * dY). Each
// result comes with the scale of its terms for the tolerance.
struct GatRef {
  std::vector<LD> E, P, M, S, Y, Ys, dP, dPs, dPre, dPres, dXL, dXLs, dXR, dXRs, dX, dXs;
};

GatRef gat_reference(const Graph& A, const GatInputs& in, int64_t H, int64_t F) {
  GatRef r;
  const int64_t m = A.num_rows(), n = A.num_cols(), nnz = A.nnz();
  auto z = [](int64_t k) { return std::vector<LD>(static_cast<size_t>(k), 0); };
  r.E = z(nnz * H), r.P = z(nnz * H), r.M = z(m * H), r.S = z(m * H), r.Y = z(m * H * F), r.Ys = z(m * H * F);
  r.dP = z(nnz * H), r.dPs = z(nnz * H), r.dPre = z(nnz * H), r.dPres = z(nnz * H), r.dXL = z(m * H), r.dXLs = z(m * H),
  r.dXR = z(n * H), r.dXRs = z(n * H), r.dX = z(n * H * F), r.dXs = z(n * H * F);
  const float* XL = in.XL.data<float>();
  const float* XR = in.XR.data<float>();
  const float* X = in.X.data<float>();
  const float* dY = in.dY.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t h = 0; h < H; ++h) {
      LD mx = -kInf, sum = 0, dot = 0, dots = 0;
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        const float x = XL[i * H + h] + XR[A.column(p) * H + h];
        const float e = std::max(x, x * static_cast<float>(kSlope));
        r.E[p * H + h] = e;
        mx = std::max(mx, LD(e));
      }
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) sum += std::exp(r.E[p * H + h] - mx);
      r.M[i * H + h] = mx;
      r.S[i * H + h] = sum;
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        const int64_t j = A.column(p);
        const LD a = std::exp(r.E[p * H + h] - mx) / sum;
        r.P[p * H + h] = a;
        LD g = 0, gs = 0;
        for (int64_t f = 0; f < F; ++f) {
          const LD xv = X[(j * H + h) * F + f], dy = dY[(i * H + h) * F + f];
          r.Y[(i * H + h) * F + f] += a * xv;
          r.Ys[(i * H + h) * F + f] += std::fabs(a * xv);
          g += dy * xv;
          gs += std::fabs(dy * xv);
          r.dX[(j * H + h) * F + f] += a * dy;
          r.dXs[(j * H + h) * F + f] += std::fabs(a * dy);
        }
        r.dP[p * H + h] = g;
        r.dPs[p * H + h] = gs;
        dot += a * g;
        dots += a * gs;
      }
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        const LD a = r.P[p * H + h], d = r.E[p * H + h] > 0 ? 1 : kSlope;
        const LD g = a * (r.dP[p * H + h] - dot) * d, gs = a * (r.dPs[p * H + h] + dots) * d;
        r.dPre[p * H + h] = g;
        r.dPres[p * H + h] = gs;
        r.dXL[i * H + h] += g;
        r.dXLs[i * H + h] += gs;
        r.dXR[A.column(p) * H + h] += g;
        r.dXRs[A.column(p) * H + h] += gs;
      }
    }
  return r;
}

// The tolerances: float exp and division (a few ulps) on values that are at most
// 1 (P) or sums of terms with known magnitudes.
constexpr double kRtol = 2e-5, kAtol = 1e-6;

void check_forward(const GatRef& r, const Tensor& P, const Tensor& M, const Tensor& S, const Tensor& Y,
                   const std::string& what) {
  if (P.defined()) expect_ieee(P, r.P, nullptr, kRtol, kAtol, what + " P");
  if (M.defined()) expect_ieee(M, r.M, nullptr, 0, 0, what + " M (the row max, exact)");
  if (S.defined()) expect_ieee(S, r.S, nullptr, kRtol, kAtol, what + " S");
  if (Y.defined()) expect_ieee(Y, r.Y, &r.Ys, kRtol, kAtol, what + " Y");
}

Tensor f32(std::vector<int64_t> shape, double fill = NAN) { return Tensor::full(Shape(shape), DType::F32, fill); }

class NumericExtremesGat : public ::testing::TestWithParam<std::tuple<Backend, bool>> {};

TEST_P(NumericExtremesGat, AttentionForwardAndBackwardMatchAStableSoftmax) {
  const auto [backend, int64] = GetParam();
  for (const auto& [gname, A] : graphs(int64)) {
    for (auto [H, F] : std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {3, 17}}) {
      GatSpec spec{H, F, kSlope, A.index_dtype()};
      GatSpec online = spec;
      online.fused_softmax = FusedSoftmax::Online;
      const GatKernels k(A, spec, backend), ko(A, online, backend, std::nullopt, GatKernelSet::Inference);
      for (const Scores& sc : score_regimes()) {
        const std::string what = fmt::format("{} H={} F={} {}", gname, H, F, sc.name);
        SCOPED_TRACE(what);
        const GatInputs in = gat_inputs(A, sc, H, F, H * 7 + F);
        const GatRef r = gat_reference(A, in, H, F);
        const int64_t m = A.num_rows(), n = A.num_cols(), nnz = A.nnz();
        // Unfused.
        Tensor E = f32({nnz, H}), P = f32({nnz, H}), M = f32({m, H}), S = f32({m, H}), Y = f32({m, H, F});
        k.score(in.XL, in.XR, E);
        expect_ieee(E, r.E, nullptr, 0, 0, "score E");
        k.softmax(E, P, M, S);
        k.aggregate(P, in.X, Y);
        check_forward(r, P, M, S, Y, "unfused");
        // Fused, both forms, and fused keeping E and P.
        for (const GatKernels* kk : {&k, &ko}) {
          Tensor Yf = f32({m, H, F}), Mf = f32({m, H}), Sf = f32({m, H});
          kk->fused(in.XL, in.XR, in.X, Yf, Mf, Sf);
          const std::string form = kk == &k ? "fused two-pass" : "fused online";
          check_forward(r, Tensor(), Mf, Sf, Yf, form);
          // The recompute from the saved row statistics.
          Tensor Er = f32({nnz, H}), Pr = f32({nnz, H});
          k.recompute(in.XL, in.XR, Mf, Sf, Er, Pr);
          expect_ieee(Er, r.E, nullptr, 0, 0, form + " recompute E");
          expect_ieee(Pr, r.P, nullptr, kRtol, kAtol, form + " recompute P");
        }
        Tensor Ys = f32({m, H, F}), Ms = f32({m, H}), Ss = f32({m, H}), Es = f32({nnz, H}), Ps = f32({nnz, H});
        k.fused_saving(in.XL, in.XR, in.X, Ys, Ms, Ss, Es, Ps);
        expect_ieee(Es, r.E, nullptr, 0, 0, "fused saving E");
        check_forward(r, Ps, Ms, Ss, Ys, "fused saving");
        // Backward from the unfused forward's P and E.
        Tensor dP = f32({nnz, H}), dPre = f32({nnz, H}), dXL = f32({m, H}), dXR = f32({n, H}), dX = f32({n, H, F});
        k.attention_grad(in.dY, in.X, dP);
        expect_ieee(dP, r.dP, &r.dPs, kRtol, kAtol, "attention grad dP");
        k.softmax_backward(P, dP, E, dPre, dXL);
        expect_ieee(dPre, r.dPre, &r.dPres, kRtol, kAtol, "softmax backward dPre");
        expect_ieee(dXL, r.dXL, &r.dXLs, kRtol, kAtol, "dXL");
        k.source_grad(dPre, dXR);
        expect_ieee(dXR, r.dXR, &r.dXRs, kRtol, kAtol, "dXR");
        k.aggregate_transposed(P, in.dY, dX);
        expect_ieee(dX, r.dX, &r.dXs, kRtol, kAtol, "dX");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BackendsAndIndices, NumericExtremesGat,
                         ::testing::Combine(::testing::Values(Backend::Generated, Backend::Interpreter),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(backend_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "Int64" : "Int32");
                         });

CpuKnobs small_grain_knobs() {
  CpuKnobs knobs;
  knobs.vector_lanes = host_vector_lanes();
  knobs.grain = 16;  // many tasks on small graphs
  return knobs;
}

// The single-pass programs (score, the softmax as four stages, aggregation, the
// attention gradient) over decomposed formats, whose rows are split over parts
// and padded: the row max over parts must ignore padding slots, and the padding
// slots' zero attention must not meet an infinite X.
TEST(NumericExtremesGatOverFormats, SinglePassProgramsOnHybAndBsr) {
  const std::vector<std::string> formats = {"hyb:c=2,B=2", "bsr:b=2"};
  const int64_t H = 2, F = 5;
  const CpuKnobs knobs = small_grain_knobs();
  for (const bool int64 : {false, true}) {
    const GatSpec s{H, F, kSlope, int64 ? DType::I64 : DType::I32};
    const GatOverFormats g = compile_gat_over_formats(s, formats, knobs);
    for (const auto& [gname, A] : graphs(int64)) {
      for (const Scores& sc : score_regimes()) {
        GatInputs in = gat_inputs(A, sc, H, F, 5);
        // An infinite feature on column 5 (row 0's only neighbour in mixed_degrees):
        // Y = +-inf where a row attends to it, never NaN.
        for (int64_t f = 0; f < F; ++f) in.X.data<float>()[(5 * H + 1) * F + f] = f % 2 ? -INFINITY : INFINITY;
        const GatRef r = gat_reference(A, in, H, F);
        for (size_t fi = 0; fi < formats.size(); ++fi) {
          const InspectedFormat parts = inspect_format(A, FormatSpec::parse(formats[fi]), knobs.grain);
          for (const bool generated : {true, false}) {
            const int64_t m = A.num_rows(), nnz = A.nnz();
            Tensor E = f32({nnz, H}), P = f32({nnz, H}), M = f32({m, H}), S = f32({m, H}), Y = f32({m, H, F}),
                   dP = f32({nnz, H});
            for (size_t k = 0; k < g.programs.size(); ++k) {
              const size_t at = g.at(fi, k);
              KernelArgs a;
              a.buffer("A_indptr", A.indptr()).buffer("A_indices", A.indices());
              a.scalar("m", A.num_rows()).scalar("n", A.num_cols()).scalar("nnz", A.nnz());
              a.buffer("XL", in.XL).buffer("XR", in.XR).buffer("X", in.X).buffer("dY", in.dY).buffer("E", E);
              a.buffer("P", P).buffer("M", M).buffer("S", S).buffer("Y", Y).buffer("dP", dP);
              run_over_format(g.loops[at], generated ? &g.compiled[at] : nullptr, parts, a);
            }
            const std::string what = fmt::format("{} {} {} {} ({})", gname, int64 ? "int64" : "int32", formats[fi],
                                                 sc.name, generated ? "generated" : "interpreted");
            expect_ieee(E, r.E, nullptr, 0, 0, what + " E");
            check_forward(r, P, M, S, Y, what);
            expect_ieee(dP, r.dP, &r.dPs, kRtol, kAtol, what + " dP");
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- SpMM

// Node features [cols, F] of one kind, and edge weights.
struct Values {
  std::string name;
  std::function<float(int64_t j, int64_t f, Rng&)> x;
  std::function<float(int64_t p, Rng&)> w;
  double rtol, atol;  // against the terms' magnitudes
};

const float kTiny = std::numeric_limits<float>::denorm_min();  // 2^-149

std::vector<Values> value_kinds() {
  auto sign = [](Rng& r) { return r.uniform(0, 1) < 0.5 ? -1.0f : 1.0f; };
  return {
      {"large_1e35", [=](int64_t, int64_t, Rng& r) { return sign(r) * float(r.uniform(1e35, 1e36)); },
       [=](int64_t, Rng& r) { return sign(r) * float(r.uniform(0.5, 2)); }, 1e-5, 0},
      // Every sum of two or more overflows: inf (a mean stays finite).
      {"overflow_3e38", [](int64_t, int64_t, Rng&) { return 3e38f; },
       [](int64_t, Rng& r) { return float(r.uniform(0.5, 1)); }, 1e-5, 0},
      // Multiples of the smallest subnormal, weights that keep products exact: every
      // sum is exact (a mean rounds each term to a multiple of 2^-149 first).
      {"subnormal", [](int64_t, int64_t, Rng& r) { return std::floor(float(r.uniform(-200, 200))) * kTiny; },
       [](int64_t p, Rng&) {
         return std::array<float, 4>{1, -1, 2, 4}[p % 4];
       },
       0, 2 * kTiny},
      // +inf, -inf and NaN in some columns (rows reaching +inf and -inf: NaN).
      {"inf_and_nan",
       [](int64_t j, int64_t f, Rng& r) {
         if (j % 11 == 5 && f % 3 == 0) return INFINITY;
         if (j % 13 == 2 && f % 3 != 2) return -INFINITY;
         if (j % 17 == 9 && f % 4 == 1) return NAN;
         return float(r.uniform(-1, 1));
       },
       [=](int64_t, Rng& r) { return sign(r) * float(r.uniform(0.5, 2)); }, 1e-5, 1e-6},
  };
}

Tensor features(const Values& v, int64_t n, int64_t F, Rng& rng) {
  Tensor X = Tensor::empty({n, F}, DType::F32);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t f = 0; f < F; ++f) X.data<float>()[j * F + f] = v.x(j, f, rng);
  return X;
}

// Y = (A ∘ w) X in long double (IEEE: inf * w, inf - inf). A mean scales every
// term by the float 1/deg before summing (the program's row scale is inside the
// sum, in every backend): a mean of values near FLT_MAX stays finite (PyG's
// scatter mean, which sums first, gives inf there), and each subnormal term is
// rounded to a multiple of 2^-149 before the (then exact) sum.
void spmm_reference(const Graph& A, const Tensor& X, const Tensor& w, bool mean, std::vector<LD>& y,
                    std::vector<LD>& scale) {
  const int64_t F = X.dim(1);
  y.assign(static_cast<size_t>(A.num_rows() * F), 0);
  scale = y;
  for (int64_t i = 0; i < A.num_rows(); ++i) {
    const float rs = A.degree(i) ? static_cast<float>(1.0 / static_cast<double>(A.degree(i))) : 0.0f;
    for (int64_t f = 0; f < F; ++f) {
      LD s = 0, a = 0;
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        LD t = (w.defined() ? LD(w.data<float>()[p]) : 1) * X.data<float>()[A.column(p) * F + f];
        if (mean) t = rs * static_cast<float>(t);
        s += t;
        a += std::fabs(t);
      }
      y[i * F + f] = s;
      scale[i * F + f] = a;
    }
  }
}

class NumericExtremesSpmm : public ::testing::TestWithParam<bool> {};

TEST_P(NumericExtremesSpmm, SumMeanAndWeightedOverCsrHybAndBsr) {
  const bool int64 = GetParam();
  const std::vector<std::string> formats = {"csr", "hyb:c=2,B=2", "bsr:b=2"};
  struct Variant {
    std::string name;
    bool weighted, mean;
  };
  const std::vector<Variant> variants = {{"sum", false, false}, {"mean", false, true}, {"weighted", true, false}};
  for (const auto& [gname, A0] : graphs(int64))
    for (const Values& v : value_kinds())
      for (int64_t F : {7, 33}) {
        Rng rng(F);
        Tensor w = Tensor::empty({A0.nnz()}, DType::F32);
        for (int64_t p = 0; p < A0.nnz(); ++p) w.data<float>()[p] = v.w(p, rng);
        const Graph A = A0.with_values(w);
        const Tensor X = features(v, A.num_cols(), F, rng);
        for (const Variant& var : variants) {
          std::vector<LD> want, scale;
          spmm_reference(A, X, var.weighted ? w : Tensor(), var.mean, want, scale);
          const std::string what =
              fmt::format("{} {} {} F={} {}", gname, int64 ? "int64" : "int32", v.name, F, var.name);
          SpmmOptions o;
          o.feat = F;
          o.weighted = var.weighted;
          o.reduce = var.mean ? Reduce::Mean : Reduce::Sum;
          for (const auto& f : formats) {
            o.backend = Backend::Generated;
            KernelPlan plan = SpmmKernel::default_plan(SpmmKernel::spec(A, o));
            plan.format = FormatSpec::parse(f);
            plan.knobs.grain = 16;
            o.plan = plan;
            expect_ieee(SpmmKernel(A, o).run(X), want, &scale, v.rtol, v.atol, what + " generated " + f);
            o.plan.reset();
          }
          for (Backend b : {Backend::Interpreter, Backend::Reference}) {
            o.backend = b;
            expect_ieee(SpmmKernel(A, o).run(X), want, &scale, v.rtol, v.atol, what + " " + backend_name(b) + " csr");
          }
          // The interpreter over the decomposed formats (SpmmKernel interprets the CSR program).
          o.backend = Backend::Generated;
          const SpmmSpec spec = SpmmKernel::spec(A, o);
          for (const std::string f : {"hyb:c=2,B=2", "bsr:b=2"}) {
            const FormatSpec fs = FormatSpec::parse(f);
            const Kernel loops = lower_to_loops(decompose_format(spmm_program(spec), fs));
            Tensor Y = f32({A.num_rows(), F});
            Tensor rs = Tensor::empty({A.num_rows()}, DType::F32);
            for (int64_t i = 0; i < A.num_rows(); ++i)
              rs.data<float>()[i] = A.degree(i) ? static_cast<float>(1.0 / static_cast<double>(A.degree(i))) : 0.0f;
            KernelArgs a;
            a.buffer("A_indptr", A.indptr()).buffer("A_indices", A.indices()).buffer("X", X).buffer("Y", Y);
            a.scalar("m", A.num_rows()).scalar("n", A.num_cols()).scalar("nnz", A.nnz());
            if (spec.weighted) a.buffer("A", w);
            if (spec.row_scale) a.buffer("row_scale", rs);
            run_over_format(loops, nullptr, inspect_format(A, fs, 16), a);
            expect_ieee(Y, want, &scale, v.rtol, v.atol, what + " interpreter " + f);
          }
        }
      }
}

INSTANTIATE_TEST_SUITE_P(IndexWidth, NumericExtremesSpmm, ::testing::Bool(),
                         [](const auto& info) { return info.param ? std::string("Int64") : std::string("Int32"); });

// ---------------------------------------------------------------- max aggregation

// Y[i, f] = max over the neighbours, NaN if any is NaN, 0 for an empty row; C the
// neighbours equal to the maximum (1 for a NaN maximum: the row is not empty);
// dX from G = dY / C shared by the neighbours equal to the maximum (a NaN maximum
// equals nothing and passes no gradient).
TEST(NumericExtremesMaxAggregation, ExtremesInfinitiesAndNaN) {
  std::vector<Values> kinds = value_kinds();
  kinds.push_back({"all_minus_inf", [](int64_t, int64_t, Rng&) { return -INFINITY; }, nullptr, 0, 0});
  kinds.push_back({"nan_first_or_last",
                   [](int64_t j, int64_t f, Rng& r) {
                     return (j == 1 || j == 59 || j == 10) && f == 0 ? NAN : float(r.uniform(-1, 1));
                   },
                   nullptr, 0, 0});
  for (const bool int64 : {false, true})
    for (const auto& [gname, A] : graphs(int64))
      for (const Values& v : kinds)
        for (int64_t F : {1, 19}) {
          Rng rng(F + 3);
          const Tensor X = features(v, A.num_cols(), F, rng), dY = Tensor::uniform({A.num_rows(), F}, -1, 1, rng);
          const int64_t m = A.num_rows();
          std::vector<LD> y(static_cast<size_t>(m * F)), c(y.size()), dx(static_cast<size_t>(A.num_cols() * F), 0);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t f = 0; f < F; ++f) {
              LD mx = -kInf, cnt = 0;
              bool nan = false;
              for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
                const LD x = X.data<float>()[A.column(p) * F + f];
                nan |= std::isnan(x);
                if (!std::isnan(x)) mx = std::max(mx, x);
              }
              for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) cnt += X.data<float>()[A.column(p) * F + f] == mx;
              if (nan) mx = kNaN, cnt = 1;
              y[i * F + f] = A.degree(i) ? mx : 0;
              c[i * F + f] = cnt;
              for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p)
                if (X.data<float>()[A.column(p) * F + f] == mx)
                  dx[A.column(p) * F + f] += LD(dY.data<float>()[i * F + f]) / cnt;
            }
          for (Backend b : {Backend::Generated, Backend::Interpreter}) {
            const std::string what =
                fmt::format("{} {} {} F={} {}", gname, int64 ? "int64" : "int32", v.name, F, backend_name(b));
            const MaxAggregationKernels k(A, F, b);
            Tensor Y = f32({m, F}), C = f32({m, F}), dX = f32({A.num_cols(), F});
            k.forward(X, Y, C);
            expect_ieee(Y, y, nullptr, 0, 0, what + " Y");
            expect_ieee(C, c, nullptr, 0, 0, what + " C");
            k.backward(X, Y, C, dY, dX);
            expect_ieee(dX, dx, nullptr, 1e-6, 1e-6, what + " dX");
          }
        }
}

// ---------------------------------------------------------------- SDDMM

TEST(NumericExtremesSddmm, LargeCancellingAndOverflowingDotProducts) {
  const int64_t F = 19;
  struct Kind {
    std::string name;
    std::function<float(int64_t node, int64_t f, bool left, Rng&)> x;
  };
  const std::vector<Kind> kinds = {
      {"large_1e17", [](int64_t, int64_t, bool, Rng& r) { return float(r.uniform(-1e18, 1e18)); }},
      // X[i] = (s, -s, small...), Y[j] = (t, t, small...): the first two terms cancel exactly.
      {"cancelling",
       [](int64_t node, int64_t f, bool left, Rng& r) {
         const float big = float(1e6 * (1 + node % 7)) + float(r.uniform(0, 1));
         if (f < 2) return left ? (f == 0 ? big : -big) : big;
         return float(r.uniform(-1, 1));
       }},
      {"overflow", [](int64_t, int64_t f, bool, Rng&) { return f < 3 ? 2e19f : 1.0f; }},
      // inf * 0 = NaN where a column has 0 against an inf; inf elsewhere.
      {"inf_times_zero",
       [](int64_t node, int64_t f, bool left, Rng& r) {
         if (left && f == 0) return INFINITY;
         if (!left && f == 0) return node % 3 == 0 ? 0.0f : float(r.uniform(0.5, 1));
         return float(r.uniform(-1, 1));
       }},
  };
  for (const bool int64 : {false, true})
    for (const auto& [gname, A] : graphs(int64))
      for (const Kind& kind : kinds) {
        Rng rng(7);
        Tensor X = Tensor::empty({A.num_rows(), F}, DType::F32), Y = Tensor::empty({A.num_cols(), F}, DType::F32);
        for (int64_t i = 0; i < A.num_rows(); ++i)
          for (int64_t f = 0; f < F; ++f) X.data<float>()[i * F + f] = kind.x(i, f, true, rng);
        for (int64_t j = 0; j < A.num_cols(); ++j)
          for (int64_t f = 0; f < F; ++f) Y.data<float>()[j * F + f] = kind.x(j, f, false, rng);
        std::vector<LD> want(static_cast<size_t>(A.nnz())), scale(want.size());
        for (int64_t i = 0; i < A.num_rows(); ++i)
          for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
            LD s = 0, a = 0;
            for (int64_t f = 0; f < F; ++f) {
              const LD t = LD(X.data<float>()[i * F + f]) * Y.data<float>()[A.column(p) * F + f];
              s += t;
              a += std::fabs(t);
            }
            want[p] = s;
            scale[p] = a;
          }
        const std::string what = fmt::format("{} {} {}", gname, int64 ? "int64" : "int32", kind.name);
        for (const std::string f : {"csr", "hyb:c=2,B=2"}) {
          SddmmOptions o;
          o.feat = F;
          KernelPlan plan = SddmmKernel::default_plan();
          plan.format = FormatSpec::parse(f);
          plan.knobs.grain = 16;
          o.plan = plan;
          // Error bound of a float dot product of F terms: F eps times the terms' magnitudes.
          expect_ieee(SddmmKernel(A, o).run(X, Y), want, &scale, F * 6e-8, 0, what + " generated " + f);
        }
        SddmmOptions o;
        o.feat = F;
        o.backend = Backend::Interpreter;
        expect_ieee(SddmmKernel(A, o).run(X, Y), want, &scale, F * 6e-8, 0, what + " interpreter");
      }
}

// ---------------------------------------------------------------- RGMS

TEST(NumericExtremesRgms, EveryOrderWithLargeAndInfiniteInputs) {
  for (const bool int64 : {false, true}) {
    std::vector<Graph> rels;
    for (int r = 0; r < 3; ++r) {
      testing::RandomGraphSpec s;
      s.rows = s.cols = 70;
      s.avg_degree = 1 + r;
      s.empty_row_fraction = 0.3;
      s.long_row_length = r == 1 ? 40 : 0;
      s.seed = 40 + r;
      rels.push_back(testing::random_graph(s));
    }
    RelationalGraph g = RelationalGraph::build(70, 70, rels, RgmsNormalization::RightByRelation, 16);
    if (int64) {
      g.index_dtype = DType::I64;
      for (Tensor* t : {&g.rel_rows, &g.col_ids, &g.src_ids, &g.jloc}) *t = t->cast(DType::I64);
    }
    const int64_t fin = 16, fout = 5;
    Rng rng(3);
    const Tensor W = Tensor::uniform({g.relations, fin, fout}, 0.5, 2, rng);  // positive: no inf - inf
    for (const bool inf : {false, true}) {
      Tensor X = Tensor::uniform({g.cols, fin}, 1e34, 1e35, rng);
      if (inf)
        for (int64_t j = 0; j < g.cols; j += 9) X.data<float>()[j * fin + 3] = INFINITY;
      // Dense: Y[i] = sum over relations, pairs and non-zeros of a X[src] W_r.
      std::vector<LD> want(static_cast<size_t>(g.rows * fout), 0), scale(want.size(), 0);
      const Tensor rel_ptr = g.rel_ptr.cast(DType::I64), rel_rows = g.rel_rows.cast(DType::I64),
                   row_ptr = g.row_ptr.cast(DType::I64), col_ids = g.col_ids.cast(DType::I64);
      for (int64_t r = 0; r < g.relations; ++r)
        for (int64_t q = rel_ptr.data<int64_t>()[r]; q < rel_ptr.data<int64_t>()[r + 1]; ++q)
          for (int64_t p = row_ptr.data<int64_t>()[q]; p < row_ptr.data<int64_t>()[q + 1]; ++p)
            for (int64_t b = 0; b < fout; ++b)
              for (int64_t a = 0; a < fin; ++a) {
                const LD t = LD(g.values.data<float>()[p]) * X.data<float>()[col_ids.data<int64_t>()[p] * fin + a] *
                             W.data<float>()[(r * fin + a) * fout + b];
                want[rel_rows.data<int64_t>()[q] * fout + b] += t;
                scale[rel_rows.data<int64_t>()[q] * fout + b] += std::fabs(t);
              }
      for (Backend b : {Backend::Generated, Backend::Interpreter})
        for (RgmsOrder order : {RgmsOrder::Fused, RgmsOrder::AggregateFirst, RgmsOrder::TransformFirst,
                                RgmsOrder::AggregateFirstEll3d, RgmsOrder::Mixed}) {
          RgmsKernels k(g, {fin, fout, g.index_dtype}, order, b);
          Tensor Y = f32({g.rows, fout});
          k.forward(X, W, Y);
          expect_ieee(Y, want, &scale, 1e-5, 0,
                      fmt::format("{} {} {} {}", int64 ? "int64" : "int32", inf ? "inf" : "large",
                                  rgms_order_name(order), backend_name(b)));
        }
    }
  }
}

}  // namespace
}  // namespace strata::sc
