#!/usr/bin/env python3
"""Classic link-prediction heuristics scored on exactly the split of a Strata run: what
Hits@K and ROC-AUC a model-free ranking reaches on the same held-out edges and
non-edges, so a trained model's scores can be read against them.

Not part of the build; needs numpy and scipy. It reads the dataset's edges (OGB's
raw/edge.csv.gz) and the run dir's link_split.json (the held-out edges and non-edges;
the training edges are the graph's other undirected edges), and ranks each held-out
pair by, over the training edges only:

  preferential attachment  deg(u) * deg(v)
  common neighbours        |N(u) & N(v)|
  Adamic-Adar              sum over common neighbours w of 1 / log(deg(w))
  resource allocation      sum over common neighbours w of 1 / deg(w)

Hits@K is OGB's rule (held-out edges scored above the K-th best non-edge; ties with it
do not count), ROC-AUC counts ties as one half.

    strata train configs/graphsage_ddi.yaml --set output.run_dir=runs/ddi
    python3 benchmarks/reference/link_heuristics.py ../shared/datasets/ogb/ogbl_ddi runs/ddi/link_split.json 20
"""
import gzip
import json
import sys

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata


def training_adjacency(edge_file, split):
    """The symmetric 0/1 adjacency of the dataset's edges without the held-out ones."""
    with gzip.open(edge_file, "rt") as f:
        edges = np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)
    n = int(edges.max()) + 1
    for name in ("val", "test", "val_negative", "test_negative"):
        n = max(n, max(split[name]["u"] + split[name]["v"]) + 1)

    def keys(u, v):
        u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
        return np.minimum(u, v) * n + np.maximum(u, v)

    every = np.unique(keys(edges[:, 0], edges[:, 1]))
    every = every[every // n != every % n]  # self-loops carry no link to predict
    held = np.concatenate([keys(split[s]["u"], split[s]["v"]) for s in ("val", "test")])
    train = every[~np.isin(every, held)]
    u, v = train // n, train % n
    a = sp.coo_matrix((np.ones(2 * len(u)), (np.r_[u, v], np.r_[v, u])), shape=(n, n)).tocsr()
    a.data[:] = 1.0
    return a, len(train)


def hits_at_k(pos, neg, k):
    if len(neg) < k:
        return float("nan")
    threshold = np.sort(neg)[-k]
    return float(np.mean(pos > threshold))


def roc_auc(pos, neg):
    ranks = rankdata(np.concatenate([pos, neg]))
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: link_heuristics.py DATASET_DIR LINK_SPLIT_JSON K")
    dataset, split_file, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(split_file) as f:
        split = json.load(f)
    a, train_edges = training_adjacency(f"{dataset}/raw/edge.csv.gz", split)
    deg = np.asarray(a.sum(axis=1)).ravel()
    safe = np.where(deg > 1, deg, np.inf)  # a neighbour of degree 1 cannot be common to two nodes
    weighted = {
        "common neighbours": a,
        "Adamic-Adar": a @ sp.diags(1.0 / np.log(safe)),
        "resource allocation": a @ sp.diags(1.0 / np.where(deg > 0, deg, np.inf)),
    }
    print(f"{a.shape[0]} nodes, {train_edges} training edges (split seed {split.get('seed')}); Hits@{k}, ROC-AUC")
    for part in ("val", "test"):
        pu, pv = np.array(split[part]["u"]), np.array(split[part]["v"])
        nu, nv = np.array(split[part + "_negative"]["u"]), np.array(split[part + "_negative"]["v"])
        print(f"{part}: {len(pu)} edges, {len(nu)} non-edges")
        scores = {"preferential attachment": (deg[pu] * deg[pv], deg[nu] * deg[nv])}
        for name, w in weighted.items():
            # score(u, v) = sum over w of weight(w) [u ~ w][w ~ v]: row u of (A W) dotted with row v of A.
            def pair_scores(us, vs):
                return np.asarray((w[us].multiply(a[vs])).sum(axis=1)).ravel()

            scores[name] = (pair_scores(pu, pv), pair_scores(nu, nv))
        for name, (pos, neg) in scores.items():
            print(f"  {name:<24} Hits@{k} {hits_at_k(pos, neg, k):.4f}   ROC-AUC {roc_auc(pos, neg):.4f}")


if __name__ == "__main__":
    main()
