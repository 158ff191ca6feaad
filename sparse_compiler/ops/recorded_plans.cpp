#include "sparse_compiler/ops/recorded_plans.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"

namespace strata::sc {

RecordedPlans RecordedPlans::read(const fs::path& kernels_json) {
  RecordedPlans out;
  out.file_ = kernels_json.string();
  std::error_code ec;
  STRATA_CHECK(fs::is_regular_file(kernels_json, ec) || !fs::exists(kernels_json, ec),
               "'{}' is not a regular file (a folder or a device?); expected a run dir's kernels.json", out.file_);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(kernels_json));
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("'{}': not JSON ({}); expected a run dir's kernels.json", out.file_, e.what());
  }
  STRATA_CHECK(j.is_object() && j.contains("kernels") && j["kernels"].is_array(),
               "'{}': no \"kernels\" list; expected a run dir's kernels.json "
               "(a single plan file is read by "
               "`strata compile --plan` without --role)",
               out.file_);
  size_t k = 0;
  for (const auto& e : j["kernels"]) {
    const std::string where = fmt::format("'{}': kernels[{}]", out.file_, k++);
    if (!e.is_object() || !e.contains("plan")) continue;  // an R-GCN order, not a plan
    STRATA_CHECK(e.contains("role") && e["role"].is_string() && e.contains("program") && e["program"].is_string(),
                 "{}: a plan without a string \"role\" and \"program\"", where);
    const std::string role = e["role"].get<std::string>();
    RecordedPlan r{e["program"].get<std::string>(), sc::SpmmPlan::from_json(e["plan"].dump(), where + ".plan")};
    STRATA_CHECK(out.by_role_.emplace(role, std::move(r)).second, "{}: role '{}' is listed twice", where, role);
  }
  STRATA_CHECK(!j["kernels"].empty(), "'{}': its \"kernels\" list is empty", out.file_);
  STRATA_CHECK(!out.by_role_.empty(), "'{}': holds no kernel plan (R-GCN runs record relational orders, not plans)",
               out.file_);
  return out;
}

std::vector<std::string> RecordedPlans::roles() const {
  std::vector<std::string> out;
  for (const auto& [role, r] : by_role_) out.push_back(role);
  return out;
}

const RecordedPlan& RecordedPlans::at(const std::string& role, const std::string& key) const {
  auto it = by_role_.find(role);
  STRATA_CHECK(it != by_role_.end(), "{} '{}' has no plan for the kernel '{}' (it holds: {})", key, file_, role,
               fmt::join(roles(), "; "));
  return it->second;
}

const sc::SpmmPlan& RecordedPlans::plan_for(const std::string& role, const std::string& program,
                                            const std::string& key) const {
  const RecordedPlan& r = at(role, key);
  STRATA_CHECK(r.program == program,
               "{} '{}': the plan for '{}' was recorded for program {}, but "
               "this run builds {} for it (another feature "
               "width, index type or model?)",
               key, file_, role, r.program, program);
  return r.plan;
}

bool RecordedPlans::looks_like_kernels_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("kernels");
}

}  // namespace strata::sc
