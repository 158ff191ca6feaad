// Kernel plans recorded by an earlier run and replayed by this one
// (runtime.plans; `strata compile --plan kernels.json --role ...`). A run dir's
// kernels.json lists every SpMM kernel the run built: its role ("mean f=32
// forward"), the program it compiled ("spmm_f32_i32_rs") and the plan it ran.
// Read back, those plans give the same code for the same kernels with no tuning
// and no size rules, so a measured configuration can be repeated exactly on
// another day or machine, or one kernel's code be printed for study.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sparse_compiler/ops/plan.h"

namespace strata::sc {

namespace fs = std::filesystem;

struct RecordedPlan {
  std::string program;  // the op program the plan was recorded for
  sc::SpmmPlan plan;
};

class RecordedPlans {
 public:
  // Reads a run's kernels.json (a JSON object with a "kernels" list). Entries
  // without a plan (R-GCN's relational kernels, which record an order) are
  // skipped; a file with no plan at all, a role listed twice or a malformed
  // plan is refused, naming the file and the entry.
  static RecordedPlans read(const fs::path& kernels_json);

  const std::string& file() const { return file_; }
  // The plan recorded for `role`, checked against the program this run builds
  // for it: a missing role or another program (other width, index type or
  // scaling) is a UserError naming `key` (the config key or option that named
  // the file).
  const sc::SpmmPlan& plan_for(const std::string& role, const std::string& program, const std::string& key) const;
  // The record of `role` (program and plan); a missing role is a UserError
  // naming `key`.
  const RecordedPlan& at(const std::string& role, const std::string& key) const;
  // Whether `text` is a run's kernels.json rather than a single plan.
  static bool looks_like_kernels_json(const std::string& text);
  std::vector<std::string> roles() const;

 private:
  std::string file_;
  std::map<std::string, RecordedPlan> by_role_;
};

}  // namespace strata::sc
