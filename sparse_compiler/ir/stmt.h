// Statement nodes and their validating factories.
//
// Stage I programs consist of SparseIteration nodes whose bodies use SparseLoad /
// SparseStore in coordinate space. Lowering turns them into For loops (stage II,
// still SparseLoad/SparseStore but in position space) and then into flat Load /
// Store (stage III). Schedules then annotate and restructure the For loops.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sparse_compiler/ir/expr.h"

namespace strata::sc {

template <NodeKind K>
struct StmtNodeBase : StmtNode {
  static constexpr NodeKind kind_value = K;
  StmtNodeBase() : StmtNode(K) {}
};

enum class ForKind : uint8_t {
  Serial,
  Parallel,    // CPU: iterations spread over threads (OpenMP)
  Vectorized,  // CPU: the loop becomes vector operations (constant extent)
  Unrolled,    // the loop is replicated (constant extent)
  GpuBlockX,
  GpuBlockY,
  GpuBlockZ,
  GpuThreadX,
  GpuThreadY,
  GpuThreadZ,
};
const char* for_kind_name(ForKind k);  // "serial", "parallel", "vectorized", ..., "blockIdx.x"
bool is_gpu_binding(ForKind k);

// Free-form hints schedules attach to loops: "axis" (the iteration axis a loop
// came from), "schedule" (dynamic chunk size), "prefetch" ... Kept sorted so
// printing and hashing are stable.
using Annotations = std::map<std::string, std::string>;
// A parallel loop's annotation that says how its iterations go to threads:
// "static" (fixed contiguous blocks, Schedule::static_tasks); absent: dynamic.
inline constexpr const char* kTaskAssignment = "assign";

struct ForNode : StmtNodeBase<NodeKind::For> {
  std::string var;
  Expr min, extent;
  ForKind for_kind = ForKind::Serial;
  Stmt body;
  Annotations annotations;
};

enum class StoreKind : uint8_t {
  Plain,
  AtomicAdd,  // buffer[index] += value, atomically (GPU schedules that share a row)
  Streaming,  // non-temporal store (bypasses the cache)
};

struct StoreNode : StmtNodeBase<NodeKind::Store> {
  std::string buffer;
  Expr index, value;
  StoreKind store_kind = StoreKind::Plain;
};

struct SparseStoreNode : StmtNodeBase<NodeKind::SparseStore> {
  SparseBuffer buffer;
  std::vector<Expr> indices;
  Expr value;
};

struct SeqNode : StmtNodeBase<NodeKind::Seq> {
  std::vector<Stmt> stmts;
};

struct IfThenElseNode : StmtNodeBase<NodeKind::IfThenElse> {
  Expr condition;
  Stmt then_case, else_case;  // else may be undefined
};

struct LetStmtNode : StmtNodeBase<NodeKind::LetStmt> {
  std::string var;
  Expr value;
  Stmt body;
};

enum class MemoryScope : uint8_t {
  Register,  // small, constant-indexed after unrolling: promoted to named registers
  Stack,     // a local array
  Shared,    // GPU shared memory
};
const char* memory_scope_name(MemoryScope s);

struct AllocateNode : StmtNodeBase<NodeKind::Allocate> {
  std::string buffer;
  Type type;  // element type
  int64_t size = 0;
  MemoryScope scope = MemoryScope::Stack;
  Stmt body;
};

// A hint to bring buffer[index] into the cache; never faults (out-of-range
// prefetches are harmless on CPUs and are skipped on GPUs).
struct PrefetchNode : StmtNodeBase<NodeKind::Prefetch> {
  std::string buffer;
  Expr index;
};

struct EvaluateNode : StmtNodeBase<NodeKind::Evaluate> {
  Expr value;
};

// One iterator of a sparse iteration: variable `var` ranges over the coordinates
// of `axis`; spatial iterators index the output, reduction iterators are summed.
struct IterVar {
  std::string var;
  Axis axis;
  bool reduction = false;
};

// Stage I: `for var_0 in axis_0, var_1 in axis_1, ...: body`, with `init` run for
// each point of the output before the reduction starts. Consecutive iterators with
// the same fuse group are lowered as one loop over their joint positions
// (sparse_fuse); by default every iterator is its own group.
struct SparseIterationNode : StmtNodeBase<NodeKind::SparseIteration> {
  std::string name;
  std::vector<IterVar> iters;
  std::vector<int> fuse_group;  // one entry per iterator
  Stmt init;                    // may be undefined
  Stmt body;
};

// ---- factories ----------------------------------------------------------------

Stmt for_loop(const std::string& var, Expr min, Expr extent, ForKind kind, Stmt body, Annotations ann = {});
Stmt store(const std::string& buffer, Expr index, Expr value, StoreKind kind = StoreKind::Plain);
Stmt sparse_store(const SparseBuffer& b, std::vector<Expr> indices, Expr value);
// Flattens nested sequences and drops undefined statements; a single statement is
// returned as itself and an empty list as an undefined Stmt.
Stmt seq(std::vector<Stmt> stmts);
Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case = Stmt());
Stmt let_stmt(const std::string& var, Expr value, Stmt body);
Stmt allocate(const std::string& buffer, Type type, int64_t size, MemoryScope scope, Stmt body);
Stmt prefetch(const std::string& buffer, Expr index);
Stmt evaluate(Expr value);
// A barrier among the threads of a GPU block (evaluate(sync_threads call)); a no-op
// when run serially.
Stmt sync_threads();
Stmt sparse_iteration(const std::string& name, std::vector<IterVar> iters, Stmt init, Stmt body,
                      std::vector<int> fuse_group = {});


}  // namespace strata::sc
