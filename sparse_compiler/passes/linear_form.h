// Integer expressions as linear forms: sum(coef_k * term_k) + constant, where the
// terms are the non-linear leaves (variables, loads, calls, products of two
// non-constants) compared structurally. The simplifier canonicalises sums with
// it; schedules use it to find how an access index depends on loop variables.
#pragma once

#include <utility>
#include <vector>

#include "sparse_compiler/ir/expr.h"

namespace strata::sc {

struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;  // in order of first appearance
  int64_t constant = 0;

  void add_term(const Expr& t, int64_t coef);
  void add(const LinearForm& o, int64_t scale);
  // The coefficient of variable `name` (0 if absent).
  int64_t coefficient_of_var(const std::string& name) const;
  // This form without the terms that are exactly variable `name`.
  LinearForm without_var(const std::string& name) const;
};

// True when a and b have the same constant and the same terms with the same
// coefficients (in any order).
bool same_linear_form(const LinearForm& a, const LinearForm& b);

LinearForm to_linear(const Expr& e);
// Rebuilds an expression of type t: positive terms first, then negative ones,
// then the constant.
Expr from_linear(const LinearForm& f, Type t);

}  // namespace strata::sc
