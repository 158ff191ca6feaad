// The IR printer. Its text is stable (fixed indentation, number formatting and
// ordering), because golden tests compare passes' output against it, and readable,
// because STRATA_DUMP_IR and `strata compile --emit` show it to people.
#pragma once

#include <ostream>
#include <string>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const Axis& a);
std::string to_string(const Kernel& k);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const Kernel& k);

}  // namespace strata::sc
