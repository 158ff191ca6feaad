// Splitting a batch of kernels into translation units compiled at once: a batch the
// caller needs soon (a tuner's candidates) compiles in about 1/units of the time
// when there are cores to spare. Shared by the CPU (compile_cpu) and CUDA
// (compile_cuda) paths; each unit is its own kernel cache entry.
#pragma once

#include <algorithm>
#include <exception>
#include <future>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// Deals `lowered` (kernels, or items that carry one) round-robin into up to `units`
// parts (neighbouring kernels, often variants of one format, cost alike, so dealing
// balances the parts better than cutting the batch into runs), compiles each with
// `compile(part)` on its own thread, and returns the results in the order of
// `lowered`. An exception from a part is rethrown after every part has finished.
template <class Compiled, class Item, class CompileFn>
std::vector<Compiled> compile_in_units(const std::vector<Item>& lowered, int units, CompileFn compile) {
  const size_t n = std::min(lowered.size(), static_cast<size_t>(std::max(units, 1)));
  if (n <= 1) return compile(lowered);
  std::vector<std::vector<Item>> parts(n);
  for (size_t i = 0; i < lowered.size(); ++i) parts[i % n].push_back(lowered[i]);
  std::vector<std::future<std::vector<Compiled>>> futures;
  for (size_t u = 0; u < n; ++u)
    futures.push_back(std::async(std::launch::async, [&parts, &compile, u] { return compile(parts[u]); }));
  std::vector<std::vector<Compiled>> done;
  std::exception_ptr error;
  for (auto& f : futures) {
    try {
      done.push_back(f.get());
    } catch (...) {
      if (!error) error = std::current_exception();
      done.emplace_back();
    }
  }
  if (error) std::rethrow_exception(error);
  std::vector<Compiled> out;
  out.reserve(lowered.size());
  for (size_t i = 0; i < lowered.size(); ++i) out.push_back(std::move(done[i % n][i / n]));
  return out;
}

}  // namespace strata::sc
