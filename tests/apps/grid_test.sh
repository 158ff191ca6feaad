#!/usr/bin/env bash
# scripts/grid.py end to end: a 2 x 2 grid over the synthetic config, two split seeds;
# its CSVs, the ranking by validation, and its errors. Skips (77) without python3.
# Usage: grid_test.sh STRATA_BINARY SOURCE_DIR
set -uo pipefail
strata="$1"
src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="$scratch/cache"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (scripts/grid.py needs it)"; exit 77; }
grid=(python3 "$src/scripts/grid.py" "$src/configs/graphsage_sbm.yaml" --strata "$strata")

out="$("${grid[@]}" --grid model.hidden=8,16 --grid model.dropout=0.1,0.5 --set training.epochs=4 \
       --split-seeds 0-1 --out "$scratch/g" 2>&1)"
expect_rc grid $? 0
echo "$out"
expect grid "$out" '^ranked by validation accuracy \(mean over 2 split seeds x 1 run\)'
expect grid "$out" '^   1\. model\.hidden=(8|16) model\.dropout=0\.(1|5) +val 0\.[0-9]{4}  test 0\.[0-9]{4}'
[ "$(head -1 "$scratch/g/results.csv")" = "model.hidden,model.dropout,split_seed,val_acc,test_acc,median_epoch_ms" ] ||
  { echo "FAIL: results.csv header"; fails=$((fails + 1)); }
[ "$(wc -l < "$scratch/g/results.csv")" -eq 9 ] || { echo "FAIL: results.csv should hold 8 rows"; fails=$((fails + 1)); }
[ "$(wc -l < "$scratch/g/agg.csv")" -eq 5 ] || { echo "FAIL: agg.csv should hold 4 rows"; fails=$((fails + 1)); }
# agg.csv is ranked by validation accuracy, best first.
sorted="$(tail -n +2 "$scratch/g/agg.csv" | cut -d, -f4 | sort -gr)"
[ "$(tail -n +2 "$scratch/g/agg.csv" | cut -d, -f4)" = "$sorted" ] || { echo "FAIL: agg.csv not ranked by val_acc"; fails=$((fails + 1)); }
[ "$(ls "$scratch/g/runs" | wc -l)" -eq 8 ] || { echo "FAIL: one run dir per combination and seed"; fails=$((fails + 1)); }

err="$("${grid[@]}" --grid model.hiden=8 --set training.epochs=2 --out "$scratch/bad" 2>&1)"
expect_rc failed-run $? 1
expect failed-run "$err" "grid: this run failed \(exit 1\):"
expect failed-run "$err" "unknown key 'model.hiden'"
[ ! -e "$scratch/bad/agg.csv" ] || { echo "FAIL: a failed grid wrote agg.csv"; fails=$((fails + 1)); }
err="$("${grid[@]}" --grid model.hidden --out "$scratch/bad" 2>&1)"
expect_rc bad-grid $? 1
expect bad-grid "$err" "grid: --grid 'model.hidden': expected key=value1,value2,..."
# Values with commas (generator strings) are separated by ';'.
out="$("${grid[@]}" --grid 'data.dataset=sbm:nodes=200,classes=3,seed=1;sbm:nodes=200,classes=4,seed=1' \
       --set training.epochs=2 --out "$scratch/semi" 2>&1)"
expect_rc semicolons $? 0
[ "$(wc -l < "$scratch/semi/agg.csv")" -eq 3 ] || { echo "FAIL: two dataset values expected"; fails=$((fails + 1)); }
touch "$scratch/afile"
err="$("${grid[@]}" --grid model.hidden=8 --out "$scratch/afile" 2>&1)"
expect_rc out-file $? 1
expect out-file "$err" "grid: --out '$scratch/afile' exists and is not a folder"
err="$("${grid[@]}" --split-seeds 3-1 --out "$scratch/bad" 2>&1)"
expect_rc bad-seeds $? 1
expect bad-seeds "$err" "grid: --split-seeds: '3-1' is not a seed or a range like 0-4"

[ "$fails" -eq 0 ] && echo "grid_test: all checks passed"
exit $((fails > 0))
