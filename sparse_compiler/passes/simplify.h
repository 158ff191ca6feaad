// Algebraic simplification and dead-code removal, valid at every stage.
//
// Integer sums are put in a canonical linear form (terms in order of first
// appearance, positive terms first, the constant last), so `indptr[i] + (p -
// indptr[i])` becomes `p`; constants fold; selects and ifs on constant conditions
// pick their branch; loops of extent 0 disappear and loops of extent 1 become their
// body; lets of constants or variables are substituted; unused lets and pure
// evaluates are dropped.
#pragma once

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Expr simplify(const Expr& e);
Stmt simplify(const Stmt& s);
Kernel simplify(const Kernel& k);

}  // namespace strata::sc
