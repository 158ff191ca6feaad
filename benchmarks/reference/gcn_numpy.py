#!/usr/bin/env python3
"""An independent GCN (Kipf & Welling 2017) in NumPy, as a cross-check of Strata's
training accuracy on random Planetoid-style splits of the LINQS Cora files.

Not part of the build; needs numpy and scipy. It reads citation/cora.tgz itself
(no Strata code), symmetrizes the citations, adds self-loops, row-normalizes the
features, and trains the paper's recipe (hidden 16, dropout 0.5 on the input and
hidden layer, Adam lr 0.01, weight decay 5e-4 on all parameters, 200 epochs) with
hand-written backpropagation; the test accuracy is taken at the best validation
accuracy, as `strata train` does. Each run draws its own split (20 labelled nodes
per class, 500 validation, 1000 test) from numpy's default_rng(split).

    python3 benchmarks/reference/gcn_numpy.py ../shared/datasets/citation/cora.tgz 6
"""
import sys
import tarfile

import numpy as np
import scipy.sparse as sp


def load_cora(path):
    with tarfile.open(path) as tar:
        content = tar.extractfile("cora/cora.content").read().decode().splitlines()
        cites = tar.extractfile("cora/cora.cites").read().decode().splitlines()
    rows = [line.split("\t") for line in content]
    index = {r[0]: i for i, r in enumerate(rows)}
    x = np.array([[float(v) for v in r[1:-1]] for r in rows], dtype=np.float32)
    classes = sorted({r[-1] for r in rows})
    y = np.array([classes.index(r[-1]) for r in rows])
    pairs = [line.split() for line in cites]
    dst = [index[a] for a, b in pairs]  # "cited citing": the citing paper sends
    src = [index[b] for a, b in pairs]
    n = len(rows)
    a = sp.coo_matrix((np.ones(len(src)), (dst, src)), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64) + sp.eye(n)
    d = np.asarray(a.sum(1)).ravel() ** -0.5
    a_hat = (sp.diags(d) @ a @ sp.diags(d)).tocsr().astype(np.float32)
    x = x / np.maximum(x.sum(1, keepdims=True), 1e-12)
    return a_hat, x, y, len(classes)


def planetoid_split(y, classes, seed):
    perm = np.random.default_rng(seed).permutation(len(y))
    train, rest, taken = [], [], np.zeros(classes, int)
    for i in perm:
        if taken[y[i]] < 20:
            taken[y[i]] += 1
            train.append(i)
        else:
            rest.append(i)
    return np.array(train), np.array(rest[:500]), np.array(rest[500:1500])


def train_gcn(a_hat, x, y, classes, split, seed, hidden=16, p=0.5, lr=0.01, wd=5e-4, epochs=200):
    tr, va, te = split
    rng = np.random.default_rng(1000 + seed)

    def glorot(fan_in, fan_out):
        s = np.sqrt(6 / (fan_in + fan_out))
        return rng.uniform(-s, s, (fan_in, fan_out)).astype(np.float32)

    params = [glorot(x.shape[1], hidden), np.zeros(hidden, np.float32), glorot(hidden, classes),
              np.zeros(classes, np.float32)]
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    best = (-1.0, 0.0, 0)
    for epoch in range(1, epochs + 1):
        mask0 = (rng.random(x.shape) >= p) / (1 - p)
        x0 = x * mask0
        h1 = a_hat @ (x0 @ params[0]) + params[1]
        r = np.maximum(h1, 0)
        mask1 = (rng.random(r.shape) >= p) / (1 - p)
        d1 = r * mask1
        o = a_hat @ (d1 @ params[2]) + params[3]
        o = o - o.max(1, keepdims=True)
        logp = o - np.log(np.exp(o).sum(1, keepdims=True))
        g = np.exp(logp)
        g[tr, y[tr]] -= 1
        go = np.zeros_like(o)
        go[tr] = g[tr] / len(tr)
        gz2 = a_hat.T @ go
        gw2, gb2 = d1.T @ gz2, go.sum(0)
        gh1 = (gz2 @ params[2].T) * mask1 * (h1 > 0)
        gz1 = a_hat.T @ gh1
        gw1, gb1 = x0.T @ gz1, gh1.sum(0)
        grads = [gw1, gb1, gw2, gb2]
        for i in range(4):
            gi = grads[i] + wd * params[i]
            m[i] = 0.9 * m[i] + 0.1 * gi
            v[i] = 0.999 * v[i] + 0.001 * gi * gi
            params[i] -= lr * (m[i] / (1 - 0.9**epoch)) / (np.sqrt(v[i] / (1 - 0.999**epoch)) + 1e-8)
        h = np.maximum(a_hat @ (x @ params[0]) + params[1], 0)
        pred = (a_hat @ (h @ params[2]) + params[3]).argmax(1)
        val, test = (pred[va] == y[va]).mean(), (pred[te] == y[te]).mean()
        if val > best[0]:
            best = (val, test, epoch)
    return best


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/datasets/citation/cora.tgz"
    splits = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    a_hat, x, y, classes = load_cora(path)
    print(f"Cora: {x.shape[0]} nodes, {a_hat.nnz} non-zeros in A+I, {x.shape[1]} features, {classes} classes")
    tests = []
    for s in range(splits):
        val, test, epoch = train_gcn(a_hat, x, y, classes, planetoid_split(y, classes, s), s)
        tests.append(test)
        print(f"split {s}: best epoch {epoch}, val {val:.3f}, test {test:.3f}", flush=True)
    print(f"test accuracy over {splits} splits: {np.mean(tests):.4f} ± {np.std(tests, ddof=1):.4f}")


if __name__ == "__main__":
    main()
