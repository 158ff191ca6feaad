"""Mini-batch GraphSAGE training epochs in PyG and DGL, on the inputs of `strata export --train`.

    python minibatch.py pyg|dgl EXPORT_DIR THREADS EPOCHS BATCH FANOUTS [--eval]
                        [--hidden 64] [--dropout 0.5] [--lr 0.01] [--weight-decay 5e-4]

The peers of `strata train CONFIG --set training.batch_size=BATCH --set training.fanouts=FANOUTS`
(with model.input_dropout=0: the peers have no input dropout). GraphSAGE, 2 layers
in -> hidden -> classes, mean aggregator with a root weight (SAGEConv's default), ReLU,
dropout on the hidden representation, Adam. An epoch shuffles the training nodes and
takes one Adam step per BATCH of them: sample the 2-hop neighbourhood, forward,
cross-entropy on the seeds, backward, step. One warm-up epoch, then the median over
EPOCHS epochs of the epoch's wall time (sampling included, as in Strata) and, apart, of
the time spent inside the loader's iteration (neighbour sampling, relabelling and the
gather of the batch's input features and labels, which both loaders do). Loaders run
in-process (num_workers=0). The check: the loss (mean over an epoch's batches) stays
finite and the last epoch's is below the warm-up epoch's. With --eval, the test accuracy
of a full-graph forward with the trained weights goes into the detail.

FANOUTS lists the fanouts input layer first, as Strata's training.fanouts does: "10,25"
samples 10 in-neighbours per node for the input layer (the outermost hop from the seeds)
and 25 for the output layer (the seeds' own neighbours).
  DGL: NeighborSampler(fanouts) takes "the i-th element being the fanout for the i-th GNN
       layer" (docs.dgl.ai, dgl.dataloading.NeighborSampler; sample_blocks walks
       reversed(fanouts) from the seeds): Strata's order, passed as is.
  PyG: NeighborLoader(num_neighbors) "iteratively samples num_neighbors[i] for each node
       involved in iteration i - 1", iteration 0 starting at the seeds
       (pytorch-geometric.readthedocs.io, torch_geometric.loader.NeighborLoader): the
       output layer first, so FANOUTS is passed reversed.
DGL's blocks compute, per layer, only the rows the next layer needs, as Strata's do.
PyG's documented loop runs both layers over the whole sampled subgraph and keeps the
first batch_size rows; each node is expanded once, so the seeds' input-layer neighbours
are the ones sampled for the output layer. PyG's SAGEConv aggregates the raw input
features and then projects them; DGL's projects first when that is narrower. PyG's
sampling needs pyg-lib or torch-sparse (an error row without them); its full-graph
forward reads a torch.sparse CSR adjacency. Features are read dense (train_x.npy), also
where Strata keeps them sparse (MUSAE Facebook: 4714 wide, 0.1% set). Not part of Strata.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as Fn

from common import emit, emit_version, load_export


class Sage(torch.nn.Module):
    """Two SAGEConv layers; adjs[l] is layer l's graph (a DGL block or graph, a PyG edge_index or adj_t)."""

    def __init__(self, c1, c2, dropout, pyg):
        super().__init__()
        self.c1, self.c2, self.dropout, self.pyg = c1, c2, dropout, pyg

    def conv(self, c, adj, x):
        return c(x, adj) if self.pyg else c(adj, x)

    def forward(self, adjs, x):
        h = Fn.dropout(Fn.relu(self.conv(self.c1, adjs[0], x)), p=self.dropout, training=self.training)
        return self.conv(self.c2, adjs[1], h)


def train(model, opt, loader, loss_of, epochs):
    """Runs 1 + epochs epochs; returns the epochs' ms, loader ms, mean losses and batch count."""
    model.train()
    ms, sampling_ms, losses = [], [], []
    for _ in range(epochs + 1):
        total, in_loader, batches = 0.0, 0.0, 0
        start = time.perf_counter()
        it = iter(loader)
        while True:
            a = time.perf_counter()
            batch = next(it, None)
            in_loader += time.perf_counter() - a
            if batch is None:
                break
            opt.zero_grad(set_to_none=True)
            loss = loss_of(batch)
            loss.backward()
            opt.step()
            total += float(loss)
            batches += 1
        ms.append((time.perf_counter() - start) * 1e3)
        sampling_ms.append(in_loader * 1e3)
        losses.append(total / batches)
    return ms[1:], sampling_ms[1:], losses, batches


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("system", choices=["pyg", "dgl"])
    p.add_argument("export_dir")
    p.add_argument("threads", type=int)
    p.add_argument("epochs", type=int)
    p.add_argument("batch", type=int)
    p.add_argument("fanouts", help="input layer first, e.g. 10,25")
    p.add_argument("--eval", action="store_true", help="report the test accuracy of a full-graph forward")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    a = p.parse_args()
    fanouts = [int(f) for f in a.fanouts.split(",")]
    if len(fanouts) != 2:
        p.error(f"FANOUTS '{a.fanouts}' gives {len(fanouts)} fanouts; the model has 2 layers")
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    d = a.export_dir
    meta, _, _ = load_export(d)
    load = lambda name: torch.from_numpy(np.load(os.path.join(d, f"{name}.npy")))
    indptr, indices = np.load(os.path.join(d, "train_indptr.npy")), load("train_indices").long()
    x, y = load("train_x"), load("train_y")
    train_idx, test_idx = load("train_idx"), load("test_idx")
    n, C = meta["rows"], int(meta["train"]["num_classes"])
    row = torch.from_numpy(np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)))  # row i: in-neighbours j
    run = run_pyg if a.system == "pyg" else run_dgl
    variant, model, loader, loss_of, full = run(a, fanouts, x, y, row, indices, n, C, train_idx, indptr)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    try:
        ms, sampling_ms, losses, batches = train(model, opt, loader, loss_of, a.epochs)
    except Exception as e:  # e.g. PyG without a sampling backend: a row, not a crash
        for op in ("sage_mb_epoch", "sage_mb_sampling"):
            emit(variant, op, 0, 0, "error", f"{type(e).__name__}: {e}")
        return
    ok = np.isfinite(losses).all() and losses[-1] < losses[0]
    status = "ok" if ok else "CHECK FAILED: loss not finite or not decreasing"
    detail = (f"batch {a.batch}, fanouts {a.fanouts} (input layer first), {batches} batches/epoch, "
              f"hidden {a.hidden}, loss {losses[0]:.3f} -> {losses[-1]:.3f} over {len(losses)} epochs")
    if a.eval:
        model.eval()
        with torch.no_grad():
            pred = full()[test_idx].argmax(1)
        detail += f", test acc {float((pred == y[test_idx]).float().mean()):.4f} (full-graph forward)"
    emit(variant, "sage_mb_epoch", 0, float(np.median(ms)), status, detail)
    emit(variant, "sage_mb_sampling", 0, float(np.median(sampling_ms)), status,
         f"time inside the loader's iteration per epoch; {detail}")


def run_pyg(a, fanouts, x, y, row, col, n, C, train_idx, indptr):
    import torch_geometric
    import torch_geometric.typing as pt
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    from torch_geometric.nn import SAGEConv
    backend = ("pyg-lib" if pt.WITH_PYG_LIB else "torch-sparse" if pt.WITH_TORCH_SPARSE
               else "neither pyg-lib nor torch-sparse")
    emit_version(f"{torch_geometric.__version__} (torch {torch.__version__}, sampling: {backend})")
    edge_index = torch.stack([col, row])  # messages flow from j (source) to i (target)
    num_neighbors = fanouts[::-1]  # PyG: the seeds' hop (output layer) first
    loader = NeighborLoader(Data(x=x, y=y, edge_index=edge_index, num_nodes=n), num_neighbors=num_neighbors,
                            input_nodes=train_idx, batch_size=a.batch, shuffle=True, num_workers=0)
    model = Sage(SAGEConv(x.shape[1], a.hidden, aggr="mean"), SAGEConv(a.hidden, C, aggr="mean"), a.dropout, True)

    def loss_of(b):
        return Fn.cross_entropy(model([b.edge_index, b.edge_index], b.x)[:b.batch_size], b.y[:b.batch_size])

    # The full-graph forward reads a torch.sparse CSR adj_t (rows: targets i): an edge_index would
    # gather a message per edge, nnz x D floats (6.4 GB on MUSAE Facebook).
    adj_t = torch.sparse_csr_tensor(torch.from_numpy(indptr.astype(np.int64)), col, torch.ones(len(col)), size=(n, n))
    return (f"NeighborLoader(num_neighbors={num_neighbors}) + SAGEConv", model, loader, loss_of,
            lambda: model([adj_t, adj_t], x))


def run_dgl(a, fanouts, x, y, row, col, n, C, train_idx, indptr):
    import dgl
    from dgl.nn import SAGEConv
    emit_version(f"{dgl.__version__} (torch {torch.__version__})")
    dgl.utils.set_num_threads(a.threads)  # DGL's sampling runs on its own OpenMP pool
    dgl.seed(0)
    g = dgl.graph((col, row), num_nodes=n)  # src j -> dst i; the sampler draws in-edges
    g.ndata["x"], g.ndata["y"] = x, y
    g.create_formats_()
    sampler = dgl.dataloading.NeighborSampler(fanouts, prefetch_node_feats=["x"], prefetch_labels=["y"])
    loader = dgl.dataloading.DataLoader(g, train_idx, sampler, batch_size=a.batch, shuffle=True, drop_last=False,
                                        num_workers=0)
    model = Sage(SAGEConv(x.shape[1], a.hidden, "mean"), SAGEConv(a.hidden, C, "mean"), a.dropout, False)

    def loss_of(b):
        _, _, blocks = b
        return Fn.cross_entropy(model(blocks, blocks[0].srcdata["x"]), blocks[-1].dstdata["y"])

    return (f"DataLoader(NeighborSampler({fanouts})) + nn.SAGEConv('mean')", model, loader, loss_of,
            lambda: model([g, g], x))


if __name__ == "__main__":
    main()
