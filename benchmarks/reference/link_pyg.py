#!/usr/bin/env python3
"""PyG's GraphSAGE link predictor trained on exactly the split of a Strata run: a
cross-check of `strata train configs/graphsage_ddi.yaml` (data.task: link).

Not part of the build; needs torch, torch_geometric and scikit-learn. It reads the
dataset's edges (OGB's raw/edge.csv.gz) and the run dir's link_split.json (the held-out
edges and non-edges; the training edges are the graph's other undirected edges), and
follows configs/graphsage_ddi.yaml:

  input: no node features, so the first layer's weights act on one-hot ids, which is
         a learned vector per node for each of its two weights;
  encoder: SAGE(4267 -> 256, mean, root weight) -> relu -> dropout 0.5 ->
           SAGEConv(256 -> 256) (PyG's own layer), message passing over the training
           edges both ways;
  decoder: dot product of the two embeddings, binary cross-entropy with logits;
  training: Adam lr 0.005, the training edges shuffled in steps of 65,536, each with as
           many non-edges drawn afresh by PyG's negative_sampling over the training edges;
  evaluation every `eval_period` epochs: Hits@20 (OGB's rule: held-out edges scored
           above the 20th best non-edge) and ROC-AUC (scikit-learn) on validation and
           test; the test scores at the best validation Hits@20 (first best).

    strata train configs/graphsage_ddi.yaml --set output.run_dir=runs/ddi
    python benchmarks/reference/link_pyg.py ../shared/datasets/ogb/ogbl_ddi runs/ddi/link_split.json 100 5
"""
import gzip
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch_geometric.nn import SAGEConv
from torch_geometric.utils import negative_sampling, to_torch_csr_tensor


def load(folder, split_file):
    with gzip.open(f"{folder}/raw/edge.csv.gz", "rt") as f:
        edges = np.loadtxt(f, delimiter=",", dtype=np.int64).reshape(-1, 2)
    n = int(edges.max()) + 1
    s = json.load(open(split_file))
    pairs = {k: torch.tensor([s[k]["u"], s[k]["v"]], dtype=torch.long) for k in
             ("val", "val_negative", "test", "test_negative")}
    lo, hi = np.minimum(edges[:, 0], edges[:, 1]), np.maximum(edges[:, 0], edges[:, 1])
    keep = lo != hi
    key = np.unique(lo[keep] * n + hi[keep])
    held = np.concatenate([np.minimum(pairs[k][0], pairs[k][1]).numpy() * n + np.maximum(pairs[k][0], pairs[k][1]).numpy()
                           for k in ("val", "test")])
    train_key = np.setdiff1d(key, held)
    assert len(train_key) == s["train_edges"], (len(train_key), s["train_edges"])
    train = torch.from_numpy(np.stack([train_key // n, train_key % n]))
    return n, train, pairs


class FirstLayer(torch.nn.Module):
    """SAGEConv on one-hot inputs: mean over neighbours of W_l's rows, plus W_r's own row."""

    def __init__(self, n, out):
        super().__init__()
        self.w_l = torch.nn.Parameter(torch.empty(n, out))
        self.w_r = torch.nn.Parameter(torch.empty(n, out))
        self.bias = torch.nn.Parameter(torch.zeros(out))
        torch.nn.init.xavier_uniform_(self.w_l)
        torch.nn.init.xavier_uniform_(self.w_r)

    def forward(self, mean_adj):
        return torch.sparse.mm(mean_adj, self.w_l) + self.w_r + self.bias


class Encoder(torch.nn.Module):
    def __init__(self, n, hidden):
        super().__init__()
        self.first = FirstLayer(n, hidden)
        self.second = SAGEConv(hidden, hidden, aggr="mean", root_weight=True)

    def forward(self, mean_adj, adj_t):
        h = F.relu(self.first(mean_adj))
        h = F.dropout(h, p=0.5, training=self.training)
        return self.second(h, adj_t)


def hits_at(pos, neg, k=20):
    kth = torch.topk(neg, k).values[-1]
    return (pos > kth).float().mean().item()


def main():
    folder, split_file = sys.argv[1], sys.argv[2]
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    eval_period = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    torch.manual_seed(0)
    n, train, pairs = load(folder, split_file)
    both = torch.cat([train, train.flip(0)], 1)  # (source, target), every edge both ways
    deg = torch.bincount(both[1], minlength=n).clamp(min=1).float()
    mean_adj = torch.sparse_coo_tensor(torch.stack([both[1], both[0]]), 1.0 / deg[both[1]], (n, n)).coalesce()
    # SAGEConv over a sparse adjacency (rows = targets) runs an SpMM; over edge_index it
    # gathers a row per edge (1.8 M x 256 floats here), 40x slower on a CPU.
    adj_t = to_torch_csr_tensor(torch.stack([both[1], both[0]]), size=(n, n))
    model = Encoder(n, 256)
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    best = (-1.0, None)
    for epoch in range(1, epochs + 1):
        model.train()
        t = time.time()
        total = 0.0
        for perm in torch.randperm(train.size(1)).split(65536):
            pos = train[:, perm]
            neg = negative_sampling(both, num_nodes=n, num_neg_samples=perm.numel())
            h = model(mean_adj, adj_t)
            s_pos = (h[pos[0]] * h[pos[1]]).sum(-1)
            s_neg = (h[neg[0]] * h[neg[1]]).sum(-1)
            scores = torch.cat([s_pos, s_neg])
            labels = torch.cat([torch.ones_like(s_pos), torch.zeros_like(s_neg)])
            loss = F.binary_cross_entropy_with_logits(scores, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * perm.numel()
        ms = (time.time() - t) * 1e3
        if epoch % eval_period == 0 or epoch == epochs:
            model.eval()
            with torch.no_grad():
                h = model(mean_adj, adj_t)
                score = {k: (h[p[0]] * h[p[1]]).sum(-1) for k, p in pairs.items()}
            res = {}
            for part in ("val", "test"):
                pos, neg = score[part], score[part + "_negative"]
                y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
                res[part] = (hits_at(pos, neg), roc_auc_score(y, torch.cat([pos, neg]).numpy()))
            print(f"epoch {epoch:4d} loss {total / train.size(1):.4f} val Hits@20 {res['val'][0]:.4f} "
                  f"(ROC-AUC {res['val'][1]:.4f}) test Hits@20 {res['test'][0]:.4f} (ROC-AUC {res['test'][1]:.4f}) "
                  f"{ms:.0f} ms", flush=True)
            if res["val"][0] > best[0]:
                best = (res["val"][0], epoch, res)
    _, epoch, res = best
    print(f"best epoch {epoch}: val Hits@20 {res['val'][0]:.4f}, test Hits@20 {res['test'][0]:.4f} "
          f"(ROC-AUC {res['test'][1]:.4f})")


if __name__ == "__main__":
    main()
