// What the C++ and CUDA emitters print alike. Both turn stage-III IR into C-family
// source; they differ in loops (OpenMP vs blockIdx/threadIdx), stores, allocations,
// vector values and intrinsics, and agree on the rest: blocks, conditionals, lets,
// serial loops whose bounds are evaluated once, register variables, and every scalar
// operator. A target derives from CSourceEmitter and prints what differs through the
// hooks; the shared printing lives here once.
#pragma once

#include <map>
#include <sstream>
#include <string>

#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {

// The C type of a scalar IR type ("float", "int64_t", "bool").
std::string c_scalar(Type t);
// A kernel name made into a C identifier (anything but [A-Za-z0-9_] becomes '_').
std::string c_identifier(const std::string& name);

class CSourceEmitter {
 public:
  virtual ~CSourceEmitter() = default;
  CSourceEmitter(const CSourceEmitter&) = delete;
  CSourceEmitter& operator=(const CSourceEmitter&) = delete;

 protected:
  // `target` names the emitter in internal errors ("C++", "CUDA").
  CSourceEmitter(std::ostringstream& os, std::string target) : os_(os), target_(std::move(target)) {}

  // Prints a statement at indentation `ind` (two spaces a level).
  void stmt(const Stmt& s, int ind);
  // An expression as C source; scalar operators here, the rest through target_expr.
  std::string expr(const Expr& e);

  // ---- hooks: what each target prints its own way ----
  virtual void emit_for(const ForNode* n, int ind) = 0;
  virtual void emit_store(const StoreNode* n, int ind) = 0;
  virtual void emit_allocate(const AllocateNode* n, int ind) = 0;
  virtual void emit_prefetch(const PrefetchNode* n, int ind) = 0;
  virtual void emit_evaluate(const EvaluateNode* n, int ind);  // "(void)(value);"
  // Vector values, loads, min/max, calls, reductions: whatever expr() leaves.
  virtual std::string target_expr(const Expr& e) = 0;
  // The C type of a scalar or vector IR type.
  virtual std::string c_type(Type t) const = 0;
  // NaN and infinities (finite literals are printed alike).
  virtual std::string nonfinite_literal(double v, Type t) const = 0;
  // Appended to 64-bit integer literals ("LL" where the compiler needs it).
  virtual const char* int64_suffix() const { return ""; }

  // ---- shared pieces the hooks build on ----
  // A loop whose bounds are evaluated once, into strata_lo<id> and strata_hi<id>
  // (names no IR variable uses). `pragma` (one line, or empty; "{0}" in it stands for
  // <id>) precedes the loop; `tail` (one line, or empty) ends its body.
  void bounded_for(const ForNode* n, int ind, const std::string& pragma, const std::string& tail);
  std::string float_literal(double v, Type t) const;
  std::string bin(const Expr& a, const Expr& b, const char* op);
  static std::string pad(int ind) { return std::string(static_cast<size_t>(ind) * 2, ' '); }
  [[noreturn]] void unexpected(NodeKind kind) const;

  bool is_register_var(const std::string& buffer) const { return registers_.count(buffer) > 0; }
  // A register variable is only ever accessed whole (promote_registers guarantees it).
  void check_whole(const std::string& buffer, const Expr& index) const;

  std::ostringstream& os_;
  std::map<std::string, int> registers_;  // promoted register variables in scope -> lanes

 private:
  std::string target_;
  int next_id_ = 0;
};

}  // namespace strata::sc
