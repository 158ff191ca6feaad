// Lowered kernels by a key that fixes their lowering: the op's program and its plan or
// knobs ("spmm\n<spec>\n<plan>", "gat|…", "max|…"). Graphs that share both, such as
// every mini-batch's blocks, reuse what an earlier graph lowered instead of running
// the passes again (about 0.2 ms a kernel, per batch). The same key names the compiled
// kernel in compile_cpu_memoized (codegen/compiled_kernel.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// Keys kept at most; the memo starts over when full (tuned plans and knobs vary).
inline constexpr size_t kLoweringMemoSize = 512;

// The kernel lowered under `key`, from the memo or by `lower()`, whose result is kept.
// Thread-safe; `lower` runs outside the lock. A key must never name two lowerings.
Kernel lower_memoized(const std::string& key, const std::function<Kernel()>& lower);

}  // namespace strata::sc
