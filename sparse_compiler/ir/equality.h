// Structural equality and hashing of IR trees: two trees are equal when they have
// the same shape, node kinds, types, names and constants. Used to memoise hoisted
// binary searches, to compare pass outputs, and to key caches.
#pragma once

#include <cstdint>

#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
uint64_t structural_hash(const Expr& e);
uint64_t structural_hash(const Stmt& s);

struct ExprHash {
  size_t operator()(const Expr& e) const { return structural_hash(e); }
};
struct ExprEqual {
  bool operator()(const Expr& a, const Expr& b) const { return structural_equal(a, b); }
};

}  // namespace strata::sc
