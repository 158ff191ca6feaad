"""Shared helpers for the Python peers of benchmarks/run.sh (not part of Strata).

Every peer script loads the inputs `strata export` wrote, checks its output against
Strata's reference outputs (numpy.allclose, rtol = atol = 1e-3) and only then times
it: two warm-up calls, then at least MIN_REPEATS calls and about BUDGET_S seconds
(at most 200 calls; at least 3 calls when a row has already taken 10 x BUDGET_S),
reporting the median. Results are printed as tab-separated
"ROW" lines that benchmarks/peers/driver.py collects into the CSV.
"""
import json
import os
import sys
import time

import numpy as np

MIN_REPEATS = int(os.environ.get("PEERS_MIN_REPEATS", "10"))
BUDGET_S = float(os.environ.get("PEERS_BUDGET_S", "1.0"))


def load_export(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    indptr = np.load(os.path.join(d, "indptr.npy"))
    indices = np.load(os.path.join(d, "indices.npy"))
    return meta, indptr, indices


def load_feat(d, F):
    f = lambda n: np.load(os.path.join(d, f"{n}_F{F}.npy"))
    return {"x": f("x"), "y": f("y"), "spmm_sum": f("ref_spmm_sum"), "spmm_mean": f("ref_spmm_mean"),
            "sddmm_dot": f("ref_sddmm_dot")}


def check(got, want, rtol=1e-3, atol=1e-3):
    """'' when close, else a one-line MISMATCH description."""
    got = np.asarray(got, dtype=np.float32).reshape(want.shape)
    ok = np.isclose(got, want, rtol=rtol, atol=atol)
    if ok.all():
        return ""
    bad = int((~ok).sum())
    err = float(np.nanmax(np.abs(got - want))) if np.isfinite(got).all() else float("inf")
    return f"MISMATCH {bad} of {want.size} elements, max abs err {err:.3g}"


def time_ms(fn, min_repeats=None, budget_s=None, max_repeats=200):
    min_repeats = MIN_REPEATS if min_repeats is None else min_repeats
    budget_s = BUDGET_S if budget_s is None else budget_s
    a = time.perf_counter()
    fn()
    if time.perf_counter() - a < budget_s:  # a second warm-up unless one call already takes ~a second
        fn()
    t = []
    start = time.perf_counter()
    while len(t) < max_repeats:
        a = time.perf_counter()
        fn()
        t.append((time.perf_counter() - a) * 1e3)
        el = time.perf_counter() - start
        # at least min_repeats calls and ~budget_s; a row whose calls take seconds stops after
        # 3 calls once it has run 10 x budget_s, so the full suite stays finite on large graphs
        if (len(t) >= min_repeats and el >= budget_s) or (len(t) >= 3 and el >= 10 * budget_s):
            break
    return float(np.median(t))


def emit(variant, op, F, ms, status, detail=""):
    detail = str(detail).replace("\t", " ").replace("\n", " ")[:300]
    print(f"ROW\t{variant}\t{op}\t{F}\t{ms:.6f}\t{status}\t{detail}", flush=True)


def emit_version(v):
    print(f"VERSION\t{v}", flush=True)


def run_checked(variant, op, F, fn, want, detail=""):
    """Runs fn once, checks it, times it when it matches; emits the row."""
    try:
        got = fn()
        bad = check(to_numpy(got), want)
    except Exception as e:  # an unsupported path is a row, not a crash
        emit(variant, op, F, 0, "error", f"{type(e).__name__}: {e}")
        return
    if bad:
        emit(variant, op, F, 0, bad, detail)
    else:
        emit(variant, op, F, time_ms(fn), "ok", detail)


def to_numpy(x):
    if hasattr(x, "detach"):
        x = x.detach()
        if getattr(x, "is_sparse_csr", False):
            x = x.values()
        return x.numpy()
    if hasattr(x, "toarray"):
        return x.toarray()
    return np.asarray(x)


def threadpool_info():
    try:
        from threadpoolctl import threadpool_info as tpi
        return [{k: p.get(k) for k in ("internal_api", "version", "num_threads", "architecture", "filepath")}
                for p in tpi()]
    except Exception as e:  # pragma: no cover
        return [{"error": str(e)}]


def mem_available_bytes():
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def too_big(need_bytes, share=0.6):
    """A reason string when a path's temporaries would not fit in `share` of the memory
    available now (the machine is shared), else ''."""
    avail = mem_available_bytes()
    if avail is not None and need_bytes > share * avail:
        return f"needs ~{need_bytes / 1e9:.1f} GB of temporaries, {avail / 1e9:.1f} GB available: not run"
    return ""


def die(msg):
    print(f"peers: error: {msg}", file=sys.stderr)
    sys.exit(2)
