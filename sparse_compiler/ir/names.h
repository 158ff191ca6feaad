// Fresh, readable, kernel-unique names for variables and buffers that passes
// introduce ("j_init", "mid_0", "acc_Y").
#pragma once

#include <set>
#include <string>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

class NameGen {
 public:
  NameGen() = default;
  // Reserves every name already used in the kernel (params, axes, buffers,
  // variables, loop variables, allocations).
  explicit NameGen(const Kernel& k);
  void reserve(const std::string& name) { used_.insert(name); }
  bool used(const std::string& name) const { return used_.count(name) > 0; }
  // `base` if free, else base_1, base_2, ...; the result is reserved.
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> used_;
};

}  // namespace strata::sc
