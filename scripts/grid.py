#!/usr/bin/env python3
"""Grid search over a training config, chosen on validation (GraphGym's agg/ tables).

    scripts/grid.py configs/gcn_cora.yaml --grid model.hidden=64,128 --grid model.dropout=0.5,0.8 \
        --split-seeds 0-4 --runs 2 --out runs/grid-gcn

Every combination of the --grid values is trained once per split seed
(`strata train CONFIG --set data.split.seed=S --set training.runs=R --set ...`), each in
its own run dir under OUT/runs/. Written, each whole (temporary name, then rename):

    OUT/results.csv  one row per (combination, split seed): the overrides, the seed, mean
                     validation and test accuracy over the runs, median ms per epoch
    OUT/agg.csv      one row per combination: the means over the split seeds, ranked by
                     validation accuracy (best first); test accuracy is reported, never
                     used to rank

and the ranking is printed. A failed training run stops the search with its command and
message (nothing is aggregated from a partial grid). Python standard library only.
"""
import argparse
import csv
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_seeds(text):
    """'0-4' -> [0..4], '0,3,7' -> [0, 3, 7]."""
    seeds = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            sys.exit(f"grid: --split-seeds: '{part}' is not a seed or a range like 0-4")
    return seeds


def parse_grid(items):
    """['model.hidden=64,128', ...] -> [('model.hidden', ['64', '128']), ...]. Values that hold
    commas themselves (dataset strings such as sbm:nodes=500,classes=5) are separated by ';'."""
    axes = []
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key or not values:
            sys.exit(f"grid: --grid '{item}': expected key=value1,value2,... (or value1;value2 when a value "
                     "holds commas)")
        if any(k == key for k, _ in axes):
            sys.exit(f"grid: --grid: the key '{key}' is given twice")
        vals = [v.strip() for v in values.split(";" if ";" in values else ",")]
        if any(not v for v in vals):
            sys.exit(f"grid: --grid '{item}': an empty value")
        axes.append((key, vals))
    return axes


def write_csv(path, header, rows):
    tmp = path.with_name(path.name + f".tmp.{os.getpid()}")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", help="the training config (YAML)")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                    help="a config key and its values; repeat for more keys (combinations are the product); "
                         "separate the values with ';' when they hold commas (dataset strings)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an override for every run")
    ap.add_argument("--split-seeds", default="0", help="split seeds, e.g. 0-4 or 0,2 (default 0)")
    ap.add_argument("--runs", type=int, default=1, help="training.runs per split seed (default 1)")
    ap.add_argument("--out", required=True, help="output folder (created; its runs/ holds every run dir)")
    ap.add_argument("--strata", default=str(ROOT / "build/apps/strata"))
    a = ap.parse_args()

    if not os.access(a.strata, os.X_OK):
        sys.exit(f"grid: no strata binary at '{a.strata}' (build first, or pass --strata)")
    if not Path(a.config).is_file():
        sys.exit(f"grid: config '{a.config}' does not exist")
    if a.runs < 1:
        sys.exit(f"grid: --runs must be at least 1, got {a.runs}")
    axes = parse_grid(a.grid)
    seeds = parse_seeds(a.split_seeds)
    out = Path(a.out)
    if out.exists() and not out.is_dir():
        sys.exit(f"grid: --out '{out}' exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    keys = [k for k, _ in axes]
    combos = list(itertools.product(*[v for _, v in axes])) if axes else [()]

    results = []
    for ci, combo in enumerate(combos):
        sets = [f"{k}={v}" for k, v in zip(keys, combo)] + a.set
        for seed in seeds:
            run_dir = out / "runs" / f"c{ci:03d}-s{seed}"
            cmd = [a.strata, "train", a.config, "--set", f"data.split.seed={seed}", "--set", f"training.runs={a.runs}",
                   "--set", f"output.run_dir={run_dir}", "--set", "output.checkpoint=none"]
            for s in sets:
                cmd += ["--set", s]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
                sys.exit(f"grid: this run failed (exit {p.returncode}):\n  {' '.join(cmd)}\n  {last}")
            summary = json.loads((run_dir / "summary.json").read_text())
            row = list(combo) + [seed, summary["val_acc"]["mean"], summary["test_acc"]["mean"],
                                 summary["median_epoch_ms"]]
            results.append(row)
            print(f"  {' '.join(sets) or '(config as is)'}  split seed {seed}: val {row[-3]:.4f} test {row[-2]:.4f}",
                  flush=True)

    write_csv(out / "results.csv", keys + ["split_seed", "val_acc", "test_acc", "median_epoch_ms"], results)
    agg = []
    n = len(seeds)
    for ci, combo in enumerate(combos):
        mine = results[ci * n:(ci + 1) * n]
        agg.append(list(combo) + [n, sum(r[-3] for r in mine) / n, sum(r[-2] for r in mine) / n,
                                  sum(r[-1] for r in mine) / n])
    agg.sort(key=lambda r: -r[-3])  # by validation only
    write_csv(out / "agg.csv", keys + ["split_seeds", "val_acc", "test_acc", "median_epoch_ms"], agg)
    print(f"\nranked by validation accuracy (mean over {n} split seed{'s' if n > 1 else ''} x {a.runs} run"
          f"{'s' if a.runs > 1 else ''}); written {out / 'results.csv'} and {out / 'agg.csv'}")
    for rank, r in enumerate(agg, 1):
        label = " ".join(f"{k}={v}" for k, v in zip(keys, r[:len(keys)])) or "(config as is)"
        print(f"  {rank:2d}. {label:48s} val {r[-3]:.4f}  test {r[-2]:.4f}  {r[-1]:.2f} ms/epoch")


if __name__ == "__main__":
    main()
