// Finding and replacing loops by name in a statement tree (loop variables are
// unique within a kernel, so a name identifies a loop).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {

class NameGen;

// The loop with variable `var`, or nullptr.
const ForNode* find_loop(const Stmt& root, const std::string& var);
// The loops enclosing `var`'s loop, outermost first (excluding it).
std::vector<const ForNode*> enclosing_loops(const Stmt& root, const std::string& var);
// All loop variables in program order.
std::vector<std::string> loop_names(const Stmt& root);
// root with the loop `var` replaced by replace(loop); the loop must exist.
Stmt replace_loop(const Stmt& root, const std::string& var, const std::function<Stmt(const ForNode*)>& replace);
// `s` with every variable, loop and local declared inside it given the suffix, so
// several copies of one nest can sit side by side in a kernel. With `fresh`, each
// new name is fresh->fresh(name + suffix): unique in the kernel it reserved.
Stmt rename_locals(const Stmt& s, const std::string& suffix, NameGen* fresh = nullptr);
// True when expression/statement mentions variable `name`.
bool uses_var(const Expr& e, const std::string& name);
bool uses_var(const Stmt& s, const std::string& name);
// True when the statement reads or writes buffer `name`.
bool touches_buffer(const Stmt& s, const std::string& name);
// True when the statement loads from buffer `name`.
bool reads_buffer(const Stmt& s, const std::string& name);
// True when the statement stores to buffer `name`.
bool writes_buffer(const Stmt& s, const std::string& name);

}  // namespace strata::sc
