#!/usr/bin/env python3
"""How few rows an R-GCN layer must transform, per relation, on a heterograph
written by `strata export --hetero` (hetero_indptr/indices/etype .npy, rows are
destinations).

Every non-zero (i, j) of relation r needs X[j] W_r, either through the
destination's aggregated row (fused: one transform per (r, i) pair) or through
the source's row (transform-first: one per (r, j)). The mixed order takes the
fewer of the two per relation; the fewest possible, mixing per non-zero, is a
minimum vertex cover of the relation's bipartite graph, whose size is its
maximum matching (Koenig's theorem). Not part of the build; needs numpy, scipy.

    strata export --graph acm --feat 8 --out /tmp/exp-acm --hetero
    python3 benchmarks/reference/rgcn_transform_bound.py /tmp/exp-acm
"""
import sys

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching


def main(folders):
    for d in folders:
        indptr = np.load(f"{d}/hetero_indptr.npy")
        indices = np.load(f"{d}/hetero_indices.npy")
        etype = np.load(f"{d}/hetero_etype.npy")
        n = len(indptr) - 1
        rows = np.repeat(np.arange(n), np.diff(indptr))
        pairs = fewer = cover = 0
        for r in range(int(etype.max()) + 1):
            m = etype == r
            a = sp.csr_matrix((np.ones(int(m.sum())), (rows[m], indices[m])), shape=(n, n))
            a.data[:] = 1  # duplicates summed by the constructor
            dst, src = np.unique(rows[m]).size, np.unique(indices[m]).size
            c = int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum())
            print(f"{d} relation {r}: {int(m.sum())} non-zeros, {dst} rows, {src} sources, "
                  f"fewer of the two {min(dst, src)}, minimum cover {c}")
            pairs, fewer, cover = pairs + dst, fewer + min(dst, src), cover + c
        print(f"{d}: transformed rows fused {pairs}, mixed {fewer}, minimum {cover}; "
              f"the layer's self loop adds {n}; a per-relation loop transforms {(int(etype.max()) + 2) * n}")


if __name__ == "__main__":
    main(sys.argv[1:])
