#!/usr/bin/env bash
# Mini-batch GraphSAGE epochs side by side: Strata (input as stored, and dense) against DGL and
# PyG (benchmarks/peers/minibatch.py), on the same split, model, batch size and fanouts, with
# 2 threads, in alternating rounds (docs/BENCHMARKS.md "Mini-batch training ... Against DGL and
# PyG"). Prints one line per (system, graph, round).
#
#   benchmarks/peers/minibatch_compare.sh BUILD_DIR SCRATCH_DIR [ROUNDS] [EPOCHS]
#
# Needs the benchmarks venv (benchmarks/.venv: DGL, PyG); PyG's NeighborLoader also needs
# torch-sparse or pyg-lib on PYTHONPATH (without them its rows say so). Run it on an idle
# machine; `chrt -f 50` is used where permitted.
set -uo pipefail
build="${1:?usage: minibatch_compare.sh BUILD_DIR SCRATCH_DIR [ROUNDS] [EPOCHS]}"
scratch="${2:?usage: minibatch_compare.sh BUILD_DIR SCRATCH_DIR [ROUNDS] [EPOCHS]}"
rounds="${3:-2}"
epochs="${4:-10}"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
strata="$build/apps/strata"
py="$src/benchmarks/.venv/bin/python"
export OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 STRATA_CACHE_DIR="${STRATA_CACHE_DIR:-$scratch/cache}"
rt=(); chrt -f 50 true 2>/dev/null && rt=(chrt -f 50)
mkdir -p "$scratch"

# The peers' inputs: Cora's Planetoid-style split (the configs'), Facebook's 60/20/20 random split.
"$strata" export --graph cora --train --feat 32 --out "$scratch/cora" >/dev/null || exit 1
"$strata" export --graph facebook --train --feat 32 --split-ratios 0.6,0.2 --out "$scratch/facebook" >/dev/null || exit 1

strata_row() {  # LABEL CONFIG BATCH [--set ...]
  local label="$1" config="$2" batch="$3"; shift 3
  local run="$scratch/strata-run"
  rm -rf "$run"
  "${rt[@]}" "$strata" train "$src/configs/$config" --set training.runs=1 --set training.epochs=$((epochs + 2)) \
    --set training.patience=0 --set training.eval_period=100000 --set training.batch_size="$batch" \
    --set training.fanouts=10,25 --set model.name=graphsage --set model.hidden=64 --set model.aggregator=mean \
    --set model.root_weight=true --set model.dropout=0.5 --set model.input_dropout=0 \
    --set data.normalize_features=false --set optimizer.lr=0.01 --set optimizer.weight_decay=0.0005 \
    --set runtime.threads=2 --set output.run_dir="$run" --set output.log_every=0 --set output.checkpoint=none \
    --set output.resume_every=0 "$@" >"$scratch/strata.log" 2>&1 || { echo "$label FAILED"; tail -3 "$scratch/strata.log"; return; }
  python3 - "$label" "$run/metrics.jsonl" <<'PY'
import json, statistics, sys
m = [json.loads(l) for l in open(sys.argv[2])][2:]  # two warm-up epochs
print(f"{sys.argv[1]}: {statistics.median(x['epoch_ms'] for x in m):.1f} ms/epoch, sampling "
      f"{statistics.median(x['sample_ms'] for x in m):.1f} ms, {m[0]['batches']} batches")
PY
}

peer_row() {  # LABEL SYSTEM EXPORT BATCH
  local rows
  rows="$("${rt[@]}" "$py" "$src/benchmarks/peers/minibatch.py" "$2" "$3" 2 "$epochs" "$4" 10,25 2>&1)"
  local epoch sampling
  # emit()'s rows: ROW, variant, op, F, ms, status, detail (benchmarks/peers/common.py)
  epoch="$(awk -F'\t' '$3 == "sage_mb_epoch" {if ($6 == "ok") printf "%.1f ms/epoch", $5; else printf "%s: %s", $6, $7}' <<<"$rows")"
  sampling="$(awk -F'\t' '$3 == "sage_mb_sampling" && $6 == "ok" {printf "%.1f", $5}' <<<"$rows")"
  echo "$1: ${epoch:-no result}${sampling:+, loader $sampling ms}"
  [ -n "$epoch" ] || tail -2 <<<"$rows"
}

for round in $(seq 1 "$rounds"); do
  echo "# round $round"
  strata_row "strata (sparse input) cora" graphsage_cora.yaml 64
  strata_row "strata (dense input) cora" graphsage_cora.yaml 64 --set data.feature_storage=dense
  peer_row "dgl cora" dgl "$scratch/cora" 64
  peer_row "pyg cora" pyg "$scratch/cora" 64
  strata_row "strata (sparse input) facebook" graphsage_facebook.yaml 1024
  strata_row "strata (dense input) facebook" graphsage_facebook.yaml 1024 --set data.feature_storage=dense
  peer_row "dgl facebook" dgl "$scratch/facebook" 1024
  peer_row "pyg facebook" pyg "$scratch/facebook" 1024
done
