#!/usr/bin/env bash
# Side-by-side benchmarks of Strata against the systems users would pick instead,
# measured in one run on one machine with the same graphs and feature sizes.
#
#   benchmarks/run.sh --suite kernels|training|all [--quick] [--update-docs]
#                     [--threads 1,2] [--build DIR] [--data-root DIR] [--results DIR]
#
#   kernels   SpMM (sum, mean) and SDDMM (dot): Strata (tuned, plain CSR), Eigen, MKL,
#             SuiteSparse:GraphBLAS, torch.sparse, PyG, DGL, SciPy; the STREAM triad floor
#   training  GraphSAGE and GAT epochs (PyG, DGL, Strata when `strata train` exists);
#             RGCN inference (PyG, DGL, Strata when it has an RGCN command)
#   --quick   a few graphs, F in {32, 128}, 2 threads (under 10 minutes)
#   --strata-train PATH  the strata binary whose `train` command gives Strata's epoch rows
#             (default: the one in --build)
#   --threads LIST  override the thread counts (default 1,2; --quick: 2)
#   --update-docs  rewrite the generated part of docs/BENCHMARKS.md "Peers" and
#             docs/plots/peers_*.png from this run
#   --resume DIR  continue the run whose results are in DIR (same options): groups of
#             (suite, graph, thread count) it finished are kept, the rest measured
#
# Every output is checked against Strata's reference outputs (`strata export`) before
# it is timed; a mismatch is a row that says so. Results: <results>/peers.csv (every
# measurement), versions.json, report.md, plots. The Python peers live in a virtual
# environment at benchmarks/.venv, made from benchmarks/requirements.txt on the first
# run and reused after. Not run in CI. See docs/BENCHMARKS.md "Peers".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
suite="" quick=0 update_docs=0
orig_args=("$@")
build="$repo/build"
data_root="${STRATA_DATA_ROOT:-$repo/../shared/datasets}"
results=""
threads_override=""
strata_train=""
resume=""

die() { echo "run.sh: error: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --suite) suite="${2:-}"; shift 2 ;;
    --quick) quick=1; shift ;;
    --update-docs) update_docs=1; shift ;;
    --threads) threads_override="${2:-}"; shift 2 ;;
    --strata-train) strata_train="${2:-}"; shift 2 ;;
    --build) build="${2:-}"; shift 2 ;;
    --data-root) data_root="${2:-}"; shift 2 ;;
    --results) results="${2:-}"; shift 2 ;;
    --resume) resume="${2:-}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$suite" in kernels|training|all) ;; *) die "--suite kernels|training|all is required" ;; esac
if [[ -n "$threads_override" && ! "$threads_override" =~ ^[0-9]+(,[0-9]+)*$ ]]; then
  die "--threads: expected a list such as 1,2"
fi

# ---- prerequisites: fail loudly ------------------------------------------------------
strata="$build/apps/strata"
[[ -x "$strata" ]] || die "no Strata build at $strata. Build it first:
  cmake -S $repo -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=OFF && cmake --build $build -j2"
[[ -z "$strata_train" || -x "$strata_train" ]] || die "--strata-train: '$strata_train' is not an executable"
"$strata" --help 2>/dev/null | grep -q '^  export' || die "$strata has no 'export' command: rebuild it (cmake --build $build)"
[[ -d "$data_root" ]] || die "no dataset folder at '$data_root' (the shared datasets; set --data-root or STRATA_DATA_ROOT)"
data_root="$(cd "$data_root" && pwd)"
export STRATA_DATA_ROOT="$data_root"
command -v python3.11 >/dev/null || command -v python3 >/dev/null || die "python3 (3.11) not found"
py_sys="$(command -v python3.11 || command -v python3)"
command -v g++ >/dev/null || die "g++ not found (needed for the MKL and GraphBLAS peers)"
lscpu >/dev/null 2>&1 || die "lscpu not found"

stamp="$(date +%Y%m%d-%H%M%S)"
suffix=""; [[ $quick == 1 ]] && suffix="-quick"
# The options that decide what is measured; a resumed run must repeat them.
what="suite=$suite quick=$quick threads=${threads_override:-default}"
if [[ -n "$resume" ]]; then
  [[ -f "$resume/versions.json" && -f "$resume/options.txt" ]] || die "--resume: '$resume' holds no earlier run (no versions.json / options.txt)"
  [[ "$(cat "$resume/options.txt")" == "$what" ]] || die "--resume: '$resume' was run with '$(cat "$resume/options.txt")', not '$what'; repeat its options"
  results="$resume"
fi
[[ -n "$results" ]] || results="$repo/benchmarks/results/$stamp$suffix"
mkdir -p "$results/bin"
results="$(cd "$results" && pwd)"
echo "$what" > "$results/options.txt"
# Each session's Strata commit too: a resumed run may measure its groups with a newer build.
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) load $(cut -d' ' -f1-3 /proc/loadavg) strata $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)" >> "$results/sessions.txt"
echo "run.sh: suite $suite$([[ $quick == 1 ]] && echo ' (quick)'); results in $results${resume:+ (resumed)}"

# ---- the virtual environment (made once, reused while requirements.txt is unchanged) --
venv="$here/.venv"
req="$here/requirements.txt"
want_hash="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && "$(cat "$venv/.requirements.sha256" 2>/dev/null)" == "$want_hash" ]]; then
  echo "run.sh: reusing $venv"
else
  echo "run.sh: creating $venv from $req (several GB: torch's PyPI wheel brings CUDA runtime libraries)"
  "$py_sys" -m venv "$venv" || die "python3 -m venv failed (apt-get install python3-venv?)"
  "$venv/bin/pip" install --quiet -r "$req" || die "pip install -r $req failed (see above)"
  echo "$want_hash" > "$venv/.requirements.sha256"
fi
py="$venv/bin/python"

# Which Python peers import; one that does not is reported and left out, not faked.
peers=""
for p in torch:torch pyg:torch_geometric dgl:dgl scipy:scipy; do
  name="${p%%:*}" mod="${p##*:}"
  if err="$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" -c "import $mod" 2>&1 >/dev/null)"; then
    peers="${peers:+$peers,}$name"
  else
    echo "run.sh: WARNING: the $name peer is left out: 'import $mod' failed: $(echo "$err" | tail -n 1)" >&2
    echo "$name: import $mod failed: $(echo "$err" | tail -n 1)" >> "$results/unavailable.txt"
  fi
done
"$py" -c "import matplotlib" 2>/dev/null || die "matplotlib does not import from $venv (needed for the plots)"

# ---- native peers -------------------------------------------------------------------
if [[ "$suite" != training ]]; then
  if [[ -f "$venv/include/mkl.h" ]]; then
    g++ -O3 -march=native -std=c++17 -o "$results/bin/mkl_bench" "$here/peers/mkl_bench.cpp" \
      -I"$venv/include" -L"$venv/lib" -l:libmkl_rt.so.2 -Wl,-rpath,"$venv/lib" \
      || echo "mkl: mkl_bench.cpp did not build" | tee -a "$results/unavailable.txt" >&2
  else
    echo "mkl: no mkl.h in $venv/include (mkl-devel not installed)" | tee -a "$results/unavailable.txt" >&2
  fi
  if [[ ! -f /usr/include/GraphBLAS.h && "$(id -u)" == 0 ]]; then
    echo "run.sh: installing SuiteSparse:GraphBLAS (apt-get install -y libgraphblas-dev)"
    apt-get install -y -q libgraphblas-dev >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q libgraphblas-dev >/dev/null 2>&1; } || true
  fi
  if [[ -f /usr/include/GraphBLAS.h ]]; then
    g++ -O3 -march=native -std=c++17 -o "$results/bin/graphblas_bench" "$here/peers/graphblas_bench.cpp" -lgraphblas \
      || echo "graphblas: graphblas_bench.cpp did not build" | tee -a "$results/unavailable.txt" >&2
  else
    echo "graphblas: not installed; as root run: apt-get install -y libgraphblas-dev" | tee -a "$results/unavailable.txt" >&2
  fi
fi

# ---- what runs ----------------------------------------------------------------------
rmat() { echo "rmat:scale=$1,edge_factor=16,seed=1"; }
if [[ $quick == 1 ]]; then
  graphs="cora;facebook;$(rmat 16)"
  feats="32,128" threads="2"
  train_graphs="cora" rgcn_graphs="aifb" rgcn_feats="32" epochs=5
else
  graphs="cora;citeseer;pubmed;ddi;enron;condmat;gnutella;github;facebook;squirrel;deezer-hu;karate;bcsstk13;ca-grqc;luxembourg;acm;dblp;imdb;$(rmat 16);$(rmat 17);$(rmat 18)"
  feats="32,64,128,256" threads="1,2"
  train_graphs="cora;citeseer;facebook;$(rmat 17)" rgcn_graphs="aifb;mutag;acm;dblp" rgcn_feats="32,64" epochs=10
fi

if [[ -n "$threads_override" ]]; then threads="$threads_override"; fi

# ---- machine and versions -------------------------------------------------------------
if [[ -z "$resume" ]]; then
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH="$here/peers" "$py" "$here/peers/versions.py" \
    --strata "$strata" --results "$results" --threads "$threads" --quick "$quick" > "$results/versions.json.tmp" \
    && mv "$results/versions.json.tmp" "$results/versions.json" || die "could not collect versions"
fi

csv="$results/peers.csv"
common=(--strata "$strata" --bin "$results/bin" --results "$results" --csv "$csv" --threads "$threads")
# Training first: its groups are few and short, the kernel suite's are many and long
# (an interrupted run resumes with --resume either way).
if [[ "$suite" == training || "$suite" == all ]]; then
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" "$here/peers/driver.py" training "${common[@]}" \
    ${strata_train:+--strata-train "$strata_train"} --graphs "$train_graphs" --rgcn-graphs "$rgcn_graphs" --rgcn-feats "$rgcn_feats" --epochs "$epochs"
fi
if [[ "$suite" == kernels || "$suite" == all ]]; then
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" "$here/peers/driver.py" kernels "${common[@]}" \
    --graphs "$graphs" --feats "$feats" --python-peers "$peers"
fi

report_args=(--csv "$csv" --versions "$results/versions.json" --out "$results/report.md" --plots "$results"
             --command "${PEERS_BUDGET_S:+PEERS_BUDGET_S=$PEERS_BUDGET_S }benchmarks/run.sh ${orig_args[*]}")
if [[ $update_docs == 1 ]]; then
  report_args+=(--plots "$repo/docs/plots" --docs "$repo/docs/BENCHMARKS.md" --plot-prefix "peers${suffix//-/_}")
  if [[ $quick == 1 ]]; then cp "$csv" "$repo/docs/peers_quick.csv"; fi
fi
"$py" "$here/peers/report.py" "${report_args[@]}"
echo "run.sh: done: $csv, $results/report.md"
