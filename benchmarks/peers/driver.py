"""Runs one suite of benchmarks/run.sh and appends every measurement to a CSV.

    python driver.py kernels|training --strata PATH --bin DIR --results DIR --csv FILE
                     --graphs G,G --feats F,F --threads T,T [--rgcn-graphs ..] [--rgcn-feats ..]

Called by benchmarks/run.sh (which builds the native peers into --bin and makes the
virtual environment); see docs/BENCHMARKS.md "Peers". Every row of the CSV is one
measurement or one honest non-measurement (status n/a, unavailable, MISMATCH,
not yet available). Not part of Strata.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
FIELDS = ["suite", "system", "variant", "op", "graph", "F", "threads", "ms", "status", "version", "detail",
          "rows", "cols", "nnz", "index_bytes", "gbs"]

NATIVE = {"MKL": "mkl_bench", "GraphBLAS": "graphblas_bench"}
PYTHON_PEERS = {"torch.sparse": "torch", "PyG": "pyg", "DGL": "dgl", "SciPy": "scipy"}


class Csv:
    def __init__(self, path):
        self.path = path
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=FIELDS)
        if new:
            self.w.writeheader()

    def row(self, **kw):
        r = {k: kw.get(k, "") for k in FIELDS}
        if isinstance(r["ms"], float):
            r["ms"] = f"{r['ms']:.6f}"
        self.w.writerow(r)
        self.f.flush()
        shown = f"{float(r['ms']):10.3f} ms" if r["status"] == "ok" and r["ms"] != "" else f"{'':>13}"
        print(f"  {r['suite']:8} {r['system']:14} {r['op']:10} {r['graph'][:28]:28} F={str(r['F']):>4} "
              f"t={r['threads']} {shown}  {r['status'][:60]}  {r['variant']}", flush=True)


class Done:
    """The (suite, graph, threads) groups a results folder has finished, in done.txt, so
    `run.sh --resume` continues an interrupted run where it stopped. Every system of a
    group is measured back to back in one go, so a group's ratios never span sessions."""

    def __init__(self, results, suite, csv_path):
        self.path = os.path.join(results, "done.txt")
        self.suite = suite
        self.keys = set()
        if os.path.exists(self.path):
            self.keys = {tuple(l.rstrip("\n").split("\t")) for l in open(self.path) if l.strip()}
        self.prune(csv_path)

    def prune(self, csv_path):
        """Drops this suite's rows of unfinished groups (an interrupted group is re-measured whole)."""
        if not os.path.exists(csv_path) or os.path.getsize(csv_path) == 0:
            return
        rows = list(csv.DictReader(open(csv_path)))
        keep = [r for r in rows if r["suite"] != self.suite or r["op"] == "stream" or self.has(r["graph"], r["threads"])]
        if len(keep) != len(rows):
            tmp = csv_path + ".tmp"
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=FIELDS)
                w.writeheader()
                w.writerows(keep)
            os.replace(tmp, csv_path)
            print(f"resume: dropped {len(rows) - len(keep)} rows of unfinished {self.suite} groups", flush=True)

    def has(self, graph, threads):
        return (self.suite, graph, str(threads)) in self.keys

    def mark(self, graph, threads):
        self.keys.add((self.suite, graph, str(threads)))
        with open(self.path, "a") as f:
            f.write(f"{self.suite}\t{graph}\t{threads}\n")


def env_for(threads):
    e = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # benchmark numpy/scipy with their own kernels
        e.pop(k, None)
    e["OMP_NUM_THREADS"] = str(threads)
    e["MKL_NUM_THREADS"] = str(threads)
    e["PYTHONPATH"] = HERE + os.pathsep + e.get("PYTHONPATH", "")
    return e


def run_rows(cmd, threads, timeout=3600):
    """Runs a peer program; returns (version, rows, error)."""
    try:
        p = subprocess.run(cmd, env=env_for(threads), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "", [], f"timed out after {timeout} s"
    version, rows = "", []
    for line in p.stdout.splitlines():
        parts = line.split("\t")
        if parts[0] == "VERSION":
            version = parts[1]
        elif parts[0] == "ROW" and len(parts) >= 7:
            rows.append({"variant": parts[1], "op": parts[2], "F": int(parts[3]), "ms": float(parts[4]),
                         "status": parts[5], "detail": parts[6]})
    err = ""
    if p.returncode != 0:
        tail = [l for l in p.stderr.strip().splitlines() if l.strip()][-1:] or [f"exit {p.returncode}"]
        err = f"exit {p.returncode}: {tail[0][:250]}"
    return version, rows, err


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def export(strata, graph, feats, results, extra=()):
    d = os.path.join(results, "exports", safe(graph) + ("_" + "_".join(e.strip("-") for e in extra) if extra else ""))
    meta = os.path.join(d, "meta.json")
    if os.path.exists(meta):
        m = json.load(open(meta))
        if all(f in m.get("feats", []) for f in feats):
            return d, m
    cmd = [strata, "export", "--graph", graph, "--feat", ",".join(map(str, feats)), "--out", d, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
    return d, json.load(open(meta))


def strata_version(strata):
    # "strata 0.1.0 (commit 3fea521e0a4b, Release, GNU 12.2.0)": the commit the binary was built from.
    out = subprocess.run([strata, "--version"], capture_output=True, text=True).stdout.strip()
    return out.splitlines()[0] if out else "unknown"


def strata_subcommands(strata):
    out = subprocess.run([strata, "--help"], capture_output=True, text=True).stdout
    subs, on = set(), False
    for line in out.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            on = True
            continue
        if on and line.startswith("  ") and line.strip():
            subs.add(line.split()[0])
    return subs


# ----------------------------------------------------------------------------- kernels

def kernels(a, out):
    strata, sv = a.strata, strata_version(a.strata)
    for t in a.threads:
        # The floor is re-measured in each session that times kernels (a resumed run
        # with every kernel group done measures none, and adds no STREAM row).
        if all(a.done.has(g, t) for g in a.graphs):
            continue
        p = subprocess.run([strata, "export", "--stream-only", "--threads", str(t)], capture_output=True, text=True)
        if p.returncode == 0:
            s = json.loads(p.stdout)
            out.row(suite="kernels", system="STREAM triad", variant="strata export --stream-only", op="stream",
                    threads=t, status="ok", version=sv, gbs=f"{s['stream_gbs']:.3f}")
        else:
            out.row(suite="kernels", system="STREAM triad", op="stream", threads=t, status="error",
                    detail=p.stderr.strip()[:200])
    for g in a.graphs:
        try:
            d, meta = export(strata, g, a.feats, a.results)
        except RuntimeError as e:
            out.row(suite="kernels", system="(export)", graph=g, status="error", detail=str(e)[:300])
            continue
        shape = dict(graph=g, rows=meta["rows"], cols=meta["cols"], nnz=meta["nnz"],
                     index_bytes=4 if meta["index_dtype"] in ("int32", "i32") else 8)
        print(f"\n{meta['description']}", flush=True)
        for t in a.threads:
            if a.done.has(g, t):
                print(f"  {g}, {t} thread(s): done in an earlier session", flush=True)
                continue
            kernels_strata(a, out, sv, g, t, shape)
            for system, prog in NATIVE.items():
                exe = os.path.join(a.bin, prog)
                if not os.path.exists(exe):
                    for op in ("spmm_sum", "spmm_mean", "sddmm_dot"):
                        for F in a.feats:
                            out.row(suite="kernels", system=system, op=op, F=F, threads=t, status="unavailable",
                                    detail=f"{prog} was not built (see run.sh output)", **shape)
                    continue
                ver, rows, err = run_rows([exe, d, str(t), ",".join(map(str, a.feats)), str(a.min_repeats)], t)
                emit_rows(out, "kernels", system, ver, rows, err, t, shape, a.feats)
            for system, key in PYTHON_PEERS.items():
                if key not in a.python_peers:
                    continue
                ver, rows, err = run_rows([PY, os.path.join(HERE, "kernels_py.py"), key, d, str(t),
                                           ",".join(map(str, a.feats))], t)
                emit_rows(out, "kernels", system, ver, rows, err, t, shape, a.feats)
            a.done.mark(g, t)


def emit_rows(out, suite, system, ver, rows, err, t, shape, feats, ops=("spmm_sum", "spmm_mean", "sddmm_dot")):
    for r in rows:
        out.row(suite=suite, system=system, threads=t, version=ver, **shape, **r)
    if err:
        seen = {(r["op"], r["F"]) for r in rows}
        for op in ops:
            for F in feats:
                if (op, F) not in seen:
                    out.row(suite=suite, system=system, op=op, F=F, threads=t, status="unavailable", version=ver,
                            detail=err, **shape)


def kernels_strata(a, out, sv, g, t, shape):
    feats = ",".join(map(str, a.feats))
    runs = [("spmm", "sum", "tuned,generated,eigen"), ("spmm", "mean", "tuned,generated"),
            ("sddmm", None, "tuned,generated")]
    names = {"tuned": "Strata tuned", "generated": "Strata CSR", "eigen": "Eigen"}
    for op, red, backends in runs:
        cmd = [a.strata, "bench", op, "--graph", g, "--feat", feats, "--backend", backends, "--threads", str(t),
               "--json"]
        if red:
            cmd += ["--reduce", red]
        opname = f"spmm_{red}" if red else "sddmm_dot"
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            j = json.loads(p.stdout)
        except json.JSONDecodeError:
            for b in backends.split(","):
                for F in a.feats:
                    out.row(suite="kernels", system=names[b], op=opname, F=F, threads=t, status="error", version=sv,
                            detail=(p.stderr.strip() or p.stdout.strip())[-250:], **shape)
            continue
        for r in j["rows"]:
            out.row(suite="kernels", system=names[r["backend"]], variant=r["plan"] or r["backend"], op=opname, F=r["F"],
                    threads=t, ms=r["ms"], status=r["status"], version=sv if r["backend"] != "eigen" else eigen_version(),
                    detail="strata bench (own seeded X, checked against the reference in-process)", **shape)
        if op == "spmm" and red == "mean":
            for F in a.feats:
                out.row(suite="kernels", system="Eigen", op=opname, F=F, threads=t, status="n/a", version=eigen_version(),
                        detail="Strata's Eigen baseline is sum-only", **shape)
        if op == "sddmm":
            for F in a.feats:
                out.row(suite="kernels", system="Eigen", op=opname, F=F, threads=t, status="n/a", version=eigen_version(),
                        detail="Eigen has no SDDMM", **shape)


_EIGEN = None


def eigen_version():
    global _EIGEN
    if _EIGEN is None:
        _EIGEN = "unknown"
        for path in ("/usr/include/eigen3/Eigen/src/Core/util/Macros.h",):
            try:
                txt = open(path).read()
                v = [re.search(rf"#define EIGEN_{k}_VERSION (\d+)", txt).group(1) for k in ("WORLD", "MAJOR", "MINOR")]
                _EIGEN = ".".join(v)
            except (OSError, AttributeError):
                pass
    return _EIGEN


# ----------------------------------------------------------------------------- training

def training(a, out):
    strata, sv = a.strata, strata_version(a.strata_train or a.strata)
    subs = strata_subcommands(a.strata_train or strata)
    for g in a.graphs:
        try:
            d, meta = export(strata, g, [32], a.results, ("--train",))
        except RuntimeError as e:
            out.row(suite="training", system="(export)", graph=g, status="error", detail=str(e)[:300])
            continue
        shape = dict(graph=g, rows=meta["rows"], cols=meta["cols"], nnz=meta["nnz"])
        print(f"\n{meta['description']}; train: {meta['train']['features']}", flush=True)
        for t in a.threads:
            if a.done.has(g, t):
                print(f"  {g}, {t} thread(s): done in an earlier session", flush=True)
                continue
            for model in ("sage", "gat"):
                op = f"{model}_epoch"
                strata_train_row(a, out, sv, subs, g, t, model, op, shape, meta["train"])
                for system, key in (("PyG", "pyg"), ("DGL", "dgl")):
                    ver, rows, err = run_rows([PY, os.path.join(HERE, "training.py"), key, model, d, str(t),
                                               str(a.epochs)], t)
                    emit_rows(out, "training", system, ver, rows, err, t, shape, [0], ops=(op,))
            a.done.mark(g, t)
    for g in a.rgcn_graphs:
        try:
            d, meta = export(strata, g, [32], a.results, ("--hetero",))
        except RuntimeError as e:
            out.row(suite="training", system="(export)", graph=g, op="rgcn_infer", status="error", detail=str(e)[:300])
            continue
        h = meta["hetero"]
        shape = dict(graph=g, rows=h["num_nodes"], cols=h["num_nodes"], nnz=h["nnz"])
        print(f"\n{g}: {h['num_nodes']} nodes, {h['nnz']} typed edges, {h['num_relations']} relations", flush=True)
        for t in a.threads:
            if a.done.has(g, t):
                print(f"  {g}, {t} thread(s): done in an earlier session", flush=True)
                continue
            for F in a.rgcn_feats:
                strata_rgcn_row(a, out, sv, g, t, F, shape)
                for system, key in (("PyG", "pyg"), ("DGL", "dgl")):
                    ver, rows, err = run_rows([PY, os.path.join(HERE, "rgcn.py"), key, d, str(t), str(F)], t)
                    emit_rows(out, "training", system, ver, rows, err, t, shape, [F], ops=("rgcn_infer",))
            a.done.mark(g, t)


def strata_train_row(a, out, sv, subs, g, t, model, op, shape, train_meta):
    """Strata's epoch time from `strata train` (never invented).

    The config is configs/<model>_<graph>.yaml, else configs/<model>_cora.yaml with
    data.dataset overridden, with --set overrides for the peers' architecture, one run,
    the thread count and a scratch run dir; the time is summary.json's median_epoch_ms
    (forward + backward + optimizer step; evaluation excluded). Where `strata export
    --train` had to invent labels (a graph without node classes), Strata trains with
    data.task=random on the same feature width and class count."""
    strata = a.strata_train or a.strata
    if "train" not in subs:
        out.row(suite="training", system="Strata", op=op, F=0, threads=t, status="not yet available", version=sv,
                detail="Strata: not yet available (no `strata train` in this build)", **shape)
        return
    name = {"sage": "graphsage", "gat": "gat"}[model]
    repo = os.path.dirname(os.path.dirname(HERE))
    cfg = os.path.join(repo, "configs", f"{name}_{g}.yaml")
    if not os.path.exists(cfg):
        cfg = os.path.join(repo, "configs", f"{name}_cora.yaml")
    if not os.path.exists(cfg):
        out.row(suite="training", system="Strata", op=op, F=0, threads=t, status="not yet available", version=sv,
                detail=f"Strata: not yet available (`strata train` exists but there is no configs/{name}_*.yaml)",
                **shape)
        return
    run_dir = os.path.join(a.results, "strata_train", f"{safe(g)}_{model}_t{t}")
    sets = [f"data.dataset={g}", "data.undirected=true", f"training.epochs={max(a.epochs, 10) + 2}", "training.runs=1",
            "training.patience=0", f"runtime.threads={t}", f"output.run_dir={run_dir}", "output.checkpoint=none",
            "output.log_every=0"]
    if train_meta.get("labels_from_dataset", 1) == 0:
        sets += ["data.task=random", f"data.random_features={train_meta['in_feats']}",
                 f"data.random_classes={train_meta['num_classes']}", "data.split.kind=random"]
    if model == "sage":
        # The peers' GraphSAGE (training.py) has no input dropout; the configs' does
        # (graphsage_facebook.yaml: 0.2), which on a dense input is a pass over all of X.
        sets += ["model.hidden=128", "model.dropout=0.5", "model.input_dropout=0", "model.aggregator=mean",
                 "optimizer.name=adam"]
    else:
        sets += ["model.gat.heads=8", "model.hidden=8", "model.gat.output_heads=1", "optimizer.name=adam"]
    variants = [sets]
    if train_meta.get("labels_from_dataset", 1) > 0:  # the peers read X dense: time that too
        variants.append(sets + ["data.feature_storage=dense", f"output.run_dir={run_dir}_dense"])
    for v in variants:
        strata_train_call(out, strata, cfg, v, t, op, sv, shape, repo)


def strata_train_call(out, strata, cfg, sets, t, op, sv, shape, repo):
    run_dir = [kv.split("=", 1)[1] for kv in sets if kv.startswith("output.run_dir=")][-1]
    cmd = [strata, "train", cfg] + [x for kv in sets for x in ("--set", kv)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    ms = None
    try:
        j = json.load(open(os.path.join(run_dir, "summary.json")))
        runs = j.get("runs", [])
        ms = float(runs[0]["median_epoch_ms"]) if runs else float(j["median_epoch_ms"])
    except (OSError, json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError):
        pass
    shown = " ".join(os.path.relpath(c, repo) if c.startswith(repo) else c for c in cmd[1:])
    if p.returncode == 0 and ms is not None:
        out.row(suite="training", system="Strata", variant=shown, op=op, F=0, threads=t, ms=ms, status="ok",
                version=sv, detail="median_epoch_ms from summary.json", **shape)
    else:
        out.row(suite="training", system="Strata", variant=shown, op=op, F=0, threads=t, status="error", version=sv,
                detail=("`strata train` failed or wrote no median_epoch_ms: " +
                        (p.stderr.strip() or p.stdout.strip())[-200:]), **shape)


def strata_rgcn_row(a, out, sv, g, t, F, shape):
    """Strata's RGCN inference time from strata_bench_rgcn (the same model as rgcn.py:
    2 layers F -> F -> F, a weight per relation, a root weight, per-relation mean, ReLU
    between; no bias, a vector add that is noise at these sizes). It checks every
    variant against Strata's reference loops before timing. Rows: "Strata" is the
    tuned RGMS kernels (the order the tuner picks per graph and F), "Strata
    per-relation" the loop PyG and DGL run, built from Strata's generated SpMM."""
    exe = a.bench_rgcn
    if not os.path.exists(exe):
        out.row(suite="training", system="Strata", op="rgcn_infer", F=F, threads=t, status="unavailable", version=sv,
                detail=f"{exe} not built (cmake --build BUILD --target strata_bench_rgcn)", **shape)
        return
    js = os.path.join(a.results, "strata_rgcn", f"{safe(g)}_F{F}_t{t}.json")
    os.makedirs(os.path.dirname(js), exist_ok=True)
    cmd = [exe, "--graphs", g, "--feat", str(F), "--threads", str(t), "--repeats", "10", "--reference-repeats", "1",
           "--json", js]
    p = subprocess.run(cmd, capture_output=True, text=True)
    shown = " ".join([os.path.basename(exe)] + cmd[1:-2])
    try:
        row = json.load(open(js))[0]
    except (OSError, json.JSONDecodeError, IndexError, KeyError):
        out.row(suite="training", system="Strata", variant=shown, op="rgcn_infer", F=F, threads=t, status="error",
                version=sv, detail=(p.stderr.strip() or p.stdout.strip())[-200:], **shape)
        return
    same = (row["nodes"], row["edges"]) == (shape["rows"], shape["nnz"])
    for system, key, note in (("Strata", "tuned", f"order {row['tuned_order']}"),
                              ("Strata per-relation", "per-rel", "per-relation loop of generated SpMM + matmul")):
        status = "ok" if row["checked"] and same else "MISMATCH"
        detail = note if status == "ok" else (
            f"graph differs from the export: {row['nodes']} nodes, {row['edges']} edges" if not same
            else "differs from Strata's reference loops")
        out.row(suite="training", system=system, variant=shown, op="rgcn_infer", F=F, threads=t,
                ms=float(row[key]["median_ms"]), status=status, version=sv, detail=detail, **shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", choices=["kernels", "training"])
    ap.add_argument("--strata", required=True)
    ap.add_argument("--strata-train", default="", help="the strata binary for `train` rows (default: --strata)")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--bench-rgcn", default="", help="strata_bench_rgcn (default: next to --strata's build)")
    ap.add_argument("--results", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--graphs", default="")
    ap.add_argument("--feats", default="32,64,128,256")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rgcn-graphs", default="")
    ap.add_argument("--rgcn-feats", default="32,64")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--min-repeats", type=int, default=10)
    ap.add_argument("--python-peers", default="torch,pyg,dgl,scipy")
    a = ap.parse_args()
    a.graphs = [g for g in a.graphs.split(";") if g]
    a.rgcn_graphs = [g for g in a.rgcn_graphs.split(";") if g]
    a.feats = [int(f) for f in a.feats.split(",")]
    a.rgcn_feats = [int(f) for f in a.rgcn_feats.split(",")]
    a.threads = [int(t) for t in a.threads.split(",")]
    a.python_peers = a.python_peers.split(",")
    if not a.bench_rgcn:
        a.bench_rgcn = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.strata))), "benchmarks",
                                    "strata_bench_rgcn")
    os.makedirs(a.results, exist_ok=True)
    a.done = Done(a.results, a.suite, a.csv)
    out = Csv(a.csv)
    t0 = time.time()
    (kernels if a.suite == "kernels" else training)(a, out)
    print(f"\n{a.suite} suite: {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
