// Kernel plans recorded by an earlier run and replayed by this one
// (runtime.plans; `strata compile --plan kernels.json --role ...`). A run dir's
// kernels.json lists every SpMM kernel the run built: its role ("mean f=32
// forward"), the program it compiled ("spmm_f32_i32_rs") and the plan it ran.
// Read back, those plans give the same code for the same kernels with no tuning
// and no size rules, so a measured configuration can be repeated exactly on
// another day or machine, or one kernel's code be printed for study. An R-GCN
// run's kernels.json records, for each relational matmul kernel set, the order it
// ran (fused, transform-first, ...; sparse_compiler/ops/rgms.h) instead of a plan,
// and plans for the SpMMs of its sparse input features under "<type> <role>".
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
  // Reads a run's kernels.json (a JSON object with a "kernels" list): the entries
  // with a plan, and those with a relational order ("-": a kernel set with no
  // order to choose, skipped). A file with neither, a role listed twice, a
  // malformed plan or an unknown order is refused, naming the file and the entry.
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
  // The relational order recorded for `role` (an rgms_order_name); a missing role
  // is a UserError naming `key`.
  const std::string& order_for(const std::string& role, const std::string& key) const;
  // The plans whose role starts with `prefix`, under their role without it (an
  // R-GCN run records a node type's feature kernels as "<type> <role>").
  RecordedPlans scoped(const std::string& prefix) const;
  // Whether `text` is a run's kernels.json rather than a single plan.
  static bool looks_like_kernels_json(const std::string& text);
  std::vector<std::string> roles() const;

 private:
  std::string file_;
  std::string prefix_;  // scoped(): what the file's roles carry before the roles asked for
  std::map<std::string, RecordedPlan> by_role_;
  std::map<std::string, std::string> orders_;  // role -> relational order
};

}  // namespace strata::sc
