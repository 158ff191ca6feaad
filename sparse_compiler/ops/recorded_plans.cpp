#include "sparse_compiler/ops/recorded_plans.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_input.h"
#include "sparse_compiler/ops/rgms.h"

namespace strata::sc {

RecordedPlans RecordedPlans::read(const fs::path& kernels_json) {
  RecordedPlans out;
  out.file_ = kernels_json.string();
  std::error_code ec;
  STRATA_CHECK(fs::is_regular_file(kernels_json, ec) || !fs::exists(kernels_json, ec),
               "'{}' is not a regular file (a folder or a device?); expected a run dir's kernels.json", out.file_);
  const nlohmann::json j =
      parse_user_json(read_file(kernels_json), fmt::format("'{}'", out.file_), "a run dir's kernels.json");
  STRATA_CHECK(j.is_object() && j.contains("kernels") && j["kernels"].is_array(),
               "'{}': no \"kernels\" list; expected a run dir's kernels.json "
               "(a single plan file is read by "
               "`strata compile --plan` without --role)",
               out.file_);
  size_t k = 0;
  for (const auto& e : j["kernels"]) {
    const std::string where = fmt::format("'{}': kernels[{}]", out.file_, k++);
    if (e.is_object() && !e.contains("plan") && e.contains("order")) {  // an R-GCN kernel set
      STRATA_CHECK(e.contains("role") && e["role"].is_string() && e["order"].is_string(),
                   "{}: an order without a string \"role\" and \"order\"", where);
      const std::string order = e["order"].get<std::string>();
      if (order == "-") continue;  // a set with no order to choose (one-hot, basis)
      parse_rgms_order(order, where + ".order");
      STRATA_CHECK(out.orders_.emplace(e["role"].get<std::string>(), order).second, "{}: role '{}' is listed twice",
                   where, e["role"].get<std::string>());
      continue;
    }
    if (!e.is_object() || !e.contains("plan")) continue;
    STRATA_CHECK(e.contains("role") && e["role"].is_string() && e.contains("program") && e["program"].is_string(),
                 "{}: a plan without a string \"role\" and \"program\"", where);
    const std::string role = e["role"].get<std::string>();
    RecordedPlan r{e["program"].get<std::string>(), sc::SpmmPlan::from_json(e["plan"].dump(), where + ".plan")};
    STRATA_CHECK(out.by_role_.emplace(role, std::move(r)).second, "{}: role '{}' is listed twice", where, role);
  }
  STRATA_CHECK(!j["kernels"].empty(), "'{}': its \"kernels\" list is empty", out.file_);
  STRATA_CHECK(!out.by_role_.empty() || !out.orders_.empty(), "'{}': holds no kernel plan and no relational order",
               out.file_);
  return out;
}

const std::string& RecordedPlans::order_for(const std::string& role, const std::string& key) const {
  auto it = orders_.find(role);
  if (it != orders_.end()) return it->second;
  std::vector<std::string> have;
  for (const auto& [r, o] : orders_) have.push_back(r);
  STRATA_FAIL("{} '{}' has no relational order for the kernel set '{}' ({})", key, file_, role,
              have.empty() ? std::string("it records none: not an R-GCN run's kernels.json")
                           : fmt::format("it holds: {}", fmt::join(have, "; ")));
}

RecordedPlans RecordedPlans::scoped(const std::string& prefix) const {
  RecordedPlans out;
  out.file_ = file_;
  out.prefix_ = prefix_ + prefix;
  for (const auto& [role, r] : by_role_)
    if (role.starts_with(prefix)) out.by_role_.emplace(role.substr(prefix.size()), r);
  return out;
}

std::vector<std::string> RecordedPlans::roles() const {
  std::vector<std::string> out;
  for (const auto& [role, r] : by_role_) out.push_back(role);
  return out;
}

const RecordedPlan& RecordedPlans::at(const std::string& role, const std::string& key) const {
  auto it = by_role_.find(role);
  if (it != by_role_.end()) return it->second;
  std::vector<std::string> held;
  for (const auto& [r, plan] : by_role_) held.push_back(prefix_ + r);
  STRATA_FAIL("{} '{}' has no plan for the kernel '{}' ({})", key, file_, prefix_ + role,
              !held.empty()      ? fmt::format("it holds: {}", fmt::join(held, "; "))
              : !prefix_.empty() ? fmt::format("it records no kernel of '{}': the recorded run built none for it",
                                               prefix_.substr(0, prefix_.size() - 1))
                                 : std::string("it records none: an R-GCN run's relational orders only"));
}

const sc::SpmmPlan& RecordedPlans::plan_for(const std::string& role, const std::string& program,
                                            const std::string& key) const {
  const RecordedPlan& r = at(role, key);
  STRATA_CHECK(r.program == program,
               "{} '{}': the plan for '{}' was recorded for program {}, but "
               "this run builds {} for it (another feature "
               "width, index type or model?)",
               key, file_, prefix_ + role, r.program, program);
  return r.plan;
}

bool RecordedPlans::looks_like_kernels_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("kernels");
}

}  // namespace strata::sc
