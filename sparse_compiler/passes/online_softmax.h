// Stage I -> I, on a row program (row_program.h). The online softmax (Milakov &
// Gimelshein; FlashAttention's running max): a pass over the row's edges that
// only finds the row max M,
//     for j, h:  M[i, h] = max(M[i, h], v(j, h))
// followed by an edge loop whose sums use it only through exp(x - M),
//     for j:  ... S[i, h] += exp(x - M[i, h]) ...  Y[i, h, f] += w[i, h] * X[j, h, f]
// become one edge loop that keeps a running max and rescales every such sum by
// exp(old max - new max) whenever the max grows:
//     for j:  for h: mx = max(M[i, h], v(j, h)); M_scale[i, h] = exp(M[i, h] - mx); M[i, h] = mx
//             ... S[i, h] = S[i, h] * M_scale[i, h] + exp(x - M[i, h]) ...
// The edges are read once instead of twice, for one more exp per edge and head
// and one more multiply per sum. Legal when every value in the edge loop that
// depends on M is exp(x - M) (x free of M), a product with one such factor added
// to a sum, or per-edge scratch holding one; anything else is refused with its
// reason. M ends as the row max and every sum as the two-pass one, up to rounding.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

// k with the first row max pass that qualifies merged into its edge loop; k
// unchanged (with the reasons appended to `why`) when none does.
Kernel online_softmax(const Kernel& k, std::vector<std::string>* why = nullptr);

}  // namespace strata::sc
