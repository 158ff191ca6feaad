"""SpMM (sum, mean) and SDDMM (dot) in one Python peer, on the inputs of `strata export`.

    python kernels_py.py SYSTEM EXPORT_DIR THREADS F,F,...

SYSTEM is torch, pyg, dgl or scipy. Each system's paths are its documented ways to
compute the op on CPU; every path is checked against Strata's reference and timed,
and the report takes each system's fastest correct path. Run it with
OMP_NUM_THREADS=THREADS (the driver does) so OpenMP-based kernels (DGL) get the same
threads as torch.set_num_threads(THREADS). Not part of Strata.
"""
import sys

import numpy as np

from common import die, emit, emit_version, load_export, load_feat, run_checked, too_big


def torch_csr(torch, indptr, indices, rows, cols, values=None):
    v = torch.ones(len(indices), dtype=torch.float32) if values is None else torch.from_numpy(values)
    return torch.sparse_csr_tensor(torch.from_numpy(indptr.astype(np.int64)), torch.from_numpy(indices.astype(np.int64)),
                                   v, size=(rows, cols))


def inv_deg_values(indptr):
    deg = np.diff(indptr)
    return np.repeat((1.0 / np.maximum(deg, 1)).astype(np.float32), deg)


def run_torch(d, meta, indptr, indices, feats, threads):
    import torch
    torch.set_num_threads(threads)
    emit_version(torch.__version__)
    rows, cols = meta["rows"], meta["cols"]
    A = torch_csr(torch, indptr, indices, rows, cols)
    An = torch_csr(torch, indptr, indices, rows, cols, inv_deg_values(indptr))
    for F in feats:
        f = load_feat(d, F)
        X, Y = torch.from_numpy(f["x"]), torch.from_numpy(f["y"])
        with torch.no_grad():
            run_checked("sparse.mm(csr)", "spmm_sum", F, lambda: torch.sparse.mm(A, X), f["spmm_sum"])
            run_checked("sparse.mm(csr,reduce=sum)", "spmm_sum", F, lambda: torch.sparse.mm(A, X, "sum"), f["spmm_sum"])
            run_checked("sparse.mm(csr,reduce=mean)", "spmm_mean", F, lambda: torch.sparse.mm(A, X, "mean"),
                        f["spmm_mean"])
            run_checked("sparse.mm(csr 1/deg)", "spmm_mean", F, lambda: torch.sparse.mm(An, X), f["spmm_mean"],
                        "values 1/deg")
            Xt = X.t().contiguous()
            run_checked("sparse.sampled_addmm(csr)", "sddmm_dot", F,
                        lambda: torch.sparse.sampled_addmm(A, Y, Xt, beta=0.0, alpha=1.0), f["sddmm_dot"])


def run_pyg(d, meta, indptr, indices, feats, threads):
    import torch
    torch.set_num_threads(threads)
    import torch_geometric
    from torch_geometric.nn import MessagePassing
    from torch_geometric.utils import spmm as pyg_spmm
    emit_version(f"{torch_geometric.__version__} (torch {torch.__version__})")
    rows, cols = meta["rows"], meta["cols"]
    A = torch_csr(torch, indptr, indices, rows, cols)
    row = torch.from_numpy(np.repeat(np.arange(rows, dtype=np.int64), np.diff(indptr)))
    col = torch.from_numpy(indices.astype(np.int64))
    edge_index = torch.stack([col, row])  # source -> target: messages flow from column j to row i

    class Agg(MessagePassing):
        def __init__(self, aggr):
            super().__init__(aggr=aggr)

        def forward(self, x, ei):
            return self.propagate(ei, x=x, size=(cols, rows))

    variants_ei = []
    try:
        from torch_geometric import EdgeIndex
        ei = EdgeIndex(torch.stack([row, col]), sparse_size=(rows, cols), sort_order="row")
        variants_ei.append(ei)
    except Exception as e:
        emit("EdgeIndex.matmul", "spmm_sum", 0, 0, "error", f"{type(e).__name__}: {e}")
    for F in feats:
        f = load_feat(d, F)
        X, Y = torch.from_numpy(f["x"]), torch.from_numpy(f["y"])
        with torch.no_grad():
            for red in ("sum", "mean"):
                op = f"spmm_{red}"
                run_checked("utils.spmm(torch CSR)", op, F, lambda: pyg_spmm(A, X, reduce=red), f[op])
                agg = Agg(red)
                big = too_big(2 * len(col) * F * 4)  # x_j gathered per edge, then scattered
                if big:
                    emit("propagate(edge_index)", op, F, 0, "n/a", big)
                else:
                    run_checked("propagate(edge_index)", op, F, lambda: agg(X, edge_index), f[op])
                for ei in variants_ei:
                    run_checked("EdgeIndex.matmul", op, F, lambda: ei.matmul(X, reduce=red), f[op])
            # PyG has no SDDMM operator; message passing computes per-edge dots by gathering.
            big = too_big(3 * len(col) * F * 4)  # Y[row], X[col] and their product, per edge
            if big:
                emit("gather (x_i*x_j).sum", "sddmm_dot", F, 0, "n/a", big)
            else:
                run_checked("gather (x_i*x_j).sum", "sddmm_dot", F, lambda: (Y[row] * X[col]).sum(-1),
                            f["sddmm_dot"])


def run_dgl(d, meta, indptr, indices, feats, threads):
    import torch
    torch.set_num_threads(threads)
    import dgl
    import dgl.function as fn
    emit_version(f"{dgl.__version__} (torch {torch.__version__})")
    rows, cols = meta["rows"], meta["cols"]
    row = torch.from_numpy(np.repeat(np.arange(rows, dtype=np.int64), np.diff(indptr)))
    col = torch.from_numpy(indices.astype(np.int64))
    # A bipartite graph: source nodes are the columns, destination nodes the rows, so
    # aggregating at the destination is Y = A X; edge ids follow the CSR order.
    g = dgl.heterograph({("c", "e", "r"): (col, row)}, num_nodes_dict={"c": cols, "r": rows})
    g.create_formats_()
    for F in feats:
        f = load_feat(d, F)
        X, Y = torch.from_numpy(f["x"]), torch.from_numpy(f["y"])
        with torch.no_grad():
            run_checked("ops.copy_u_sum (gspmm)", "spmm_sum", F, lambda: dgl.ops.copy_u_sum(g, X), f["spmm_sum"])
            run_checked("ops.copy_u_mean (gspmm)", "spmm_mean", F, lambda: dgl.ops.copy_u_mean(g, X), f["spmm_mean"])

            def update_all(reducer):
                def go():
                    with g.local_scope():
                        g.srcdata["h"] = X
                        g.update_all(fn.copy_u("h", "m"), reducer("m", "o"))
                        return g.dstdata["o"]
                return go
            run_checked("update_all(copy_u,sum)", "spmm_sum", F, update_all(fn.sum), f["spmm_sum"])
            run_checked("update_all(copy_u,mean)", "spmm_mean", F, update_all(fn.mean), f["spmm_mean"])
            run_checked("ops.u_dot_v (gsddmm)", "sddmm_dot", F, lambda: dgl.ops.u_dot_v(g, X, Y), f["sddmm_dot"])


def run_scipy(d, meta, indptr, indices, feats, threads):
    import scipy
    import scipy.sparse as sp
    emit_version(f"{scipy.__version__} (numpy {np.__version__}); single-threaded")
    rows, cols = meta["rows"], meta["cols"]
    A = sp.csr_matrix((np.ones(len(indices), np.float32), indices, indptr), shape=(rows, cols))
    An = sp.csr_matrix((inv_deg_values(indptr), indices, indptr), shape=(rows, cols))
    for F in feats:
        f = load_feat(d, F)
        X = f["x"]
        run_checked("csr @ dense", "spmm_sum", F, lambda: A @ X, f["spmm_sum"], "single-threaded")
        run_checked("csr(1/deg) @ dense", "spmm_mean", F, lambda: An @ X, f["spmm_mean"], "values 1/deg; single-threaded")
        emit("-", "sddmm_dot", F, 0, "n/a", "SciPy has no SDDMM")


def main():
    if len(sys.argv) != 5:
        die("usage: kernels_py.py torch|pyg|dgl|scipy EXPORT_DIR THREADS F,F,...")
    system, d, threads, feats = sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(f) for f in sys.argv[4].split(",")]
    meta, indptr, indices = load_export(d)
    runners = {"torch": run_torch, "pyg": run_pyg, "dgl": run_dgl, "scipy": run_scipy}
    if system not in runners:
        die(f"unknown system {system}")
    runners[system](d, meta, indptr, indices, feats, threads)


if __name__ == "__main__":
    main()
