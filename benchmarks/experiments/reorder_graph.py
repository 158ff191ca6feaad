#!/usr/bin/env python3
"""An experiment, not part of Strata: renumber a graph's nodes and write it as Matrix Market.

Reads a folder written by `strata export` (indptr.npy, indices.npy) and writes
<out>_orig.mtx (the graph as exported), <out>_rcm.mtx (reverse Cuthill-McKee, scipy) and
<out>_deg.mtx (nodes by falling degree), each with the same permutation applied to rows and
columns. `strata bench spmm --graph mtx:<file>` then times the generated kernels on each order.
Needs scipy (the peers' virtual environment).

    build/apps/strata export --graph condmat --feat 32 --out /tmp/ro/condmat
    python3 benchmarks/experiments/reorder_graph.py /tmp/ro/condmat /tmp/ro/condmat
    chrt -f 50 build/apps/strata bench spmm --graph mtx:/tmp/ro/condmat_orig.mtx \\
        --graph mtx:/tmp/ro/condmat_rcm.mtx --feat 32,64 --backend plain_csr,tuned --threads 2

Measured on the Xeon VM, 2026-12-05 (docs/BENCHMARKS.md, "Column tiles"): it speeds up the
plain kernel as much as the tuned one, so it is a load-time renumbering, not a schedule.
"""
import os
import sys

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee


def write_mtx(path, A):
    coo = A.tocoo()
    with open(path + ".tmp", "w") as f:
        f.write("%%MatrixMarket matrix coordinate pattern general\n")
        f.write(f"{A.shape[0]} {A.shape[1]} {coo.nnz}\n")
        np.savetxt(f, np.stack([coo.row + 1, coo.col + 1], 1), fmt="%d")
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: reorder_graph.py EXPORT_DIR OUT_PREFIX")
    src, out = sys.argv[1], sys.argv[2]
    indptr = np.load(f"{src}/indptr.npy")
    indices = np.load(f"{src}/indices.npy")
    n = len(indptr) - 1
    A = sp.csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr), shape=(n, n))
    orders = {
        "orig": np.arange(n),
        "rcm": reverse_cuthill_mckee(A, symmetric_mode=True),
        "deg": np.argsort(-np.diff(indptr), kind="stable"),
    }
    for name, perm in orders.items():
        B = A[perm][:, perm]
        coo = B.tocoo()
        print(f"{name}: mean |row - col| = {np.mean(np.abs(coo.row - coo.col)):.0f}")
        write_mtx(f"{out}_{name}.mtx", B)


if __name__ == "__main__":
    main()
