#!/usr/bin/env bash
# `strata train --resume` against a real kill: a run is killed with SIGKILL part way
# through its second run, resumed with --resume, and must end with the metrics
# (timings aside), byte-identical checkpoints and the test accuracies of the same run
# left alone. Then the command-line errors: nothing to resume, exit code 1.
# (tests/training/resume_test.cpp covers every resume point and refusal in process.)
# Usage: resume_test.sh STRATA_BINARY SOURCE_DIR
set -uo pipefail
strata="$1"
src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="${STRATA_CACHE_DIR:-$scratch/cache}"

sbm="$src/configs/graphsage_sbm.yaml"
args=(--set training.runs=2 --set training.epochs=1500 --set training.patience=0 --set output.resume_every=7
  --set output.log_every=500 --set runtime.threads=2 --set output.run_dir="$scratch/run")

out="$("$strata" train "$sbm" "${args[@]}" 2>&1)"
expect_rc reference $? 0
mv "$scratch/run" "$scratch/ref"

# The same run, killed once its second run is under way (3,000 epochs in all).
"$strata" train "$sbm" "${args[@]}" >"$scratch/killed.log" 2>&1 &
pid=$!
metrics="$scratch/run.partial-$pid/metrics.jsonl"
for _ in $(seq 1 6000); do
  [ -f "$metrics" ] && [ "$(wc -l <"$metrics")" -ge 1600 ] && break
  sleep 0.01
done
if kill -9 "$pid" 2>/dev/null; then
  wait "$pid" 2>/dev/null
  echo "killed process $pid after $(wc -l <"$metrics") epochs"
else
  echo "FAIL: the run finished (or never started) before it could be killed; see below"
  cat "$scratch/killed.log"
  fails=$((fails + 1))
fi
[ -d "$scratch/run" ] && { echo "FAIL: a killed run left a run dir"; fails=$((fails + 1)); }

out="$("$strata" train "$sbm" "${args[@]}" --resume 2>&1)"
expect_rc resume $? 0
echo "$out" | grep -E 'resum|^Run|^Test'
expect resume "$out" "^resuming the run that process $pid left in '.*/run\.partial-$pid'"
expect resume "$out" '^Run 2/2 \(seed 1\): resumed after epoch [0-9]{4}$'

no_times() { sed -E 's/,"(epoch_ms|eval_ms|sample_ms)":[^,}]*//g' "$1"; }
if ! diff <(no_times "$scratch/ref/metrics.jsonl") <(no_times "$scratch/run/metrics.jsonl") >/dev/null; then
  echo "FAIL: metrics.jsonl differs from the uninterrupted run's"
  fails=$((fails + 1))
fi
for f in checkpoints/run-01.ckpt checkpoints/run-02.ckpt split.json config.yaml; do
  cmp -s "$scratch/ref/$f" "$scratch/run/$f" || { echo "FAIL: $f differs from the uninterrupted run's"; fails=$((fails + 1)); }
done
accuracies() { grep -E '"(best_epoch|test_acc|val_acc)"' "$1"; }
if ! diff <(accuracies "$scratch/ref/summary.json") <(accuracies "$scratch/run/summary.json"); then
  echo "FAIL: summary.json's accuracies differ from the uninterrupted run's"
  fails=$((fails + 1))
fi
[ -f "$scratch/run/resume.ckpt" ] && { echo "FAIL: the finished run dir kept its resume point"; fails=$((fails + 1)); }
ls -d "$scratch"/run.partial-* >/dev/null 2>&1 && { echo "FAIL: a staging folder was left behind"; fails=$((fails + 1)); }

# Nothing left to resume: a clear error and exit code 1.
out="$("$strata" train "$sbm" "${args[@]}" --resume 2>&1)"
expect_rc nothing $? 1
expect nothing "$out" "nothing to resume: no interrupted run of output.run_dir '.*/run' \(that run dir is a finished run;"
help="$("$strata" train --help 2>&1)"
expect help "$help" '--resume +continue the interrupted run of this config'

[ "$fails" -eq 0 ] && echo "PASS"
exit $((fails > 0))
