#!/usr/bin/env bash
# End-to-end checks of R-GCN: `strata train` -> `strata eval` -> `strata infer` on a
# tiny synthetic heterograph written here in HGB's format (mode "unit"; "multilabel"
# with a second class on some nodes; "synthetic": the relational block model of
# configs/rgcn_synthetic.yaml), the exit
# codes and messages of bad input (mode "error"), and AIFB and HGB IMDB briefly (mode "data",
# skipped with a message naming the path when the data root lacks it).
# Usage: rgcn_test.sh STRATA_BINARY unit|multilabel|synthetic|error|data SOURCE_DIR DATA_ROOT
set -uo pipefail
strata="$1"
mode="$2"
src="$3"
data_root="${STRATA_DATA_ROOT:-$4}"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="${STRATA_CACHE_DIR:-$scratch/cache}"

# A tiny HGB-format heterograph: 90 papers (12 sparse features: one-hot of the class
# for 70% of them, of a noise dimension otherwise; class = id % 3), 30 terms
# (featureless); paper->term, term->paper and paper->paper (same class) links;
# papers 0..59 labelled for training, 60..89 for test. $2 = 1 adds a 4th link type;
# $3 = multi labels every 4th paper with class 3 too ("0,3": HGB's multi-label form).
make_graph() {
  local dir="$1" extra="$2" multi="${3:-}"
  mkdir -p "$dir"
  awk 'BEGIN { srand(3);
    for (i = 0; i < 90; i++) { c = i % 3; if (rand() < 0.3) c = 3 + int(rand() * 9); f = "";
      for (k = 0; k < 12; k++) f = f (k ? "," : "") (k == c ? 1 : 0);
      printf "%d\tp%d\t0\t%s\n", i, i, f }
    for (t = 0; t < 30; t++) printf "%d\tterm%d\t1\n", 90 + t, t }' > "$dir/node.dat"
  awk -v extra="$extra" 'BEGIN {
    for (i = 0; i < 90; i++) { t = 90 + (i % 3) * 10 + (i * 7) % 10;
      printf "%d\t%d\t0\t1\n", i, t; printf "%d\t%d\t1\t1\n", t, i; printf "%d\t%d\t2\t1\n", i, (i + 3) % 90;
      if (extra == 1) printf "%d\t%d\t3\t1\n", (i + 6) % 90, i } }' > "$dir/link.dat"
  awk -v multi="$multi" -v lo=0 -v hi=60 -f /dev/stdin > "$dir/label.dat" <<'AWK'
BEGIN { for (i = lo; i < hi; i++) printf "%d\tp%d\t0\t%d%s\n", i, i, i % 3, multi == "multi" && i % 4 == 0 ? ",3" : "" }
AWK
  awk -v multi="$multi" -v lo=60 -v hi=90 -f /dev/stdin > "$dir/label.dat.test_full" <<'AWK'
BEGIN { for (i = lo; i < hi; i++) printf "%d\tp%d\t0\t%d%s\n", i, i, i % 3, multi == "multi" && i % 4 == 0 ? ",3" : "" }
AWK
}

tiny_config() {  # tiny_config FILE DATASET
  cat > "$1" <<YAML
version: 1
data:
  dataset: "hgb:$2"
model:
  name: rgcn
  hidden: 8
  num_bases: 2
  embedding_dim: 8
  dropout: 0
optimizer:
  lr: 0.05
training:
  epochs: 30
  runs: 2
runtime:
  threads: 1
output:
  run_dir: $scratch/run
  log_every: 10
YAML
}

# field_matches_full NAME RUN_DIR BATCH_FILE FIELD_LINE: `strata infer --batch` over the
# batch's receptive field and with --full-graph; the field run prints FIELD_LINE (a
# regex) and both write the same predictions CSV.
field_matches_full() {
  local name="$1" run="$2" batch="$3" line="$4" how inf
  for how in field full; do
    inf="$("$strata" infer "$run/config.yaml" --checkpoint "$run/checkpoints/run-01.ckpt" --batch "$batch" \
             --out "$scratch/$name-$how.csv" $([ $how = full ] && echo --full-graph) 2>&1)"
    expect_rc "infer-$name-$how" $? 0
    [ $how = field ] && expect "infer-$name-field" "$inf" "$line"
  done
  cmp -s "$scratch/$name-field.csv" "$scratch/$name-full.csv" ||
    { echo "FAIL: $name's field predictions differ from --full-graph's"; fails=$((fails + 1)); }
}

make_graph "$scratch/tiny" 0
tiny_config "$scratch/tiny.yaml" "$scratch/tiny"

train_tiny() {
  local out
  out="$("$strata" train "$scratch/tiny.yaml" 2>&1)"
  local rc=$?
  echo "$out"
  return $rc
}

case "$mode" in
  unit)
    out="$(train_tiny)"
    expect_rc train $? 0
    expect header "$out" '^dataset +tiny \(.*/tiny\), loaded in'
    expect header "$out" '^ +120 nodes \(type0 90, type1 30\), 3 relations, 270 edges; target type type0, 3 classes'
    expect header "$out" 'validation: 20% of the training nodes|label.dat split 80/20'
    expect header "$out" '^model +rgcn: 2 layers 8 -> 8 -> 3 \(3 relations, 2 bases, self loop, input: 1 projected type, 1 embedded\)'
    expect header "$out" 'type type0: 12 features \(sparse\), projected'
    # The type features are stored as data.feature_storage and data.normalize_features say
    # (both were ignored for R-GCN once).
    out2="$("$strata" train "$scratch/tiny.yaml" --set data.feature_storage=dense --set data.normalize_features=true \
              --set training.epochs=2 --set output.run_dir="$scratch/dense" 2>&1)"
    expect_rc dense-storage $? 0
    expect dense-storage "$out2" 'type type0: 12 features \(dense, row-normalized\), projected'
    expect header "$out" '^kernels +4 rgms kernel sets on 3 relations'
    # Untuned: the order by multiply-add count (rgms_default_order); on this graph
    # one relation is cheaper transformed at its sources.
    expect header "$out" '^ +rgms 8->8 forward +G +mixed +rgms i8_o8_i32 mixed \(fused on 2 of 3 relations, transform-first on 1\)'
    expect header "$out" '^ +rgms 8->3 backward dX +Gᵀ'
    expect epoch "$out" '^Epoch 0010 \| loss [0-9]\.[0-9]{4} \| train [01]\.[0-9]{3} \| val [01]\.[0-9]{3}'
    expect summary "$out" '^Run 2/2: best epoch 00[0-9]{2} .* ms/epoch \(median; sparse [0-9]+%, dense [0-9]+%, other [0-9]+%\)$'
    expect summary "$out" '^Test accuracy \(micro-F1\) over 2 runs: (0\.9|1\.0)[0-9]{3} ± 0\.[0-9]{4}; macro-F1'
    for f in config.yaml metrics.jsonl summary.json kernels.json split.json log.txt checkpoints/run-01.ckpt checkpoints/run-02.ckpt; do
      [ -f "$scratch/run/$f" ] || { echo "FAIL: run dir lacks $f"; fails=$((fails + 1)); }
    done
    # The same summary fields as GraphSAGE/GCN/GAT runs write.
    summary="$(cat "$scratch/run/summary.json")"
    expect summary.json "$summary" '"num_parameters": [1-9][0-9]*,'
    expect summary.json "$summary" '"mean_epoch_ms": [0-9.e+-]+,'
    expect summary.json "$summary" '"compile_ms": [0-9.e+-]+,'
    expect summary.json "$summary" '"file": "kernels.json"'
    expect summary.json "$summary" '"sparse_ms": [0-9.e+-]+,'
    expect summary.json "$summary" '"optimizer_ms": [0-9.e+-]+,'
    # type0 holds the flattened graph's ids 0..89: every split id must be one of them.
    expect split "$(cat "$scratch/run/split.json")" '^\{"origin":"[^"]+","train":\[[0-9]'
    ids="$(sed 's/"origin":"[^"]*"//' "$scratch/run/split.json" | tr -c '0-9\n' ' ' | tr ' ' '\n' | grep -E '^[0-9]+$' | sort -n | tail -n 1)"
    [ "${ids:-999}" -lt 90 ] || { echo "FAIL: split.json names node $ids outside the target type"; fails=$((fails + 1)); }
    ev="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt")"
    expect_rc eval $? 0
    echo "$ev"
    expect eval "$ev" 'reproduced bit for bit'
    printf '# a batch\n60\n61  \n\n89\n3\n' > "$scratch/nodes.txt"
    inf="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
             --batch "$scratch/nodes.txt" --out "$scratch/pred.csv")"
    expect_rc infer $? 0
    echo "$inf"
    expect infer "$inf" '^strata infer .* --batch .*nodes.txt'
    # Inference compiles the forward kernels of the chosen order only: no backward sets.
    expect infer "$inf" '^kernels +2 rgms kernel sets on 3 relations .* compile [0-9.]+ ms, tune [0-9.]+ ms'
    expect infer "$inf" '^ +rgms 8->8 forward +G +mixed .*forward kernels only'
    grep -q 'backward' <<< "$inf" && { echo "FAIL: infer built backward kernels"; fails=$((fails + 1)); }
    expect infer "$inf" '^ +type0 features f=8 forward +S +spmm_f8'
    # A batch file: the forward over the batch's 2-hop in-neighbourhood, whose
    # predictions are the whole graph's (--full-graph), byte for byte.
    expect infer "$inf" '^forward +the batch.s 2-hop in-neighbourhood, [0-9]+ of 120 nodes: [0-9]+ non-zeros of 270 \(the rows within 1 hop, every in-edge kept\)$'
    expect infer "$inf" '^Inference: 4 nodes of type type0 in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9]+ of 120 nodes\); kernels built in'
    full="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
             --batch "$scratch/nodes.txt" --full-graph --out "$scratch/pred-full.csv")"
    expect_rc infer-full $? 0
    expect infer-full "$full" '^forward +over the whole graph: --full-graph$'
    expect infer-full "$full" '^Inference: 4 nodes of type type0 in [0-9.]+ ms \(forward over all 120 nodes\)'
    cmp -s "$scratch/pred.csv" "$scratch/pred-full.csv" || { echo "FAIL: the field's predictions differ from --full-graph's"; fails=$((fails + 1)); }
    # A batch whose field is most of the graph runs the whole graph, and says why.
    seq 0 40 > "$scratch/many.txt"
    many="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
             --batch "$scratch/many.txt")"
    expect_rc infer-many $? 0
    expect infer-many "$many" '^forward +over the whole graph: the batch.s 2-hop in-neighbourhood holds [0-9]+ of the 120 nodes$'
    expect infer-many "$many" '^Inference: 41 nodes of type type0 in [0-9.]+ ms \(forward over all 120 nodes\)'
    expect infer "$inf" '^Accuracy on the 4 labelled nodes of the batch: [01]\.[0-9]{4}'
    expect infer "$inf" '^Predictions written to '
    [ "$(head -1 "$scratch/pred.csv")" = "node,name,predicted,predicted_class,label,correct" ] ||
      { echo "FAIL: predictions header"; fails=$((fails + 1)); }
    [ "$(wc -l < "$scratch/pred.csv")" -eq 5 ] || { echo "FAIL: predictions rows"; fails=$((fails + 1)); }
    expect csv "$(cat "$scratch/pred.csv")" '^60,"",[0-2],"[0-2]",0,[01]$'
    expect csv "$(cat "$scratch/pred.csv")" '^3,"",[0-2],"[0-2]",0,[01]$'
    all="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" --set runtime.tuning=true)"
    expect_rc infer-all $? 0
    expect infer-all "$all" '^Inference: 90 nodes of type type0'
    expect infer-all "$all" '^Accuracy on the 90 labelled nodes of the batch'
    expect infer-all "$all" '^ +rgms 8->8 forward +G +[a-z-]+ .*(tuned \(fused|tuning record)'
    ls "$scratch" | grep -q 'pred.csv.*tmp' && { echo "FAIL: a temporary file was left"; fails=$((fails + 1)); }

    # export --train on a heterograph whose labelled type is not the first: the papers
    # (HGB type 1 here, after 30 terms of type 0) are rows 30..119 of the flattened
    # graph, and train_y holds paper p's class (p % 3) at row 30 + p for every split row.
    mkdir -p "$scratch/swapped"
    awk -F'\t' -v OFS='\t' '{ $3 = 1 - $3; print }' "$scratch/tiny/node.dat" > "$scratch/swapped/node.dat"
    cp "$scratch/tiny/link.dat" "$scratch/swapped/"
    for f in label.dat label.dat.test_full; do
      awk -F'\t' -v OFS='\t' '{ $3 = 1; print }' "$scratch/tiny/$f" > "$scratch/swapped/$f"
    done
    "$strata" export --graph "hgb:$scratch/swapped" --feat 4 --train --out "$scratch/exp-swapped" > /dev/null
    expect_rc export-hetero-train $? 0
    python3 - "$scratch/exp-swapped" <<'PY' || { echo "FAIL: export --train on a heterograph"; fails=$((fails + 1)); }
import json, struct, sys
d = sys.argv[1]
def npy(name):  # int64 .npy, version 1 header
    b = open(f"{d}/{name}", "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    assert "'<i8'" in b[10:10 + n].decode(), name
    body = b[10 + n:]
    return list(struct.unpack(f"<{len(body) // 8}q", body))
t = json.load(open(f"{d}/meta.json"))["train"]
assert t["labelled_type"]["first_row"] == 30 and t["labelled_type"]["rows"] == 90, t["labelled_type"]
y = npy("train_y.npy")
rows = [r for part in ("train", "val", "test") for r in npy(f"{part}_idx.npy")]
assert len(rows) == 90 and min(rows) == 30 and max(rows) == 119, (len(rows), min(rows), max(rows))
bad = [r for r in rows if y[r] != (r - 30) % 3]
assert not bad, f"rows {bad[:5]} carry another paper's class"
assert t["labels_from_dataset"] == 90, t
PY
    ;;
  synthetic)
    # The relational block model needs no files: R-GCN learns its relation-specific
    # block shifts, and a batch's field predicts what the whole graph does.
    out="$("$strata" train "$src/configs/rgcn_synthetic.yaml" --set training.runs=1 --set output.log_every=0 \
             --set output.run_dir="$scratch/syn" 2>&1)"
    expect_rc train-synthetic $? 0
    echo "$out"
    expect synthetic "$out" '^ +4,000 nodes \(t0 2,000, t1 2,000\), 12 relations, 32,004 edges; target type t0, 4 classes'
    expect synthetic "$out" '^Test accuracy \(micro-F1\) over 1 run: 0\.(8[5-9]|9[0-9])[0-9]{2} '
    seq 0 97 1999 > "$scratch/syn-batch.txt"
    field_matches_full synthetic "$scratch/syn" "$scratch/syn-batch.txt" \
      '^Inference: 21 nodes of type t0 in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9,]+ of 4,000 nodes\)'
    ;;
  multilabel)
    # Every 4th paper carries a second class: a sigmoid per class, binary cross-entropy,
    # micro-/macro-F1, and class sets in the predictions.
    make_graph "$scratch/multi" 0 multi
    tiny_config "$scratch/multi.yaml" "$scratch/multi"
    out="$("$strata" train "$scratch/multi.yaml" 2>&1)"
    expect_rc train-multi $? 0
    echo "$out"
    expect header "$out" '^ +120 nodes \(type0 90, type1 30\), 3 relations, 270 edges; target type type0, 4 classes \(multi-label: a sigmoid per class, binary cross-entropy\)'
    expect header "$out" '^model +rgcn: 2 layers 8 -> 8 -> 4 '
    expect summary "$out" '^Run 2/2: best epoch 00[0-9]{2} \| train [01]\.[0-9]{4} \| val [01]\.[0-9]{4} \| test [01]\.[0-9]{4} \(macro-F1 [01]\.[0-9]{4}\)'
    expect summary "$out" '^Test micro-F1 over 2 runs: 0\.[5-9][0-9]{3} ± 0\.[0-9]{4}; macro-F1 0\.[0-9]{4}'
    expect summary.json "$(cat "$scratch/run/summary.json")" '"multilabel": true,'
    ev="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" 2>&1)"
    expect_rc eval-multi $? 0
    expect eval-multi "$ev" '^Train micro-F1 [01]\.[0-9]{4} \| val micro-F1 [01]\.[0-9]{4} \(loss [0-9.]+\)$'
    expect eval-multi "$ev" '^Test micro-F1 [01]\.[0-9]{4} \(recorded [01]\.[0-9]{4}\), macro-F1 [01]\.[0-9]{4}: reproduced bit for bit'
    inf="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
           --out "$scratch/multi.csv" 2>&1)"
    expect_rc infer-multi $? 0
    expect infer-multi "$inf" '^checkpoint +run 1, seed 0, epoch [0-9]{4}, recorded test micro-F1 [01]\.[0-9]{4}$'
    expect infer-multi "$inf" '^Micro-F1 on the 90 labelled nodes of the batch: [01]\.[0-9]{4} \(macro-F1 [01]\.[0-9]{4}; ROC-AUC [01]\.[0-9]{4}; [0-9]+ with the exact class set\); on its 30 test nodes: [01]\.[0-9]{4} \(macro-F1'
    csv="$(cat "$scratch/multi.csv")"
    expect csv "$csv" '^node,name,predicted,predicted_class,label,correct$'
    expect csv "$csv" '^60,"",[0-3;]*,"[0-3;]*",0;3,[01]$'
    expect csv "$csv" '^61,"",[0-3;]*,"[0-3;]*",1,[01]$'
    [ "$(grep -c . "$scratch/multi.csv")" -eq 91 ] || { echo "FAIL: expected 90 prediction rows"; fails=$((fails + 1)); }
    # training.metric: rocauc through the R-GCN driver: reported, recorded, reproduced.
    out="$("$strata" train "$scratch/multi.yaml" --set training.metric=rocauc --set output.run_dir="$scratch/auc" 2>&1)"
    expect_rc train-rocauc $? 0
    expect rocauc-header "$out" '; scored by ROC-AUC \(training.metric\)$'
    expect rocauc-summary "$out" '^Test ROC-AUC over 2 runs: [01]\.[0-9]{4} ± 0\.[0-9]{4}; macro-F1 0\.[0-9]{4}'
    expect rocauc-json "$(cat "$scratch/auc/summary.json")" '"metric": "rocauc",'
    ev="$("$strata" eval "$scratch/auc/config.yaml" --checkpoint "$scratch/auc/checkpoints/run-02.ckpt" 2>&1)"
    expect_rc eval-rocauc $? 0
    expect eval-rocauc "$ev" '^Test ROC-AUC [01]\.[0-9]{4} \(recorded [01]\.[0-9]{4}\), macro-F1 [01]\.[0-9]{4}: reproduced bit for bit'
    # A single-label checkpoint on the multi-label graph.
    train_tiny > "$scratch/train.log" || { cat "$scratch/train.log"; echo "FAIL: training the tiny graph"; exit 1; }
    err="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
           --set data.dataset="hgb:$scratch/multi" 2>&1)"
    expect_rc label-kind $? 1
    expect label-kind "$err" "checkpoint '.*run-01.ckpt' was trained on single-label classes of 'tiny', but the config's graph 'multi' has multi-label classes"
    err="$("$strata" train "$scratch/multi.yaml" --set data.split.kind=planetoid --set output.run_dir="$scratch/pl" 2>&1)"
    expect_rc planetoid $? 1
    expect planetoid "$err" "data.split.kind 'planetoid' \(20 per class\) applies to GraphSAGE, GCN and GAT; rgcn trains on the dataset's split"
    [ ! -e "$scratch/pl" ] || { echo "FAIL: a refused run left $scratch/pl"; fails=$((fails + 1)); }
    ;;
  error)
    train_tiny > "$scratch/train.log" || { cat "$scratch/train.log"; echo "FAIL: training the tiny graph"; exit 1; }
    ck="$scratch/run/checkpoints/run-01.ckpt"
    cfg="$scratch/run/config.yaml"
    err="$("$strata" train "$scratch/tiny.yaml" --set model.num_bases=4 --set output.run_dir="$scratch/bases" 2>&1)"
    expect_rc too-many-bases $? 1
    expect too-many-bases "$err" "model.num_bases 4 exceeds the 3 relations of 'tiny': a basis decomposition has at most one basis per relation"
    # runtime.plans replays the run's orders (and its feature kernels' plans): the same results.
    out="$("$strata" train "$scratch/tiny.yaml" --set runtime.plans="$scratch/run/kernels.json" \
           --set output.run_dir="$scratch/plans" 2>&1)"
    expect_rc rgcn-plans $? 0
    expect rgcn-plans "$out" '^ +rgms 8->8 forward +G +[a-z-]+ .*, replayed$'
    expect rgcn-plans "$out" '^ +rgms 8->3 backward dX +Gᵀ +[a-z-]+ .*, replayed$'
    expect rgcn-plans "$out" "tune 0\\.0 ms"
    expect rgcn-plans "$(cat "$scratch/plans/kernels.json")" "\"plans\": \"$scratch/run/kernels.json\""
    [ "$(grep -A1 '"test_acc": {' "$scratch/run/summary.json")" = "$(grep -A1 '"test_acc": {' "$scratch/plans/summary.json")" ] ||
      { echo "FAIL: replayed orders gave another test accuracy"; fails=$((fails + 1)); }
    err="$("$strata" train "$scratch/tiny.yaml" --set runtime.plans="$scratch/run/kernels.json" \
           --set model.hidden=16 --set output.run_dir="$scratch/plans16" 2>&1)"
    expect_rc rgcn-plans-width $? 1
    expect rgcn-plans-width "$err" "runtime.plans '.*kernels.json' has no relational order for the kernel set 'rgms 8->16 forward' \(it holds: rgms 8->3 backward dX; "
    [ ! -e "$scratch/plans16" ] || { echo "FAIL: a refused run left '$scratch/plans16'"; fails=$((fails + 1)); }
    # Widths past what the relational kernels stage are refused by key (once a compiler message).
    err="$("$strata" train "$scratch/tiny.yaml" --set model.hidden=4097 --set output.run_dir="$scratch/wide" 2>&1)"
    expect_rc rgcn-wide $? 1
    expect rgcn-wide "$err" "model.hidden is 4097, but R-GCN's relational kernels hold a row of at most 4096 features"
    err="$("$strata" compile rgms --feat 8 --feat-out 4097 --emit stage1 2>&1)"
    expect_rc rgms-wide $? 1
    expect rgms-wide "$err" "--feat-out 4097: the RGMS kernels hold a row of at most 4096 features in registers"
    err="$("$strata" infer "$cfg" --checkpoint "$scratch/missing.ckpt" 2>&1)"
    expect_rc missing $? 1
    expect missing "$err" "^strata: error: checkpoint '.*missing.ckpt' does not exist"
    printf '60\n6x1\n' > "$scratch/bad.txt"
    err="$("$strata" infer "$cfg" --checkpoint "$ck" --batch "$scratch/bad.txt" 2>&1)"
    expect_rc bad-line $? 1
    expect bad-line "$err" "bad.txt:2: expected a node id \(an integer in \[0, 90\)\), got '6x1'"
    printf '60\n90\n' > "$scratch/range.txt"
    err="$("$strata" infer "$cfg" --checkpoint "$ck" --batch "$scratch/range.txt" 2>&1)"
    expect_rc range $? 1
    expect range "$err" "range.txt:2: node id 90 is out of range: the target type 'type0' has 90 nodes \(ids 0..89\)"
    err="$("$strata" infer "$cfg" --checkpoint "$ck" --batch "$scratch/none.txt" 2>&1)"
    expect_rc no-batch $? 1
    expect no-batch "$err" "--batch '.*none.txt': cannot read the file"
    # rgcn trains every run on one split.
    err="$("$strata" train "$scratch/tiny.yaml" --set data.split.per_run=true --set output.run_dir="$scratch/per-run" 2>&1)"
    expect_rc per-run $? 1
    expect per-run "$err" "data.split.per_run \(a new split for every run\) is not supported for rgcn"
    [ ! -e "$scratch/per-run" ] || { echo "FAIL: a refused rgcn run left $scratch/per-run"; fails=$((fails + 1)); }
    # The same model on a graph with one more relation.
    make_graph "$scratch/tiny4" 1
    err="$("$strata" infer "$cfg" --checkpoint "$ck" --set data.dataset="hgb:$scratch/tiny4" 2>&1)"
    expect_rc other-graph $? 1
    expect other-graph "$err" "checkpoint '.*run-01.ckpt' was trained on 'tiny' with 3 relations, the config's graph 'tiny4' has 4: relations of the graph the checkpoint lacks: type0-link3->type0"
    # A GraphSAGE checkpoint.
    "$strata" train "$src/configs/graphsage_sbm.yaml" --set training.epochs=1 --set output.log_every=0 \
      --set output.run_dir="$scratch/sage" > /dev/null || { echo "FAIL: graphsage run"; fails=$((fails + 1)); }
    err="$("$strata" infer "$cfg" --checkpoint "$scratch/sage/checkpoints/run-01.ckpt" 2>&1)"
    expect_rc other-model $? 1
    expect other-model "$err" "checkpoint '.*run-01.ckpt' holds a graphsage model; strata infer / rgcn configs need an rgcn checkpoint"
    err="$("$strata" infer "$src/configs/graphsage_sbm.yaml" --checkpoint "$ck" 2>&1)"
    expect_rc sage-config $? 1
    expect sage-config "$err" "architecture mismatch: checkpoint '.*' holds a rgcn model, but the config builds graphsage \(model.name\)"
    err="$("$strata" train "$scratch/tiny.yaml" --set model.input=one_hot 2>&1)"
    expect_rc one-hot $? 1
    expect one-hot "$err" "model.input is one_hot, but node types have features \(type0\); use model.input: embedding"
    err="$("$strata" train "$src/configs/graphsage_sbm.yaml" --set model.name=rgcn 2>&1)"
    expect_rc homogeneous $? 1
    expect homogeneous "$err" "model.name is rgcn, but dataset 'sbm:.*' is not a heterograph"
    printf 'version: 1\ndata:\n  dataset: aifb\nmodel:\n  name: rgcn\n  num_base: 30\n' > "$scratch/typo.yaml"
    err="$("$strata" train "$scratch/typo.yaml" 2>&1)"
    expect_rc typo $? 1
    expect typo "$err" "typo.yaml:6:3: unknown key 'model.num_base'; did you mean 'model.num_bases'"
    help="$("$strata" train --help-config)"
    for k in model.num_bases model.self_loop model.input model.embedding_dim model.type_features data.split.holdout; do
      expect help-config "$help" "$k"
    done
    ;;
  data)
    if [ ! -d "$data_root/rdf/aifb" ]; then
      echo "skipped: AIFB not found under $data_root/rdf/aifb"
      exit 77
    fi
    out="$("$strata" train "$src/configs/rgcn_aifb.yaml" --data-root "$data_root" --set training.runs=1 \
             --set training.epochs=20 --set output.log_every=0 --set output.run_dir="$scratch/aifb" 2>&1)"
    expect_rc train-aifb $? 0
    echo "$out"
    expect aifb "$out" '^ +8,285 nodes \(entity 8,285\), 90 relations'
    expect aifb "$out" '^model +rgcn: 2 layers one-hot 8285 -> 16 -> 4'
    inf="$("$strata" infer "$scratch/aifb/config.yaml" --checkpoint "$scratch/aifb/checkpoints/run-01.ckpt" \
             --out "$scratch/aifb.csv" 2>&1)"
    expect_rc infer-aifb $? 0
    echo "$inf"
    expect infer-aifb "$inf" '^Inference: 8,285 nodes of type entity'
    expect infer-aifb "$inf" '^Accuracy on the 176 labelled nodes of the batch: 0\.[0-9]{4}'
    # Three entities over their receptive field (one-hot input: the first layer reads
    # the whole graph's weight rows by the field's global ids): the whole graph's predictions.
    printf '0\n1\n2\n' > "$scratch/aifb-batch.txt"
    field_matches_full aifb "$scratch/aifb" "$scratch/aifb-batch.txt" \
      '^Inference: 3 nodes of type entity in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9,]+ of 8,285 nodes\)'
    # HGB IMDB: multi-label genres (a sigmoid per genre), scored by micro-F1.
    if [ -f "$data_root/hgb/IMDB.zip" ]; then
      out="$("$strata" train "$src/configs/rgcn_imdb.yaml" --data-root "$data_root" --set training.runs=1 \
               --set training.epochs=15 --set output.log_every=0 --set output.run_dir="$scratch/imdb" 2>&1)"
      expect_rc train-imdb $? 0
      echo "$out"
      expect imdb "$out" '^ +21,420 nodes \(movie 4,932, director 2,393, actor 6,124, keyword 7,971\), 6 relations, 86,642 edges; target type movie, 5 classes \(multi-label'
      expect imdb "$out" '1,097 train / 274 val / 1,601 test'
      expect imdb "$out" '^Test micro-F1 over 1 run: 0\.(6[0-9]|7[0-9])[0-9]{2} ± '
      # Typed input (features projected, keywords embedded) over a batch's field: the
      # whole graph's class sets.
      printf '0\n7\n1500\n4000\n' > "$scratch/imdb-batch.txt"
      field_matches_full imdb "$scratch/imdb" "$scratch/imdb-batch.txt" \
        '^Inference: 4 nodes of type movie in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9,]+ of 21,420 nodes\)'
    else
      echo "skipped IMDB: $data_root/hgb/IMDB.zip not found"
    fi
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
