// Schedule primitives: what each produces (checked by running the kernel in the
// interpreter before and after), and what each refuses, with the message text.
#include "sparse_compiler/schedule/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/rng.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/codegen/interpreter.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ops/cpu_schedules.h"
#include "sparse_compiler/ops/programs.h"
#include "sparse_compiler/ops/rgms.h"
#include "sparse_compiler/ops/rgms_programs.h"
#include "sparse_compiler/ops/spmm.h"
#include "sparse_compiler/passes/pipeline.h"
#include "sparse_compiler/schedule/loop_tree.h"
#include "sparse_compiler/schedule/sparse_schedule.h"
#include "tests/sparse_compiler/reference_ops.h"
#include "tests/sparse_compiler/test_programs.h"
#include "tests/support/golden.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

// SpMM with F = 12 on a small random graph, run in the interpreter.
struct SpmmFixture {
  Graph g;
  Tensor X;
  int64_t F = 12;
  SpmmFixture() {
    ::strata::testing::RandomGraphSpec s;
    s.rows = 37;
    s.cols = 29;
    s.seed = 3;
    g = ::strata::testing::random_graph(s);
    Rng rng(1);
    X = Tensor::uniform({g.num_cols(), F}, -1, 1, rng);
  }
  Kernel program() const {
    SpmmSpec spec;
    spec.feat = F;
    return spmm_program(spec);
  }
  Tensor run(const Kernel& k) const {
    Tensor Y = Tensor::full({g.num_rows(), F}, DType::F32, NAN);
    KernelArgs a;
    a.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices()).buffer("X", X).buffer("Y", Y);
    a.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
    Interpreter interp;
    a.bind(interp, k);
    interp.run(k);
    return Y;
  }
  void expect_correct(const Kernel& k, const std::string& what) const {
    Tensor want = ::strata::testing::reference_spmm(g, X, Tensor(), Tensor(), Tensor(), false);
    CloseReport r = all_close(run(k), want, 1e-5, 1e-5);
    EXPECT_TRUE(r.ok) << what << ": " << r.str() << "\n" << to_string(k);
  }
};

template <class F>
void expect_schedule_error(F&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Schedule, EveryPrimitiveKeepsTheMeaning) {
  SpmmFixture fx;
  const Kernel base = lower_to_loops(fx.program());
  fx.expect_correct(base, "unscheduled");
  {
    Schedule s(base);
    s.split("f", 5);  // 12 = 2 * 5 + a tail of 2
    EXPECT_NE(find_loop(s.kernel().body, "f_t"), nullptr);
    fx.expect_correct(s.kernel(), "split with tail");
  }
  {
    Schedule s(base);
    s.split("f", 4);
    s.reorder("f_o", "f_i");
    fx.expect_correct(s.kernel(), "split + reorder");
    s.fuse("f_i", "f_o");
    fx.expect_correct(s.kernel(), "split + reorder + fuse");
  }
  {
    Schedule s(base);
    s.split("i", 8);  // symbolic extent: guarded
    fx.expect_correct(s.kernel(), "split of a symbolic loop");
  }
  {
    Schedule s(base);
    const std::string chunk = s.balance("i", "A_indptr", 16);
    s.parallel(chunk);
    const std::string acc = s.cache_write("Y", "i");
    s.split("f", 4);
    s.vectorize("f_i");
    s.unroll("f_o");
    s.prefetch("j", "X", 3, "nnz");
    EXPECT_EQ(acc, "Y_local");
    fx.expect_correct(s.kernel(), "full CPU schedule");
    fx.expect_correct(lower_schedule(s.kernel()), "full CPU schedule, lowered");
    EXPECT_EQ(s.trace().front(), "balance(i, A_indptr, 16)");
  }
  {
    // Feature tiling at stage I.
    Kernel k = sparse_split(fx.program(), "spmm", "f", 4);
    k = sparse_reorder(k, "spmm", {"f_o", "i", "j", "f_i"});
    const Kernel low = lower_to_loops(k);
    EXPECT_EQ(loop_names(low.body).front(), "f_o");
    fx.expect_correct(low, "feature tiling");
  }
}

TEST(Schedule, PeeledSplitOfASymbolicLoopRunsGuardFreeBlocksThenTheRemainder) {
  SpmmFixture fx;  // 37 rows: 4 blocks of 8, then a tail of 5
  Schedule s(lower_to_loops(fx.program()));
  s.split("i", 8, TailStrategy::Peel);
  EXPECT_EQ(s.trace().back(), "split(i, 8, peel)");
  const std::string text = to_string(s.kernel());
  EXPECT_EQ(text.find("if ("), std::string::npos) << text;  // no guard
  // The tail is a copy of the body whose loops got fresh names (names stay unique).
  const std::vector<std::string> loops = loop_names(s.kernel().body);
  EXPECT_EQ(loops, (std::vector<std::string>{"i_o", "i_i", "f_init", "j", "f", "i_t", "f_init_t", "j_t", "f_t"}));
  fx.expect_correct(s.kernel(), "peeled split");
  fx.expect_correct(lower_schedule(s.kernel()), "peeled split, lowered");
}

TEST(Schedule, SplitNamesItsLoopsEvenWhenAPeeledCopyHoldsTheUsualTailName) {
  SpmmFixture fx;  // F = 12
  Schedule s(lower_to_loops(fx.program()));
  // Peeling rows leaves a copy of the row body whose feature loop is called f_t.
  const Schedule::SplitLoops rows = s.split("i", 8, TailStrategy::Peel);
  EXPECT_EQ(rows.outer, "i_o");
  EXPECT_EQ(rows.inner, "i_i");
  EXPECT_EQ(rows.tail, "i_t");
  s.cache_write("Y", "i_t");
  s.cache_write("Y", "i_i");
  // Splitting the block's f by 8 has a tail of 4, which cannot be called f_t.
  const Schedule::SplitLoops f = s.split("f", 8);
  EXPECT_EQ(f.outer, "f_o");
  EXPECT_EQ(f.inner, "f_i");
  EXPECT_FALSE(f.tail.empty());
  EXPECT_NE(f.tail, "f_t");
  EXPECT_NE(find_loop(s.kernel().body, f.tail), nullptr);
  // No tail when the factor divides the extent.
  Schedule t(lower_to_loops(fx.program()));
  EXPECT_EQ(t.split("f", 4).tail, "");
  fx.expect_correct(s.kernel(), "split names");
}

// vectorize_feature_loop took the tail of its split to be `loop`_t: in a peeled
// kernel that was the tail copy's own feature loop, which it then vectorized at half
// the width, leaving the split's real tail scalar (the R-GCN kernels' tail pairs ran
// at 8 lanes on AVX-512).
TEST(Schedule, VectorizingAFeatureLoopLeavesThePeeledCopysLoopOfTheSameStemAlone) {
  SpmmFixture fx;  // F = 12: 8 lanes, then a tail of 4
  Schedule s(lower_to_loops(fx.program()));
  s.split("i", 8, TailStrategy::Peel);
  s.cache_write("Y", "i_t");
  s.cache_write("Y", "i_i");
  vectorize_feature_loop(s, "f", 8);
  const ForNode* copy = find_loop(s.kernel().body, "f_t");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->for_kind, ForKind::Serial);  // untouched until its own turn
  ASSERT_NE(as_const_int(copy->extent), nullptr);
  EXPECT_EQ(*as_const_int(copy->extent), 12);
  auto vectorized_loops = [&] {
    int n = 0;
    for (const std::string& name : loop_names(s.kernel().body))
      if (find_loop(s.kernel().body, name)->for_kind == ForKind::Vectorized) ++n;
    return n;
  };
  EXPECT_EQ(vectorized_loops(), 2) << to_string(s.kernel());  // the block's f: 8 lanes, then 4
  vectorize_feature_loop(s, "f_t", 8);                        // the copy's turn: the same two vectors
  EXPECT_EQ(vectorized_loops(), 4) << to_string(s.kernel());
  fx.expect_correct(s.kernel(), "vectorized peeled rows");
  fx.expect_correct(lower_schedule(s.kernel()), "vectorized peeled rows, lowered");
}

TEST(Schedule, FissionSeparatesABlocksInitFromItsAccumulationForRegisterBlocking) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  s.split("i", 4, TailStrategy::Peel);
  // Row i_i's init and its accumulation touch only Y[i, 0..12): no iteration of
  // i_i touches another's row, so all inits may run before all accumulations.
  const std::vector<std::string> parts = s.fission("i_i");
  EXPECT_EQ(parts, (std::vector<std::string>{"i_i", "i_i_1"}));
  fx.expect_correct(s.kernel(), "fission");
  // The four rows' outputs then stage in one 48-element local, and the inits
  // fully overwrite it, so nothing is loaded first.
  s.cache_write("Y", "i_o");
  const std::string text = to_string(s.kernel());
  EXPECT_NE(text.find("allocate Y_local: float32[48] in register"), std::string::npos) << text;
  EXPECT_EQ(text.find("i_o_ld"), std::string::npos) << text;
  s.unroll("i_i");
  s.unroll("i_i_1");
  fx.expect_correct(s.kernel(), "fission + cache_write + unroll");
  fx.expect_correct(lower_schedule(s.kernel()), "fission + cache_write + unroll, lowered");
  // Moving the block inside the non-zero loop is refused: j's bounds are row i's.
  expect_schedule_error([&] { s.reorder("i_i_1", "j"); }, {"reorder(i_i_1, j)", "bounds of j depend on i_i_1"});
}

TEST(ScheduleErrorTest, FissionRefusesBodiesWhoseIterationsShareData) {
  // for i in [0, 8): { S[0] = S[0] + X[i]; O[i] = S[0] }  -- a running sum: every
  // iteration reads what the previous one wrote.
  Kernel k;
  k.name = "running_sum";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("S", DType::F32, ParamRole::Output),
              Param::buffer("O", DType::F32, ParamRole::Output)};
  k.body = for_loop("i", 0, 8, ForKind::Serial,
                    seq({store("S", 0, add(load(Type::f32(), "S", 0), load(Type::f32(), "X", var("i")))),
                         store("O", var("i"), load(Type::f32(), "S", 0))}));
  Schedule s(k);
  expect_schedule_error([&] { s.fission("i"); },
                        {"fission(i)", "S is accessed at 0, which does not depend on i (every iteration touches it)"});
  // for i in [0, 8): { O[2i] = X[i]; O[2i + 1] = O[2i + 2] }  -- iteration i reads
  // what iteration i + 1 writes: windows of 3 elements with a stride of 2.
  k.body = for_loop("i", 0, 8, ForKind::Serial,
                    seq({store("O", mul(var("i"), 2), load(Type::f32(), "X", var("i"))),
                         store("O", add(mul(var("i"), 2), 1), load(Type::f32(), "O", add(mul(var("i"), 2), 2)))}));
  Schedule s2(k);
  expect_schedule_error([&] { s2.fission("i"); },
                        {"fission(i)", "accesses O over 3 elements, more than the stride 2 between iterations"});
  // A single statement has nothing to distribute over.
  SpmmFixture fx;
  Schedule s3(lower_to_loops(fx.program()));
  expect_schedule_error([&] { s3.fission("j"); }, {"fission(j)", "the body of j is not a sequence of statements"});
  EXPECT_TRUE(s3.trace().empty());
}

// RGCN's per-pair transform Y[rows[q]] += H[q] W_r, run in the interpreter on a
// 3-relation graph: the output row is addressed through rel_rows.
struct TransformFixture {
  RelationalGraph g;
  Tensor H, W;
  TransformFixture() {
    std::vector<Graph> rels;
    for (int r = 0; r < 3; ++r) {
      ::strata::testing::RandomGraphSpec s;
      s.rows = s.cols = 41;
      s.empty_row_fraction = 0.3;
      s.seed = 20 + r;
      rels.push_back(::strata::testing::random_graph(s));
    }
    g = RelationalGraph::build(41, 41, rels, RgmsNormalization::None);
    Rng rng(4);
    H = Tensor::uniform({g.pairs, 5}, -1, 1, rng);
    W = Tensor::uniform({g.relations, 5, 6}, -1, 1, rng);
  }
  static Kernel loops() {
    RgmsSpec spec;
    spec.fin = 5;
    spec.fout = 6;
    return lower_to_loops(rgms_transform_program(spec));
  }
  Tensor run(const Kernel& k) const {
    Tensor Y = Tensor::full({g.rows, 6}, DType::F32, NAN);
    KernelArgs a;
    g.bind(a);
    a.buffer("H", H).buffer("W", W).buffer("Y", Y);
    Interpreter interp;
    a.bind(interp, k);
    interp.run(k);
    return Y;
  }
};

TEST(Schedule, UnrollAndJamBlocksRowsAddressedThroughADistinctIndexArray) {
  TransformFixture fx;
  const Tensor want = fx.run(TransformFixture::loops());
  Schedule s(TransformFixture::loops());
  s.split("i2", 4, TailStrategy::Peel);
  s.cache_write("Y", "i2_t");
  s.cache_write("Y", "i2_i");
  // Without knowing that a relation's rows are distinct, the copies might share a
  // row of Y: refused.
  expect_schedule_error([&] { s.unroll_and_jam("i2_i", "fi2"); },
                        {"unroll_and_jam(i2_i, fi2)", "the index", "of Y depends on i2_i in a way that does not separate iterations"});
  s.unroll_and_jam("i2_i", "fi2", {"rel_rows"});
  const std::string text = to_string(s.kernel());
  // Four accumulators (the first copy keeps its names, the others get _u1.._u3)
  // and one jammed reduction loop whose body updates all four.
  for (const char* local : {"allocate Y_local_1:", "allocate Y_local_1_u1:", "allocate Y_local_1_u3:"})
    EXPECT_NE(text.find(local), std::string::npos) << local << "\n" << text;
  const std::vector<std::string> loops = loop_names(s.kernel().body);
  EXPECT_EQ(std::count(loops.begin(), loops.end(), "fi2"), 1) << text;
  EXPECT_EQ(std::count(loops.begin(), loops.end(), "i2_i"), 0) << text;
  CloseReport r = all_close(fx.run(s.kernel()), want, 1e-5, 1e-5);
  EXPECT_TRUE(r.ok) << r.str() << "\n" << text;
  CloseReport rl = all_close(fx.run(lower_schedule(s.kernel())), want, 1e-5, 1e-5);
  EXPECT_TRUE(rl.ok) << rl.str();
}

TEST(ScheduleErrorTest, UnrollAndJamRefusesWhatItCannotInterleave) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  s.split("i", 4, TailStrategy::Peel);
  s.cache_write("Y", "i_i");
  // A row's non-zero loop depends on the row: the copies' loops differ.
  expect_schedule_error([&] { s.unroll_and_jam("i_i", "j"); }, {"unroll_and_jam(i_i, j)", "the bounds of j depend on i_i"});
  expect_schedule_error([&] { s.unroll_and_jam("i_i", "f"); },
                        {"unroll_and_jam(i_i, f)", "f is not a loop at the top of i_i's body"});
  expect_schedule_error([&] { s.unroll_and_jam("i_o", "i_i"); }, {"unroll_and_jam(i_o, i_i)", "loop i_o needs constant bounds"});
}

TEST(Schedule, CacheWriteGolden) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  s.cache_write("Y", "i");
  ::strata::testing::expect_golden("sparse_compiler/golden/schedule/cache_write_spmm.txt", to_string(s.kernel()));
}

TEST(Schedule, RfactorGolden) {
  Schedule s(lower_to_loops(testing::sddmm_dot()));
  const std::string acc = s.cache_write("O", "j");
  Schedule::RFactor rf = s.rfactor("f", acc);
  EXPECT_EQ(rf.local, "O_local_rf");
  ::strata::testing::expect_golden("sparse_compiler/golden/schedule/rfactor_sddmm.txt", to_string(s.kernel()));
}

TEST(Schedule, RfactorOverNonZerosGivesEachPositionItsOwnCopyOfTheRow) {
  // SpMM's row accumulator is indexed by the feature loop inside the non-zero
  // loop: rfactor over a group of non-zeros makes one copy of the whole row per
  // position in the group (accumulator sets), added back after the groups, with
  // the peeled remainder adding into the row itself. Same values, interpreted
  // and lowered, for groups of 2 and 3.
  SpmmFixture fx;
  for (int sets : {2, 3}) {
    Schedule s(lower_to_loops(fx.program()));
    const std::string acc = s.cache_write("Y", "i");
    const Schedule::SplitLoops j = s.split("j", sets, TailStrategy::Peel);
    const Schedule::RFactor rf = s.rfactor(j.inner, acc);
    EXPECT_EQ(*as_const_int(find_loop(s.kernel().body, rf.init_loop)->extent), sets * fx.F);
    EXPECT_EQ(*as_const_int(find_loop(s.kernel().body, rf.sum_loop)->extent), fx.F);
    EXPECT_EQ(find_loop(s.kernel().body, rf.sum_loop)->annotations.at("axis"), "F");
    s.unroll(j.inner);
    const std::string what = std::to_string(sets) + " accumulator sets";
    fx.expect_correct(s.kernel(), what);
    fx.expect_correct(lower_schedule(s.kernel()), what + ", lowered");
    // The CPU schedule's helper does the same and vectorizes every copy.
    Schedule c(lower_to_loops(fx.program()));
    interleave_accumulators(c, "j", c.cache_write("Y", "i"), sets);
    for (const auto& l : c.loops())
      if (const ForNode* L = find_loop(c.kernel().body, l);
          L && L->for_kind == ForKind::Serial && L->annotations.count("axis") && L->annotations.at("axis") == "F")
        vectorize_feature_loop(c, l, 8);
    fx.expect_correct(lower_schedule(c.kernel()), what + ", vectorized");
  }
  // A group too large for the copies to stay in registers is refused, unchanged.
  Schedule s(lower_to_loops(fx.program()));
  const std::string acc = s.cache_write("Y", "i");
  const Schedule::SplitLoops j = s.split("j", 512, TailStrategy::Peel);
  const size_t steps = s.trace().size();
  expect_schedule_error([&] { s.rfactor(j.inner, acc); },
                        {"rfactor(j_i, Y_local)", "512 copies of the 12 elements of Y_local are more than the 4096"});
  EXPECT_EQ(s.trace().size(), steps);
}

// Four dot products of F = 4 (one 4-lane partial vector each) summed by one
// transposing reduction: the group loop keeps its four partial vectors side by
// side and ends in one vector store of lane_sums; the rest of the row keeps its
// horizontal sum. What does not have that shape is refused, unchanged, by name.
TEST(Schedule, TransposeSumsStoresAGroupsDotProductsAsOneVector) {
  Schedule s(lower_to_loops(testing::sddmm_dot()));
  const Schedule::SplitLoops j = s.split("j", 4, TailStrategy::Peel);
  const std::string acc = s.cache_write("O", j.inner);
  const std::string acc_tail = s.cache_write("O", j.tail);
  const size_t steps = s.trace().size();
  expect_schedule_error([&] { s.transpose_sums(j.inner); },
                        {"transpose_sums(j_i)", "must be initialised, summed from a partial vector of 4 lanes"});
  expect_schedule_error([&] { s.transpose_sums(j.tail); },
                        {"transpose_sums(j_t): loop j_t must be a serial loop from 0"});
  expect_schedule_error([&] { s.transpose_sums("i"); }, {"transpose_sums(i)", "must be a serial loop from 0"});
  EXPECT_EQ(s.trace().size(), steps);
  vectorize_reduction_loop(s, "f", acc, 4);
  s.transpose_sums(j.inner);
  s.unroll(j.inner);
  const std::string text = to_string(lower_schedule(s.kernel()));
  EXPECT_NE(text.find("O[ramp(A_indptr[i] + j_o * 4, 1, 4)] = lane_sums("), std::string::npos) << text;
  EXPECT_NE(text.find("allocate O_local_rf_t_12: float32[4] in register"), std::string::npos) << text;
  EXPECT_EQ(s.trace().back(), "unroll(j_i)");
  (void)acc_tail;
  // A pass that adds into the output (panel by panel, O zeroed by its own nest)
  // starts each accumulator from O[j]: the group's start is one vector load of O.
  Schedule p(lower_to_loops(sparse_reorder(sddmm_program({SddmmKind::Dot, 8, DType::I32}, DenseLayout::panel(4)),
                                           "sddmm", {"f_o", "i", "j", "f_i"})));
  const Schedule::SplitLoops pj = p.split("j", 4, TailStrategy::Peel);
  const std::string pacc = p.cache_write("O", pj.inner);
  vectorize_reduction_loop(p, "f_i", pacc, 4);
  p.transpose_sums(pj.inner);
  const std::string panel_text = to_string(p.kernel());
  EXPECT_NE(panel_text.find("] = O[ramp(A_indptr[i] + j_o * 4, 1, 4)] + lane_sums("), std::string::npos) << panel_text;
}

// A COO slot's row id is a let around its dot product; inlined, the slot loop's
// body is the dot product alone (what transpose_sums reads), with the same values.
TEST(Schedule, InlineLetsPutsACooSlotsRowIdIntoItsUses) {
  const Kernel fused = lower_to_loops(testing::sddmm_dot_fused());
  ::strata::testing::RandomGraphSpec gs;
  gs.rows = 23;
  gs.cols = 19;
  gs.seed = 5;
  const Graph g = ::strata::testing::random_graph(gs);
  Rng rng(8);
  const Tensor X = Tensor::uniform({g.num_rows(), 4}, -1, 1, rng);
  const Tensor Y = Tensor::uniform({g.num_cols(), 4}, -1, 1, rng);
  auto run = [&](const Kernel& k) {
    Tensor O = Tensor::full({g.nnz()}, DType::F32, NAN);
    KernelArgs a;
    a.buffer("A_indptr", g.indptr()).buffer("A_indices", g.indices()).buffer("X", X).buffer("Y", Y).buffer("O", O);
    a.scalar("m", g.num_rows()).scalar("n", g.num_cols()).scalar("nnz", g.nnz());
    Interpreter interp;
    a.bind(interp, k);
    interp.run(k);
    return O;
  };
  const std::string before = to_string(fused);
  ASSERT_NE(before.find("let i = "), std::string::npos) << before;
  const std::string slots = loop_names(fused.body).front();
  Schedule s(fused);
  s.inline_lets(slots);
  const std::string after = to_string(s.kernel());
  EXPECT_EQ(after.find("let "), std::string::npos) << after;
  EXPECT_NE(after.find("X[(mid_0[i_j] - 1) * 4 + f]"), std::string::npos) << after;
  EXPECT_EQ(s.trace().back(), "inline_lets(" + slots + ")");
  const Tensor want = ::strata::testing::reference_sddmm_dot(g, X, Y);
  for (const Kernel* k : {&fused, &s.kernel()}) {
    const CloseReport r = all_close(run(*k), want, 1e-5, 1e-5);
    EXPECT_TRUE(r.ok) << r.str() << "\n" << to_string(*k);
  }
  // Nothing left to inline, and a let whose body writes what its value reads.
  expect_schedule_error([&] { s.inline_lets(slots); }, {"inline_lets(i_j): loop i_j binds no lets"});
  Kernel k;
  k.name = "let_over_a_write";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("A", DType::F32, ParamRole::Output), Param::scalar("n")};
  const Expr i = var("i");
  k.body = for_loop("i", make_int(0), var("n"), ForKind::Serial,
                    let_stmt("v", load(Type::f32(), "A", i),
                             seq({store("A", i, make_float(0)), store("A", i, var("v", Type::f32()))})));
  Schedule w(k);
  expect_schedule_error([&] { w.inline_lets("i"); }, {"inline_lets(i): let v = A[i] reads A, which its body writes"});
  EXPECT_EQ(to_string(w.kernel()), to_string(k));
}

TEST(ScheduleErrorTest, RfactorRefusesALocalReadBeforeItsPartialsAreAddedBack) {
  // acc[0..3] sums X's rows in groups of two; after each group, Y[o] = acc[0]
  // reads it. The partials of an rfactor over v would be added only after loop
  // o, so every Y[o] would miss them: refused, naming the local and the loop.
  Kernel k;
  k.name = "running_sums";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("Y", DType::F32, ParamRole::Output)};
  const Type f32 = Type::f32();
  const Expr o = var("o"), v = var("v"), f = var("f");
  Stmt update =
      store("acc", f, add(load(f32, "acc", f), load(f32, "X", add(mul(add(mul(o, make_int(2)), v), make_int(4)), f))));
  Stmt groups = for_loop("o", make_int(0), make_int(3), ForKind::Serial,
                         seq({for_loop("v", make_int(0), make_int(2), ForKind::Serial,
                                       for_loop("f", make_int(0), make_int(4), ForKind::Serial, update)),
                              store("Y", o, load(f32, "acc", make_int(0)))}));
  Stmt zero = for_loop("z", make_int(0), make_int(4), ForKind::Serial, store("acc", var("z"), make_zero(f32)));
  k.body = allocate("acc", f32, 4, MemoryScope::Register, seq({zero, groups}));
  Schedule s(k);
  expect_schedule_error([&] { s.rfactor("v", "acc"); },
                        {"rfactor(v, acc)", "acc is read outside loop v before its partials are added back"});
  EXPECT_TRUE(s.trace().empty());
}

TEST(ScheduleErrorTest, RefusalsNameThePrimitiveTheLoopAndTheReason) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  expect_schedule_error([&] { s.parallel("j"); }, {"parallel(j)", "carries a reduction"});
  expect_schedule_error([&] { s.vectorize("j"); }, {"vectorize(j)", "non-constant extent"});
  expect_schedule_error([&] { s.split("f", 0); }, {"split(f, 0)", "must be positive"});
  expect_schedule_error([&] { s.split("f", 12); }, {"split(f, 12)", "not smaller than the extent 12"});
  expect_schedule_error([&] { s.split("q", 2); }, {"split(q)", "no loop named q", "loops: i, f_init, j, f"});
  expect_schedule_error([&] { s.reorder("i", "j"); }, {"reorder(i, j)", "not the only statement in i's body"});
  expect_schedule_error([&] { s.cache_write("X", "j"); }, {"cache_write(X, j)", "X is only read inside loop j"});
  expect_schedule_error([&] { s.cache_write("nope", "i"); }, {"nope is not a buffer parameter"});
  expect_schedule_error([&] { s.cache_read("Y", "i"); }, {"cache_read(Y, i)", "Y is written inside loop i"});
  expect_schedule_error([&] { s.prefetch("j", "X", 4, "rows"); }, {"prefetch(j, X, 4, rows)", "rows is not a scalar"});
  expect_schedule_error([&] { s.balance("j", "A_indptr", 64); }, {"balance(j, A_indptr, 64)", "must be a serial loop starting at 0"});
  expect_schedule_error([&] { s.bind("i", ForKind::Parallel); }, {"bind(i)", "not a GPU block or thread axis"});
  expect_schedule_error([&] { s.rfactor("f", "Y"); }, {"rfactor(f, Y)", "not a local allocated around loop f"});
  expect_schedule_error([&] { s.stream_stores("Y"); }, {"stream_stores(Y)", "reads Y (accumulates in memory)",
                                                         "cache_write it first"});
  expect_schedule_error([&] { s.stream_stores("X"); }, {"stream_stores(X)", "X is not an output buffer"});
  EXPECT_TRUE(s.trace().empty());
}

TEST(Schedule, StreamStoresAfterCacheWriteWriteEachRowOnceNonTemporally) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  s.cache_write("Y", "i");
  s.stream_stores("Y");
  EXPECT_NE(to_string(s.kernel()).find("(streaming)"), std::string::npos) << to_string(s.kernel());
  fx.expect_correct(s.kernel(), "stream_stores");
  const std::string src = emit_cpu_source({lower_schedule(s.kernel())});
  EXPECT_NE(src.find("strata_store_fence();"), std::string::npos);
  // Vectorized rows (the CPU SpMM schedule) store whole vectors non-temporally.
  SpmmSpec spec;
  spec.feat = 4 * host_vector_lanes();
  SpmmPlan plan = SpmmKernel::default_plan(spec);
  plan.knobs.stream_stores = true;
  const std::string vsrc = emit_cpu_source({SpmmKernel::lower(spec, plan)});
  EXPECT_NE(vsrc.find("_stream(&Y["), std::string::npos) << vsrc;
}

// split_gather: each row's non-zeros before its split point gather X, the rest S (the
// same ids, another operand), under the full CPU schedule too: peeled accumulator sets,
// prefetches and vector lanes are split with the loops that hold them.
TEST(Schedule, SplitGatherReadsARowsTailFromTheSecondOperand) {
  SpmmFixture fx;
  Rng rng(5);
  const Tensor S = Tensor::uniform({fx.g.num_cols(), fx.F}, -1, 1, rng);
  std::vector<int64_t> split(fx.g.num_rows());
  for (int64_t r = 0; r < fx.g.num_rows(); ++r)
    split[r] = fx.g.row_begin(r) + static_cast<int64_t>(rng.next_u64() % (fx.g.degree(r) + 1));
  Tensor want = Tensor::zeros({fx.g.num_rows(), fx.F}, DType::F32);
  for (int64_t r = 0; r < fx.g.num_rows(); ++r)
    for (int64_t p = fx.g.row_begin(r); p < fx.g.row_end(r); ++p)
      for (int64_t f = 0; f < fx.F; ++f)
        want.data<float>()[r * fx.F + f] += (p < split[r] ? fx.X : S).data<float>()[fx.g.column(p) * fx.F + f];
  const Tensor split_t = Tensor::from_vector(split);
  auto run = [&](const Kernel& k) {
    Tensor Y = Tensor::full({fx.g.num_rows(), fx.F}, DType::F32, NAN);
    KernelArgs a;
    a.buffer("A_indptr", fx.g.indptr()).buffer("A_indices", fx.g.indices()).buffer("X", fx.X).buffer("Y", Y);
    a.buffer("S", S).buffer("A_split", split_t);
    a.scalar("m", fx.g.num_rows()).scalar("n", fx.g.num_cols()).scalar("nnz", fx.g.nnz());
    Interpreter interp;
    a.bind(interp, k);
    interp.run(k);
    return Y;
  };
  auto expect_split = [&](const Kernel& k, const std::string& what) {
    const CloseReport r = all_close(run(k), want, 1e-5, 1e-5);
    EXPECT_TRUE(r.ok) << what << ": " << r.str() << "\n" << to_string(k);
  };
  {
    Schedule s(lower_to_loops(fx.program()));
    s.split_gather("i", "X", "S", "A_indptr", "A_split");
    EXPECT_EQ(s.trace().back(), "split_gather(i, X, S, A_indptr, A_split)");
    ASSERT_NE(s.kernel().find_param("S"), nullptr);
    EXPECT_EQ(s.kernel().find_param("A_split")->dtype, DType::I64);
    EXPECT_NE(find_loop(s.kernel().body, "j_tail"), nullptr) << to_string(s.kernel());
    expect_split(s.kernel(), "unscheduled");
  }
  for (int sets : {1, 3}) {
    Schedule s(lower_to_loops(fx.program()));
    s.parallel(s.balance("i", "A_indptr", 16));
    const std::string acc = s.cache_write("Y", "i");
    s.prefetch("j", "X", 3, "nnz");
    if (sets > 1) {
      const Schedule::SplitLoops parts = s.split("j", sets, TailStrategy::Peel);
      s.rfactor(parts.inner, acc);
      s.unroll(parts.inner);
    }
    s.split("f", 4);
    s.vectorize("f_i");
    s.split_gather("i", "X", "S", "A_indptr", "A_split");
    const std::string what = "full CPU schedule, " + std::to_string(sets) + " accumulator sets";
    expect_split(s.kernel(), what);
    expect_split(lower_schedule(s.kernel()), what + ", lowered");
  }
  Schedule s(lower_to_loops(fx.program()));
  expect_schedule_error([&] { s.split_gather("i", "Y", "S", "A_indptr", "A_split"); },
                        {"split_gather(i, Y, S, A_indptr, A_split)", "Y is not an input buffer"});
  expect_schedule_error([&] { s.split_gather("i", "X", "S", "A_indices", "A_split"); },
                        {"A_indices is not an int64 buffer"});
  expect_schedule_error([&] { s.split_gather("i", "X", "Y", "A_indptr", "A_split"); }, {"the name Y is taken"});
  expect_schedule_error([&] { s.split_gather("i", "X", "S", "A_indptr", "A_split", {"A_indices"}); },
                        {"split_gather(i, X, S, A_indptr, A_split, A_indices)",
                         "A_indices is not a floating-point input buffer parameter"});
  expect_schedule_error([&] { s.split_gather("j", "X", "S", "A_indptr", "A_split"); },
                        {"row j reads X outside a reduction loop over its non-zeros"});
  expect_schedule_error([&] { s.split_gather("q", "X", "S", "A_indptr", "A_split"); }, {"no loop named q"});
  EXPECT_TRUE(s.trace().empty());
  EXPECT_EQ(s.kernel().find_param("S"), nullptr);
}

TEST(Schedule, StaticTasksHandTheTaskLoopToThreadsInFixedBlocks) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  const std::string chunk = s.balance("i", "A_indptr", 16);
  expect_schedule_error([&] { s.static_tasks(chunk); },
                        {"static_tasks(i_chunk)", "loop i_chunk is serial, not parallel; make it parallel first"});
  expect_schedule_error([&] { s.static_tasks("q"); }, {"static_tasks(q)", "no loop named q"});
  s.parallel(chunk);
  s.static_tasks(chunk);
  EXPECT_EQ(s.trace().back(), "static_tasks(i_chunk)");
  EXPECT_EQ(find_loop(s.kernel().body, chunk)->annotations.at(kTaskAssignment), "static");
  fx.expect_correct(s.kernel(), "static_tasks");
  const std::string src = emit_cpu_source({lower_schedule(s.kernel())});
  EXPECT_NE(src.find("#pragma omp parallel for schedule(static)"), std::string::npos) << src;
  EXPECT_EQ(src.find("schedule(dynamic"), std::string::npos) << src;
  // The plan knob reaches the CSR schedule and the decomposed formats' task loop.
  SpmmSpec spec;
  spec.feat = 32;
  for (const char* format : {"csr", "hyb:c=2,B=3", "coo"}) {
    SpmmPlan plan = SpmmKernel::default_plan(spec);
    plan.format = FormatSpec::parse(format);
    const std::string dynamic_src = emit_cpu_source({SpmmKernel::lower(spec, plan)});
    plan.knobs.static_tasks = true;
    const std::string static_src = emit_cpu_source({SpmmKernel::lower(spec, plan)});
    EXPECT_NE(dynamic_src.find("schedule(dynamic, 1)"), std::string::npos) << format;
    EXPECT_EQ(dynamic_src.find("schedule(static)"), std::string::npos) << format;
    EXPECT_NE(static_src.find("schedule(static)"), std::string::npos) << format;
    EXPECT_EQ(static_src.find("schedule(dynamic"), std::string::npos) << format;
  }
}

TEST(ScheduleErrorTest, AttemptRestoresTheKernelAndReturnsTheReason) {
  SpmmFixture fx;
  Schedule s(lower_to_loops(fx.program()));
  const Stmt before = s.kernel().body;
  const std::string reason = s.attempt([&] {
    s.split("f", 4);        // succeeds ...
    s.vectorize("j");       // ... then fails: everything is rolled back
  });
  EXPECT_NE(reason.find("vectorize(j)"), std::string::npos) << reason;
  EXPECT_TRUE(s.kernel().body.same_as(before));
  EXPECT_TRUE(s.trace().empty());
  EXPECT_EQ(s.attempt([&] { s.split("f", 4); }), "");
  EXPECT_EQ(s.trace().size(), 1u);
}

TEST(ScheduleErrorTest, VectorizingAStoreThatIsNotAReductionIsRefused) {
  // for f in [0, 16): O[0] = X[f]  -- a store independent of f that is not a sum
  Kernel k;
  k.name = "last_wins";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("O", DType::F32, ParamRole::Output)};
  k.body = for_loop("f", 0, 16, ForKind::Serial, store("O", 0, load(Type::f32(), "X", var("f"))));
  Schedule s(k);
  expect_schedule_error([&] { s.vectorize("f"); }, {"vectorize(f)", "does not depend on f", "use rfactor first"});
}

TEST(Schedule, VectorizingASumIntoOneLocationReducesHorizontally) {
  Schedule s(lower_to_loops(testing::sddmm_dot()));
  s.cache_write("O", "j");
  s.vectorize("f");
  EXPECT_NE(to_string(lower_schedule(s.kernel())).find("reduce_add("), std::string::npos);
}

TEST(ScheduleErrorTest, StageIPrimitivesRefuseIllegalOrders) {
  const Kernel k = testing::spmm_weighted_scaled();
  expect_schedule_error([&] { sparse_reorder(k, "spmm", {"j", "i", "f"}); },
                        {"sparse_reorder(spmm)", "j (axis J) would come before its parent axis I"});
  expect_schedule_error([&] { sparse_reorder(k, "nope", {"i", "j", "f"}); }, {"no sparse iteration named nope"});
  expect_schedule_error([&] { sparse_fuse(k, "spmm", {"i", "f"}); }, {"sparse_fuse(spmm)", "not consecutive"});
  expect_schedule_error([&] { sparse_fuse(k, "spmm", {"j", "f"}); }, {"must iterate a dense-fixed root axis"});
  expect_schedule_error([&] { sparse_fuse(k, "spmm", {"i", "j"}); }, {"i is spatial and j a reduction", "split the init out first"});
  expect_schedule_error([&] { sparse_split(k, "spmm", "f", 3); }, {"sparse_split(spmm, f, 3)", "must divide the length 8"});
  expect_schedule_error([&] { sparse_split(k, "spmm", "j", 2); }, {"axis J must be dense-fixed"});
}

}  // namespace
}  // namespace strata::sc
