// GAT kernels against dense references: score, softmax, aggregation, the fused
// online-softmax forward, and every backward piece, generated and interpreted,
// on graphs with empty rows, a long row and isolated nodes.
#include "sparse_compiler/ops/attention.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

#include "core/file_util.h"
#include "core/rng.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/formats/format_schedule.h"
#include "sparse_compiler/formats/inspected_format.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/passes/pipeline.h"
#include "tests/sparse_compiler/gat_over_formats.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

struct Ref {
  Tensor E, P, M, S, Y;
};

Ref reference_forward(const Graph& A, const Tensor& XL, const Tensor& XR, const Tensor& X, int64_t H, int64_t F,
                      double slope) {
  Ref r;
  r.E = Tensor::zeros({A.nnz(), H}, DType::F32);
  r.P = Tensor::zeros({A.nnz(), H}, DType::F32);
  r.M = Tensor::zeros({A.num_rows(), H}, DType::F32);
  r.S = Tensor::zeros({A.num_rows(), H}, DType::F32);
  r.Y = Tensor::zeros({A.num_rows(), H, F}, DType::F32);
  for (int64_t i = 0; i < A.num_rows(); ++i)
    for (int64_t h = 0; h < H; ++h) {
      double mx = -INFINITY, sum = 0;
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        double x = double(XL.at<float>(i * H + h)) + XR.at<float>(A.column(p) * H + h);
        double e = x > 0 ? x : slope * x;
        r.E.at<float>(p * H + h) = static_cast<float>(e);
        mx = std::max(mx, e);
      }
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) sum += std::exp(r.E.at<float>(p * H + h) - mx);
      r.M.at<float>(i * H + h) = static_cast<float>(mx);
      r.S.at<float>(i * H + h) = static_cast<float>(sum);
      for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
        const double a = std::exp(r.E.at<float>(p * H + h) - mx) / sum;
        r.P.at<float>(p * H + h) = static_cast<float>(a);
        for (int64_t f = 0; f < F; ++f) r.Y.at<float>((i * H + h) * F + f) += static_cast<float>(a * X.at<float>((A.column(p) * H + h) * F + f));
      }
    }
  return r;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double tol = 1e-4) {
  CloseReport rep = all_close(got, want, tol, tol);
  EXPECT_TRUE(rep.ok) << what << ": " << rep.str();
}

std::vector<std::pair<std::string, Graph>> graphs() {
  testing::RandomGraphSpec s;
  s.rows = 70;
  s.cols = 70;
  s.avg_degree = 5;
  s.empty_row_fraction = 0.2;
  s.long_row_length = 60;
  s.seed = 3;
  CooOptions o;
  return {{"random", testing::random_graph(s)},
          {"isolated", Graph::from_coo(12, 12, Tensor::from_list<int64_t>({2, 2, 7}), Tensor::from_list<int64_t>({0, 11, 7}), o)}};
}

// A backend, and for generated code the prefetch distance of gathered rows (0:
// the untuned knobs, which leave these small graphs without prefetch).
struct GatCase {
  Backend backend;
  int64_t prefetch;
};

void PrintTo(const GatCase& c, std::ostream* os) { *os << backend_name(c.backend) << ", prefetch " << c.prefetch; }

class GatKernelsTest : public ::testing::TestWithParam<GatCase> {};

TEST_P(GatKernelsTest, ForwardAndBackwardMatchDenseReferences) {
  const Backend backend = GetParam().backend;
  std::optional<CpuKnobs> knobs;
  if (GetParam().prefetch > 0) {
    knobs = CpuKnobs{};
    knobs->vector_lanes = host_vector_lanes();
    knobs->prefetch = GetParam().prefetch;  // past the end of rows and of the graph: clamped
  }
  for (const auto& [name, A] : graphs()) {
    for (auto [H, F] : std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {8, 8}, {3, 17}}) {
      const double slope = 0.2;
      GatKernels k(A, {H, F, slope, A.index_dtype()}, backend, knobs);
      Rng rng(H * 31 + F);
      Tensor XL = Tensor::uniform({A.num_rows(), H}, -2, 2, rng), XR = Tensor::uniform({A.num_cols(), H}, -2, 2, rng);
      Tensor X = Tensor::uniform({A.num_cols(), H, F}, -1, 1, rng);
      const Ref ref = reference_forward(A, XL, XR, X, H, F, slope);
      const std::string what = name + " H=" + std::to_string(H) + " F=" + std::to_string(F);
      Tensor E = Tensor::empty({A.nnz(), H}, DType::F32), P = Tensor::empty({A.nnz(), H}, DType::F32);
      Tensor M = Tensor::empty({A.num_rows(), H}, DType::F32), S = Tensor::empty({A.num_rows(), H}, DType::F32);
      Tensor Y = Tensor::empty({A.num_rows(), H, F}, DType::F32);
      k.score(XL, XR, E);
      expect_close(E, ref.E, what + " score");
      k.softmax(E, P, M, S);
      expect_close(P, ref.P, what + " softmax");
      k.aggregate(P, X, Y);
      expect_close(Y, ref.Y, what + " aggregate");
      // Fused: same output, same saved row statistics.
      Tensor Yf = Tensor::full({A.num_rows(), H, F}, DType::F32, NAN);
      Tensor Mf = Tensor::empty({A.num_rows(), H}, DType::F32), Sf = Tensor::empty({A.num_rows(), H}, DType::F32);
      k.fused(XL, XR, X, Yf, Mf, Sf);
      expect_close(Yf, ref.Y, what + " fused");
      expect_close(Sf, ref.S, what + " fused S");
      {  // The online form of the fused forward: the same outputs.
        GatSpec online{H, F, slope, A.index_dtype()};
        online.fused_softmax = FusedSoftmax::Online;
        GatKernels ko(A, online, backend, knobs);
        Tensor Yo = Tensor::full({A.num_rows(), H, F}, DType::F32, NAN);
        Tensor Mo = Tensor::empty({A.num_rows(), H}, DType::F32), So = Tensor::empty({A.num_rows(), H}, DType::F32);
        ko.fused(XL, XR, X, Yo, Mo, So);
        expect_close(Yo, ref.Y, what + " fused online");
        expect_close(So, ref.S, what + " fused online S");
        Tensor Eo = Tensor::empty({A.nnz(), H}, DType::F32), Po = Tensor::empty({A.nnz(), H}, DType::F32);
        ko.recompute(XL, XR, Mo, So, Eo, Po);  // its saved row max serves the backward alike
        expect_close(Po, ref.P, what + " recompute after fused online");
      }
      {  // Fused, keeping scores and attention for the backward.
        Tensor Ys = Tensor::full({A.num_rows(), H, F}, DType::F32, NAN);
        Tensor Es = Tensor::full({A.nnz(), H}, DType::F32, NAN), Ps = Tensor::full({A.nnz(), H}, DType::F32, NAN);
        Tensor Ms = Tensor::empty({A.num_rows(), H}, DType::F32), Ss = Tensor::empty({A.num_rows(), H}, DType::F32);
        k.fused_saving(XL, XR, X, Ys, Ms, Ss, Es, Ps);
        expect_close(Ys, ref.Y, what + " fused saving");
        expect_close(Es, ref.E, what + " fused saving E");
        expect_close(Ps, ref.P, what + " fused saving P");
        expect_close(Ss, ref.S, what + " fused saving S");
      }
      Tensor E2 = Tensor::empty({A.nnz(), H}, DType::F32), P2 = Tensor::empty({A.nnz(), H}, DType::F32);
      k.recompute(XL, XR, Mf, Sf, E2, P2);
      expect_close(P2, ref.P, what + " recompute");
      // Backward against dense formulas.
      Tensor dY = Tensor::uniform({A.num_rows(), H, F}, -1, 1, rng);
      Tensor dP = Tensor::empty({A.nnz(), H}, DType::F32);
      k.attention_grad(dY, X, dP);
      Tensor dPre = Tensor::empty({A.nnz(), H}, DType::F32), dXL = Tensor::empty({A.num_rows(), H}, DType::F32);
      k.softmax_backward(P, dP, E, dPre, dXL);
      Tensor dXR = Tensor::empty({A.num_cols(), H}, DType::F32), dX = Tensor::empty({A.num_cols(), H, F}, DType::F32);
      k.source_grad(dPre, dXR);
      k.aggregate_transposed(P, dY, dX);
      Tensor wdP = Tensor::zeros({A.nnz(), H}, DType::F32), wdPre = Tensor::zeros({A.nnz(), H}, DType::F32);
      Tensor wdXL = Tensor::zeros({A.num_rows(), H}, DType::F32), wdXR = Tensor::zeros({A.num_cols(), H}, DType::F32);
      Tensor wdX = Tensor::zeros({A.num_cols(), H, F}, DType::F32);
      for (int64_t i = 0; i < A.num_rows(); ++i)
        for (int64_t h = 0; h < H; ++h) {
          double dot = 0;
          for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
            double g = 0;
            for (int64_t f = 0; f < F; ++f) g += double(dY.at<float>((i * H + h) * F + f)) * X.at<float>((A.column(p) * H + h) * F + f);
            wdP.at<float>(p * H + h) = static_cast<float>(g);
            dot += g * ref.P.at<float>(p * H + h);
            for (int64_t f = 0; f < F; ++f)
              wdX.at<float>((A.column(p) * H + h) * F + f) += ref.P.at<float>(p * H + h) * dY.at<float>((i * H + h) * F + f);
          }
          for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p) {
            const double e = ref.E.at<float>(p * H + h);
            const double g = ref.P.at<float>(p * H + h) * (wdP.at<float>(p * H + h) - dot) * (e > 0 ? 1.0 : slope);
            wdPre.at<float>(p * H + h) = static_cast<float>(g);
            wdXL.at<float>(i * H + h) += static_cast<float>(g);
            wdXR.at<float>(A.column(p) * H + h) += static_cast<float>(g);
          }
        }
      expect_close(dP, wdP, what + " attention grad");
      expect_close(dPre, wdPre, what + " softmax backward");
      expect_close(dXL, wdXL, what + " dXL");
      expect_close(dXR, wdXR, what + " dXR");
      expect_close(dX, wdX, what + " dX");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GatKernelsTest,
                         ::testing::Values(GatCase{Backend::Generated, 0}, GatCase{Backend::Generated, 3},
                                           GatCase{Backend::Interpreter, 0}),
                         [](const auto& info) {
                           return std::string(backend_name(info.param.backend)) +
                                  (info.param.prefetch ? "Prefetch" + std::to_string(info.param.prefetch) : "");
                         });

TEST(GatKernels, LeakyReluIsAMaxOrMinWithoutABranchForEverySlope) {
  const Graph A = graphs().front().second;
  for (const double slope : {0.2, 0.0, 1.0, 1.5, -0.3}) {
    const GatSpec s{1, 4, slope, A.index_dtype()};
    // max(x, slope·x) for slopes up to 1, min above (slope 1 simplifies to x): no
    // comparison left in the score for a one-head loop to branch on.
    const std::string text = to_string(lower_to_loops(gat_score_program(s)));
    if (slope != 1) {
      EXPECT_NE(text.find(slope < 1 ? "max(" : "min("), std::string::npos) << text;
    }
    EXPECT_EQ(text.find("select("), std::string::npos) << text;
    GatKernels k(A, s);
    Rng rng(5);
    Tensor XL = Tensor::uniform({A.num_rows(), 1}, -2, 2, rng), XR = Tensor::uniform({A.num_cols(), 1}, -2, 2, rng);
    Tensor X = Tensor::uniform({A.num_cols(), 1, 4}, -1, 1, rng);
    const Ref ref = reference_forward(A, XL, XR, X, 1, 4, slope);
    Tensor E = Tensor::empty({A.nnz(), 1}, DType::F32);
    k.score(XL, XR, E);
    expect_close(E, ref.E, fmt::format("score, slope {}", slope));
    Tensor Y = Tensor::empty({A.num_rows(), 1, 4}, DType::F32), M = Tensor::empty({A.num_rows(), 1}, DType::F32),
           S = Tensor::empty({A.num_rows(), 1}, DType::F32);
    k.fused(XL, XR, X, Y, M, S);
    expect_close(Y, ref.Y, fmt::format("fused, slope {}", slope));
  }
}

TEST(GatKernels, FusedForwardsCompileOnFirstUse) {
  // A layer with tuning off never runs them: they compile when first called, all
  // three forms in one batch, and the code key covers them from the start.
  const Graph A = graphs().front().second;
  GatKernels k(A, {2, 3, 0.2, A.index_dtype()});
  EXPECT_FALSE(k.fused_compiled());
  const std::string key = k.code_key();
  Rng rng(2);
  Tensor XL = Tensor::uniform({A.num_rows(), 2}, -1, 1, rng), XR = Tensor::uniform({A.num_cols(), 2}, -1, 1, rng);
  Tensor X = Tensor::uniform({A.num_cols(), 2, 3}, -1, 1, rng);
  Tensor Y = Tensor::empty({A.num_rows(), 2, 3}, DType::F32), M = Tensor::empty({A.num_rows(), 2}, DType::F32),
         S = Tensor::empty({A.num_rows(), 2}, DType::F32);
  k.fused(XL, XR, X, Y, M, S, FusedSoftmax::Online);
  EXPECT_TRUE(k.fused_compiled());
  EXPECT_EQ(k.code_key(), key);
  expect_close(Y, reference_forward(A, XL, XR, X, 2, 3, 0.2).Y, "fused online after compiling on first use");
  // A different fused program gives a different key.
  GatSpec other{2, 3, 0.3, A.index_dtype()};
  EXPECT_NE(GatKernels(A, other).code_key(), key);
}

// Evaluation and inference build the forwards only: the same code as a training
// set's forwards (same results bit for bit, same code key, so they share tuning
// records), and every backward piece refused by name.
TEST(GatKernels, InferenceSetRunsTheForwardsOfTheTrainingSetAndRefusesTheBackward) {
  const Graph A = graphs().front().second;
  const GatSpec spec{2, 5, 0.2, A.index_dtype()};
  for (Backend backend : {Backend::Generated, Backend::Reference}) {
    SCOPED_TRACE(backend_name(backend));
    GatKernels train(A, spec, backend), infer(A, spec, backend, std::nullopt, GatKernelSet::Inference);
    EXPECT_EQ(infer.kernel_set(), GatKernelSet::Inference);
    EXPECT_EQ(train.kernel_set(), GatKernelSet::Training);
    EXPECT_EQ(infer.code_key(), train.code_key());
    EXPECT_EQ(infer.describe(), fmt::format("gat h2_f5_s0.2_i32 ({}, forwards only)", backend_name(backend)));
    EXPECT_EQ(train.describe(), fmt::format("gat h2_f5_s0.2_i32 ({})", backend_name(backend)));
    Rng rng(11);
    const int64_t n = A.num_rows(), nnz = A.nnz();
    Tensor XL = Tensor::uniform({n, 2}, -1, 1, rng), XR = Tensor::uniform({n, 2}, -1, 1, rng);
    Tensor X = Tensor::uniform({n, 2, 5}, -1, 1, rng);
    auto unfused = [&](const GatKernels& k) {
      Tensor E = Tensor::full({nnz, 2}, DType::F32, NAN), P = Tensor::full({nnz, 2}, DType::F32, NAN);
      Tensor M = Tensor::full({n, 2}, DType::F32, NAN), S = Tensor::full({n, 2}, DType::F32, NAN);
      Tensor Y = Tensor::full({n, 2, 5}, DType::F32, NAN);
      k.score(XL, XR, E);
      k.softmax(E, P, M, S);
      k.aggregate(P, X, Y);
      return std::vector<Tensor>{E, P, M, S, Y};
    };
    auto fused = [&](const GatKernels& k, FusedSoftmax form) {
      Tensor Y = Tensor::full({n, 2, 5}, DType::F32, NAN), M = Tensor::full({n, 2}, DType::F32, NAN),
             S = Tensor::full({n, 2}, DType::F32, NAN);
      k.fused(XL, XR, X, Y, M, S, form);
      return std::vector<Tensor>{Y, M, S};
    };
    const std::vector<Tensor> a = unfused(infer), b = unfused(train);
    // Bit for bit (empty rows' maxima are -inf, which a tolerance check refuses).
    auto same_bits = [](const Tensor& x, const Tensor& y) {
      return x.numel() == y.numel() && std::memcmp(x.data<float>(), y.data<float>(), x.numel() * sizeof(float)) == 0;
    };
    for (size_t t = 0; t < a.size(); ++t) EXPECT_TRUE(same_bits(a[t], b[t])) << "unfused output " << t;
    for (FusedSoftmax form : {FusedSoftmax::TwoPass, FusedSoftmax::Online}) {
      const std::vector<Tensor> c = fused(infer, form), d = fused(train, form);
      for (size_t t = 0; t < c.size(); ++t)
        EXPECT_TRUE(same_bits(c[t], d[t])) << (form == FusedSoftmax::Online ? "online" : "two-pass") << " output " << t;
    }
    expect_close(a[4], reference_forward(A, XL, XR, X, 2, 5, 0.2).Y, "inference set, unfused");
    // Each backward piece, and the fused forward that keeps E and P for one.
    Tensor E = a[0], P = a[1], M = a[2], S = a[3];
    Tensor dY = Tensor::uniform({n, 2, 5}, -1, 1, rng), dP = Tensor::empty({nnz, 2}, DType::F32);
    Tensor dPre = Tensor::empty({nnz, 2}, DType::F32), dXL = Tensor::empty({n, 2}, DType::F32);
    Tensor dXR = Tensor::empty({n, 2}, DType::F32), dX = Tensor::empty({n, 2, 5}, DType::F32);
    Tensor Y = Tensor::empty({n, 2, 5}, DType::F32);
    const std::vector<std::pair<std::string, std::function<void()>>> refused = {
        {"fused-saving", [&] { infer.fused_saving(XL, XR, X, Y, M, S, E, P); }},
        {"recompute", [&] { infer.recompute(XL, XR, M, S, E, P); }},
        {"attention grad", [&] { infer.attention_grad(dY, X, dP); }},
        {"softmax backward", [&] { infer.softmax_backward(P, P, E, dPre, dXL); }},
        {"source grad", [&] { infer.source_grad(dPre, dXR); }},
        {"aggregate-transposed", [&] { infer.aggregate_transposed(P, dY, dX); }}};
    for (const auto& [name, call] : refused)
      testing::expect_user_error(call, {"gat: the " + name +
                                        " kernel is not in this inference kernel set (forwards "
                                        "only); build the layer's kernels for training to run its backward"});
  }
}

// The products set (layers/pair_scores.h) holds the per-head SDDMM and the two
// aggregations: the same results bit for bit as a training set's, the rest refused.
TEST(GatKernels, ProductsSetRunsTheSddmmAndAggregationsOfTheTrainingSet) {
  const Graph A = graphs().front().second;
  const GatSpec spec{6, 1, 0.2, A.index_dtype()};
  for (Backend backend : {Backend::Generated, Backend::Reference}) {
    SCOPED_TRACE(backend_name(backend));
    GatKernels train(A, spec, backend), products(A, spec, backend, std::nullopt, GatKernelSet::Products);
    EXPECT_EQ(products.describe(), fmt::format("gat h6_f1_s0.2_i32 ({}, per-head products)", backend_name(backend)));
    EXPECT_EQ(products.code_key(), train.code_key());
    Rng rng(12);
    const int64_t n = A.num_rows(), nnz = A.nnz();
    const Tensor X = Tensor::uniform({n, 6, 1}, -1, 1, rng), G = Tensor::uniform({nnz, 6}, -1, 1, rng);
    auto run = [&](const GatKernels& k) {
      Tensor Z = Tensor::empty({nnz, 6}, DType::F32), Y = Tensor::empty({n, 6, 1}, DType::F32),
             Yt = Tensor::empty({n, 6, 1}, DType::F32);
      k.attention_grad(X, X, Z);
      k.aggregate(G, X, Y);
      k.aggregate_transposed(G, X, Yt);
      return std::vector<Tensor>{Z, Y, Yt};
    };
    const std::vector<Tensor> a = run(products), b = run(train);
    for (size_t t = 0; t < a.size(); ++t)
      EXPECT_EQ(std::memcmp(a[t].data<float>(), b[t].data<float>(), a[t].numel() * sizeof(float)), 0) << "output " << t;
    // Z[e, h] = X[i, h] X[j, h] in A's CSR order.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = A.row_begin(i); e < A.row_end(i); ++e)
        for (int64_t h = 0; h < 6; ++h)
          ASSERT_FLOAT_EQ(a[0].data<float>()[e * 6 + h],
                          X.data<float>()[i * 6 + h] * X.data<float>()[A.column(e) * 6 + h]);
    Tensor XL = Tensor::zeros({n, 6}, DType::F32), E = Tensor::empty({nnz, 6}, DType::F32);
    testing::expect_user_error([&] { products.score(XL, XL, E); },
                               {"gat: the score kernel is not in this products kernel set (the per-head SDDMM and "
                                "aggregations only)"});
  }
}

TEST(GatKernels, RowsGatheredThroughAnIndexArePrefetched) {
  GatSpec s{8, 8, 0.2, DType::I32};
  CpuKnobs k;
  k.vector_lanes = 16;
  k.prefetch = 16;
  auto scheduled = [&](const Kernel& program) {
    return to_string(lower_schedule(schedule_row_program_cpu(lower_to_loops(program), k)));
  };
  // The aggregation over Aᵀ gathers X's rows (4 cache lines of 64 floats) and the
  // edge probabilities through the edge-id map; both 16 edges ahead, clamped to the graph.
  const std::string agg = scheduled(gat_aggregate_program(s, true));
  for (const char* line : {"", " + 16", " + 32", " + 48"})
    EXPECT_NE(agg.find(fmt::format("prefetch(X[int64(A_indices[min(j + 16, nnz - 1)]) * 64{}])", line)), std::string::npos)
        << agg;
  EXPECT_EQ(agg.find("* 64 + 64])"), std::string::npos) << agg;
  EXPECT_NE(agg.find("prefetch(P[eid[min(j + 16, nnz - 1)] * 8])"), std::string::npos) << agg;
  // Rows read at the edge's own position stream; nothing to prefetch.
  const std::string softmax = scheduled(edge_softmax_program(s));
  EXPECT_EQ(softmax.find("prefetch("), std::string::npos) << softmax;
  EXPECT_EQ(agg.find("prefetch(Y"), std::string::npos) << agg;
  // The fused forward prefetches in both of its edge loops (the max pass, j_1, and
  // the softmax sum fused with the aggregation, j2: names fuse_row_loops gave).
  const std::string fused = scheduled(gat_fused_program(s));
  EXPECT_NE(fused.find("prefetch(XR[int64(A_indices[min(j_1 + 16, nnz - 1)]) * 8])"), std::string::npos) << fused;
  EXPECT_NE(fused.find("prefetch(X[int64(A_indices[min(j2 + 16, nnz - 1)]) * 64"), std::string::npos) << fused;
}

TEST(GatKernels, FusedProgramsKeepScoresAndTheirScratchInRegisters) {
  for (const FusedSoftmax form : {FusedSoftmax::TwoPass, FusedSoftmax::Online}) {
    GatSpec s{8, 8, 0.2, DType::I32};
    s.fused_softmax = form;
    CpuKnobs k;
    k.vector_lanes = 16;
    const Kernel lowered = lower_schedule(schedule_row_program_cpu(lower_to_loops(gat_fused_program(s)), k));
    const std::string text = to_string(lowered);
    // One parallel loop over row chunks; the row max and sum in registers.
    EXPECT_NE(text.find("parallel (i_chunk"), std::string::npos) << text;
    EXPECT_NE(text.find("M_local"), std::string::npos) << text;
    EXPECT_NE(text.find("S_local"), std::string::npos) << text;
    EXPECT_EQ(text.find("E["), std::string::npos) << "scores must not go to memory";
    // The per-edge weights (the attention P contracted to one edge's scratch, and
    // the online form's rescale factors) are computed for all 8 heads as one
    // vector and never stored: no scratch parameter is left.
    EXPECT_NE(text.find("let p = exp("), std::string::npos) << text;
    EXPECT_NE(text.find("P_edge_local[ramp(0, 1, 8)] = p"), std::string::npos) << text;
    if (form == FusedSoftmax::Online) {
      EXPECT_NE(text.find("M_scale_local[ramp(0, 1, 8)] = exp("), std::string::npos) << text;
    }
    for (const auto& p : lowered.params) EXPECT_NE(p.role, ParamRole::Workspace) << p.name << " in\n" << text;
    EXPECT_EQ(text.find("P_edge["), std::string::npos) << text;
    EXPECT_EQ(text.find("M_scale["), std::string::npos) << text;
  }
}

// GAT's single-pass programs over every format: score, edge softmax as its four
// stages, aggregation and the attention gradient, decomposed into each format's
// parts (edge tensors through the slot -> edge-id maps; rows split over parts and
// padding slots included), generated and interpreted, against the dense reference.
TEST(GatOverFormats, SinglePassProgramsMatchTheDenseReferenceOnEveryFormat) {
  const std::vector<std::string> formats = {"coo",     "dcsr",    "dcsr:cols=8", "ell:w=4",     "ell:w=1",
                                            "bsr:b=2", "bsr:b=3", "hyb:c=1,B=3", "hyb:c=2,B=2", "hyb:c=3,B=0"};
  const int64_t H = 3, F = 5;
  CpuKnobs knobs;
  knobs.vector_lanes = host_vector_lanes();
  knobs.grain = 16;  // many tasks on small graphs
  for (const bool int64 : {false, true}) {
    const DType idt = int64 ? DType::I64 : DType::I32;
    const GatSpec s{H, F, 0.2, idt};
    // Every (format, program) lowered and scheduled, then compiled in one batch.
    const GatOverFormats g = compile_gat_over_formats(s, formats, knobs);
    std::vector<std::pair<std::string, Graph>> gs = graphs();
    if (int64)
      for (auto& [name, g] : gs) g = g.with_index_dtype(DType::I64);
    for (const auto& [gname, A] : gs) {
      ASSERT_EQ(A.index_dtype(), idt);
      Rng rng(9);
      Tensor XL = Tensor::uniform({A.num_rows(), H}, -2, 2, rng), XR = Tensor::uniform({A.num_cols(), H}, -2, 2, rng);
      Tensor X = Tensor::uniform({A.num_cols(), H, F}, -1, 1, rng), dY = Tensor::uniform({A.num_rows(), H, F}, -1, 1, rng);
      const Ref ref = reference_forward(A, XL, XR, X, H, F, 0.2);
      Tensor wdP = Tensor::zeros({A.nnz(), H}, DType::F32);
      for (int64_t i = 0; i < A.num_rows(); ++i)
        for (int64_t p = A.row_begin(i); p < A.row_end(i); ++p)
          for (int64_t h = 0; h < H; ++h) {
            double g = 0;
            for (int64_t f = 0; f < F; ++f) g += dY.at<float>((i * H + h) * F + f) * X.at<float>((A.column(p) * H + h) * F + f);
            wdP.at<float>(p * H + h) = static_cast<float>(g);
          }
      for (size_t fi = 0; fi < formats.size(); ++fi) {
        const InspectedFormat parts = inspect_format(A, FormatSpec::parse(formats[fi]), knobs.grain);
        for (const bool generated : {true, false}) {
          Tensor E = Tensor::full({A.nnz(), H}, DType::F32, NAN), P = Tensor::full({A.nnz(), H}, DType::F32, NAN);
          Tensor M = Tensor::full({A.num_rows(), H}, DType::F32, NAN), S = Tensor::full({A.num_rows(), H}, DType::F32, NAN);
          Tensor Y = Tensor::full({A.num_rows(), H, F}, DType::F32, NAN), dP = Tensor::full({A.nnz(), H}, DType::F32, NAN);
          for (size_t k = 0; k < g.programs.size(); ++k) {
            const size_t at = g.at(fi, k);
            KernelArgs a;
            a.buffer("A_indptr", A.indptr()).buffer("A_indices", A.indices());
            a.scalar("m", A.num_rows()).scalar("n", A.num_cols()).scalar("nnz", A.nnz());
            a.buffer("XL", XL).buffer("XR", XR).buffer("X", X).buffer("dY", dY).buffer("E", E).buffer("P", P);
            a.buffer("M", M).buffer("S", S).buffer("Y", Y).buffer("dP", dP);
            run_over_format(g.loops[at], generated ? &g.compiled[at] : nullptr, parts, a);
          }
          const std::string what = fmt::format("{} {} {} ({})", gname, int64 ? "int64" : "int32", formats[fi],
                                               generated ? "generated" : "interpreted");
          expect_close(E, ref.E, what + " score");
          expect_close(P, ref.P, what + " softmax");
          expect_close(S, ref.S, what + " softmax row sums");
          expect_close(Y, ref.Y, what + " aggregate");
          expect_close(dP, wdP, what + " attention grad");
        }
      }
    }
  }
}

TEST(GatOverFormats, RowProgramsAreRefusedNamingTheSinglePassOnes) {
  const GatSpec s{2, 4, 0.2, DType::I32};
  testing::expect_user_error([&] { (void)gat_program_over(edge_softmax_program(s), FormatSpec::parse("hyb:c=2,B=2")); },
                             {"gat over hyb:c=2,B=2: edge_softmax_h2_f4_s0p2_i32 works on a row's edges in several passes",
                              "softmax_max, softmax_exp, softmax_sum, softmax_norm"});
  // CSR keeps every program as written.
  const Kernel fused = gat_fused_program(s);
  EXPECT_TRUE(gat_program_over(fused, FormatSpec::csr()).body.same_as(fused.body));
}

}  // namespace
}  // namespace strata::sc

#include "sparse_compiler/tune/gat_tuner.h"

namespace strata::sc {
namespace {

Graph tuner_graph(int64_t nodes, double avg_degree) {
  testing::RandomGraphSpec s;
  s.rows = s.cols = nodes;
  s.avg_degree = avg_degree;
  return testing::random_graph(s);
}

TEST(GatTuner, MeasuresBothFusedFormsAndUnfusedAndPicksTheFaster) {
  const Graph A = tuner_graph(500, 8);
  GatKernels k(A, {4, 8, 0.2, A.index_dtype()});
  const GatTuneResult r = tune_gat(k, false, 0);
  EXPECT_GT(r.two_pass_ms, 0);
  EXPECT_GT(r.online_ms, 0);
  EXPECT_GT(r.unfused_ms, 0);
  EXPECT_GT(r.recompute_ms, 0);
  // Fused is the faster of its two forms.
  EXPECT_EQ(r.fused_form, r.online_ms < r.two_pass_ms ? FusedSoftmax::Online : FusedSoftmax::TwoPass);
  EXPECT_EQ(r.fused_ms, std::min(r.two_pass_ms, r.online_ms));
  EXPECT_EQ(r.fused, r.fused_ms <= r.unfused_ms);
  // Training pays the backward's recompute on top of a fused forward, or runs the
  // fused forward that keeps scores and attention: the faster of the two, if it
  // beats unfused.
  EXPECT_GT(r.saving_ms, 0);
  const double recomputing = r.fused_ms + r.recompute_ms;
  const bool fused_wins = std::min(recomputing, r.saving_ms) <= r.unfused_ms;
  EXPECT_EQ(r.saving_training, fused_wins && r.saving_ms < recomputing);
  EXPECT_EQ(r.fused_training, fused_wins && !r.saving_training);
}

// Fused replaces the untuned (unfused) attention only when it is faster by more
// than the margin; with a margin no kernel can clear, unfused stays.
TEST(GatTuner, FusedMustBeatUnfusedByTheMargin) {
  const Graph A = tuner_graph(500, 8);
  GatKernels k(A, {1, 8, 0.2, A.index_dtype()});
  const GatTuneResult r = tune_gat(k, false, 0.05);
  EXPECT_EQ(r.fused, r.fused_ms * 1.05 <= r.unfused_ms);
  EXPECT_EQ(r.fused_training || r.saving_training,
            std::min(r.fused_ms + r.recompute_ms, r.saving_ms) * 1.05 <= r.unfused_ms);
  const GatTuneResult never = tune_gat(k, false, 1e9);
  EXPECT_FALSE(never.fused);
  EXPECT_FALSE(never.fused_training);
  EXPECT_FALSE(never.saving_training);
}

TEST(GatTuner, ReusesBothChoicesFromItsRecord) {
  const testing::ScopedCacheRoot cache("gat-tuner");
  const Graph A = tuner_graph(400, 6);
  GatKernels k(A, {2, 8, 0.2, A.index_dtype()});
  const GatTuneResult first = tune_gat(k, true);
  const GatTuneResult second = tune_gat(k, true);
  const std::string record = read_file(first.record_file);
  const char* training = first.saving_training ? "fused-saving" : first.fused_training ? "fused" : "unfused";
  EXPECT_NE(record.find(fmt::format("inference {}, training {}, fused form {}", first.fused ? "fused" : "unfused",
                                    training, fused_form_name(first.fused_form))),
            std::string::npos)
      << record;
  EXPECT_FALSE(first.from_record);
  EXPECT_TRUE(second.from_record);
  EXPECT_EQ(second.fused, first.fused);
  EXPECT_EQ(second.fused_training, first.fused_training);
  EXPECT_EQ(second.saving_training, first.saving_training);
  EXPECT_EQ(second.fused_form, first.fused_form);
  EXPECT_EQ(second.fused_ms, -1);
  // The recorded form is the one a later load runs: flip it in the record.
  const FusedSoftmax other = first.fused_form == FusedSoftmax::Online ? FusedSoftmax::TwoPass : FusedSoftmax::Online;
  std::string flipped = record;
  const std::string was = fmt::format("fused form {}", fused_form_name(first.fused_form));
  flipped.replace(flipped.find(was), was.size(), fmt::format("fused form {}", fused_form_name(other)));
  write_file_atomic(first.record_file, flipped);
  EXPECT_EQ(tune_gat(k, true).fused_form, other);
}

// An inference set chooses the forward alone: it reads a training set's record over
// the same code when there is one, else measures the three forwards and records
// them under a key of its own, which a training set does not take for its own.
TEST(GatTuner, InferenceSetsTuneTheForwardAloneAndReadTrainingRecords) {
  const testing::ScopedCacheRoot cache("gat-tuner-inference");
  const Graph A = tuner_graph(400, 6);
  const GatSpec spec{2, 8, 0.2, A.index_dtype()};
  GatKernels infer(A, spec, Backend::Generated, std::nullopt, GatKernelSet::Inference);
  const GatTuneResult alone = tune_gat(infer, true);
  EXPECT_FALSE(alone.from_record);
  EXPECT_GT(alone.unfused_ms, 0);
  EXPECT_GT(alone.two_pass_ms, 0);
  EXPECT_GT(alone.online_ms, 0);
  EXPECT_EQ(alone.recompute_ms, -1);  // not compiled, not measured
  EXPECT_EQ(alone.saving_ms, -1);
  EXPECT_FALSE(alone.fused_training);
  EXPECT_FALSE(alone.saving_training);
  const std::string inference_record = read_file(alone.record_file);
  EXPECT_NE(inference_record.find(fmt::format("\"inference {}, fused form {}\"", alone.fused ? "fused" : "unfused",
                                              fused_form_name(alone.fused_form))),
            std::string::npos)
      << inference_record;
  EXPECT_NE(inference_record.find("\"op\": \"gat_h2_f8_s0.2_i32 inference\""), std::string::npos) << inference_record;
  // Read back by the next inference load.
  EXPECT_TRUE(tune_gat(infer, true).from_record);
  // A training set measures everything (the inference record has no training choice)...
  GatKernels train(A, spec);
  const GatTuneResult both = tune_gat(train, true);
  EXPECT_FALSE(both.from_record);
  EXPECT_NE(both.record_file, alone.record_file);
  EXPECT_GT(both.recompute_ms, 0);
  // ... and from then on an inference load takes that record's inference choice.
  const GatTuneResult read = tune_gat(infer, true);
  EXPECT_TRUE(read.from_record);
  EXPECT_EQ(read.record_file, both.record_file);
  EXPECT_EQ(read.fused, both.fused);
  EXPECT_EQ(read.fused_form, both.fused_form);
}

}  // namespace
}  // namespace strata::sc
