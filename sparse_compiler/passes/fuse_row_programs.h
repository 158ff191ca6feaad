// Stage I -> I. Producer-consumer fusion of row programs (row_program.h): a chain
// of kernels that iterate the same rows and pass buffers indexed by the row from
// one to the next (GAT's score -> edge softmax -> aggregation) becomes one kernel
// in which the intermediates never reach memory. Five rewrites, each checked for
// legality, each usable alone, run in this order by fuse_row_programs:
//
//   fuse_row_loops          the programs' row iterations become one; a row runs
//                           each program's work in turn. Legal when every buffer
//                           that one program writes and another touches is only
//                           touched at the row being worked on.
//   inline_elementwise      a nest that computes B[i, j, h] = f(i, j, h) at every
//                           point, with nothing else writing B, is substituted into
//                           B's readers and dropped (scores recomputed where read).
//   defer_row_normalisation B[i, j, h] /= d[i, h] followed only by sums
//                           Y[i, ..] += B[i, j, h] * t over j: the division moves
//                           after the sum (Y /= d), once per output instead of once
//                           per edge. Legal when d is a sum of exponentials, so it
//                           is zero exactly when the row has no edges (Y stays 0;
//                           were every term to underflow, the chain would divide
//                           0 by 0 where the fused kernel gives 0).
//   fuse_edge_loops         adjacent nests over the row's edges become one edge
//                           loop when the second reads what the first wrote only
//                           at the same edge, and the first reads nothing the
//                           second writes.
//   contract_edge_buffers   an edge buffer written and read within one iteration
//                           of one edge loop becomes per-row scratch over its
//                           other axes ([I, H]; the CPU schedule keeps it in
//                           registers and drops the parameter).
// and, asked for, online_softmax (online_softmax.h): the row max pass merged into
// the edge loop with a running max, every sum rescaled as the max grows.
//
// Each rewrite applies wherever it is legal and leaves the rest; it appends why it
// refused a candidate to `why`, and fuse_row_programs fails with those reasons when
// an intermediate is left in memory. A fused kernel computes what the chain
// computed, up to float rounding (the deferred division rounds differently).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel fuse_row_loops(const std::vector<Kernel>& chain, const std::string& name);
// `keep`: buffers the caller reads after the kernel ran, never eliminated.
Kernel inline_elementwise(const Kernel& k, const std::set<std::string>& keep, std::vector<std::string>* why = nullptr);
Kernel defer_row_normalisation(const Kernel& k, const std::set<std::string>& keep,
                               std::vector<std::string>* why = nullptr);
Kernel fuse_edge_loops(const Kernel& k, std::vector<std::string>* why = nullptr);
Kernel contract_edge_buffers(const Kernel& k, const std::set<std::string>& keep,
                             std::vector<std::string>* why = nullptr);

struct RowFusion {
  std::string name;                 // the fused kernel's name
  std::set<std::string> outputs;    // what the fused kernel must still write
  bool online_softmax = false;
};

// Every rewrite above; throws UserError when a buffer the chain wrote and
// `fusion.outputs` does not list is still in memory afterwards (or, asked for an
// online softmax, when it does not apply), with the reasons the rewrites gave.
Kernel fuse_row_programs(const std::vector<Kernel>& chain, const RowFusion& fusion);

}  // namespace strata::sc
