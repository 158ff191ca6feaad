#include "sparse_compiler/passes/pass_log.h"

#include <algorithm>
#include <cstdio>

#include "core/file_util.h"
#include "sparse_compiler/ir/printer.h"

namespace strata::sc {

PassLog::PassLog() : dump_(env_flag("STRATA_DUMP_IR")), time_(env_flag("STRATA_TIME_PASSES")) {}

PassLog::~PassLog() {
  if (!time_ || times_.empty()) return;
  auto sorted = times_;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  double total = 0;
  for (const auto& t : sorted) total += t.second;
  std::fprintf(stderr, "pass times (total %.3f ms):\n", total);
  for (const auto& [n, ms] : sorted) std::fprintf(stderr, "  %-28s %9.3f ms\n", n.c_str(), ms);
}

void PassLog::record(const char* name, double ms, const Kernel& before, const Kernel& after) {
  times_.emplace_back(name, ms);
  if (!dump_) return;
  const bool changed = !after.body.same_as(before.body) || !after.preprocess.same_as(before.preprocess) ||
                       after.stage != before.stage || after.params.size() != before.params.size() ||
                       after.buffers.size() != before.buffers.size();
  if (changed) std::fprintf(stderr, "--- after %s ---\n%s", name, to_string(after).c_str());
}

}  // namespace strata::sc
