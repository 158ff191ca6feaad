#!/usr/bin/env bash
# End-to-end checks of `strata train` / `strata eval` with the GAT model: the header
# (model line, attention kernels and the fused/unfused choice), accuracy on a small
# synthetic graph, bit-exact evaluation of a checkpoint, tuned attention, and the
# messages of bad GAT keys (mode "error"); mode "data" trains configs/gat_cora.yaml
# briefly (skipped, naming the file, when Cora is absent).
# Usage: gat_train_test.sh STRATA_BINARY unit|error|data SOURCE_DIR DATA_ROOT
set -uo pipefail
strata="$1"
mode="$2"
src="$3"
data_root="${STRATA_DATA_ROOT:-$4}"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="${STRATA_CACHE_DIR:-$scratch/cache}"

sbm="$src/configs/graphsage_sbm.yaml"
gat=(--set model.name=gat --set model.hidden=8 --set model.gat.heads=4 --set model.activation=elu
     --set model.gat.attn_dropout=0.2 --set runtime.threads=2 --set output.log_every=5)

case "$mode" in
  unit)
    out="$("$strata" train "$sbm" "${gat[@]}" --set training.epochs=25 --set training.runs=2 \
           --set output.run_dir="$scratch/run")"
    expect_rc train $? 0
    echo "$out"
    expect model "$out" '^model +gat: 2 layers 32 -> 32 -> 5 \(8 x 4 heads concat, 1 output head, attention dropout 0\.2, slope 0\.2, self-loops\), elu'
    expect kernels "$out" '^ +gat attention h=4 f=8 +A\+I +gat h4_f8_s0\.2_i32 \(generated\) +unfused \(default; tuning off\)'
    expect kernels "$out" '^ +gat attention h=1 f=5 +A\+I +gat h1_f5_s0\.2_i32 \(generated\) +unfused \(default; tuning off\)'
    expect epoch "$out" '^Epoch 0015 \| loss [0-9]\.[0-9]{4} \| train 0\.[0-9]{3} \| val 0\.[0-9]{3}'
    expect summary "$out" '^Test accuracy over 2 runs: 0\.(8|9)[0-9]{3} ± 0\.[0-9]{4}'
    grep -q '"attention"' "$scratch/run/kernels.json" || { echo "FAIL: kernels.json lacks the attention lines"; fails=$((fails + 1)); }
    grep -q '"model": "gat"' "$scratch/run/summary.json" 2>/dev/null || grep -q 'gat: 2 layers' "$scratch/run/summary.json" ||
      { echo "FAIL: summary.json does not name the gat model"; fails=$((fails + 1)); }
    ev="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt")"
    expect_rc eval $? 0
    echo "$ev"
    expect eval "$ev" '^model +gat: 2 layers'
    # Evaluation and inference compile GAT's forwards only.
    expect eval "$ev" '^ +gat attention h=4 f=8 +A\+I +gat h4_f8_s0\.2_i32 \(generated, forwards only\) +unfused \(default; tuning off\)'
    inf="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt")"
    expect_rc infer $? 0
    expect infer "$inf" '^ +gat attention h=1 f=5 +A\+I +gat h1_f5_s0\.2_i32 \(generated, forwards only\)'
    eval_test="$(grep -oE '^Test accuracy 0\.[0-9]{4}' <<<"$ev" | grep -oE '0\.[0-9]{4}')"
    expect infer "$inf" "test nodes: $eval_test\$"
    expect eval "$ev" '^Test accuracy 0\.[0-9]{4} \(recorded 0\.[0-9]{4}\): reproduced bit for bit'
    # The tuner's choice (measured, or from a record) and the fused forward forced.
    tuned="$("$strata" train "$sbm" "${gat[@]}" --set training.epochs=3 --set runtime.attention=tuned \
             --set output.checkpoint=none --set output.run_dir="$scratch/tuned")"
    expect_rc tuned $? 0
    expect tuned "$tuned" 'gat attention h=4 f=8 .* (fused \((two-pass|online)\)|unfused); training: (fused \((two-pass|online)\)|unfused|fused, keeping scores and attention) \((tuned in [0-9]+ ms: fused two-pass [0-9.]+ ms, online [0-9.]+ ms, unfused [0-9.]+ ms, backward.s recompute after fused [0-9.]+ ms, fused keeping scores [0-9.]+ ms|tuning record)\)'
    fused="$("$strata" train "$sbm" "${gat[@]}" --set training.epochs=3 --set runtime.attention=fused \
           --set output.checkpoint=none --set output.run_dir="$scratch/fused")"
    expect_rc fused $? 0
    expect fused "$fused" 'gat attention h=4 f=8 .* fused \(forced\)'
    help="$("$strata" train --help-config)"
    expect help-config "$help" '^  model.gat.heads +8 +gat: attention heads of each hidden layer'
    expect help-config "$help" '^  model.gat.attn_dropout +0.6 '
    expect help-config "$help" '^  runtime.attention +auto '
    ;;
  error)
    printf 'version: 1\ndata:\n  dataset: sbm:nodes=200,classes=2\nmodel:\n  name: gat\n  gat:\n    heds: 4\n' > "$scratch/typo.yaml"
    err="$("$strata" train "$scratch/typo.yaml" 2>&1 >/dev/null)"
    expect_rc unknown-key $? 1
    expect unknown-key "$err" "^strata: error: .*typo.yaml:7:5: unknown key 'model.gat.heds'; did you mean 'model.gat.heads'\?"
    err="$("$strata" train "$sbm" --set model.gat.attn_dropout=1 2>&1 >/dev/null)"
    expect_rc set-value $? 1
    expect set-value "$err" "--set model.gat.attn_dropout=1: 'model.gat.attn_dropout' expects a number in \[0, 1\), got '1'"
    "$strata" train "$sbm" "${gat[@]}" --set training.epochs=2 --set training.runs=1 --set output.run_dir="$scratch/ok" >/dev/null
    expect_rc short-train $? 0
    err="$("$strata" eval "$sbm" "${gat[@]}" --set model.gat.heads=3 --checkpoint "$scratch/ok/checkpoints/run-01.ckpt" 2>&1 >/dev/null)"
    expect_rc mismatch $? 1
    expect mismatch "$err" "checkpoint '.*run-01.ckpt' was trained with model.gat.heads=4, but the config gives 3 \\(--set model.gat.heads=3\\)"
    err="$("$strata" eval "$sbm" --checkpoint "$scratch/ok/checkpoints/run-01.ckpt" 2>&1 >/dev/null)"
    expect_rc kind-mismatch $? 1
    expect kind-mismatch "$err" "checkpoint '.*run-01.ckpt' holds a gat model, but the config builds graphsage"
    ;;
  data)
    if [ ! -e "$data_root/citation/cora.tgz" ]; then
      echo "dataset file not found: $data_root/citation/cora.tgz"
      exit 77
    fi
    out="$("$strata" train "$src/configs/gat_cora.yaml" --data-root "$data_root" --set training.runs=1 \
           --set training.epochs=40 --set output.log_every=10 --set output.run_dir="$scratch/cora")"
    expect_rc cora $? 0
    echo "$out"
    expect cora "$out" '^model +gat: 2 layers 1433 -> 64 -> 7 \(8 x 8 heads concat, 1 output head, attention dropout 0\.6'
    expect cora "$out" 'gat attention h=8 f=8 +A\+I'
    expect cora "$out" '^Test accuracy over 1 run: 0\.[6-9]'
    ev="$("$strata" eval "$src/configs/gat_cora.yaml" --data-root "$data_root" --checkpoint "$scratch/cora/checkpoints/run-01.ckpt")"
    expect_rc cora-eval $? 0
    expect cora-eval "$ev" 'reproduced bit for bit'
    ;;
esac
[ "$fails" -eq 0 ] && echo "PASS ($mode)"
exit $((fails > 0))
