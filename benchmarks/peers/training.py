"""Full-graph training epochs in PyG and DGL, on the inputs of `strata export --train`.

    python training.py pyg|dgl sage|gat EXPORT_DIR THREADS EPOCHS

sage: GraphSAGE, 2 layers, hidden 128, mean aggregator, ReLU, dropout 0.5, Adam (lr 0.01).
gat:  GAT, 8 heads x 8 hidden + 1-head output layer, ELU, dropout 0.6 on features and
      attention, Adam (lr 0.005); self-loops added (PyG's default; DGL gets the same graph).
An epoch is forward + cross-entropy over all nodes + backward + optimizer step. Two
warm-up epochs, then the median over at least EPOCHS epochs (and ~1 s; 3 once 30 s have passed). Each library's
documented modes are timed as separate variants (PyG: edge_index and a torch.sparse
CSR adjacency; DGL: its graph), and the report takes the fastest. The check: the loss
stays finite and goes down over the timed epochs (no reference epoch exists in Strata
yet). Not part of Strata.
"""
import os
import sys
import time

import numpy as np

from common import emit, emit_version, load_export


def epoch_timer(model, opt, forward, y, epochs):
    import torch
    import torch.nn.functional as Fn
    model.train()
    losses = []

    def step():
        opt.zero_grad(set_to_none=True)
        loss = Fn.cross_entropy(forward(), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))

    step()
    step()
    t = []
    start = time.perf_counter()
    while (len(t) < max(epochs, 3) and time.perf_counter() - start < 30) or \
            (time.perf_counter() - start < 1.0 and len(t) < 200) or len(t) < 3:
        a = time.perf_counter()
        step()
        t.append((time.perf_counter() - a) * 1e3)
    ok = np.isfinite(losses).all() and losses[-1] < losses[0]
    detail = f"loss {losses[0]:.3f} -> {losses[-1]:.3f} over {len(losses)} epochs"
    return float(np.median(t)), ("ok" if ok else "CHECK FAILED: loss not finite or not decreasing"), detail


def main():
    system, model_name, d, threads, epochs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    meta, indptr, indices = load_export(d)
    if os.path.exists(os.path.join(d, "train_indptr.npy")):  # the symmetrized training graph
        indptr = np.load(os.path.join(d, "train_indptr.npy"))
        indices = np.load(os.path.join(d, "train_indices.npy"))
    x = torch.from_numpy(np.load(os.path.join(d, "train_x.npy")))
    y = torch.from_numpy(np.load(os.path.join(d, "train_y.npy")))
    C = int(meta["train"]["num_classes"])
    n = meta["rows"]
    row = torch.from_numpy(np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)))
    col = torch.from_numpy(indices.astype(np.int64))
    op = f"{model_name}_epoch"
    if system == "pyg":
        run_pyg(model_name, op, x, y, C, n, row, col, indptr, epochs)
    else:
        run_dgl(model_name, op, x, y, C, n, row, col, epochs)


def run_pyg(model_name, op, x, y, C, n, row, col, indptr, epochs):
    import torch
    import torch.nn.functional as Fn
    import torch_geometric
    from torch_geometric.nn import GATConv, SAGEConv
    from torch_geometric.utils import add_self_loops, remove_self_loops
    emit_version(f"{torch_geometric.__version__} (torch {torch.__version__})")
    edge_index = torch.stack([col, row])  # messages flow from column (source) to row (target)

    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = SAGEConv(x.shape[1], 128, aggr="mean"), SAGEConv(128, C, aggr="mean")

        def forward(self, x, adj):
            h = Fn.dropout(Fn.relu(self.c1(x, adj)), p=0.5, training=self.training)
            return self.c2(h, adj)

    class Gat(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = GATConv(x.shape[1], 8, heads=8, dropout=0.6, add_self_loops=False)
            self.c2 = GATConv(64, C, heads=1, dropout=0.6, add_self_loops=False)

        def forward(self, x, adj):
            h = Fn.dropout(x, p=0.6, training=self.training)
            h = Fn.elu(self.c1(h, adj))
            h = Fn.dropout(h, p=0.6, training=self.training)
            return self.c2(h, adj)

    variants = []
    if model_name == "sage":
        variants.append(("SAGEConv(edge_index)", edge_index))
        adj = torch.sparse_csr_tensor(torch.from_numpy(indptr.astype(np.int64)), col, torch.ones(len(col)),
                                      size=(n, n))
        variants.append(("SAGEConv(torch.sparse CSR adj_t)", adj))
    else:
        ei, _ = remove_self_loops(edge_index)
        ei, _ = add_self_loops(ei, num_nodes=n)
        variants.append(("GATConv(edge_index, self-loops)", ei))
    for name, adj in variants:
        torch.manual_seed(0)
        model = Sage() if model_name == "sage" else Gat()
        opt = torch.optim.Adam(model.parameters(), lr=0.01 if model_name == "sage" else 0.005)
        try:
            ms, status, detail = epoch_timer(model, opt, lambda: model(x, adj), y, epochs)
            emit(name, op, 0, ms, status, detail)
        except Exception as e:
            emit(name, op, 0, 0, "error", f"{type(e).__name__}: {e}")


def run_dgl(model_name, op, x, y, C, n, row, col, epochs):
    import torch
    import torch.nn.functional as Fn
    import dgl
    from dgl.nn import GATConv, SAGEConv
    emit_version(f"{dgl.__version__} (torch {torch.__version__})")
    g = dgl.graph((col, row), num_nodes=n)
    if model_name == "gat":
        g = dgl.add_self_loop(dgl.remove_self_loop(g))
    g.create_formats_()

    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = SAGEConv(x.shape[1], 128, "mean"), SAGEConv(128, C, "mean")

        def forward(self, g, x):
            h = Fn.dropout(Fn.relu(self.c1(g, x)), p=0.5, training=self.training)
            return self.c2(g, h)

    class Gat(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = GATConv(x.shape[1], 8, num_heads=8, feat_drop=0.6, attn_drop=0.6, allow_zero_in_degree=True)
            self.c2 = GATConv(64, C, num_heads=1, feat_drop=0.6, attn_drop=0.6, allow_zero_in_degree=True)

        def forward(self, g, x):
            h = Fn.elu(self.c1(g, x)).flatten(1)
            return self.c2(g, h).mean(1)

    torch.manual_seed(0)
    model = Sage() if model_name == "sage" else Gat()
    opt = torch.optim.Adam(model.parameters(), lr=0.01 if model_name == "sage" else 0.005)
    name = "nn.SAGEConv('mean')" if model_name == "sage" else "nn.GATConv(self-loops)"
    try:
        ms, status, detail = epoch_timer(model, opt, lambda: model(g, x), y, epochs)
        emit(name, op, 0, ms, status, detail)
    except Exception as e:
        emit(name, op, 0, 0, "error", f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
