#include "sparse_compiler/passes/fuse_row_programs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "sparse_compiler/passes/online_softmax.h"
#include "sparse_compiler/passes/pass_log.h"

namespace strata::sc {

Kernel fuse_row_programs(const std::vector<Kernel>& chain, const RowFusion& fusion) {
  PassLog log;
  std::vector<std::string> why;
  const std::set<std::string>& keep = fusion.outputs;
  Kernel k =
      log.run("fuse_row_loops", chain.front(), [&](const Kernel&) { return fuse_row_loops(chain, fusion.name); });
  k = log.run("inline_elementwise", k, [&](const Kernel& x) { return inline_elementwise(x, keep, &why); });
  k = log.run("defer_row_normalisation", k, [&](const Kernel& x) { return defer_row_normalisation(x, keep, &why); });
  k = log.run("fuse_edge_loops", k, [&](const Kernel& x) { return fuse_edge_loops(x, &why); });
  k = log.run("contract_edge_buffers", k, [&](const Kernel& x) { return contract_edge_buffers(x, keep, &why); });
  if (fusion.online_softmax) {
    const Kernel before = k;
    k = log.run("online_softmax", k, [&](const Kernel& x) { return online_softmax(x, &why); });
    STRATA_CHECK(!k.body.same_as(before.body), "fuse_row_programs({}): no online softmax applies{}{}", fusion.name,
                 why.empty() ? "" : ":\n  ", fmt::join(why, "\n  "));
  }
  for (const auto& name : keep) {
    const Param* p = k.find_param(name);
    STRATA_CHECK(p && p->role == ParamRole::Output, "fuse_row_programs({}): no program of the chain writes {}",
                 fusion.name, name);
  }
  std::vector<std::string> left;
  for (const auto& program : chain)
    for (const auto& p : program.params)
      if (p.role == ParamRole::Output && !keep.count(p.name) && k.find_param(p.name) &&
          std::find(left.begin(), left.end(), p.name) == left.end())
        left.push_back(p.name);
  STRATA_CHECK(left.empty(), "fuse_row_programs({}): {} still in memory after fusion{}{}", fusion.name,
               fmt::join(left, ", "), why.empty() ? "" : ":\n  ", fmt::join(why, "\n  "));
  return k;
}

}  // namespace strata::sc
