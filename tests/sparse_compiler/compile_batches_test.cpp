// compile_cpu across batches: a kernel compiled in one batch (one translation unit
// holding several kernels) is loaded from that unit by a later batch that holds it
// again (KernelCache::find_member), and runs the same; only kernels that no unit
// holds are compiled. The batches of `strata eval` after `strata train`, or of a
// tuner's second search, are such later batches.
#include <gtest/gtest.h>

#include <random>

#include "core/rng.h"
#include "sparse_compiler/codegen/compiled_kernel.h"
#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/ops/reference_kernels.h"
#include "sparse_compiler/ops/spmm.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

Kernel lowered_spmm(const Graph& A, int64_t feat) {
  SpmmSpec s;
  s.feat = feat;
  s.index_dtype = A.index_dtype();
  return SpmmKernel::lower(s, SpmmKernel::default_plan(s));
}

// Runs a compiled SpMM kernel on A and returns its largest difference from the
// reference on fresh random X.
float max_error(const Graph& A, int64_t feat, const CompiledKernel& k, uint64_t seed) {
  SpmmOptions o;
  o.feat = feat;
  o.plan = SpmmKernel::default_plan(SpmmKernel::spec(A, o));
  SpmmKernel bound(A, o, k);
  Rng rng(seed);
  const Tensor X = Tensor::uniform({A.num_cols(), feat}, -1, 1, rng);
  Tensor got = Tensor::empty({A.num_rows(), feat}, DType::F32), want = got.clone();
  bound.run_into(X, got);
  reference_spmm(A, X, Tensor(), Tensor(), Tensor(), false, want);
  return max_abs_diff(got, want);
}

TEST(CompileBatches, AKernelCompiledInOneBatchIsLoadedFromItsUnitByTheNext) {
  testing::RandomGraphSpec gs;
  gs.rows = gs.cols = 300;
  gs.long_row_length = 120;
  gs.seed = 5;
  const Graph A = testing::random_graph(gs);
  // Odd feature sizes no other test compiles with this plan.
  const Kernel a = lowered_spmm(A, 37), b = lowered_spmm(A, 41), c = lowered_spmm(A, 43);
  const std::vector<CompiledKernel> first = compile_cpu({a, b}, 1);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].library.get(), first[1].library.get()) << "one unit";

  // b again beside a kernel the first batch did not hold: b comes from the first
  // batch's unit (held by `first`, so from memory), c from a unit of its own.
  const std::vector<CompiledKernel> second = compile_cpu({c, b}, 1);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[1].library.get(), first[1].library.get());
  EXPECT_EQ(second[1].outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(second[1].source_key, first[1].source_key);
  EXPECT_EQ(second[1].compile_ms, 0.0);
  EXPECT_NE(second[0].library.get(), first[0].library.get());
  EXPECT_EQ(second[1].entry, first[1].entry);

  // A batch of kernels that units already hold, in another order (another unit's
  // source, had it been compiled): nothing is compiled.
  const uint64_t compiles = KernelCache::global().stats().compiles;
  const std::vector<CompiledKernel> third = compile_cpu({b, c, a}, 2);
  EXPECT_EQ(KernelCache::global().stats().compiles, compiles);
  for (const CompiledKernel& k : third) EXPECT_NE(k.outcome, CacheOutcome::Compiled) << k.kernel.name;
  EXPECT_EQ(third[2].library.get(), first[0].library.get());
  EXPECT_EQ(third[1].library.get(), second[0].library.get());

  // Every copy computes the SpMM.
  EXPECT_LT(max_error(A, 41, second[1], 1), 1e-4f);
  EXPECT_LT(max_error(A, 43, third[1], 2), 1e-4f);
  EXPECT_LT(max_error(A, 37, third[2], 3), 1e-4f);
}

// A batch that holds one kernel twice (a CSR plan and its shared-pairs twin lower alike)
// compiles it once, in one unit, and hands both the same entry point; a unit defining the
// entry point twice would not compile.
TEST(CompileBatches, AKernelTwiceInOneBatchCompilesOnce) {
  testing::RandomGraphSpec gs;
  gs.rows = gs.cols = 200;
  gs.seed = 9;
  const Graph A = testing::random_graph(gs);
  // Names of this run's own, so that no unit in a cache kept from an earlier run holds them.
  Kernel a = lowered_spmm(A, 47), b = lowered_spmm(A, 53);
  const std::string run = std::to_string(std::random_device{}());
  a.name += "_twice" + run;
  b.name += "_once" + run;
  const uint64_t compiles = KernelCache::global().stats().compiles;
  const std::vector<CompiledKernel> got = compile_cpu({a, b, a}, 1);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(KernelCache::global().stats().compiles, compiles + 1) << "one unit for a, b";
  EXPECT_EQ(got[2].entry, got[0].entry);
  EXPECT_EQ(got[2].kernel.name, a.name);
  EXPECT_LT(max_error(A, 47, got[2], 4), 1e-4f);
  EXPECT_LT(max_error(A, 53, got[1], 5), 1e-4f);
}

// A member index that sends a kernel to a unit without it (damaged, or edited) is a
// miss: the kernel is compiled again, and computes the SpMM.
TEST(CompileBatches, AnIndexNamingTheWrongUnitIsAMiss) {
  testing::RandomGraphSpec gs;
  gs.rows = gs.cols = 200;
  gs.seed = 9;
  const Graph A = testing::random_graph(gs);
  const Kernel a = lowered_spmm(A, 29), b = lowered_spmm(A, 31);
  const std::vector<CompiledKernel> first = compile_cpu({a}, 1);
  const std::string b_member = KernelCache::global().key_for(emit_cpu_source({b}));
  KernelCache::global().record_members({b_member}, first[0].source_key);  // b "is in" a's unit: it is not
  const std::vector<CompiledKernel> second = compile_cpu({b}, 1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0].source_key, first[0].source_key) << "b resolved from a unit without it";
  EXPECT_LT(max_error(A, 31, second[0], 1), 1e-4f);
}

// compile_cpu_memoized: a key compiled before returns its kernel without any cache
// lookup (no source is emitted or hashed: the cache's counters do not move), and the
// kernel runs the same; a key the caller reuses for another kernel is refused.
TEST(CompileBatches, KeyedKernelsComeFromTheMemoWithoutACacheLookup) {
  testing::RandomGraphSpec gs;
  gs.rows = gs.cols = 250;
  gs.long_row_length = 90;
  gs.seed = 13;
  const Graph A = testing::random_graph(gs);
  const Kernel a = lowered_spmm(A, 47), b = lowered_spmm(A, 53);  // sizes no other test compiles
  const std::vector<CompiledKernel> first =
      compile_cpu_memoized({"compile-batches-test|47", "compile-batches-test|53"}, {a, b});
  ASSERT_EQ(first.size(), 2u);

  const CacheStats before = KernelCache::global().stats();
  const std::vector<CompiledKernel> again = compile_cpu_memoized({"compile-batches-test|53"}, {b});
  const CacheStats after = KernelCache::global().stats();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(again[0].compile_ms, 0.0);
  EXPECT_EQ(again[0].entry, first[1].entry);
  EXPECT_EQ(again[0].source_key, first[1].source_key);
  EXPECT_EQ(after.memory_hits, before.memory_hits) << "the memo answered, not the kernel cache";
  EXPECT_EQ(after.disk_hits, before.disk_hits);
  EXPECT_EQ(after.compiles, before.compiles);
  EXPECT_LT(max_error(A, 53, again[0], 4), 1e-4f);

  try {
    compile_cpu_memoized({"compile-batches-test|47"}, {b});
    ADD_FAILURE() << "a key naming another kernel was accepted";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'compile-batches-test|47' names"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::sc
