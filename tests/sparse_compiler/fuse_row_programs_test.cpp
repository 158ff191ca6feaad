// Row-program fusion (passes/fuse_row_programs.h, passes/online_softmax.h): every
// rewrite keeps the values the unfused chain computes, on graphs with empty rows
// and a long row, int32 and int64 indices, odd head and feature counts; GAT's
// fused forward is derived with nothing left in memory; and each rewrite refuses,
// with its reason, where it would change the result.
#include "sparse_compiler/passes/fuse_row_programs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "core/error.h"
#include "core/rng.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/attention_programs.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/passes/online_softmax.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/passes/row_program.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

// Inputs and outputs of GAT's forward chain over one graph, by parameter name.
struct Buffers {
  Graph A;
  std::map<std::string, Tensor> t;
  KernelArgs args() {
    KernelArgs a;
    a.buffer("A_indptr", A.indptr()).buffer("A_indices", A.indices());
    a.scalar("m", A.num_rows()).scalar("n", A.num_cols()).scalar("nnz", A.nnz());
    for (auto& [name, tensor] : t) a.buffer(name, tensor);
    return a;
  }
};

Buffers buffers_for(const Graph& A, int64_t H, int64_t F, uint64_t seed) {
  Rng rng(seed);
  Buffers b{A, {}};
  b.t["XL"] = Tensor::uniform({A.num_rows(), H}, -2, 2, rng);
  b.t["XR"] = Tensor::uniform({A.num_cols(), H}, -2, 2, rng);
  b.t["X"] = Tensor::uniform({A.num_cols(), H, F}, -1, 1, rng);
  b.t["E"] = Tensor::full({A.nnz(), H}, DType::F32, NAN);
  b.t["P"] = Tensor::full({A.nnz(), H}, DType::F32, NAN);
  b.t["M"] = Tensor::full({A.num_rows(), H}, DType::F32, NAN);
  b.t["S"] = Tensor::full({A.num_rows(), H}, DType::F32, NAN);
  b.t["Y"] = Tensor::full({A.num_rows(), H, F}, DType::F32, NAN);
  return b;
}

void interpret(const Kernel& stage1, Buffers& b) {
  const Kernel loops = lower_to_loops(stage1);
  Interpreter interp;
  b.args().bind(interp, loops);
  interp.run(loops);
}

// Element by element within `tol` (relative above 1); an empty row's max is -inf
// in both, which counts as equal.
std::string differs(const Tensor& got, const Tensor& want, double tol) {
  for (int64_t e = 0; e < want.numel(); ++e) {
    const float g = got.at<float>(e), w = want.at<float>(e);
    if (std::isinf(w) && g == w) continue;
    if (!(std::abs(g - w) <= tol * std::max(1.0f, std::abs(w)))) return fmt::format("element {}: {} vs {}", e, g, w);
  }
  return "";
}

std::vector<Kernel> gat_chain(const GatSpec& s) {
  return {gat_score_program(s), edge_softmax_program(s), gat_aggregate_program(s, false)};
}

std::vector<std::pair<std::string, Graph>> graphs(bool int64_indices) {
  testing::RandomGraphSpec s;
  s.rows = 60;
  s.cols = 50;
  s.avg_degree = 4;
  s.empty_row_fraction = 0.25;
  s.long_row_length = 45;
  s.int64_indices = int64_indices;
  s.seed = 11;
  CooOptions o;
  o.force_int64 = int64_indices;
  return {
      {"random", testing::random_graph(s)},
      {"isolated", Graph::from_coo(9, 9, Tensor::from_list<int64_t>({4, 4}), Tensor::from_list<int64_t>({0, 8}), o)}};
}

std::vector<std::string> nest_names(const Kernel& k) {
  std::vector<std::string> out;
  for (const auto& n : row_program(k, "test").nests) out.push_back(n.as<SparseIterationNode>()->name);
  return out;
}

TEST(FuseRowPrograms, EveryRewriteKeepsWhatTheChainComputes) {
  for (const bool i64 : {false, true})
    for (const auto& [gname, A] : graphs(i64))
      for (auto [H, F] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 5}, {8, 8}}) {
        GatSpec s{H, F, 0.2, A.index_dtype()};
        const std::string what = fmt::format("{} {} H={} F={}", gname, i64 ? "int64" : "int32", H, F);
        Buffers want = buffers_for(A, H, F, 7);
        for (const auto& k : gat_chain(s)) interpret(k, want);
        const std::set<std::string> keep = {"Y", "M", "S"};
        // The kernel after each rewrite in turn, then the online form.
        std::vector<std::pair<std::string, Kernel>> steps;
        Kernel k = fuse_row_loops(gat_chain(s), "fused");
        steps.emplace_back("fuse_row_loops", k);
        k = inline_elementwise(k, keep);
        steps.emplace_back("inline_elementwise", k);
        k = defer_row_normalisation(k, keep);
        steps.emplace_back("defer_row_normalisation", k);
        k = fuse_edge_loops(k);
        steps.emplace_back("fuse_edge_loops", k);
        k = contract_edge_buffers(k, keep);
        steps.emplace_back("contract_edge_buffers", k);
        steps.emplace_back("online_softmax", online_softmax(k));
        for (const auto& [step, kernel] : steps) {
          Buffers got = buffers_for(A, H, F, 7);
          interpret(kernel, got);
          for (const char* out : {"Y", "M", "S"})
            EXPECT_EQ(differs(got.t[out], want.t[out], 1e-5), "") << what << ", after " << step << ", " << out << "\n"
                                                                  << to_string(kernel);
        }
      }
}

TEST(FuseRowPrograms, DerivesGatsFusedForwardWithNothingLeftInMemory) {
  GatSpec s{8, 8, 0.2, DType::I32};
  const Kernel two_pass = gat_fused_program(s);
  std::vector<std::string> params;
  for (const auto& p : two_pass.params) params.push_back(p.name);
  EXPECT_EQ(params, (std::vector<std::string>{"A_indptr", "A_indices", "XL", "XR", "M", "S", "X", "Y", "P_edge", "m",
                                              "n", "nnz"}));
  EXPECT_EQ(two_pass.find_param("P_edge")->role, ParamRole::Workspace);
  // Scores recomputed in the max pass and the edge loop; the softmax's sum fused
  // with the aggregation; the division by S once per output, after the sum.
  EXPECT_EQ(nest_names(two_pass),
            (std::vector<std::string>{"P_edge_init", "softmax_init", "softmax_max", "gat_aggregate_init",
                                      "softmax_sum_gat_aggregate", "P_deferred_norm"}));
  const std::string text = to_string(two_pass);
  EXPECT_NE(text.find("Y[i, h_2, f] = Y[i, h_2, f] + P_edge[i, h_2] * X[j2, h_2, f]"), std::string::npos) << text;
  EXPECT_NE(text.find("Y[i, h, f_1] = select(0.0f < S[i, h], Y[i, h, f_1] / S[i, h], 0.0f)"), std::string::npos)
      << text;
  s.fused_softmax = FusedSoftmax::Online;
  const Kernel online = gat_fused_program(s);
  EXPECT_EQ(nest_names(online),
            (std::vector<std::string>{"M_scale_init", "P_edge_init", "softmax_init", "gat_aggregate_init",
                                      "softmax_sum_gat_aggregate", "P_deferred_norm"}));
  const std::string otext = to_string(online);
  for (const char* line : {"M_scale[i, h_4] = exp(M[i, h_4] - M_new)", "S[i, h2] = S[i, h2] * M_scale[i, h2] + p",
                           "Y[i, h_2, f] = Y[i, h_2, f] * M_scale[i, h_2] + P_edge[i, h_2] * X[j2, h_2, f]"})
    EXPECT_NE(otext.find(line), std::string::npos) << line << " in\n" << otext;
}

TEST(FuseRowPrograms, KeepingScoresAndAttentionStillFusesTheEdgeLoops) {
  // Training's fused forward keeps E and P: the scores fuse with the max pass (the
  // softmax's init, which shares nothing with them, moves ahead), the division
  // with the aggregation.
  const Kernel k = gat_fused_saving_program(GatSpec{8, 8, 0.2, DType::I32});
  EXPECT_EQ(nest_names(k), (std::vector<std::string>{"softmax_init", "gat_score_softmax_max", "softmax_sum",
                                                     "gat_aggregate_init", "softmax_norm_gat_aggregate"}));
  for (const char* out : {"Y", "M", "S", "E", "P"}) EXPECT_EQ(k.find_param(out)->role, ParamRole::Output) << out;
}

TEST(FuseRowPrograms, KeepingTheAttentionFusesAroundIt) {
  // Asked to keep P (a forward that saves the attention for backward), the
  // division stays per edge and runs fused with the aggregation that reads it.
  const Graph A = graphs(false).front().second;
  GatSpec s{3, 5, 0.2, A.index_dtype()};
  RowFusion f;
  f.name = "gat_fused_keep_p";
  f.outputs = {"Y", "M", "S", "P"};
  const Kernel k = fuse_row_programs(gat_chain(s), f);
  EXPECT_EQ(nest_names(k), (std::vector<std::string>{"softmax_init", "softmax_max", "softmax_sum", "gat_aggregate_init",
                                                     "softmax_norm_gat_aggregate"}));
  EXPECT_EQ(k.find_param("P")->role, ParamRole::Output);
  EXPECT_EQ(k.find_param("E"), nullptr);
  Buffers want = buffers_for(A, 3, 5, 3), got = buffers_for(A, 3, 5, 3);
  for (const auto& p : gat_chain(s)) interpret(p, want);
  interpret(k, got);
  for (const char* out : {"Y", "M", "S", "P"}) EXPECT_EQ(differs(got.t[out], want.t[out], 1e-6), "") << out;
}

void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying: " << parts.front();
  } catch (const UserError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << p << " in\n" << e.what();
  }
}

// A small row program over CSR with H heads: buffers by name and axes, a body
// built from them. For refusals that GAT's own chain never hits.
struct Custom {
  CsrAxes csr = csr_axes(DType::I32);
  Axis H = dense_fixed("H", make_int(2)), E = dense_fixed("E", var("nnz"));
  Kernel k;
  explicit Custom(const std::string& name) {
    k.name = name;
    k.stage = Stage::Coordinate;
    k.axes = {csr.I, csr.J, csr.J_detach, H, E};
    k.params = {Param::buffer("A_indptr", DType::I64), Param::buffer("A_indices", DType::I32)};
  }
  SparseBuffer buffer(const std::string& name, std::vector<Axis> axes, ParamRole role) {
    SparseBuffer b = sparse_buffer(name, std::move(axes), DType::F32);
    k.buffers.push_back(b);
    k.params.push_back(Param::buffer(name, DType::F32, role));
    return b;
  }
  Kernel done(Stmt body) {
    k.body = body;
    for (const char* s : {"m", "n", "nnz"}) k.params.push_back(Param::scalar(s));
    return k;
  }
};

TEST(FuseRowPrograms, RefusesRowsThatReadAnotherRowsResult) {
  // A second hop: each row sums the row max of its neighbours, which other rows
  // (perhaps other threads) compute. Fusing by row would read them unfinished.
  GatSpec s{2, 1, 0.2, DType::I32};
  Custom c("neighbour_max_sum");
  SparseBuffer M = c.buffer("M", {c.csr.I, c.H}, ParamRole::Input);
  SparseBuffer Z = c.buffer("Z", {c.csr.I, c.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h");
  const Kernel hop = c.done(sparse_iteration(
      "hop", {{"i", c.csr.I, false}, {"j", c.csr.J, true}, {"h", c.H, false}}, sparse_store(Z, {i, h}, make_float(0)),
      sparse_store(Z, {i, h}, add(sparse_load(Z, {i, h}), sparse_load(M, {j, h})))));
  expect_error(
      [&] {
        (void)fuse_row_loops({edge_softmax_program(s), hop}, "f");
      },
      {"fuse_row_loops: neighbour_max_sum reads M at row j, and edge_softmax_h2_f1_s0p2_i32 writes it",
       "a row may only touch its own row of what another program writes"});
  // The aggregation over Aᵀ reads the attention by edge id, not by row.
  expect_error(
      [&] {
        (void)fuse_row_loops({edge_softmax_program(s), gat_aggregate_program(s, true)}, "f");
      },
      {"fuse_row_loops: P is [I, J, H] in edge_softmax_h2_f1_s0p2_i32 and [E, H] in gat_aggregate_eid"});
}

TEST(FuseRowPrograms, ADivisorThatCanBeZeroKeepsTheDivisionPerEdge) {
  // Normalising by a plain row sum (not a sum of exponentials): D can be 0 on a
  // row with edges, where P / D and (sum P) / D differ, so the attention stays
  // in memory and fusion says why.
  Custom c("row_normalise");
  SparseBuffer E = c.buffer("E", {c.csr.I, c.csr.J, c.H}, ParamRole::Input);
  SparseBuffer P = c.buffer("P", {c.csr.I, c.csr.J, c.H}, ParamRole::Output);
  SparseBuffer D = c.buffer("D", {c.csr.I, c.H}, ParamRole::Output);
  Expr i = var("i"), j = var("j"), h = var("h"), j2 = var("j2"), h2 = var("h2"), h0 = var("h0");
  const Kernel norm = c.done(sparse_iteration(
      "row_normalise", {{"i", c.csr.I, false}}, Stmt(),
      seq({sparse_iteration("norm_init", {{"h0", c.H, false}}, Stmt(), sparse_store(D, {i, h0}, make_float(0))),
           sparse_iteration("norm_sum", {{"j", c.csr.J, true}, {"h", c.H, false}}, Stmt(),
                            seq({sparse_store(P, {i, j, h}, sparse_load(E, {i, j, h})),
                                 sparse_store(D, {i, h}, add(sparse_load(D, {i, h}), sparse_load(E, {i, j, h})))})),
           sparse_iteration(
               "norm_div", {{"j2", c.csr.J, false}, {"h2", c.H, false}}, Stmt(),
               sparse_store(P, {i, j2, h2}, div(sparse_load(P, {i, j2, h2}), sparse_load(D, {i, h2}))))})));
  GatSpec s{2, 3, 0.2, DType::I32};
  RowFusion f;
  f.name = "normalised_aggregate";
  f.outputs = {"Y", "D"};
  expect_error(
      [&] {
        (void)fuse_row_programs({norm, gat_aggregate_program(s, false)}, f);
      },
      {"fuse_row_programs(normalised_aggregate): P still in memory after fusion",
       "defer_row_normalisation: P's division by D[i, h2] stays: D is not a sum of exponentials"});
}

// A row max over XR and an edge loop whose body `edge(W, j2, h2)` builds from
// XR, M, S and a per-edge scratch W; for online_softmax's refusals.
Kernel max_then_edges(const std::function<Stmt(const Custom&, const SparseBuffer&, const SparseBuffer&,
                                               const SparseBuffer&, const SparseBuffer&)>& edge) {
  Custom c("max_then_edges");
  SparseBuffer XR = c.buffer("XR", {c.csr.J_detach, c.H}, ParamRole::Input);
  SparseBuffer M = c.buffer("M", {c.csr.I, c.H}, ParamRole::Output);
  SparseBuffer S = c.buffer("S", {c.csr.I, c.H}, ParamRole::Output);
  SparseBuffer W = sparse_buffer("W", {c.csr.I, c.H}, DType::F32);
  c.k.buffers.push_back(W);
  c.k.params.push_back(Param::workspace("W", DType::F32, mul(var("m"), make_int(2))));
  Expr i = var("i"), j = var("j"), h = var("h"), h0 = var("h0");
  return c.done(sparse_iteration(
      "rows", {{"i", c.csr.I, false}}, Stmt(),
      seq({sparse_iteration(
               "init", {{"h0", c.H, false}}, Stmt(),
               seq({sparse_store(M, {i, h0}, make_float(-INFINITY)), sparse_store(S, {i, h0}, make_float(0))})),
           sparse_iteration("max", {{"j", c.csr.J, true}, {"h", c.H, false}}, Stmt(),
                            sparse_store(M, {i, h}, max(sparse_load(M, {i, h}), sparse_load(XR, {j, h})))),
           sparse_iteration("edges", {{"j2", c.csr.J, true}}, Stmt(),
                            sparse_iteration("sum", {{"h2", c.H, false}}, Stmt(), edge(c, XR, M, S, W)))})));
}

TEST(FuseRowPrograms, OnlineSoftmaxRefusesWhatARunningMaxWouldChange) {
  Expr i = var("i"), j2 = var("j2"), h2 = var("h2");
  auto refusal = [](const Kernel& k) {
    std::vector<std::string> why;
    const Kernel same = online_softmax(k, &why);
    EXPECT_TRUE(same.body.same_as(k.body));
    return why.size() == 1 ? why.front() : fmt::format("{} reasons", why.size());
  };
  auto exp_term = [&](const SparseBuffer& XR, const SparseBuffer& M) {
    return exp(sub(sparse_load(XR, {j2, h2}), sparse_load(M, {i, h2})));
  };
  // S adds x - M, not exp(x - M): rescaling by exp(old - new max) would be wrong.
  EXPECT_EQ(refusal(max_then_edges([&](const Custom&, const SparseBuffer& XR, const SparseBuffer& M,
                                       const SparseBuffer& S, const SparseBuffer&) {
              return sparse_store(
                  S, {i, h2}, add(sparse_load(S, {i, h2}), sub(sparse_load(XR, {j2, h2}), sparse_load(M, {i, h2}))));
            })),
            "online_softmax: M's max pass max stays: the sum into S does not add a term with one factor exp(x - M)");
  // W read before this edge stores it holds the last edge's weight, relative to
  // an older max.
  EXPECT_EQ(refusal(max_then_edges([&](const Custom&, const SparseBuffer& XR, const SparseBuffer& M,
                                       const SparseBuffer& S, const SparseBuffer& W) {
              return seq({sparse_store(S, {i, h2}, add(sparse_load(S, {i, h2}), sparse_load(W, {i, h2}))),
                          sparse_store(W, {i, h2}, exp_term(XR, M))});
            })),
            "online_softmax: M's max pass max stays: W is read before the edge stores it");
  // The partial sum read inside the loop would be relative to the running max.
  EXPECT_EQ(refusal(max_then_edges([&](const Custom&, const SparseBuffer& XR, const SparseBuffer& M,
                                       const SparseBuffer& S, const SparseBuffer& W) {
              return seq({sparse_store(S, {i, h2}, add(sparse_load(S, {i, h2}), exp_term(XR, M))),
                          sparse_store(W, {i, h2}, sparse_load(S, {i, h2}))});
            })),
            "online_softmax: M's max pass max stays: edges reads the partial sum S");
  // The well-formed loop (S += exp(x - M)) is accepted and rescaled.
  const Kernel ok = max_then_edges(
      [&](const Custom&, const SparseBuffer& XR, const SparseBuffer& M, const SparseBuffer& S, const SparseBuffer&) {
        return sparse_store(S, {i, h2}, add(sparse_load(S, {i, h2}), exp_term(XR, M)));
      });
  const std::string text = to_string(online_softmax(ok));
  EXPECT_NE(text.find("S[i, h2] = S[i, h2] * M_scale[i, h2] + exp(XR[j2, h2] - M[i, h2])"), std::string::npos) << text;
}

TEST(FuseRowPrograms, EdgeLoopsStayApartWhenTheSecondReadsARowSum) {
  // The softmax's normalisation reads S, which the sum before it builds over all
  // of the row's edges: fusing the two loops would divide by partial sums.
  GatSpec s{2, 3, 0.2, DType::I32};
  std::vector<std::string> why;
  const Kernel k = fuse_edge_loops(fuse_row_loops({edge_softmax_program(s)}, "softmax"), &why);
  EXPECT_EQ(nest_names(k), (std::vector<std::string>{"softmax_init", "softmax_max", "softmax_sum", "softmax_norm"}));
  EXPECT_NE(std::find(why.begin(), why.end(),
                      "fuse_edge_loops: softmax_sum and softmax_norm stay apart: softmax_norm reads S, which "
                      "softmax_sum builds up over all of the row's edges"),
            why.end())
      << fmt::format("{}", fmt::join(why, "\n"));
}

}  // namespace
}  // namespace strata::sc
