// Shared neighbour pairs: the inspector of a rewrite that removes repeated work from an
// unweighted aggregation Y[i] = sum_{j in N(i)} X[j] (SpMM without edge values, or with
// values that factor into row and column scales, as GCN's and GraphSAGE-mean's do).
//
// When columns u and v appear together in many rows, each of those rows adds X[u] + X[v]
// on its own. The rewrite sums each such pair once, as a new row of an extended operand
// (X followed by the pair sums), and lets every row that holds both read the one sum
// instead: a gather and an add fewer per row (Jia et al., "Redundancy-Free Computation for
// Graph Neural Networks", KDD 2020, whose hierarchically aggregated graphs this builds
// greedily in rounds). A round's pairs may join sums of earlier rounds, so the sums are
// computed round by round, before the rows.
//
// The rewrite is found for a range of rows, so that each thread of a kernel can own one
// share of the rows and the sums its rows read: it then sums its own pairs and its own rows
// with no barrier between rounds and no line written by another core
// (benchmarks/experiments/spmm_shared_pairs.cpp measures both forms; docs/BENCHMARKS.md,
// "Shared neighbour pairs"). It does not apply where edges carry their own values (GAT's
// attention, SDDMM): a sum stands for two edges, not one.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace strata::sc {

struct SharedPairsOptions {
  int rounds = 4;                       // rounds of pair finding; 0 leaves the rows as they are
  int scan = 128;                       // pairs are counted among each row's first `scan` ids (ascending)
  int64_t min_rows = 4;                 // a pair is summed only if at least this many rows hold it (>= 3:
                                        // a sum costs two gathers and saves one per row)
  int64_t max_keys = int64_t{1} << 26;  // pair keys counted per round; `scan` halves until under
};

// Ids below `cols` name columns of A (rows of X); id cols + k names pair sum k.
struct SharedPairs {
  int64_t cols = 0;
  int64_t row_begin = 0, row_end = 0;   // the rows of A this rewrite covers
  std::vector<int64_t> round_begin{0};  // round r's sums are k in [round_begin[r], round_begin[r + 1])
  std::vector<int64_t> pair_a, pair_b;  // sum k = row pair_a[k] + row pair_b[k] (ids of earlier rounds or X)
  std::vector<int64_t> indptr{0};       // per covered row, its ids in `indices`
  std::vector<int64_t> indices;         // each row ascending: its columns first, then its sums
  std::vector<int64_t> first_sum;       // per covered row: the position of its first sum

  int64_t sums() const { return static_cast<int64_t>(pair_a.size()); }
  int64_t rounds() const { return static_cast<int64_t>(round_begin.size()) - 1; }
  // Rows of X or of the sums read to compute the covered rows: one per row entry, two per sum.
  int64_t gathers() const { return static_cast<int64_t>(indices.size()) + 2 * sums(); }
};

// Finds pairs for rows [row_begin, row_end) of A (int32 or int64 indices), multi-threaded.
// Deterministic: the same graph and options give the same rewrite on any number of threads.
// Rows may hold a column more than once; the rewrite keeps every copy.
SharedPairs find_shared_pairs(const Graph& A, int64_t row_begin, int64_t row_end, const SharedPairsOptions& options);

// The columns a row of the rewrite stands for, ascending (sums expanded): what a test
// compares with the row of A.
std::vector<int64_t> expand_shared_row(const SharedPairs& s, int64_t row);

}  // namespace strata::sc
