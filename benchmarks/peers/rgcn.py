"""RGCN inference in PyG and DGL, on the typed graph of `strata export --hetero`.

    python rgcn.py pyg|dgl EXPORT_DIR THREADS F

Two RGCN layers F -> F -> F (ReLU between), one weight per relation (no basis
decomposition), a self-loop (root) weight and bias, messages averaged per relation:
    h_i' = h_i W_0 + b + sum_r mean_{j in N_r(i)} h_j W_r
Inputs are seeded random features [N, F] and weights shared by both libraries, so
every output is checked (rtol = atol = 1e-3) against a float64 SciPy evaluation of
the formula above before it is timed. (Strata's rows come from strata_bench_rgcn,
which checks its kernels against Strata's own reference loops on the same graph.)
Each library's documented modes are separate variants:
PyG RGCNConv and FastRGCNConv (skipped when its per-edge weight gather would need
more than 3 GB), DGL RelGraphConv with edges sorted by type (presorted=True).
Not part of Strata.
"""
import os
import sys

import numpy as np

from common import check, emit, emit_version, load_export, time_ms


def main():
    system, d, threads, F = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    import torch
    torch.set_num_threads(threads)
    meta = load_export(d)[0]
    indptr = np.load(os.path.join(d, "hetero_indptr.npy"))
    src = np.load(os.path.join(d, "hetero_indices.npy")).astype(np.int64)
    et = np.load(os.path.join(d, "hetero_etype.npy")).astype(np.int64)
    n, R = meta["hetero"]["num_nodes"], meta["hetero"]["num_relations"]
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (n, F)).astype(np.float32)
    layers = [dict(W=(rng.standard_normal((R, F, F)) / np.sqrt(F)).astype(np.float32),
                   root=(rng.standard_normal((F, F)) / np.sqrt(F)).astype(np.float32),
                   b=(0.1 * rng.standard_normal(F)).astype(np.float32)) for _ in range(2)]
    want = reference(x, layers, src, dst, et, n, R)
    xt = torch.from_numpy(x)
    if system == "pyg":
        run_pyg(xt, layers, src, dst, et, n, R, F, want)
    else:
        run_dgl(xt, layers, src, dst, et, n, R, F, want)


def reference(x, layers, src, dst, et, n, R):
    import scipy.sparse as sp
    h = x.astype(np.float64)
    mats = []
    for r in range(R):
        m = et == r
        A = sp.csr_matrix((np.ones(m.sum()), (dst[m], src[m])), shape=(n, n))
        deg = np.asarray(A.sum(1)).ravel()
        mats.append(sp.diags(1.0 / np.maximum(deg, 1)) @ A)
    for k, L in enumerate(layers):
        o = h @ L["root"] + L["b"]
        for r in range(R):
            if mats[r].nnz:
                o += mats[r] @ (h @ L["W"][r])
        h = np.maximum(o, 0) if k == 0 else o
    return h.astype(np.float32)


def checked_time(name, F, fn, want, detail=""):
    try:
        got = fn()
        bad = check(got.detach().numpy(), want)
    except Exception as e:
        emit(name, "rgcn_infer", F, 0, "error", f"{type(e).__name__}: {e}")
        return
    if bad:
        emit(name, "rgcn_infer", F, 0, bad, detail)
    else:
        emit(name, "rgcn_infer", F, time_ms(fn), "ok", detail)


def run_pyg(x, layers, src, dst, et, n, R, F, want):
    import torch
    import torch_geometric
    from torch_geometric.nn import FastRGCNConv, RGCNConv
    emit_version(f"{torch_geometric.__version__} (torch {torch.__version__})")
    edge_index = torch.from_numpy(np.stack([src, dst]))
    edge_type = torch.from_numpy(et)
    E = len(src)
    for cls in (RGCNConv, FastRGCNConv):
        need = E * F * F * 4
        if cls is FastRGCNConv and need > 3e9:
            emit("FastRGCNConv", "rgcn_infer", F, 0, "n/a",
                 f"gathers one FxF weight per edge: {need / 1e9:.1f} GB for {E} edges")
            continue
        convs = []
        for L in layers:
            c = cls(F, F, R, aggr="mean", root_weight=True, bias=True)
            with torch.no_grad():
                c.weight.copy_(torch.from_numpy(L["W"]))
                c.root.copy_(torch.from_numpy(L["root"]))
                c.bias.copy_(torch.from_numpy(L["b"]))
            convs.append(c.eval())

        def fwd(convs=convs):
            with torch.no_grad():
                h = torch.relu(convs[0](x, edge_index, edge_type))
                return convs[1](h, edge_index, edge_type)
        checked_time(cls.__name__, F, fwd, want)


def run_dgl(x, layers, src, dst, et, n, R, F, want):
    import torch
    import dgl
    from dgl.nn import RelGraphConv
    emit_version(f"{dgl.__version__} (torch {torch.__version__})")
    order = np.argsort(et, kind="stable")  # presorted edge types: DGL's segment_mm path
    s, t, e = src[order], dst[order], et[order]
    g = dgl.graph((torch.from_numpy(s), torch.from_numpy(t)), num_nodes=n)
    etype = torch.from_numpy(e)
    # norm = 1 / |N_r(i)| per edge: the per-relation mean
    key = t * R + e
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    norm = torch.from_numpy((1.0 / cnt[inv]).astype(np.float32)).unsqueeze(1)
    convs = []
    for L in layers:
        c = RelGraphConv(F, F, R, regularizer=None, bias=True, self_loop=True)
        with torch.no_grad():
            c.linear_r.W.copy_(torch.from_numpy(L["W"]))
            c.loop_weight.copy_(torch.from_numpy(L["root"]))
            c.h_bias.copy_(torch.from_numpy(L["b"]))
        convs.append(c.eval())

    def fwd():
        with torch.no_grad():
            h = torch.relu(convs[0](g, x, etype, norm, presorted=True))
            return convs[1](g, h, etype, norm, presorted=True)
    checked_time("RelGraphConv(presorted)", F, fwd, want)


if __name__ == "__main__":
    main()
