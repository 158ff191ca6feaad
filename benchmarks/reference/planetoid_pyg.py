#!/usr/bin/env python3
"""PyG's GAT and GCN trained on exactly the nodes of a Strata run: a cross-check that
Strata's Cora/Citeseer accuracy is what the split gives, not a defect of its models.

Not part of the build; needs torch and torch_geometric (benchmarks/run.sh's virtual
environment has both). It reads what `strata export --train` writes: the symmetrized
graph (train_indptr/indices.npy), the features (train_x.npy), the labels
(train_y.npy) and the split `strata train` uses (train_idx/val_idx/test_idx.npy; the
configs' Planetoid-style split, --split-seed = data.split.seed). Features are
row-normalized as the configs' data.normalize_features does. The models follow the
configs (configs/gat_cora.yaml, configs/gcn_cora.yaml) with PyG's own layers:

  gat: GATConv(D, 8, heads=8, dropout=0.6) -> elu -> GATConv(64, C, heads=1), dropout
       0.6 on both layers' inputs, self-loops (GATConv's default), Adam lr 0.005,
       weight decay 5e-4, up to 1000 epochs, patience 100 on validation accuracy;
  gcn: GCNConv(D, 128) -> relu -> GCNConv(128, C), dropout 0.8 on the input and the
       hidden layer, Adam lr 0.01, weight decay 5e-4, 200 epochs;
  gcn16: the paper's recipe (hidden 16, dropout 0.5), otherwise as gcn.

Test accuracy is taken at the best validation accuracy (first best), as `strata train`
does; runs use seeds 0..runs-1.

    strata export --graph cora --train --feat 8 --out /tmp/cora-s0 --split-seed 0
    python benchmarks/reference/planetoid_pyg.py /tmp/cora-s0 gat 10
"""
import json
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv, GCNConv


def load(folder):
    d = Path(folder)
    indptr = np.load(d / "train_indptr.npy")
    indices = np.load(d / "train_indices.npy").astype(np.int64)
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    # Row i of the CSR lists i's in-neighbours j (Y[i] = sum over A[i, j] X[j]): PyG's
    # edge_index is (source, target) = (j, i). The graph is symmetric anyway.
    edge_index = torch.from_numpy(np.stack([indices, rows]))
    x = torch.from_numpy(np.load(d / "train_x.npy"))
    x = x / x.sum(1, keepdim=True).clamp(min=1e-12)  # row-normalized (data.normalize_features)
    y = torch.from_numpy(np.load(d / "train_y.npy"))
    split = [torch.from_numpy(np.load(d / f"{p}_idx.npy")) for p in ("train", "val", "test")]
    meta = json.loads((d / "meta.json").read_text())
    return x, y, edge_index, split, meta


class Gat(torch.nn.Module):
    def __init__(self, d, c):
        super().__init__()
        self.l1 = GATConv(d, 8, heads=8, dropout=0.6)
        self.l2 = GATConv(64, c, heads=1, concat=False, dropout=0.6)

    def forward(self, x, ei):
        x = F.dropout(x, 0.6, self.training)
        x = F.elu(self.l1(x, ei))
        x = F.dropout(x, 0.6, self.training)
        return self.l2(x, ei)


class Gcn(torch.nn.Module):
    def __init__(self, d, c, hidden, p):
        super().__init__()
        self.p = p
        self.l1, self.l2 = GCNConv(d, hidden), GCNConv(hidden, c)

    def forward(self, x, ei):
        x = F.dropout(x, self.p, self.training)
        x = F.relu(self.l1(x, ei))
        x = F.dropout(x, self.p, self.training)
        return self.l2(x, ei)


def run(model_name, x, y, ei, split, seed):
    torch.manual_seed(seed)
    c = int(y.max()) + 1
    if model_name == "gat":
        model, lr, epochs, patience = Gat(x.shape[1], c), 0.005, 1000, 100
    elif model_name == "gcn":
        model, lr, epochs, patience = Gcn(x.shape[1], c, 128, 0.8), 0.01, 200, None
    else:
        model, lr, epochs, patience = Gcn(x.shape[1], c, 16, 0.5), 0.01, 200, None
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    train, val, test = split
    best_val, best_test, best_epoch = -1.0, 0.0, 0
    for epoch in range(1, epochs + 1):
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(x, ei)[train], y[train]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(x, ei).argmax(1)
        v = (pred[val] == y[val]).float().mean().item()
        if v > best_val:
            best_val, best_test, best_epoch = v, (pred[test] == y[test]).float().mean().item(), epoch
        if patience and epoch - best_epoch >= patience:
            break
    return best_val, best_test


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    folder, model_name = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    if model_name not in ("gat", "gcn", "gcn16"):
        sys.exit(f"planetoid_pyg: model must be gat, gcn or gcn16, got '{model_name}'")
    x, y, ei, split, meta = load(folder)
    origin = meta["train"].get("split", {}).get("origin", "?")
    vals, tests = [], []
    for seed in range(runs):
        v, t = run(model_name, x, y, ei, split, seed)
        vals.append(v)
        tests.append(t)
    sd = statistics.stdev(tests) if runs > 1 else 0.0
    print(f"{meta['name']} {model_name} ({origin}; {runs} runs, torch {torch.__version__}): "
          f"test {statistics.mean(tests):.4f} ± {sd:.4f}, val {statistics.mean(vals):.4f}; "
          f"per run {' '.join(f'{t:.3f}' for t in tests)}")


if __name__ == "__main__":
    main()
