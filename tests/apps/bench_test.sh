#!/usr/bin/env bash
# End-to-end checks of `strata bench` on a generated graph: every backend is checked
# against the reference and timed, --json carries the same rows, knob options reach
# the plan, and bad options exit non-zero with a message naming the option.
# Usage: bench_test.sh STRATA_BINARY
set -uo pipefail
strata="$1"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="$scratch/cache"
graph=er:nodes=400,avg_degree=6,seed=5

out="$("$strata" bench spmm --graph "$graph" --feat 17,32 --backend generated,tuned,eigen,handwritten,reference \
        --threads 1 --repeats 3 2>&1)" || { echo "$out"; echo "FAIL: spmm exit code"; exit 1; }
echo "$out"
expect spmm "$out" '^er:nodes=400,avg_degree=6,seed=5: 400 x 400, 2400 non-zeros'
expect spmm "$out" 'F=17 +generated +[0-9.]+ ms .*1\.00x vs generated +csr '
expect spmm "$out" 'F=17 +tuned +[0-9.]+ ms'
expect spmm "$out" 'F=17 +handwritten +n/a \(the baseline is compiled for F = 32, 64, 128, 256\)'
expect spmm "$out" 'F=32 +handwritten +[0-9.]+ ms'
expect spmm "$out" 'F=32 +eigen +[0-9.]+ ms'

json="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --prefetch 0 --tile 16 --threads 1 \
         --repeats 3 --json 2>/dev/null)" || { echo "FAIL: --json exit code"; exit 1; }
expect json "$json" '"status": "ok"'
expect json "$json" '"plan": "csr [^"]*prefetch=0'
expect json "$json" '"plan": "csr [^"]*tile=16'

# 'generated' runs the untuned plan for the graph: on a graph whose Y and X (140000
# rows of 64 floats, 36 MB) outgrow the cache, streaming stores and X prefetch;
# 'plain_csr' the plan template; a knob option replaces only its own field.
big=er:nodes=140000,avg_degree=2,seed=5
out="$("$strata" bench spmm --graph "$big" --feat 64 --backend generated,plain_csr --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: untuned plan exit code"; exit 1; }
expect untuned "$out" 'F=64 +generated +[0-9.]+ ms .*csr lanes=[0-9]+,grain=4096,prefetch=64,stream$'
expect untuned "$out" 'F=64 +plain_csr +[0-9.]+ ms .*csr lanes=[0-9]+,grain=4096,prefetch=0$'
out="$("$strata" bench spmm --graph "$big" --feat 64 --backend generated --stream off --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: --stream off exit code"; exit 1; }
expect stream-off "$out" 'F=64 +generated +[0-9.]+ ms .*csr lanes=[0-9]+,grain=4096,prefetch=64$'
# Rows of 400 non-zeros over 3000 columns: the untuned plan cuts the columns into
# tiles of 256 (64 KiB of X at F = 64); --format csr keeps csr.
dense=er:nodes=3000,avg_degree=400,seed=1
out="$("$strata" bench spmm --graph "$dense" --feat 64 --backend generated,plain_csr --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: column tiles exit code"; exit 1; }
expect tiles "$out" 'F=64 +generated +[0-9.]+ ms .*dcsr:cols=256 lanes=[0-9]+,grain=65536,prefetch=0$'
expect tiles "$out" 'F=64 +plain_csr +[0-9.]+ ms .*csr lanes=[0-9]+,grain=4096,prefetch=0$'
out="$("$strata" bench spmm --graph "$dense" --feat 64 --backend generated --format csr --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: --format csr exit code"; exit 1; }
expect tiles-csr "$out" 'F=64 +generated +[0-9.]+ ms .* csr lanes=[0-9]+,grain=4096,prefetch=0$'
# strata inspect: the tiles of that graph, and their mean segment (12 tiles, ~33 each).
out="$("$strata" inspect --graph "$dense" --format dcsr:cols=256 2>&1)" || { echo "$out"; echo "FAIL: inspect exit code"; exit 1; }
expect inspect "$out" 'format dcsr:cols=256: 1 part\(s\), 1200000 slots for 1200000 non-zeros \(padding 0\.0%\)'
expect inspect "$out" 'p0 +dcsr, 12 column tiles of 256 '
expect inspect "$out" 'p0: [0-9.]+ non-zeros per \(row, tile\) segment on average'
err="$("$strata" inspect --graph "$graph" --format csr 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: inspect --format csr exited 0"; fails=$((fails + 1)); }
expect inspect-csr "$err" "--format: csr is the graph as loaded; nothing to inspect"
err="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --stream maybe 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: --stream maybe exited 0"; fails=$((fails + 1)); }
expect stream-bad "$err" "--stream: expected on or off, got 'maybe'"
# --tasks static: the task loop hands out fixed blocks; the row says so.
out="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --tasks static --threads 2 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: --tasks static exit code"; exit 1; }
expect tasks-static "$out" 'F=32 +generated +[0-9.]+ ms .*csr lanes=[0-9]+,grain=4096,prefetch=0,static$'
err="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --tasks fixed 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: --tasks fixed exited 0"; fails=$((fails + 1)); }
expect tasks-bad "$err" "--tasks: expected static or dynamic, got 'fixed'"

# A plan JSON from `strata tune` replays exactly (plan:FILE rows).
printf '%s\n' '{"format":"hyb:c=1,B=3","lanes":4,"grain":256,"prefetch":8,"tile":0,"x_layout":"row","stream":false}' \
  > "$scratch/hyb.json"
out="$("$strata" bench spmm --graph "$graph" --feat 17 --backend "generated,plan:$scratch/hyb.json" --threads 1 \
        --repeats 3 2>&1)" || { echo "$out"; echo "FAIL: plan:FILE exit code"; exit 1; }
expect plan "$out" "F=17 +plan:$scratch/hyb.json +[0-9.]+ ms .*hyb:c=1,B=3 lanes=4,grain=256,prefetch=8"
err="$("$strata" bench spmm --graph "$graph" --feat 17 --backend "plan:$scratch/none.json" 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: a missing plan file exited 0"; fails=$((fails + 1)); }
expect plan-missing "$err" "cannot open '$scratch/none.json'"

# A plan that does not fit one F is a FAIL cell there; every other cell still runs.
printf '%s\n' '{"format":"csr","lanes":4,"grain":256,"prefetch":0,"tile":48}' > "$scratch/t48.json"
out="$("$strata" bench spmm --graph "$graph" --feat 16,64 --backend "generated,plan:$scratch/t48.json" --threads 1 \
        --repeats 3 2>&1)"
expect_rc fail-cell $? 1
expect fail-cell "$out" "F=64 +plan:$scratch/t48.json +FAIL spmm plan: feature tile 48 does not divide the feature size 64"
expect fail-cell "$out" "F=64 +generated +[0-9.]+ ms"
expect fail-cell "$out" "F=16 +plan:$scratch/t48.json +[0-9.]+ ms"

out="$("$strata" bench sddmm --graph "$graph" --feat 32 --backend generated,plain --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: sddmm exit code"; exit 1; }
expect sddmm "$out" 'F=32 +plain +[0-9.]+ ms'
# SDDMM panel by panel: X and Y laid out outside the timing, the result checked
# against the reference like every row (a mismatch would print MISMATCH, not ms).
out="$("$strata" bench sddmm --graph "$graph" --feat 64 --backend plain_csr,generated --x-layout panel:32 --threads 2 \
  --repeats 3 2>&1)" || { echo "$out"; echo "FAIL: sddmm panels exit code"; exit 1; }
expect sddmm-panels "$out" 'F=64 +generated +[0-9.]+ ms .* csr lanes=[0-9]+,grain=[0-9]+,prefetch=[0-9]+.*,x=panel:32'

# --pairs R[:M]: shared neighbour pairs; the row names the rounds and the rows a pair
# needs, and its result is checked against the reference like every row.
out="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --pairs 2:3 --threads 2 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: --pairs exit code"; exit 1; }
expect pairs "$out" 'F=32 +generated +[0-9.]+ ms .* csr lanes=[0-9]+,grain=[0-9]+,prefetch=[0-9]+.*,pairs=r2m3$'
# --reduce gcn: row and column scales, with shared pairs too (checked against the reference).
out="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated,eigen --reduce gcn --pairs 2:3 --threads 2 \
        --repeats 3 2>&1)" || { echo "$out"; echo "FAIL: --reduce gcn exit code"; exit 1; }
expect gcn "$out" 'F=32 +generated +[0-9.]+ ms .*,pairs=r2m3$'
if grep -Eq 'F=32 +eigen' <<<"$out"; then echo "FAIL: gcn: the sum-only eigen baseline ran"; fails=$((fails + 1)); fi
err="$("$strata" bench sddmm --graph "$graph" --feat 32 --backend generated --reduce gcn 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: sddmm --reduce gcn exited 0"; fails=$((fails + 1)); }
expect gcn-sddmm "$err" "--reduce gcn applies to spmm only"
err="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --pairs 2:2 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: --pairs 2:2 exited 0"; fails=$((fails + 1)); }
expect pairs-bad "$err" "--pairs: expected R or R:M \(R rounds in \[0, 64\], M rows a pair needs, at least 3\), got '2:2'"
err="$("$strata" bench sddmm --graph "$graph" --feat 32 --backend generated --pairs 2 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: sddmm --pairs exited 0"; fails=$((fails + 1)); }
expect pairs-sddmm "$err" "--pairs applies to spmm only"

err="$("$strata" bench spmm --graph "$graph" --feat 32 --backend generated --prefetch -2 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: --prefetch -2 exited 0"; fails=$((fails + 1)); }
expect prefetch "$err" "--prefetch: expected auto or a distance >= 0 in non-zeros, got '-2'"
# Knob options are checked before anything is timed, not as FAIL cells after the rest.
err="$("$strata" bench spmm --graph "$graph" --feat 16 --tile 5 2>&1)"
[ $? -eq 1 ] || { echo "FAIL: --tile 5 did not exit 1"; fails=$((fails + 1)); }
expect tile "$err" "^strata: error: --tile 5: a feature tile must divide the feature size \\(--feat 16\\)$"
reject tile "$err" 'reference'
err="$("$strata" bench spmm --graph "$graph" --feat 0 --backend generated 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: --feat 0 exited 0"; fails=$((fails + 1)); }
expect feat "$err" "--feat: '0' is not an integer in \\[1, 65536\\]"
err="$("$strata" bench spmm --graph "$graph" --feat 32,,64 --backend generated 2>&1)"
[ $? -eq 1 ] || { echo "FAIL: --feat 32,,64 did not exit 1"; fails=$((fails + 1)); }
expect feat-empty "$err" "--feat: '' is not an integer in \\[1, 65536\\]"
# Sizes past any model's (once a segmentation fault or an internal error on overflow).
err="$("$strata" bench spmm --graph "$graph" --feat 2305843009213693952 --backend generated 2>&1)"
[ $? -eq 1 ] || { echo "FAIL: --feat 2^61 did not exit 1"; fails=$((fails + 1)); }
expect feat-huge "$err" "--feat: '2305843009213693952' is not an integer in \\[1, 65536\\]"
echo "not a folder" > "$scratch/cachefile"
err="$(STRATA_CACHE_DIR="$scratch/cachefile" "$strata" bench spmm --graph "$graph" --feat 8 --backend generated 2>&1)"
[ $? -eq 1 ] || { echo "FAIL: a file as STRATA_CACHE_DIR did not exit 1"; fails=$((fails + 1)); }
expect cache-root "$err" "the cache folder '.*cachefile' \\(from STRATA_CACHE_DIR or runtime.cache_dir\\) cannot be created: Not a directory; set STRATA_CACHE_DIR to a writable folder"
err="$("$strata" inspect --graph "$graph" --format ell:w=4,w=5 2>&1)"
[ $? -eq 1 ] || { echo "FAIL: a repeated format parameter did not exit 1"; fails=$((fails + 1)); }
expect format-twice "$err" "--format: 'ell:w=4,w=5': parameter w is given twice"
err="$("$strata" bench spmm --graph "$graph" --feat 32 --backend cuda_magic 2>&1)"
[ $? -ne 0 ] || { echo "FAIL: bad backend exited 0"; fails=$((fails + 1)); }
expect backend "$err" "cuda_magic"
# An empty value once meant the defaults (--backend '') or nothing (infer --out ''):
# every command refuses it by option name, with CLI11's exit code.
err="$("$strata" bench spmm --graph "$graph" --feat 32 --backend '' 2>&1)"
expect_rc empty-backend $? 2
expect empty-backend "$err" "^strata bench: --backend: expected a value, got an empty string$"
err="$("$strata" info '' 2>&1)"
expect_rc empty-graph $? 2
expect empty-graph "$err" "^strata info: (dataset|graph): expected a value, got an empty string$"
# The default backends are the op's own: a plain `bench sddmm` once had an eigen FAIL
# cell and exit 1. A baseline of the other op is refused before anything is timed.
out="$("$strata" bench sddmm --graph "$graph" --feat 8 --repeats 2 2>&1)"
[ $? -eq 0 ] || { echo "FAIL: bench sddmm with the default backends exited non-zero"; fails=$((fails + 1)); }
expect sddmm-default "$out" 'F=8 +plain '
err="$("$strata" bench sddmm --graph "$graph" --feat 8 --backend generated,eigen 2>&1)"
[ $? -eq 1 ] || { echo "FAIL: bench sddmm --backend eigen did not exit 1"; fails=$((fails + 1)); }
expect sddmm-eigen "$err" "--backend eigen measures spmm only, not sddmm"

# Numeric options outside their range are command-line errors (exit 2) that say
# what was expected; once --repeats 0 printed 'inf GFLOP/s' and --lanes 7 reached
# the host compiler.
bad_option() {  # name, expected message, command...
  local name="$1" want="$2"; shift 2
  local err rc
  err="$("$strata" "$@" 2>&1)"; rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: $name: exit $rc, expected 2"; fails=$((fails + 1)); }
  expect "$name" "$err" "$want"
}
bad_option repeats "--repeats: expected an integer >= 1, got '0'" bench spmm --graph "$graph" --feat 8 --repeats 0
bad_option threads "--threads: expected an integer in \\[1, 4096\\], got '-3'" bench spmm --graph "$graph" --feat 8 --threads -3
bad_option threads-huge "--threads: expected an integer in \\[1, 4096\\], got '10000'" tune spmm --graph "$graph" --feat 8 --threads 10000
bad_option inspect-grain "--grain: expected an integer >= 1, got '0'" inspect --graph "$graph" --format ell:w=4 --grain 0
bad_option command "unknown command 'frobnicate' \\(commands: .*bench.*; strata --help\\)" frobnicate
bad_option grain "--grain: expected an integer >= 1, got '2x'" bench spmm --graph "$graph" --feat 8 --grain 2x
bad_option lanes "--lanes: expected a power of two from 1 to 64, got '7'" compile spmm --feat 8 --lanes 7
bad_option compile-prefetch "--prefetch: expected an integer >= 0, got '-1'" compile spmm --feat 8 --prefetch -1
bad_option tune-feat "--feat: expected an integer in \\[1, 65536\\], got '0'" tune spmm --graph "$graph" --feat 0
bad_option tune-feat-huge "--feat: expected an integer in \\[1, 65536\\], got '4611686018427387904'" tune sddmm --graph "$graph" --feat 4611686018427387904
bad_option compile-heads "--heads: expected an integer in \\[1, 256\\], got '4611686018427387904'" compile gat --heads 4611686018427387904 --feat 2
bad_option compile-feat "--feat: expected an integer in \\[1, 65536\\], got '4611686018427387904'" compile sddmm_add --feat 4611686018427387904

# Feature sizes past the staging limit: F = 4100 has no tile that divides it, so
# rows are summed in Y itself; checked against the reference like every row.
out="$("$strata" bench spmm --graph "$graph" --feat 4100 --backend generated,reference --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: F=4100 exit code"; exit 1; }
expect wide "$out" 'F=4100 +generated +[0-9.]+ ms .*csr lanes=[0-9]+,grain=4096,prefetch=0$'
out="$("$strata" bench sddmm --graph "$graph" --feat 4100 --backend generated,plain --threads 1 --repeats 3 2>&1)" \
  || { echo "$out"; echo "FAIL: sddmm F=4100 exit code"; exit 1; }
expect wide-sddmm "$out" 'F=4100 +generated +[0-9.]+ ms'

[ "$fails" -eq 0 ] && echo "bench_test: all checks passed"
exit $((fails > 0))
