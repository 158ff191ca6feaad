#!/usr/bin/env bash
# End-to-end checks of `strata train`, `strata eval` and `strata infer`: the console contract, the
# run dir, bit-exact evaluation of a checkpoint, and the exit codes and messages of
# bad input (mode "error"); mode "multilabel" trains on a small multi-label graph in OGB's
# layout; mode "data" trains the shipped Cora config briefly.
# Usage: train_test.sh STRATA_BINARY unit|multilabel|error|data SOURCE_DIR DATA_ROOT
set -uo pipefail
strata="$1"
mode="$2"
src="$3"
data_root="${STRATA_DATA_ROOT:-$4}"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
# Reuse the test run's kernel cache when there is one (compiles are the slow part).
export STRATA_CACHE_DIR="${STRATA_CACHE_DIR:-$scratch/cache}"

sbm="$src/configs/graphsage_sbm.yaml"
quick=(--set training.epochs=20 --set training.runs=2 --set runtime.threads=2 --set output.log_every=5)

case "$mode" in
  unit)
    out="$("$strata" train "$sbm" "${quick[@]}" --set output.run_dir="$scratch/run")"
    expect_rc train $? 0
    echo "$out"
    expect header "$out" '^strata train .*graphsage_sbm.yaml \(config [0-9a-f]{12}, version 1, --set training.epochs=20'
    expect header "$out" '^config +data: dataset="sbm:nodes=2000,classes=5,avg_degree=10,seed=1"'
    expect header "$out" '^dataset +sbm \(sbm:nodes=2000,'
    expect header "$out" '^ +2,000 nodes, 20,000 edges; in-degree min'
    expect header "$out" '^model +graphsage: 2 layers 32 -> 32 -> 5 \(mean aggregator, root weight\)'
    # Provenance: the build and the host, in the header and in summary.json.
    expect header "$out" '^build +strata [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown), [A-Za-z]+, [A-Za-z]+ [0-9.]+\) on .+$'
    expect header "$out" '^kernels +4 kernels, 4 programs compiled in one batch: compiler [0-9.]+ ms'
    expect header "$out" '^ +mean f=32 forward +A +spmm_f32_i32_rs +csr lanes=[0-9]+,grain=[0-9]+,prefetch=[0-9]+'
    expect header "$out" '^ +mean f=32 backward +Aᵀ +spmm_f32_i32_cs'
    expect epoch "$out" '^Run 1/2 \(seed 0\)$'
    expect epoch "$out" '^Epoch 0005 \| loss [0-9]\.[0-9]{4} \| train 0\.[0-9]{3} \| val 0\.[0-9]{3} \| [0-9]+\.[0-9]{2} ms$'
    expect summary "$out" '^Run 2/2: best epoch 00[0-9]{2} \| train 0\.[0-9]{4} \| val 0\.[0-9]{4} \| test 0\.[0-9]{4} \| 20 epochs'
    expect summary "$out" '^Test accuracy over 2 runs: 0\.9[0-9]{3} ± 0\.[0-9]{4}'
    for f in config.yaml metrics.jsonl summary.json kernels.json log.txt checkpoints/run-01.ckpt checkpoints/run-02.ckpt; do
      [ -f "$scratch/run/$f" ] || { echo "FAIL: run dir lacks $f"; fails=$((fails + 1)); }
    done
    [ "$(wc -l < "$scratch/run/metrics.jsonl")" -eq 40 ] || { echo "FAIL: metrics.jsonl line count"; fails=$((fails + 1)); }
    summary="$(cat "$scratch/run/summary.json")"
    expect summary.json "$summary" '"num_parameters": [1-9][0-9]*,'
    expect summary.json "$summary" '"mean_epoch_ms": [0-9.e+-]+,'
    expect summary.json "$summary" '"compile_ms": [0-9.e+-]+,'
    expect summary.json "$summary" '"file": "kernels.json"'
    expect summary.json "$summary" '"commit": "([0-9a-f]{12}(-dirty)?|unknown)",'
    expect summary.json "$summary" '"host_cpu": ".+",'
    version="$("$strata" --version)"
    expect_rc version $? 0
    expect version "$version" '^strata [0-9]+\.[0-9]+\.[0-9]+ \(commit '
    expect version "$version" '^host: .+$'
    err="$("$strata" --version foo 2>&1)"
    expect_rc version-extra $? 2
    expect version-extra "$err" "^strata: --version takes no other arguments \(got 'foo'\)$"

    # runtime.plans: a second run replays the first one's plans, kernel by kernel; and
    # strata compile prints one of them from the same kernels.json.
    replay="$("$strata" train "$sbm" --set training.epochs=2 --set training.runs=1 --set runtime.tuning=on \
              --set runtime.plans="$scratch/run/kernels.json" --set output.run_dir="$scratch/replay")"
    expect_rc replay $? 0
    expect replay "$replay" "^ +4 plans replayed from '$scratch/run/kernels.json' \(runtime.plans\)$"
    # Replayed plans took the place of tuning (runtime.tuning=on above): kernels.json says so.
    expect replay-kernels.json "$(cat "$scratch/replay/kernels.json")" '"tuning": false,'
    expect replay-kernels.json "$(cat "$scratch/replay/kernels.json")" "\"plans\": \"$scratch/run/kernels.json\","
    plans() { grep -o '"plan_text": "[^"]*"' "$1"; }
    [ "$(plans "$scratch/run/kernels.json")" = "$(plans "$scratch/replay/kernels.json")" ] ||
      { echo "FAIL: replayed plans differ"; fails=$((fails + 1)); }
    src="$("$strata" compile spmm --plan "$scratch/run/kernels.json" --role "mean f=32 backward" --emit source)"
    expect_rc compile-role $? 0
    expect compile-role "$src" '^extern "C" int strata_spmm_f32_i32_cs_l[0-9]+_g[0-9]+_p[0-9]+\('
    err="$("$strata" compile spmm --plan "$scratch/run/kernels.json" --role "mean f=32 backward" --feat 7 2>&1)"
    expect_rc compile-role-feat $? 1
    expect compile-role-feat "$err" "--feat: --role takes the kernel's program and plan from the run's kernels.json; drop --feat"
    err="$("$strata" train "$sbm" --set training.epochs=2 --set runtime.backend=reference \
           --set runtime.plans="$scratch/run/kernels.json" --set output.run_dir="$scratch/refplans" 2>&1)"
    expect_rc plans-reference $? 1
    expect plans-reference "$err" "runtime.plans replays the plans of generated kernels, but runtime.backend is 'reference'"
    err="$("$strata" compile spmm --plan "$scratch/run/kernels.json" 2>&1 >/dev/null)"
    expect_rc compile-no-role $? 1
    expect compile-no-role "$err" "is a run's kernels.json: name one of its kernels with --role \(mean f=32 backward; "

    ev="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt")"
    expect_rc eval $? 0
    echo "$ev"
    expect eval "$ev" '^checkpoint +run 2, seed 1, best epoch'
    # Evaluation builds the forward kernels only.
    expect eval "$ev" '^kernels +2 kernels, 2 programs compiled in one batch'
    expect eval "$ev" '^ +mean f=32 forward +A +spmm_f32_i32_rs'
    # ... which training compiled, in a unit with others: loaded from that unit, not
    # compiled again (the kernel cache's per-kernel index).
    expect eval "$ev" '^kernels +2 kernels, .*total [0-9.]+ ms \((disk|memory)-hit\)$'
    reject eval "$ev" ' compiled$'
    reject eval "$ev" 'backward'
    expect eval "$ev" '^Test accuracy 0\.[0-9]{4} \(recorded 0\.[0-9]{4}\): reproduced bit for bit'
    # A check that fails fails the command, unless this evaluation chose another backend or
    # thread count, which explains it (once every difference exited 0).
    ev2="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" \
           --set data.dataset=sbm:nodes=2000,classes=5,avg_degree=10,seed=2 2>&1)"
    expect_rc eval-other-graph $? 1
    expect eval-other-graph "$ev2" "DIFFERS from the recorded run"
    expect eval-other-graph "$ev2" "^strata: error: the evaluation of '.*run-02.ckpt' does not reproduce the recorded run"
    ev2="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" \
           --set runtime.backend=reference 2>&1)"
    expect_rc eval-reference $? 0
    expect eval-reference "$ev2" "(reproduced bit for bit|expected: this evaluation runs backend reference \\(the run: generated\\))"
    # Inference: every node predicted; on the test nodes, the accuracy eval reports.
    inf="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" \
           --out "$scratch/pred.csv")"
    expect_rc infer $? 0
    echo "$inf"
    expect infer "$inf" '^runtime +[0-9]+ threads?, backend generated, tuning off'
    expect infer "$inf" '^kernels +2 kernels, 2 programs compiled in one batch'
    reject infer "$inf" 'backward'
    expect infer "$inf" '^Inference: 2,000 nodes in [0-9.]+ ms \(forward over all 2,000 nodes\)'
    eval_test="$(grep -oE '^Test accuracy 0\.[0-9]{4}' <<<"$ev" | grep -oE '0\.[0-9]{4}')"
    expect infer "$inf" "^Accuracy on the 2,000 labelled nodes of the batch: 0\.[0-9]{4} \([0-9,]+ correct\); on its [0-9,]+ test nodes: $eval_test\$"
    # --out -: the CSV on standard output, the report on standard error; the same rows.
    "$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" --out - \
        > "$scratch/stdout.csv" 2> "$scratch/stderr.txt"
    expect_rc infer-stdout $? 0
    cmp -s "$scratch/stdout.csv" "$scratch/pred.csv" || { echo "FAIL: --out - wrote other rows"; fails=$((fails + 1)); }
    expect infer-stdout "$(cat "$scratch/stderr.txt")" '^Predictions written to standard output$'
    err="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" --out '' 2>&1)"
    expect_rc infer-empty-out $? 2
    expect infer-empty-out "$err" "^strata infer: --out: expected a value, got an empty string$"
    expect infer "$inf" "^Predictions written to $scratch/pred.csv"
    [ "$(wc -l < "$scratch/pred.csv")" -eq 2001 ] || { echo "FAIL: pred.csv line count"; fails=$((fails + 1)); }
    expect infer-csv "$(head -1 "$scratch/pred.csv")" '^node,name,predicted,predicted_class,label,correct$'
    printf '0\n# a comment\n5\n\n1999\n' > "$scratch/nodes.txt"
    inf="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" \
           --batch "$scratch/nodes.txt" --out "$scratch/three.csv")"
    expect_rc infer-batch $? 0
    expect infer-batch "$inf" '^Inference: 3 nodes in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9,]+ of 2,000 nodes\)'
    expect infer-batch "$inf" '^block +layer 1: [0-9,]+ source nodes -> [0-9,]+ destinations, every in-neighbour kept$'
    "$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" \
      --batch "$scratch/nodes.txt" --out "$scratch/three-whole.csv" --full-graph >/dev/null
    expect_rc infer-full-graph $? 0
    cmp -s "$scratch/three.csv" "$scratch/three-whole.csv" || { echo "FAIL: --full-graph predicted otherwise"; fails=$((fails + 1)); }
    expect infer-batch "$(cut -d, -f1 "$scratch/three.csv" | tr '\n' ' ')" '^node 0 5 1999 $'
    printf '7\n2000\n' > "$scratch/bad.txt"
    err="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt" \
           --batch "$scratch/bad.txt" --out "$scratch/bad.csv" 2>&1 >/dev/null)"
    expect_rc infer-range $? 1
    expect infer-range "$err" "bad.txt:2: node id 2000 is out of range: the graph has 2000 nodes \(ids 0..1999\)"
    [ ! -e "$scratch/bad.csv" ] || { echo "FAIL: a refused batch left bad.csv"; fails=$((fails + 1)); }
    help="$("$strata" train --help-config)"
    expect_rc help-config $? 0
    expect help-config "$help" '^  model.hidden +16 +width of the hidden layers'
    expect help-config "$help" 'runtime.backend +generated'
    resolved="$("$strata" train "$sbm" --print-config --set model.hidden=48)"
    expect print-config "$resolved" '^  hidden: 48 '
    # The run dir's split.json is the split `strata export --train` writes for peers.
    expect split "$(cat "$scratch/run/split.json")" '^\{"origin":"seeded random split 60/20/20, seed 1","train":\[0,3,4,'
    "$strata" export --graph "sbm:nodes=2000,classes=5,avg_degree=10,seed=1" --feat 8 --train --out "$scratch/exp" >/dev/null
    expect_rc export $? 0
    cmp -s "$scratch/run/split.json" "$scratch/exp/split.json" ||
      { echo "FAIL: export's split.json differs from the run dir's"; fails=$((fails + 1)); }
    # export writes --out whole or not at all: a failure after the first arrays leaves the
    # earlier export as it was, and a folder that holds no export is not written into.
    err="$("$strata" export --graph "sbm:nodes=300,classes=3,seed=1" --feat 8 --hetero --out "$scratch/exp" 2>&1 >/dev/null)"
    expect_rc export-hetero $? 1
    expect export-hetero "$err" "export --hetero: 'sbm:nodes=300,classes=3,seed=1' is not a heterograph"
    cmp -s "$scratch/run/split.json" "$scratch/exp/split.json" ||
      { echo "FAIL: a failed export changed the earlier one"; fails=$((fails + 1)); }
    ls "$scratch" | grep -q partial && { echo "FAIL: export left a staging folder"; fails=$((fails + 1)); }
    mkdir -p "$scratch/mine" && echo keep > "$scratch/mine/notes.md"
    err="$("$strata" export --graph "sbm:nodes=300,classes=3,seed=1" --feat 8 --out "$scratch/mine" 2>&1 >/dev/null)"
    expect_rc export-foreign $? 1
    expect export-foreign "$err" "--out '.*mine' is a folder that holds no earlier output \\(no meta.json\\)"
    [ "$(ls "$scratch/mine")" = notes.md ] || { echo "FAIL: export wrote into a foreign folder"; fails=$((fails + 1)); }
    err="$("$strata" export --graph "sbm:nodes=300,classes=3,seed=1" --feat 8 --seed -1 --out "$scratch/e2" 2>&1 >/dev/null)"
    expect_rc export-seed $? 2
    expect export-seed "$err" "--seed: expected an integer >= 0, got '-1'"
    ;;
  multilabel)
    # An OGB-layout graph whose nodes carry several of 3 classes (as ogbn-proteins or
    # PPI): 400 nodes, 8 features, class c present where feature c is positive (and on
    # the node's ring neighbours' side: edges i -> i+1, i+2); the last 40 unlabelled.
    g="$scratch/multi"
    mkdir -p "$g/raw"
    awk -v feat="$g/raw/node-feat.csv" -v label="$g/raw/node-label.csv" 'BEGIN { srand(5);
      for (i = 0; i < 400; i++) { line = ""; for (k = 0; k < 8; k++) { f[k] = rand() * 2 - 1;
          line = line sprintf("%s%.4f", k ? "," : "", f[k]) } print line > feat;
        if (i >= 360) print "nan,nan,nan" > label; else print (f[0] > 0) "," (f[1] > 0) "," (f[2] > 0.3) > label } }'
    awk 'BEGIN { for (i = 0; i < 400; i++) { print i "," (i + 1) % 400; print i "," (i + 2) % 400 } }' > "$g/raw/edge.csv"
    echo 400 > "$g/raw/num-node-list.csv"
    echo 800 > "$g/raw/num-edge-list.csv"
    ml=(--set data.dataset="ogb:$g" --set model.hidden=16 --set training.epochs=60 --set training.runs=2
        --set runtime.threads=2 --set output.log_every=0 --set optimizer.lr=0.02 --set model.input_dropout=0)
    out="$("$strata" train "$sbm" "${ml[@]}" --set output.run_dir="$scratch/ml" 2>&1)"
    expect_rc train-multi $? 0
    echo "$out"
    expect header "$out" '^ +features dense \[400, 8\]; 3 classes \(multi-label: a sigmoid per class, binary cross-entropy\)$'
    expect header "$out" '^ +split seeded random split 60/20/20, seed 0: 216 train / 72 val / 72 test; scored by micro-F1$'
    expect summary "$out" '^Run 2/2: best epoch [0-9]{4} \| train [01]\.[0-9]{4} \| val [01]\.[0-9]{4} \| test [01]\.[0-9]{4} \(macro-F1 [01]\.[0-9]{4}\) \|'
    expect summary "$out" '^Test micro-F1 over 2 runs: 0\.[6-9][0-9]{3} ± 0\.[0-9]{4}; macro-F1 0\.[0-9]{4} ± 0\.[0-9]{4} \(val 0\.[0-9]{4}'
    expect summary.json "$(cat "$scratch/ml/summary.json")" '"multilabel": true,'
    expect summary.json "$(cat "$scratch/ml/summary.json")" '"test_macro_f1": \{'
    ev="$("$strata" eval "$scratch/ml/config.yaml" --checkpoint "$scratch/ml/checkpoints/run-02.ckpt" 2>&1)"
    expect_rc eval-multi $? 0
    expect eval-multi "$ev" '^Train micro-F1 [01]\.[0-9]{4} \| val micro-F1 [01]\.[0-9]{4} \(loss [0-9.]+\)$'
    expect eval-multi "$ev" '^Test micro-F1 [01]\.[0-9]{4} \(recorded [01]\.[0-9]{4}\): reproduced bit for bit'
    inf="$("$strata" infer "$scratch/ml/config.yaml" --checkpoint "$scratch/ml/checkpoints/run-01.ckpt" \
           --out "$scratch/ml.csv" 2>&1)"
    expect_rc infer-multi $? 0
    expect infer-multi "$inf" '^Micro-F1 on the 360 labelled nodes of the batch: [01]\.[0-9]{4} \(macro-F1 [01]\.[0-9]{4}; ROC-AUC [01]\.[0-9]{4}; [0-9]+ with the exact class set\); on its 72 test nodes'
    csv="$(cat "$scratch/ml.csv")"
    expect csv "$csv" '^399,"",[0-2;]*,"[0-2;]*",,$'
    expect csv "$csv" "^0,\"\",[0-2;]*,\"[0-2;]*\",$(awk -F, 'NR == 1 { s = ""; for (k = 1; k <= 3; k++) if ($k == 1) s = s (s == "" ? "" : ";") k - 1; print s }' "$g/raw/node-label.csv"),[01]\$"
    # A batch over its receptive field: the class sets of the whole graph's forward.
    printf '0\n5\n399\n0\n100\n' > "$scratch/ml-nodes.txt"
    for f in field full; do
      flag=(); [ $f = full ] && flag=(--full-graph)
      inf="$("$strata" infer "$scratch/ml/config.yaml" --checkpoint "$scratch/ml/checkpoints/run-01.ckpt" \
             --batch "$scratch/ml-nodes.txt" --out "$scratch/ml-$f.csv" "${flag[@]}" 2>&1)"
      expect_rc infer-multi-$f $? 0
      [ $f = field ] && expect infer-multi-field "$inf" \
        '^Inference: 5 nodes in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9]+ of 400 nodes\)'
    done
    cmp -s "$scratch/ml-field.csv" "$scratch/ml-full.csv" ||
      { echo "FAIL: multi-label predictions over the receptive field differ from the whole graph's"; fails=$((fails + 1)); }
    # export --train writes the label rows and the split training uses (auto: random).
    "$strata" export --graph "ogb:$g" --feat 8 --train --out "$scratch/ml-exp" > /dev/null
    expect_rc export-multi $? 0
    expect export-meta "$(cat "$scratch/ml-exp/meta.json")" '"multilabel": true'
    expect export-labels "$(head -c 128 "$scratch/ml-exp/train_y.npy" | tr -d '\0')" "'shape': \(400, ?3\)"
    cmp -s "$scratch/ml-exp/split.json" "$scratch/ml/split.json" ||
      { echo "FAIL: export's split.json differs from the multi-label run's"; fails=$((fails + 1)); }
    # Mini-batches over sampled neighbourhoods: the seeds' label rows.
    out="$("$strata" train "$sbm" "${ml[@]}" --set training.batch_size=32 --set training.fanouts=5,5 \
           --set training.runs=1 --set output.run_dir="$scratch/ml-mb" 2>&1)"
    expect_rc train-multi-batches $? 0
    expect batches "$out" '^Test micro-F1 over 1 run: 0\.[6-9][0-9]{3}'
    # training.metric: rocauc (OGB's mean ROC-AUC over the classes) scores, selects and is
    # recorded; eval under another metric still checks the logits bit for bit.
    out="$("$strata" train "$sbm" "${ml[@]}" --set training.metric=rocauc --set output.run_dir="$scratch/ml-auc" 2>&1)"
    expect_rc train-rocauc $? 0
    expect rocauc-header "$out" '^ +split seeded random split 60/20/20, seed 0: 216 train / 72 val / 72 test; scored by ROC-AUC \(training.metric\)$'
    expect rocauc-summary "$out" '^Test ROC-AUC over 2 runs: 0\.[89][0-9]{3} ± 0\.[0-9]{4}; macro-F1 0\.[0-9]{4}'
    expect rocauc-json "$(cat "$scratch/ml-auc/summary.json")" '"metric": "rocauc",'
    ev="$("$strata" eval "$scratch/ml-auc/config.yaml" --checkpoint "$scratch/ml-auc/checkpoints/run-01.ckpt" 2>&1)"
    expect_rc eval-rocauc $? 0
    expect eval-rocauc "$ev" '^Test ROC-AUC 0\.[0-9]{4} \(recorded 0\.[0-9]{4}\): reproduced bit for bit'
    ev="$("$strata" eval "$scratch/ml-auc/config.yaml" --checkpoint "$scratch/ml-auc/checkpoints/run-01.ckpt" \
          --set training.metric=micro_f1 2>&1)"
    expect_rc eval-other-metric $? 0
    expect eval-other-metric "$ev" '^Test micro-F1 [01]\.[0-9]{4} \(the run recorded ROC-AUC 0\.[0-9]{4}\): reproduced bit for bit'
    # accuracy: the share of nodes with the exact class set.
    out="$("$strata" train "$sbm" "${ml[@]}" --set training.metric=accuracy --set training.runs=1 \
           --set output.run_dir="$scratch/ml-acc" 2>&1)"
    expect_rc train-exact $? 0
    expect exact-summary "$out" '^Test accuracy over 1 run: 0\.[0-9]{4}'
    # auto takes the dataset's own metric: a folder named ogbn_proteins is OGB's, scored by ROC-AUC.
    cp -r "$g" "$scratch/ogbn_proteins"
    info="$("$strata" info --graph "ogb:$scratch/ogbn_proteins" --no-cache 2>&1)"
    expect info-metric "$info" '^ +metric +rocauc \(the source.s own\)$'
    out="$("$strata" train "$sbm" "${ml[@]}" --set data.dataset="ogb:$scratch/ogbn_proteins" --set training.runs=1 \
           --set output.run_dir="$scratch/ml-prot" 2>&1)"
    expect_rc train-proteins $? 0
    expect proteins-header "$out" "scored by ROC-AUC \(the dataset's own: OGB's master.csv\)$"
    expect proteins-summary "$out" '^Test ROC-AUC over 1 run: '
    # ROC-AUC of one class per node, and on a split where no class has a negative node.
    err="$("$strata" train "$sbm" --set training.metric=rocauc --set output.run_dir="$scratch/auc-single" 2>&1)"
    expect_rc rocauc-single $? 1
    expect rocauc-single "$err" "--set training.metric=rocauc: training.metric is 'rocauc', which scores multi-label classes \(a ROC curve per class over 0/1 labels\), but 'sbm' has one class per node; use accuracy or micro_f1"
    [ ! -e "$scratch/auc-single" ] || { echo "FAIL: a refused run left $scratch/auc-single"; fails=$((fails + 1)); }
    mkdir -p "$scratch/all-ones/raw"
    cp "$g"/raw/edge.csv "$g"/raw/num-*.csv "$g"/raw/node-feat.csv "$scratch/all-ones/raw/"
    awk 'BEGIN { for (i = 0; i < 400; i++) print "1,1,1" }' > "$scratch/all-ones/raw/node-label.csv"
    err="$("$strata" train "$sbm" "${ml[@]}" --set data.dataset="ogb:$scratch/all-ones" --set training.metric=rocauc \
           --set output.run_dir="$scratch/auc-ones" 2>&1)"
    expect_rc rocauc-undefined $? 1
    expect rocauc-undefined "$err" "--set training.metric=rocauc: training.metric is ROC-AUC, which needs a class with both a positive and a negative node, but no class of 'all-ones' has both among its 240 training nodes"
    [ ! -e "$scratch/auc-ones" ] || { echo "FAIL: a refused run left $scratch/auc-ones"; fails=$((fails + 1)); }
    # data.split.per_run: a later run's split without a usable class is refused before run 1
    # trains (12 nodes, class 0 on every 4th; seed 6's random split scores, seed 7's cannot).
    mkdir -p "$scratch/few/raw"
    awk -v lab="$scratch/few/raw/node-label.csv" -v feat="$scratch/few/raw/node-feat.csv" 'BEGIN { for (i = 0; i < 12; i++) {
        print i "," (i + 1) % 12; print (i % 4 == 0) ",0" > lab; print i % 3 "," i % 2 > feat } }' > "$scratch/few/raw/edge.csv"
    echo 12 > "$scratch/few/raw/num-node-list.csv"
    echo 12 > "$scratch/few/raw/num-edge-list.csv"
    few=(--set data.dataset="ogb:$scratch/few" --set training.metric=rocauc --set data.split.kind=random
         --set data.split.train_ratio=0.34 --set data.split.val_ratio=0.33 --set data.split.seed=6 --set training.epochs=2)
    "$strata" train "$sbm" "${few[@]}" --set training.runs=1 --set output.run_dir="$scratch/few-1" > /dev/null 2>&1
    expect_rc per-run-seed-6 $? 0
    err="$("$strata" train "$sbm" "${few[@]}" --set data.split.per_run=true --set training.runs=2 \
           --set output.run_dir="$scratch/few-2" 2>&1)"
    expect_rc per-run-later-split $? 1
    expect per-run-later-split "$err" "--set training.metric=rocauc: training.metric is ROC-AUC, .* among its 3 validation nodes \(seeded random split 34/33/33, seed 7\)"
    reject per-run-later-split "$err" '^Run 1/2'
    [ ! -e "$scratch/few-2" ] || { echo "FAIL: a refused run left $scratch/few-2"; fails=$((fails + 1)); }
    # No one class per node: a Planetoid split is refused.
    err="$("$strata" train "$sbm" "${ml[@]}" --set data.split.kind=planetoid --set output.run_dir="$scratch/ml-pl" 2>&1)"
    expect_rc planetoid $? 1
    expect planetoid "$err" "data.split.kind is 'planetoid' \(20 per class\), but 'ogb:.*multi' is multi-label \(a node carries several classes\); use random"
    [ ! -e "$scratch/ml-pl" ] || { echo "FAIL: a refused run left $scratch/ml-pl"; fails=$((fails + 1)); }
    # A single-label checkpoint on the multi-label graph.
    "$strata" train "$sbm" --set training.epochs=2 --set training.runs=1 --set model.hidden=16 \
      --set output.run_dir="$scratch/single" > /dev/null
    err="$("$strata" eval "$scratch/single/config.yaml" --checkpoint "$scratch/single/checkpoints/run-01.ckpt" \
           --set data.dataset="ogb:$g" 2>&1)"
    expect_rc label-kind $? 1
    expect label-kind "$err" "was trained on single-label classes of 'sbm', but the config's dataset 'multi' has multi-label classes"
    # The other way round, on a single-label graph of 400 nodes without a split, whose
    # Planetoid split (auto) fails first.
    mkdir -p "$scratch/single-ogb/raw"
    cp "$g"/raw/edge.csv "$g"/raw/num-*.csv "$g"/raw/node-feat.csv "$scratch/single-ogb/raw/"
    cut -d, -f1 "$g/raw/node-label.csv" > "$scratch/single-ogb/raw/node-label.csv"
    err="$("$strata" eval "$scratch/ml/config.yaml" --checkpoint "$scratch/ml/checkpoints/run-01.ckpt" \
           --set data.dataset="ogb:$scratch/single-ogb" 2>&1)"
    expect_rc label-kind-first $? 1
    expect label-kind-first "$err" "was trained on multi-label classes, but the config's dataset 'single-ogb' has single-label classes"
    ;;
  error)
    printf 'version: 1\ndata:\n  dataset: sbm:nodes=200,classes=2\nmodel:\n  hiden: 64\n' > "$scratch/typo.yaml"
    err="$("$strata" train "$scratch/typo.yaml" 2>&1 >/dev/null)"
    expect_rc unknown-key $? 1
    expect unknown-key "$err" "^strata: error: .*typo.yaml:5:3: unknown key 'model.hiden'; did you mean 'model.hidden'\?"
    err="$("$strata" train "$sbm" --set optimizer.lr=fast 2>&1 >/dev/null)"
    expect_rc set-value $? 1
    expect set-value "$err" "--set optimizer.lr=fast: 'optimizer.lr' expects a number > 0, got 'fast'"
    err="$("$strata" train "$scratch/none.yaml" 2>&1 >/dev/null)"
    expect_rc missing-config $? 1
    expect missing-config "$err" "config '.*none.yaml' does not exist"
    err="$("$strata" train "$sbm" --set data.dataset=linqs:/nonexistent/cora.tgz --set output.run_dir="$scratch/r1" 2>&1 >/dev/null)"
    expect_rc missing-dataset $? 1
    expect missing-dataset "$err" "data.dataset 'linqs:/nonexistent/cora.tgz' could not be loaded"
    err="$("$strata" train "$sbm" --set optimizer.name=sgd --set optimizer.lr=1e30 --set optimizer.momentum=0 \
            --set output.run_dir="$scratch/nan" 2>&1 >/dev/null)"
    expect_rc nan $? 1
    expect nan "$err" "training diverged: run 1, epoch [0-9]{4}: the loss is NaN; the first non-finite values appeared in layer 'layers\.[0-9]'"
    [ -e "$scratch/nan" ] && { echo "FAIL: a diverged run left $scratch/nan behind"; fails=$((fails + 1)); }
    ls "$scratch" | grep -q partial && { echo "FAIL: a staging folder was left behind"; fails=$((fails + 1)); }
    "$strata" train "$sbm" --set training.epochs=2 --set training.runs=1 --set output.run_dir="$scratch/ok" >/dev/null
    expect_rc short-train $? 0
    err="$("$strata" eval "$sbm" --checkpoint "$scratch/ok/checkpoints/run-01.ckpt" --set model.hidden=8 2>&1 >/dev/null)"
    expect_rc mismatch $? 1
    expect mismatch "$err" "checkpoint '.*run-01.ckpt' was trained with model.hidden=32, but the config gives 8 \\(--set model.hidden=8\\); evaluate with the config the run dir holds"
    head -c 2000 "$scratch/ok/checkpoints/run-01.ckpt" > "$scratch/cut.ckpt"
    err="$("$strata" eval "$sbm" --checkpoint "$scratch/cut.ckpt" 2>&1 >/dev/null)"
    expect_rc truncated $? 1
    expect truncated "$err" "checkpoint '.*cut.ckpt': checksum mismatch .*: the file is corrupt or truncated"
    # output.overwrite replaces an earlier run dir (ok, above) or an empty folder, never
    # a user's file or a folder holding something else; those are left as they were.
    two=(--set training.epochs=2 --set training.runs=1)
    "$strata" train "$sbm" "${two[@]}" --set output.run_dir="$scratch/ok" >/dev/null
    expect_rc rerun-replaces-run $? 0
    echo precious > "$scratch/afile"
    err="$("$strata" train "$sbm" "${two[@]}" --set output.run_dir="$scratch/afile" 2>&1 >/dev/null)"
    expect_rc run-dir-file $? 1
    expect run-dir-file "$err" "output.run_dir '.*afile' exists and is not a folder; only an earlier output is replaced"
    [ "$(cat "$scratch/afile")" = precious ] || { echo "FAIL: the file at output.run_dir was changed"; fails=$((fails + 1)); }
    mkdir -p "$scratch/notes/sub" && echo keep > "$scratch/notes/sub/important.txt"
    err="$("$strata" train "$sbm" "${two[@]}" --set output.run_dir="$scratch/notes" 2>&1 >/dev/null)"
    expect_rc run-dir-folder $? 1
    expect run-dir-folder "$err" "output.run_dir '.*notes' is a folder that holds no earlier output \\(no metrics.jsonl\\)"
    [ "$(cat "$scratch/notes/sub/important.txt")" = keep ] || { echo "FAIL: a folder at output.run_dir was changed"; fails=$((fails + 1)); }
    mkdir -p "$scratch/empty"
    "$strata" train "$sbm" "${two[@]}" --set output.run_dir="$scratch/empty" >/dev/null
    expect_rc run-dir-empty $? 0
    [ -f "$scratch/empty/summary.json" ] || { echo "FAIL: no run in the empty folder given as output.run_dir"; fails=$((fails + 1)); }
    err="$("$strata" train "$sbm" "${two[@]}" --set runtime.cache_dir=/proc/strata-cache --set output.run_dir="$scratch/c1" 2>&1 >/dev/null)"
    expect_rc cache-dir $? 1
    expect cache-dir "$err" "runtime.cache_dir '/proc/strata-cache' cannot be created"
    err="$("$strata" train "$sbm" "${two[@]}" --set output.run_dir=/proc/strata-run 2>&1 >/dev/null)"
    expect_rc run-dir-unwritable $? 1
    expect run-dir-unwritable "$err" "cannot create output.run_dir '/proc/strata-run'"
    "$strata" train "$sbm" --bogus-flag >/dev/null 2>&1
    expect_rc cli $? 2
    # Out of memory in eval and infer: a layer of 10,000 nodes × 2048 floats (80 MiB)
    # under a cap of 150 MiB on the whole process; the error names the command, the
    # checkpoint, the bound that refused it and the width the checkpoint fixes.
    wide=(--set data.dataset=sbm:nodes=10000,classes=5,avg_degree=10,feature_dim=16,seed=1 --set model.hidden=2048
          --set runtime.backend=reference)
    "$strata" train "$sbm" "${two[@]}" "${wide[@]}" --set output.run_dir="$scratch/wide" >/dev/null
    expect_rc wide-train $? 0
    for cmd in eval infer; do
      out_csv=()
      remedy=""
      [ $cmd = infer ] && out_csv=(--out "$scratch/wide-infer.csv") &&
        remedy=", or infer a --batch of nodes, whose forward covers their receptive field only"
      err="$(STRATA_MEMORY_LIMIT=150M "$strata" $cmd "$scratch/wide/config.yaml" \
             --checkpoint "$scratch/wide/checkpoints/run-01.ckpt" "${out_csv[@]}" 2>&1 >/dev/null)"
      expect_rc $cmd-out-of-memory $? 1
      expect $cmd-out-of-memory "$err" "^strata: error: .*wide/config.yaml: strata $cmd --checkpoint .*run-01.ckpt: out of host memory: a buffer of 80.0 MiB does not fit in the [0-9.]+ MiB left under STRATA_MEMORY_LIMIT=150M \\([0-9.]+ MiB resident in this process\\); the forward pass holds a row per node of model.hidden = 2048 floats in each layer, and the checkpoint fixes that width: free memory, or run where more is available$remedy\$"
    done
    [ -e "$scratch/wide-infer.csv" ] && { echo "FAIL: an infer out of memory wrote predictions"; fails=$((fails + 1)); }
    printf '3\n' > "$scratch/one.txt"
    err="$("$strata" infer "$scratch/ok/config.yaml" --checkpoint "$scratch/ok/checkpoints/run-01.ckpt" \
           --batch "$scratch/one.txt" --names 2>&1 >/dev/null)"
    expect_rc names-without-names $? 1
    expect names-without-names "$err" "^strata: error: --names: the graph has no node names \(its files number the nodes 0..1999\); list node ids in '.*one.txt'$"
    err="$(STRATA_MEMORY_LIMIT=lots "$strata" info 2>&1 >/dev/null)"
    expect_rc memory-limit-value $? 1
    expect memory-limit-value "$err" "^strata: error: STRATA_MEMORY_LIMIT='lots': expected a size in bytes, or a number with K, M, G or T \\(powers of 1024\\), e.g. 8G$"
    ;;
  data)
    if [ ! -e "$data_root/citation/cora.tgz" ]; then
      echo "dataset file not found: $data_root/citation/cora.tgz"
      exit 77
    fi
    out="$("$strata" train "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
           --set training.epochs=60 --set output.run_dir="$scratch/cora")"
    expect_rc cora $? 0
    echo "$out"
    expect cora "$out" '^ +2,708 nodes, 10,556 edges'
    expect cora "$out" '^ +features sparse \[2708, 1433\], 49216 non-zeros'
    expect cora "$out" 'split planetoid: 20 per class, 500 val, 1000 test, seed 0: 140 train / 500 val / 1,000 test'
    expect cora "$out" '^Test accuracy over 1 run: 0\.[7-9]'
    ev="$("$strata" eval "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
          --set training.epochs=60 --checkpoint "$scratch/cora/checkpoints/run-01.ckpt")"
    expect_rc cora-eval $? 0
    expect cora-eval "$ev" 'reproduced bit for bit'
    # --names: LINQS paper ids, not row numbers ("35" is node 163); each row as the whole
    # graph's forward predicts it.
    printf '31336\n35  # paper 35\n1106406\n' > "$scratch/papers.txt"
    inf="$("$strata" infer "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
           --set training.epochs=60 --checkpoint "$scratch/cora/checkpoints/run-01.ckpt" --batch "$scratch/papers.txt" \
           --names --out "$scratch/papers.csv")"
    expect_rc cora-names $? 0
    expect cora-names "$inf" '^Inference: 3 nodes in [0-9.]+ ms \(forward over the batch.s 2-hop in-neighbourhood, [0-9,]+ of 2,708 nodes\)'
    expect cora-names "$(cut -d, -f1,2 "$scratch/papers.csv" | tr '\n' ' ')" '^node,name 0,"31336" 163,"35" 2,"1106406" $'
    "$strata" infer "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
      --set training.epochs=60 --checkpoint "$scratch/cora/checkpoints/run-01.ckpt" --out "$scratch/cora-all.csv" >/dev/null
    expect_rc cora-all $? 0
    for row in $(tail -n +2 "$scratch/papers.csv"); do
      grep -qxF "$row" "$scratch/cora-all.csv" || { echo "FAIL: $row is not the whole graph's prediction"; fails=$((fails + 1)); }
    done
    err="$("$strata" infer "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
           --set training.epochs=60 --checkpoint "$scratch/cora/checkpoints/run-01.ckpt" --batch "$scratch/papers.txt" 2>&1 >/dev/null)"
    expect_rc cora-ids $? 1
    expect cora-ids "$err" "papers.txt:1: node id 31336 is out of range: the graph has 2708 nodes \(ids 0..2707\); --names reads node names \(the name column of the predictions\) instead$"
    printf '35\nno-such-paper\n' > "$scratch/papers-bad.txt"
    err="$("$strata" infer "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
           --set training.epochs=60 --checkpoint "$scratch/cora/checkpoints/run-01.ckpt" --batch "$scratch/papers-bad.txt" \
           --names 2>&1 >/dev/null)"
    expect_rc cora-bad-name $? 1
    expect cora-bad-name "$err" "papers-bad.txt:2: no node of the graph is named 'no-such-paper' \(--names: the name column of the predictions\)$"
    # A peer trained on export's files uses the very nodes of this run: the configs'
    # Planetoid-style split, seed 0 (140 / 500 / 1000 int64 ids: .npy header 128 bytes).
    "$strata" export --graph cora --data-root "$data_root" --feat 8 --train --out "$scratch/exp" >/dev/null
    expect_rc cora-export $? 0
    cmp -s "$scratch/cora/split.json" "$scratch/exp/split.json" ||
      { echo "FAIL: export's Cora split.json differs from the run dir's"; fails=$((fails + 1)); }
    sizes="$(stat -c %s "$scratch/exp/train_idx.npy" "$scratch/exp/val_idx.npy" "$scratch/exp/test_idx.npy" | tr '\n' ' ')"
    expect cora-export "$sizes" '^1248 4128 8128 $'
    # --split-ratios writes the random split of data.split.kind: random, node for node.
    "$strata" train "$src/configs/graphsage_cora.yaml" --data-root "$data_root" --set training.runs=1 \
      --set training.epochs=1 --set data.split.kind=random --set data.split.train_ratio=0.5 \
      --set data.split.val_ratio=0.25 --set data.split.seed=3 --set output.run_dir="$scratch/cora-random" >/dev/null
    expect_rc cora-random $? 0
    "$strata" export --graph cora --data-root "$data_root" --feat 8 --train --split-ratios 0.5,0.25 --split-seed 3 \
      --out "$scratch/exp-random" >/dev/null
    expect_rc cora-export-random $? 0
    cmp -s "$scratch/cora-random/split.json" "$scratch/exp-random/split.json" ||
      { echo "FAIL: export's random split.json differs from the run dir's"; fails=$((fails + 1)); }
    err="$("$strata" export --graph cora --data-root "$data_root" --feat 8 --train --split-ratios 0.7,0.4 \
           --out "$scratch/exp-bad" 2>&1 >/dev/null)"
    expect_rc export-ratios $? 1
    expect export-ratios "$err" "export --split-ratios '0.7,0.4': expected TRAIN,VAL, two fractions in \(0, 1\) whose sum is below 1"
    err="$("$strata" export --graph cora --data-root "$data_root" --feat 8 --split-ratios 0.5,0.25 \
           --out "$scratch/exp-bad" 2>&1 >/dev/null)"
    expect_rc export-ratios-train $? 1
    expect export-ratios-train "$err" "export --split-ratios: the split is written with the training inputs; add --train"
    ;;
esac
[ "$fails" -eq 0 ] && echo "PASS ($mode)"
exit $((fails > 0))
