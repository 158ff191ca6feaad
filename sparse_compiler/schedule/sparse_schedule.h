// Stage-I schedule primitives: they rewrite a sparse iteration before lowering.
//   sparse_reorder(k, it, order)  permutes the iterators of sparse iteration `it`;
//                                 refused when a child axis would precede its parent.
//   sparse_fuse(k, it, {i, j})    lowers consecutive iterators i, j as one loop over
//                                 their joint positions (COO-style; the row of each
//                                 position comes from a search hoisted to preprocess).
//   sparse_split(k, it, f, w)     splits dense-fixed iterator f (length F, w | F) into
//                                 f_o over F/w and f_i over w, with f = f_o * w + f_i
//                                 (feature tiling: reorder f_o outermost next).
// Each throws ScheduleError naming the iteration and iterators when refused.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ir/kernel.h"

namespace strata::sc {

Kernel sparse_reorder(const Kernel& k, const std::string& iteration, const std::vector<std::string>& order);
Kernel sparse_fuse(const Kernel& k, const std::string& iteration, const std::vector<std::string>& iters);
Kernel sparse_split(const Kernel& k, const std::string& iteration, const std::string& iter, int64_t factor);

}  // namespace strata::sc
