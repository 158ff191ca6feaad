#include "sparse_compiler/passes/lowering_memo.h"

#include <mutex>
#include <unordered_map>

namespace strata::sc {

Kernel lower_memoized(const std::string& key, const std::function<Kernel()>& lower) {
  static std::mutex mutex;
  static std::unordered_map<std::string, Kernel> memo;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  Kernel lowered = lower();
  std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() >= kLoweringMemoSize) memo.clear();
  return memo.insert_or_assign(key, std::move(lowered)).first->second;
}

}  // namespace strata::sc
