// The IR itself: validating factories, immediates, the printer, structural
// equality and hashing, the mutator's identity guarantee, substitution and names.
#include <gtest/gtest.h>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "tests/sparse_compiler/test_programs.h"

namespace strata::sc {
namespace {

TEST(IR, ImmediatesAdoptTheOtherOperandsType) {
  Expr y = load(Type::f32(), "Y", var("i"));
  Expr e = y + 1;
  EXPECT_EQ(e.type(), Type::f32());
  EXPECT_EQ(to_string(e), "Y[i] + 1.0f");
  Expr i32 = cast(Type::i32(), var("k"));
  EXPECT_EQ((i32 * 4).type(), Type::i32());
  EXPECT_EQ(to_string(var("i") * 64 + 3), "i * 64 + 3");
}

TEST(IR, FactoriesFoldOnlyTheTrivialCases) {
  Expr i = var("i");
  EXPECT_TRUE((i + 0).same_as(i));
  EXPECT_TRUE((i * 1).same_as(i));
  EXPECT_TRUE(is_zero(i * 0));
  EXPECT_EQ(*as_const_int(make_int(7) / make_int(-2)), -4);  // floor division
  EXPECT_EQ(*as_const_int(make_int(-7) % make_int(3)), 2);   // floor modulo
  EXPECT_EQ(to_string(i + i), "i + i");                       // real simplification is a pass
}

TEST(IR, FactoriesRejectMismatchedTypes) {
  Expr f = load(Type::f32(), "X", var("i"));
  EXPECT_THROW(logical_and(f, f), InternalError);
  EXPECT_THROW(load(Type::f32(), "X", f), InternalError);  // float index
  EXPECT_THROW(for_loop("v", 0, var("n"), ForKind::Vectorized, evaluate(f)), InternalError);
  EXPECT_THROW(add(load(Type::f64(), "D", var("i")), f), InternalError);
  try {
    if_then_else(f, evaluate(f));
    FAIL() << "a float condition was accepted";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("if condition must be a scalar bool"), std::string::npos);
  }
}

TEST(IR, PrinterParenthesisesByPrecedence) {
  Expr a = var("a"), b = var("b"), c = var("c");
  EXPECT_EQ(to_string((a + b) * c), "(a + b) * c");
  EXPECT_EQ(to_string(a + b * c), "a + b * c");
  EXPECT_EQ(to_string(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(to_string((a - b) - c), "a - b - c");
  EXPECT_EQ(to_string(lt(a + 1, b) ), "a + 1 < b");
  EXPECT_EQ(to_string(make_float(0.1)), "0.1f");
  EXPECT_EQ(to_string(make_float(2.0, Type::f64())), "2.0");
  EXPECT_EQ(to_string(ramp(a, 1, 16)), "ramp(a, 1, 16)");
  EXPECT_EQ(to_string(upper_bound("P", 0, a, b)), "upper_bound(P, 0, a, b)");
}

TEST(IR, PrinterShowsLoopsKindsAndAnnotations) {
  Stmt s = for_loop("i", 0, var("m"), ForKind::Parallel,
                    store("Y", var("i"), make_float(1)), {{"axis", "I"}});
  EXPECT_EQ(to_string(s), "parallel (i, 0, m) [axis=I] {\n  Y[i] = 1.0f\n}\n");
}

TEST(IR, StructuralEqualityAndHash) {
  Expr x = load(Type::f32(), "X", var("j") * 8 + var("f"));
  Expr y = load(Type::f32(), "X", var("j") * 8 + var("f"));
  Expr z = load(Type::f32(), "X", var("j") * 8 + var("g"));
  EXPECT_TRUE(structural_equal(x, y));
  EXPECT_EQ(structural_hash(x), structural_hash(y));
  EXPECT_FALSE(structural_equal(x, z));
  EXPECT_NE(structural_hash(x), structural_hash(z));
  EXPECT_FALSE(structural_equal(make_int(1), make_int(1, Type::i32())));
  const Kernel a = testing::sddmm_dot(), b = testing::sddmm_dot();
  EXPECT_TRUE(structural_equal(a.body, b.body));
  EXPECT_FALSE(structural_equal(a.body, testing::sddmm_add().body));
}

TEST(IR, MutatorReturnsTheSameHandleWhenNothingChanges) {
  const Kernel k = testing::spmm_weighted_scaled();
  IRMutator identity;
  EXPECT_TRUE(identity.mutate(k.body).same_as(k.body));
  Stmt renamed = substitute(k.body, {{"nothing_named_this", var("x")}});
  EXPECT_TRUE(renamed.same_as(k.body));
}

TEST(IR, SubstituteIsSimultaneous) {
  Expr e = var("a") + var("b");
  EXPECT_EQ(to_string(substitute(e, {{"a", var("b")}, {"b", var("a")}})), "b + a");
}

TEST(IR, NameGenAvoidsEveryNameInTheKernel) {
  const Kernel k = testing::spmm_weighted_scaled();
  NameGen g(k);
  EXPECT_EQ(g.fresh("i"), "i_1");        // i is an iterator
  EXPECT_EQ(g.fresh("X"), "X_1");        // X is a parameter
  EXPECT_EQ(g.fresh("fresh"), "fresh");
  EXPECT_EQ(g.fresh("fresh"), "fresh_1");
}

TEST(IR, SparseIterationChecksParentsComeFirst) {
  CsrAxes a = csr_axes(DType::I32);
  SparseBuffer O = sparse_buffer("O", {a.I, a.J}, DType::F32);
  Stmt body = sparse_store(O, {var("i"), var("j")}, make_float(0));
  EXPECT_THROW(sparse_iteration("bad", {{"j", a.J, false}, {"i", a.I, false}}, Stmt(), body), InternalError);
  EXPECT_NO_THROW(sparse_iteration("ok", {{"i", a.I, false}, {"j", a.J, false}}, Stmt(), body));
}

TEST(IR, SparseBufferChecksTheCsfLayout) {
  CsrAxes a = csr_axes(DType::I32);
  EXPECT_THROW(sparse_buffer("B", {a.J, a.I}, DType::F32), InternalError);  // child before parent
  EXPECT_NO_THROW(sparse_buffer("B", {a.I, a.J}, DType::F32));
}

TEST(IR, AxisPrinting) {
  CsrAxes a = csr_axes(DType::I64);
  EXPECT_EQ(to_string(a.J),
            "axis J: sparse_variable(parent I, length n, nnz nnz, indptr A_indptr, indices A_indices, int64, sorted)");
  EXPECT_EQ(to_string(a.I), "axis I: dense_fixed(length m)");
}

}  // namespace
}  // namespace strata::sc
