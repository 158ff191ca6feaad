#!/usr/bin/env python3
"""PyG's RGCNConv trained on an HGB graph with exactly the split of a Strata run: a
cross-check of `strata train configs/rgcn_imdb.yaml` (and rgcn_acm / rgcn_dblp) that
shares no code with Strata, its own HGB parser included.

Not part of the build; needs torch and torch_geometric (benchmarks/run.sh's virtual
environment has both). It reads the HGB zip itself (node.dat features, link.dat typed
links, label.dat and label.dat.test labels; "a,b" = multi-label) and the run dir's
split.json (node ids of the flattened graph; the target type comes first in HGB's
numbering, so they are HGB node ids). The model follows the configs: per node type a
linear projection of its features to 64 (with bias), or a learned embedding for a
featureless type; RGCNConv(64, 64, R, aggr="mean") with a root weight and bias ->
relu -> dropout 0.5 -> RGCNConv(64, C, R, aggr="mean"); Adam lr 0.01, weight decay
5e-4 on every parameter, 100 epochs (150 for DBLP, as its config), full graph.
Multi-label: BCE-with-logits, a class predicted where its logit is positive, micro-F1
(macro-F1 over all classes); single-label: cross-entropy, argmax, accuracy (= micro-F1;
macro-F1 over the classes present). Test scores at the first best validation score;
seeds 0..runs-1. With `rocauc` as the fourth argument (multi-label only; needs
scikit-learn) the score is OGB's evaluator's: per class roc_auc_score over the nodes
where the class has both a positive and a negative, averaged over those classes, the
cross-check of `--set training.metric=rocauc`.

    strata train configs/rgcn_imdb.yaml --set output.run_dir=/tmp/imdb
    python benchmarks/reference/rgcn_hgb_pyg.py ../shared/datasets/hgb/IMDB.zip /tmp/imdb/split.json 10
    python benchmarks/reference/rgcn_hgb_pyg.py ../shared/datasets/hgb/IMDB.zip /tmp/imdb/split.json 10 rocauc
"""
import io
import json
import statistics
import sys
import zipfile

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import RGCNConv


def read_hgb(zip_path):
    z = zipfile.ZipFile(zip_path)
    names = {n.split("/")[-1]: n for n in z.namelist()}
    types, ids, feats = [], [], {}
    for line in io.TextIOWrapper(z.open(names["node.dat"]), encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        node, t = int(parts[0]), int(parts[2])
        ids.append(node)
        types.append(t)
        if len(parts) > 3 and parts[3]:
            feats.setdefault(t, []).append((node, np.array(parts[3].split(","), dtype=np.float32)))
    n = max(ids) + 1
    node_type = np.zeros(n, dtype=np.int64)
    node_type[np.array(ids)] = np.array(types)
    src, dst, rel = [], [], []
    for line in io.TextIOWrapper(z.open(names["link.dat"]), encoding="utf-8"):
        s, d, r = line.split("\t")[:3]
        src.append(int(s))
        dst.append(int(d))
        rel.append(int(r))

    def labels(name):
        out = {}
        for line in io.TextIOWrapper(z.open(names[name]), encoding="utf-8"):
            parts = line.rstrip("\n").split("\t")
            out[int(parts[0])] = [int(c) for c in parts[3].split(",")]
        return out

    return node_type, feats, (np.array(src), np.array(dst), np.array(rel)), labels("label.dat"), labels("label.dat.test")


class Model(torch.nn.Module):
    def __init__(self, node_type, feats, relations, classes, width=64):
        super().__init__()
        self.node_type = torch.tensor(node_type)
        self.inputs = torch.nn.ModuleDict()
        self.x = {}
        for t in sorted(set(node_type.tolist())):
            count = int((node_type == t).sum())
            if t in feats:
                rows = sorted(feats[t], key=lambda p: p[0])
                self.x[t] = torch.tensor(np.stack([r[1] for r in rows]))
                self.inputs[str(t)] = torch.nn.Linear(self.x[t].shape[1], width)
            else:
                emb = torch.nn.Embedding(count, width)
                torch.nn.init.xavier_uniform_(emb.weight)
                self.inputs[str(t)] = emb
        self.conv1 = RGCNConv(width, width, relations, aggr="mean")
        self.conv2 = RGCNConv(width, classes, relations, aggr="mean")

    def forward(self, edge_index, edge_type):
        parts = []
        for t in sorted(self.x.keys() | {int(k) for k in self.inputs.keys()}):
            layer = self.inputs[str(t)]
            parts.append(layer(self.x[t]) if t in self.x else layer.weight)
        h = torch.cat(parts)  # HGB numbers nodes type by type
        h = F.relu(self.conv1(h, edge_index, edge_type))
        h = F.dropout(h, 0.5, self.training)
        return self.conv2(h, edge_index, edge_type)


def f1(pred, true):
    """micro, macro over all classes (pred, true: bool [n, C])."""
    tp = (pred & true).sum(0).astype(float)
    fp = (pred & ~true).sum(0).astype(float)
    fn = (~pred & true).sum(0).astype(float)
    micro = 2 * tp.sum() / max(2 * tp.sum() + fp.sum() + fn.sum(), 1)
    d = 2 * tp + fp + fn
    per = np.where(d > 0, 2 * tp / np.maximum(d, 1), 0.0)
    return micro, per.mean(), d > 0


def rocauc(scores, true):
    """OGB's rocauc: the mean over classes with both labels of roc_auc_score (scores: [n, C])."""
    from sklearn.metrics import roc_auc_score

    per = [roc_auc_score(true[:, c], scores[:, c]) for c in range(true.shape[1]) if 0 < true[:, c].sum() < len(true)]
    return float(np.mean(per))


def main():
    zip_path, split_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10
    by_rocauc = len(sys.argv) > 4 and sys.argv[4] == "rocauc"
    node_type, feats, (src, dst, rel), train_labels, test_labels = read_hgb(zip_path)
    split = json.load(open(split_path))
    all_labels = {**train_labels, **test_labels}
    multi = any(len(v) > 1 for v in all_labels.values())
    assert multi or not by_rocauc, "rocauc scores multi-label classes"
    classes = max(c for v in all_labels.values() for c in v) + 1
    n = len(node_type)
    y = np.zeros((n, classes), dtype=bool)
    for node, cs in all_labels.items():
        y[node, cs] = True
    y_single = torch.tensor(y.argmax(1))
    idx = {k: torch.tensor(split[k]) for k in ("train", "val", "test")}
    edge_index = torch.tensor(np.stack([src, dst]))
    edge_type = torch.tensor(rel)
    epochs = 150 if "DBLP" in zip_path else 100
    torch.set_num_threads(2)
    tests, macros, vals = [], [], []
    for seed in range(runs):
        torch.manual_seed(seed)
        model = Model(node_type, feats, int(rel.max()) + 1, classes)
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        yt = torch.tensor(y, dtype=torch.float32)
        best = (-1.0, 0.0, 0.0, 0)
        for epoch in range(1, epochs + 1):
            model.train()
            opt.zero_grad()
            out = model(edge_index, edge_type)
            if multi:
                loss = F.binary_cross_entropy_with_logits(out[idx["train"]], yt[idx["train"]])
            else:
                loss = F.cross_entropy(out[idx["train"]], y_single[idx["train"]])
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                out = model(edge_index, edge_type).numpy()
            if multi:
                pred = out > 0
            else:
                pred = np.zeros_like(y)
                pred[np.arange(n), out.argmax(1)] = True
            scores = {}
            for k in ("val", "test"):
                i = split[k]
                micro, macro, present = f1(pred[i], y[i])
                if not multi:  # scikit-learn's default: the classes present in labels or predictions
                    d = present
                    tp = (pred[i] & y[i]).sum(0)
                    fpn = (pred[i] ^ y[i]).sum(0)
                    macro = float(np.mean((2 * tp / np.maximum(2 * tp + fpn, 1))[d]))
                scores[k] = (rocauc(out[i], y[i]) if by_rocauc else micro, macro)
            if scores["val"][0] > best[0]:
                best = (scores["val"][0], scores["test"][0], scores["test"][1], epoch)
        metric = "ROC-AUC" if by_rocauc else "micro-F1"
        print(f"run {seed + 1}: best epoch {best[3]}, val {best[0]:.4f}, test {metric} {best[1]:.4f}, "
              f"macro-F1 {best[2]:.4f}", flush=True)
        vals.append(best[0])
        tests.append(best[1])
        macros.append(best[2])
    sd = lambda v: statistics.stdev(v) if len(v) > 1 else 0.0
    print(f"PyG RGCNConv over {runs} runs: test {metric} {statistics.mean(tests):.4f} ± {sd(tests):.4f}, macro-F1 "
          f"{statistics.mean(macros):.4f} ± {sd(macros):.4f} (val {statistics.mean(vals):.4f} ± {sd(vals):.4f})")


if __name__ == "__main__":
    main()
