"""Prints the machine and every peer's version as JSON (benchmarks/run.sh -> versions.json)."""
import argparse
import importlib
import json
import os
import platform
import re
import subprocess
import sys

from common import threadpool_info


def lscpu():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    info = {}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        info[k.strip()] = v.strip()
    return {k: info.get(k, "") for k in ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
                                          "Hypervisor vendor", "L2 cache", "L3 cache")}


def module_version(name):
    try:
        m = importlib.import_module(name)
        return getattr(m, "__version__", "unknown")
    except Exception as e:  # reported, not fatal
        return f"unavailable ({type(e).__name__}: {str(e)[:120]})"


def dpkg_version(pkg):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else "not installed"


def pip_version(pkg):
    p = subprocess.run([sys.executable, "-m", "pip", "show", pkg], capture_output=True, text=True)
    m = re.search(r"^Version: (.+)$", p.stdout, re.M)
    return m.group(1) if m else "not installed"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strata", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--threads", required=True)
    ap.add_argument("--quick", default="0")
    a = ap.parse_args()
    # "strata 0.1.0 (commit 3fea521e0a4b, Release, GNU 12.2.0)": names the commit the binary was built from.
    strata = (subprocess.run([a.strata, "--version"], capture_output=True, text=True).stdout.strip().splitlines() or
              ["unknown"])[0]
    import numpy  # noqa: F401  (so threadpoolctl sees its BLAS)
    try:
        import scipy.linalg  # noqa: F401
    except Exception:
        pass
    info = {
        "machine": lscpu(),
        "nproc": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "threads": a.threads,
        "quick": a.quick == "1",
        "python": platform.python_version(),
        "versions": {
            "Strata": strata,
            "Eigen": eigen_version(),
            "MKL": pip_version("mkl") + " (mkl-devel from PyPI; mkl_sparse_s_mm)",
            "GraphBLAS": "SuiteSparse:GraphBLAS " + dpkg_version("libgraphblas-dev") + " (Debian libgraphblas-dev)",
            "torch.sparse": module_version("torch"),
            "PyG": module_version("torch_geometric"),
            "DGL": module_version("dgl"),
            "SciPy": module_version("scipy"),
            "numpy": module_version("numpy"),
            "matplotlib": module_version("matplotlib"),
            "gcc": subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True).stdout.strip(),
        },
        "threadpools": threadpool_info(),
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")},
    }
    unavailable = os.path.join(a.results, "unavailable.txt")
    info["unavailable"] = open(unavailable).read().splitlines() if os.path.exists(unavailable) else []
    print(json.dumps(info, indent=2))


def eigen_version():
    try:
        txt = open("/usr/include/eigen3/Eigen/src/Core/util/Macros.h").read()
        return ".".join(re.search(rf"#define EIGEN_{k}_VERSION (\d+)", txt).group(1) for k in ("WORLD", "MAJOR", "MINOR"))
    except (OSError, AttributeError):
        return "unknown"


if __name__ == "__main__":
    main()
