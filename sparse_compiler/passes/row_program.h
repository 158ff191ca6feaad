// Row programs: the shape every fusion pass over stage-I programs works on. A row
// program's body is one sparse iteration over a root axis (the rows), and a row's
// work is a sequence of nests (sparse iterations, usually over the row's edges
// and heads) run in order by whoever owns the row. GAT's score, edge softmax and
// aggregation are row programs; so is their fusion.
//
// Also here: the stage-I access queries the fusion passes share (which buffers a
// statement reads and writes, at which indices, in program order).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"
#include "sparse_compiler/ir/names.h"

namespace strata::sc {

struct RowProgram {
  std::string name;         // the row iteration's name
  IterVar row;              // the row iterator (spatial, over a root axis)
  std::vector<Stmt> nests;  // one row's work, in order
};

// Splits k's body into its row iteration and the nests under it; an iteration
// that also iterates below the row (`for i, j, h`) gives one nest over the rest.
// Throws InternalError naming `pass` when k is not a row program.
RowProgram row_program(const Kernel& k, const char* pass);
// k with its body rebuilt from `rows`.
Kernel with_rows(Kernel k, const RowProgram& rows);

// s as a nest that computes one value per point (no init, no reduction
// iterator), else null.
const SparseIterationNode* pointwise_nest(const Stmt& s);

// An axis right below the row whose positions are the row's edges (CSR's columns).
bool is_edge_axis(const Axis& a, const Axis& row);
// A nest over `axes` (one fresh spatial iterator each, named after its axis)
// around body(the iterators); just the body when there are no axes.
Stmt nest_over(const std::string& name, const std::vector<Axis>& axes, NameGen& names,
               const std::function<Stmt(const std::vector<Expr>&)>& body);

// One access to a sparse buffer, in program order (a store after the loads in
// its value and indices).
struct SparseAccess {
  std::string buffer;
  bool store = false;
  std::vector<Expr> indices;
};
std::vector<SparseAccess> sparse_accesses(const Stmt& s);
std::vector<SparseAccess> sparse_accesses(const Expr& e);
std::set<std::string> buffers_read(const Stmt& s);
std::set<std::string> buffers_written(const Stmt& s);
bool reads_sparse_buffer(const Expr& e, const std::string& buffer);
bool is_var(const Expr& e, const std::string& name);
bool same_indices(const std::vector<Expr>& a, const std::vector<Expr>& b);
// The factors of a product (e itself when it is not one).
void product_factors(const Expr& e, std::vector<Expr>& out);

// Replaces every load of `buffer` by fn(the load's indices, already rewritten).
Stmt replace_loads(const Stmt& s, const std::string& buffer, const std::function<Expr(const std::vector<Expr>&)>& fn);
Expr replace_loads(const Expr& e, const std::string& buffer, const std::function<Expr(const std::vector<Expr>&)>& fn);

// Renames variables wherever they are bound (iterators, lets) and used.
Stmt rename_vars(const Stmt& s, const std::map<std::string, std::string>& renames);
// Every variable a statement binds (iterators and lets), nested ones included.
std::set<std::string> bound_vars(const Stmt& s);

// Appends `reason` to *why (when given) unless it is there already: why a
// rewrite left something as it was.
void add_reason(std::vector<std::string>* why, std::string reason);

// `buffer` with its parameter and declaration gone from k.
void drop_buffer(Kernel& k, const std::string& buffer);
// Declares `b` in k with parameter `p`, placed after the buffer parameters.
void add_buffer(Kernel& k, const SparseBuffer& b, Param p);
// Buffer parameters first, then scalars, each in their order (readable signatures).
void order_params(Kernel& k);

}  // namespace strata::sc
