// The emitter must keep SpMM's output row in vector registers: a local `float
// acc[F]` array compiles to stack traffic and gathers and runs 1.2-3.6x slower
// (DESIGN.md). This test disassembles the generated kernel and fails if the hot
// loops (the ones with the FMAs: the parallel copy and the one-task copy) touch
// the stack, gather, or add scalars.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "sparse_compiler/codegen/cpu_emitter.h"
#include "sparse_compiler/ops/spmm.h"
#include "tests/support/test_support.h"

namespace strata::sc {
namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

struct Insn {
  uint64_t addr;
  std::string text;
};

// Instructions of every function whose name contains `symbol`.
std::vector<Insn> disassemble(const std::string& lib, const std::string& symbol) {
  std::vector<Insn> out;
  std::istringstream in(run("objdump -d --no-show-raw-insn '" + lib + "'"));
  std::string line;
  bool inside = false;
  const std::regex head(R"(^[0-9a-f]+ <(.*)>:$)"), ins(R"(^\s*([0-9a-f]+):\s+(.*)$)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, head)) {
      inside = m[1].str().find(symbol) != std::string::npos;
    } else if (inside && std::regex_match(line, m, ins)) {
      out.push_back({std::stoull(m[1].str(), nullptr, 16), m[2].str()});
    }
  }
  return out;
}

TEST(CodegenQuality, SpmmHotLoopKeepsAccumulatorsInRegisters) {
  if (run("command -v objdump").empty()) GTEST_SKIP() << "objdump (binutils) not found";
  // The machine code is judged as the release flags make it: sanitizer checks in the
  // loop (scripts/sanitize.sh sets STRATA_CXXFLAGS) take registers of their own.
  if (const std::string flags = ::strata::testing::kernel_sanitizer_flags(); !flags.empty())
    GTEST_SKIP() << "kernels built with sanitizers (STRATA_CXXFLAGS='" << flags << "')";
  // The default plans, tiled and panel plans whose row update covers one tile
  // (F below is the number of features a row update touches), and plans with
  // accumulator sets, whose hot loop updates every set once.
  struct Case {
    int64_t feat, F;
    int64_t tile;
    std::string layout;
    int sets = 1;
  };
  const std::vector<Case> cases = {{32, 32, 0, "row"},       {64, 64, 0, "row"},        {128, 128, 0, "row"},
                                   {256, 256, 0, "row"},     {512, 128, 0, "row"},      {256, 64, 64, "row"},
                                   {128, 64, 0, "panel:64"}, {256, 128, 128, "pad:16"}, {16, 16, 0, "row", 2},
                                   {16, 16, 0, "row", 4},    {32, 32, 0, "row", 2}};
  for (const Case& c : cases) {
    const int64_t F = c.F;
    SpmmSpec spec;
    spec.feat = c.feat;
    spec.weighted = true;
    SpmmPlan plan = SpmmKernel::default_plan(spec);
    if (c.tile) plan.feature_tile = c.tile;
    plan.x_layout = DenseLayout::parse(c.layout);
    plan.knobs.accumulator_sets = c.sets;
    CompiledKernel k = compile_cpu({SpmmKernel::lower(spec, plan)}).front();
    const auto insns = disassemble(k.library->path().string(), cpu_entry_symbol(k.kernel));
    ASSERT_FALSE(insns.empty()) << "no disassembly for " << cpu_entry_symbol(k.kernel);
    // The hot loops: the innermost loops (backward branches) whose body holds a
    // whole row update, one FMA per 16-float vector of the row. The emitter writes
    // the row loop twice (a parallel copy and a one-task copy run without an
    // OpenMP team), so there are two, and neither may spill.
    const int needed = static_cast<int>(std::max<int64_t>(F / 16, 1)) * c.sets;
    struct Loop {
      uint64_t from, to;
    };
    std::vector<Loop> loops;
    const std::regex jump(R"(^j[a-z]+\s+([0-9a-f]+))");
    for (size_t e = 0; e < insns.size(); ++e) {
      std::smatch m;
      if (!std::regex_search(insns[e].text, m, jump)) continue;
      const uint64_t target = std::stoull(m[1].str(), nullptr, 16);
      if (target >= insns[e].addr) continue;
      int fmas = 0;
      for (const auto& i : insns) fmas += i.addr >= target && i.addr <= insns[e].addr && i.text.find("vfmadd") != std::string::npos;
      if (fmas >= needed) loops.push_back({target, insns[e].addr});
    }
    std::vector<Loop> hot;
    for (const Loop& l : loops) {
      bool contains_another = false;
      for (const Loop& o : loops)
        contains_another |= (o.from != l.from || o.to != l.to) && o.from >= l.from && o.to <= l.to;
      if (!contains_another) hot.push_back(l);
    }
    ASSERT_GE(hot.size(), 2u) << "F=" << F << " sets=" << c.sets
                              << ": expected the parallel and the one-task copy of the row loop, each with " << needed
                              << " FMAs";
    for (const Loop& l : hot)
      for (const Insn& i : insns) {
        if (i.addr < l.from || i.addr > l.to) continue;
        EXPECT_EQ(i.text.find("gather"), std::string::npos) << "F=" << F << ": gather in the hot loop: " << i.text;
        const bool stack = i.text.find("(%rsp") != std::string::npos || i.text.find("(%rbp") != std::string::npos;
        EXPECT_FALSE(stack) << "F=" << F << ": the hot loop touches the stack (spill): " << i.text;
        // The edge weight goes straight from memory into a broadcast; a scalar add
        // before it (what `(vector){} + x` compiles to) costs an FMA-port uop per edge.
        EXPECT_EQ(i.text.find("vaddss"), std::string::npos) << "F=" << F << ": scalar add in the hot loop: " << i.text;
      }
  }
}

// Y[4i .. 4i+3] = exp(X[i]), log|X[i]|, sqrt|X[i]|, |X[i]| for i < 4: every math
// intrinsic of the IR, in scalar code.
Kernel math_intrinsics_kernel() {
  Kernel k;
  k.name = "math_intrinsics";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("Y", DType::F32, ParamRole::Output)};
  const Expr i = var("i"), x = load(Type::f32(), "X", i), ax = call(Type::f32(), "abs", {x});
  auto at = [&](int64_t c) { return add(mul(i, make_int(4)), make_int(c)); };
  k.body =
      for_loop("i", make_int(0), make_int(4), ForKind::Serial,
               seq({store("Y", at(0), call(Type::f32(), "exp", {x})), store("Y", at(1), call(Type::f32(), "log", {ax})),
                    store("Y", at(2), call(Type::f32(), "sqrt", {ax})), store("Y", at(3), ax)}));
  return k;
}

// Parsing headers was most of a small kernel's compile time (<immintrin.h> and, in
// C++, <math.h> each several times the kernel itself), so the generated source
// includes <stdint.h> only and reaches math, memcpy and the x86 vector operations
// through compiler builtins. Checked on kernels that use each of them: streaming
// stores, lane sums and maxima, exp, log, sqrt and abs, at 4, 8 and 16 lanes.
TEST(CodegenQuality, GeneratedSourceIncludesStdintOnly) {
  std::vector<Kernel> kernels;
  for (int lanes : {4, 8, 16}) {
    SpmmSpec spec;
    spec.feat = 64;
    SpmmPlan plan = SpmmKernel::default_plan(spec);
    plan.knobs.vector_lanes = lanes;
    plan.knobs.stream_stores = true;
    kernels.push_back(SpmmKernel::lower(spec, plan));
  }
  const std::string source = emit_cpu_source(kernels) + emit_cpu_source({math_intrinsics_kernel()});
  std::vector<std::string> includes;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("#include", 0) == 0) includes.push_back(line);
  EXPECT_EQ(includes, std::vector<std::string>({"#include <stdint.h>", "#include <stdint.h>"}));
  for (const char* call : {"__builtin_ia32_movntps(", "__builtin_ia32_movntps256(", "__builtin_ia32_movntps512(",
                           "__builtin_expf(", "__builtin_logf(", "__builtin_sqrtf(", "__builtin_fabsf("})
    EXPECT_NE(source.find(call), std::string::npos) << call;
  EXPECT_EQ(source.find("_mm"), std::string::npos) << "an <immintrin.h> intrinsic in generated code";
  // And it compiles and runs: the math kernel against libm.
  CompiledKernel k = compile_cpu({math_intrinsics_kernel()}).front();
  std::vector<float> x = {0.5f, 2.0f, 9.0f, -3.0f}, y(4 * 4, 0.0f);
  const Tensor xs = Tensor::from_vector(x);
  Tensor out = Tensor::from_vector(y);
  KernelArgs args;
  args.buffer("X", xs).buffer("Y", out);
  k.run(args);
  const float* o = out.data<float>();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(o[4 * i + 0], std::exp(x[i])) << i;
    EXPECT_EQ(o[4 * i + 1], std::log(std::fabs(x[i]))) << i;
    EXPECT_EQ(o[4 * i + 2], std::sqrt(std::fabs(x[i]))) << i;
    EXPECT_EQ(o[4 * i + 3], std::fabs(x[i])) << i;
  }
}

// A prefetch is a hint whose address may lie outside its buffer: ahead of a segment's
// last non-zero, split_gather's prefetches name rows of the other operand. The emitted
// prefetch forms its address as an integer (no pointer arithmetic past the buffer,
// which C++ leaves undefined), and a kernel prefetching far outside X still computes
// the right values.
TEST(CodegenQuality, PrefetchesFormTheirAddressAsAnInteger) {
  SpmmSpec spec;
  spec.feat = 64;
  SpmmPlan plan = SpmmKernel::default_plan(spec);
  plan.knobs.prefetch = 8;
  const std::string source = emit_cpu_source({SpmmKernel::lower(spec, plan)});
  EXPECT_EQ(source.find("__builtin_prefetch(&"), std::string::npos) << source;
  int prefetches = 0;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    if (line.find("strata_prefetch(X, (") != std::string::npos) {
      ++prefetches;
      EXPECT_NE(line.find(") * (int64_t)sizeof(*X));"), std::string::npos) << line;
    }
  EXPECT_GE(prefetches, 4) << "one per cache line of a row of 64 floats, in each copy of the row loop";

  // Y[i] = X[i] + 1 for i < 4, prefetching X at 2^40 elements past i (far past any mapping).
  Kernel k;
  k.name = "prefetch_far";
  k.stage = Stage::Loops;
  k.params = {Param::buffer("X", DType::F32), Param::buffer("Y", DType::F32, ParamRole::Output)};
  const Expr i = var("i");
  k.body = for_loop("i", make_int(0), make_int(4), ForKind::Serial,
                    seq({prefetch("X", add(i, make_int(int64_t{1} << 40))),
                         store("Y", i, add(load(Type::f32(), "X", i), make_float(1.0, Type::f32())))}));
  const std::string far = emit_cpu_source({k});
  EXPECT_NE(far.find("strata_prefetch(X, "), std::string::npos) << far;
  CompiledKernel c = compile_cpu({k}).front();
  const Tensor xs = Tensor::from_vector(std::vector<float>{1, 2, 3, 4});
  Tensor out = Tensor::from_vector(std::vector<float>(4, 0.0f));
  KernelArgs args;
  args.buffer("X", xs).buffer("Y", out);
  c.run(args);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(out.data<float>()[j], static_cast<float>(j + 2)) << j;
}

}  // namespace
}  // namespace strata::sc
