#!/usr/bin/env bash
# End-to-end checks of link prediction (data.task: link) through `strata train` and
# `strata eval`: the console contract, the run dir, bit-exact evaluation of a
# checkpoint, and the exit codes and messages of bad input (mode "error"); mode
# "data" trains the shipped ogbl-ddi config briefly.
# Usage: link_test.sh STRATA_BINARY unit|error|data SOURCE_DIR DATA_ROOT
set -uo pipefail
strata="$1"
mode="$2"
src="$3"
data_root="${STRATA_DATA_ROOT:-$4}"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="${STRATA_CACHE_DIR:-$scratch/cache}"

# The SBM graph of configs/graphsage_sbm.yaml as a link-prediction task.
sbm="$src/configs/graphsage_sbm.yaml"
link=(--set data.task=link --set training.epochs=12 --set training.runs=2 --set runtime.threads=2
      --set output.log_every=4 --set training.link.hits_k=10)

case "$mode" in
  unit)
    out="$("$strata" train "$sbm" "${link[@]}" --set output.run_dir="$scratch/run")"
    expect_rc train $? 0
    echo "$out"
    expect header "$out" '^ +link split seed 0: 8,500 / 500 / 1,000 edges; 1 non-edges per training edge every epoch; scored by Hits@10$'
    expect header "$out" '^ +2,000 nodes, 17,000 message-passing edges; degree min'
    expect header "$out" '^model +graphsage: 2 layers 32 -> 32 -> 32 \(mean aggregator, root weight\)'
    expect header "$out" '^ +features dense \[2000, 32\]; embeddings of width 32$'
    expect header "$out" '^predictor +dot product of the two embeddings$'
    expect header "$out" 'pair scores: the SDDMM \(dot\) and, for training, two weighted SpMMs'
    expect epoch "$out" '^Epoch 0008 \| loss [0-9]+\.[0-9]{4} \| val Hits@10 [01]\.[0-9]{4} \(ROC-AUC 0\.[0-9]{4}\) \| [0-9]+\.[0-9]{2} ms$'
    expect summary "$out" '^Run 2/2: best epoch 00[0-9]{2} \| val Hits@10 [01]\.[0-9]{4} \| test Hits@10 [01]\.[0-9]{4} \(ROC-AUC 0\.[0-9]{4}\) \| 12 epochs'
    expect summary "$out" '^Test Hits@10 over 2 runs: [01]\.[0-9]{4} ± [0-9.]+; ROC-AUC 0\.[0-9]{4} ± [0-9.]+ \(val '
    for f in config.yaml metrics.jsonl summary.json kernels.json log.txt link_split.json checkpoints/run-01.ckpt checkpoints/run-02.ckpt; do
      [ -f "$scratch/run/$f" ] || { echo "FAIL: run dir lacks $f"; fails=$((fails + 1)); }
    done
    [ "$(wc -l < "$scratch/run/metrics.jsonl")" -eq 24 ] || { echo "FAIL: metrics.jsonl line count"; fails=$((fails + 1)); }
    summary="$(cat "$scratch/run/summary.json")"
    expect summary.json "$summary" '"task": "link",'
    expect summary.json "$summary" '"metric": "hits@10",'
    expect summary.json "$summary" '"train_edges": 8500,'
    python3 - "$scratch/run/link_split.json" <<'PY' || { echo "FAIL: link_split.json"; fails=$((fails + 1)); }
import json, sys
s = json.load(open(sys.argv[1]))
assert s["seed"] == 0 and s["train_edges"] == 8500, s.keys()
for part, n in (("val", 500), ("val_negative", 500), ("test", 1000), ("test_negative", 1000)):
    assert len(s[part]["u"]) == len(s[part]["v"]) == n, part
held = {(min(u, v), max(u, v)) for part in ("val", "test") for u, v in zip(s[part]["u"], s[part]["v"])}
assert len(held) == 1500, "held-out edges repeat"
for part in ("val_negative", "test_negative"):
    assert not held & {(min(u, v), max(u, v)) for u, v in zip(s[part]["u"], s[part]["v"])}, part
PY
    expect metrics "$(head -1 "$scratch/run/metrics.jsonl")" '"val":\{"hits":[0-9.e+-]+,"rocauc":[0-9.e+-]+,"loss":'

    # strata eval reproduces the recorded test score and scores bit for bit, from the run
    # dir's config (and from the original config with the same overrides).
    ev="$("$strata" eval "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-02.ckpt")"
    expect_rc eval $? 0
    echo "$ev"
    expect eval "$ev" '^Test Hits@10 [01]\.[0-9]{4} \(ROC-AUC 0\.[0-9]{4}; recorded [01]\.[0-9]{4}\): reproduced bit for bit'
    recorded="$(grep -o 'test Hits@10 [01]\.[0-9]*' <<<"$(grep '^Run 2/2:' <<<"$out")" | cut -d' ' -f3)"
    expect eval-score "$ev" "^Test Hits@10 $recorded "
    ev2="$("$strata" eval "$sbm" "${link[@]}" --checkpoint "$scratch/run/checkpoints/run-01.ckpt")"
    expect_rc eval-overrides $? 0
    expect eval-overrides "$ev2" 'reproduced bit for bit'
    # strata infer --pairs scores node pairs from a file; held-out edges are named as such.
    read -r vu vv tu tv < <(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['val']['u'][0], s['val']['v'][0], s['test']['u'][0], s['test']['v'][0])" "$scratch/run/link_split.json")
    printf '# pairs to score\n%s %s\n%s,%s\n\n7 7\n' "$vu" "$vv" "$tu" "$tv" > "$scratch/pairs.txt"
    inf="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
           --pairs "$scratch/pairs.txt" --out "$scratch/scores.csv")"
    expect_rc infer $? 0
    expect infer "$inf" '^strata infer .*config.yaml --checkpoint .*run-01.ckpt$'
    expect infer "$inf" '^Scored 3 pairs in [0-9.]+ ms .*: 0 training edges, 1 validation and 1 test edges, 1 others; mean probability 0\.[0-9]{4}$'
    scores="$(cat "$scratch/scores.csv")"
    expect scores.csv "$scores" '^u,v,score,probability,known,u_name,v_name$'
    expect scores.csv "$scores" "^$vu,$vv,-?[0-9.e+-]+,[01]\.[0-9]{6},val,\"\",\"\"$"
    expect scores.csv "$scores" "^$tu,$tv,-?[0-9.e+-]+,[01]\.[0-9]{6},test,\"\",\"\"$"
    expect scores.csv "$scores" '^7,7,-?[0-9.e+-]+,[01]\.[0-9]{6},,"",""$'
    err="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$scratch/run/checkpoints/run-01.ckpt" \
           --pairs "$scratch/pairs.txt" --names 2>&1 >/dev/null)"
    expect_rc infer-names-without-names $? 1
    expect infer-names-without-names "$err" "^strata: error: --names: the graph has no node names \(its files number the nodes 0\.\.[0-9]+\); list node ids in '.*pairs.txt'$"

    # Runs that select by ROC-AUC name Hits@K beside it, and eval compares under the same metric.
    auc="$("$strata" train "$sbm" "${link[@]}" --set training.metric=rocauc --set training.runs=1 \
           --set output.run_dir="$scratch/auc")"
    expect_rc auc $? 0
    expect auc "$auc" '^Epoch 0008 \| loss [0-9]+\.[0-9]{4} \| val ROC-AUC 0\.[0-9]{4} \(Hits@10 [01]\.[0-9]{4}\) \| '
    expect auc "$auc" '^Test ROC-AUC over 1 run: 0\.[0-9]{4} ± 0\.0000 \(val '
    ev4="$("$strata" eval "$scratch/auc/config.yaml" --checkpoint "$scratch/auc/checkpoints/run-01.ckpt")"
    expect_rc auc-eval $? 0
    expect auc-eval "$ev4" '^Test ROC-AUC 0\.[0-9]{4} \(Hits@10 [01]\.[0-9]{4}; recorded 0\.[0-9]{4}\): reproduced bit for bit'

    # The reference backend scores the same pairs (other rounding: not bit for bit).
    ref="$("$strata" eval "$sbm" "${link[@]}" --set runtime.backend=reference --checkpoint "$scratch/run/checkpoints/run-01.ckpt")"
    expect_rc eval-reference $? 0
    expect eval-reference "$ref" '^Test Hits@10 [01]\.[0-9]{4}'

    # OGB's MLP predictor over the pairs' element-wise products: its parameters are in the
    # checkpoint, and eval reproduces it bit for bit.
    mlp="$("$strata" train "$sbm" "${link[@]}" --set model.link.predictor=mlp --set model.link.predictor_layers=2 \
           --set training.runs=1 --set output.run_dir="$scratch/mlp")"
    expect_rc mlp $? 0
    expect mlp "$mlp" '^predictor +mlp: \(h_u ⊙ h_v\) 32 -> 32 -> 1, relu, dropout 0\.5, 1,?089 parameters$'
    expect mlp "$mlp" 'pair products: a per-head SDDMM \(one head per feature\) and, for training, two per-head aggregations'
    ev3="$("$strata" eval "$scratch/mlp/config.yaml" --checkpoint "$scratch/mlp/checkpoints/run-01.ckpt")"
    expect_rc mlp-eval $? 0
    expect mlp-eval "$ev3" 'reproduced bit for bit'

    # GCN and GAT encoders train too (GCN adds self-loops to the training edges).
    gcn="$("$strata" train "$sbm" "${link[@]}" --set model.name=gcn --set training.runs=1 --set output.run_dir="$scratch/gcn")"
    expect_rc gcn $? 0
    expect gcn "$gcn" 'self-loops added: 17000 -> 19000 edges'
    expect gcn "$gcn" '^Test Hits@10 over 1 run: '
    gat="$("$strata" train "$sbm" "${link[@]}" --set model.name=gat --set model.hidden=4 --set model.gat.heads=2 \
           --set training.runs=1 --set training.link.batch_pairs=4000 --set output.run_dir="$scratch/gat")"
    expect_rc gat $? 0
    expect gat "$gat" '^model +gat: 2 layers 32 -> 8 -> 4'
    [ "$(grep -c '"steps":3,' "$scratch/gat/metrics.jsonl")" -eq 12 ] || {
      echo "FAIL: gat: 8,500 training edges in steps of 4,000 should take 3 steps every epoch"; fails=$((fails + 1)); }
    ;;
  error)
    err() {  # err NAME WANT_PATTERN ARGS...: strata exits 1 with the pattern on stderr, leaving no run dir
      local name="$1" want="$2"
      shift 2
      local e
      e="$("$strata" "$@" 2>&1 >/dev/null)"
      expect_rc "$name" $? 1
      expect "$name" "$e" "$want"
    }
    err key-without-link 'data.link.val_ratio is 0.2, but only data.task: link reads it \(data.task is .dataset.\)' \
        train "$sbm" --set data.link.val_ratio=0.2 --set output.run_dir="$scratch/x"
    err rgcn 'data.task is link, but model.name is rgcn' train "$sbm" --set data.task=link --set model.name=rgcn \
        --set output.run_dir="$scratch/x"
    err metric 'training.metric is accuracy, a node-classification score; link prediction' \
        train "$sbm" --set data.task=link --set training.metric=accuracy --set output.run_dir="$scratch/x"
    err batch 'training.batch_size 64 samples mini-batches of nodes for node classification; link prediction' \
        train "$sbm" --set data.task=link --set training.batch_size=64 --set output.run_dir="$scratch/x"
    err ratios 'data.link.val_ratio \(0.5\) \+ data.link.test_ratio \(0.5\) must be below 1' \
        train "$sbm" --set data.task=link --set data.link.val_ratio=0.5 --set data.link.test_ratio=0.5 \
        --set output.run_dir="$scratch/x"
    err hits-k 'Hits@5000 ranks each held-out edge against the 5000-th best non-edge, but the split has 500 validation' \
        train "$sbm" --set data.task=link --set training.link.hits_k=5000 --set output.run_dir="$scratch/x"
    err directed 'data.undirected is false, but link prediction' \
        train "$sbm" --set data.task=link --set data.undirected=false --set output.run_dir="$scratch/x"
    err predictor-layers 'model.link.predictor_layers is 2, but only model.link.predictor: mlp reads it' \
        train "$sbm" --set data.task=link --set model.link.predictor_layers=2 --set output.run_dir="$scratch/x"
    err node-split 'data.split.kind is planetoid, but link prediction \(data.task: link\) splits edges, not nodes' \
        train "$sbm" --set data.task=link --set data.split.kind=planetoid --set output.run_dir="$scratch/x"
    [ ! -e "$scratch/x" ] || { echo "FAIL: a refused run left $scratch/x"; fails=$((fails + 1)); }

    # A trained link model, then what eval and infer refuse.
    "$strata" train "$sbm" "${link[@]}" --set training.runs=1 --set training.epochs=2 \
        --set output.run_dir="$scratch/run" >/dev/null
    expect_rc train $? 0
    ck="$scratch/run/checkpoints/run-01.ckpt"
    err eval-seed 'was trained and tested on the link split of seed 0, but the config gives seed 3' \
        eval "$scratch/run/config.yaml" --checkpoint "$ck" --set data.split.seed=3
    err eval-node 'was trained with data.task=link, but the config gives dataset' eval "$sbm" --checkpoint "$ck"
    err infer-no-pairs 'trains link prediction \(data.task: link\): name the node pairs to score with --pairs' \
        infer "$scratch/run/config.yaml" --checkpoint "$ck"
    printf '0 1\n2 x\n' > "$scratch/bad_pairs.txt"
    err infer-bad-line "bad_pairs.txt:2: expected a node pair 'u v' or 'u,v' \\(two integers\\), got '2 x'" \
        infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch/bad_pairs.txt"
    printf '0 1 2\n' > "$scratch/three.txt"
    err infer-three "three.txt:1: expected a node pair" \
        infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch/three.txt"
    printf '0,,1\n' > "$scratch/commas.txt"
    err infer-commas "commas.txt:1: expected a node pair 'u v' or 'u,v' \\(one comma at most\\), got '0,,1'" \
        infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch/commas.txt"
    err infer-folder "--pairs '$scratch' is a folder" infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch"
    printf '\xef\xbb\xbf0 1\n' > "$scratch/bom.txt"  # a UTF-8 byte-order mark, as some editors write
    bom="$("$strata" infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch/bom.txt" 2>&1)"
    expect_rc infer-bom $? 0
    expect infer-bom "$bom" '^Scored 1 pair'
    printf '0 2000\n' > "$scratch/range.txt"
    err infer-range 'range.txt:1: node id 2000 is out of range: the graph has 2000 nodes \(ids 0..1999\)' \
        infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch/range.txt" --out "$scratch/never.csv"
    [ ! -e "$scratch/never.csv" ] || { echo "FAIL: a refused infer wrote its --out"; fails=$((fails + 1)); }
    err infer-batch '--batch names nodes to classify, but .* trains link prediction' \
        infer "$scratch/run/config.yaml" --checkpoint "$ck" --pairs "$scratch/range.txt" --batch "$scratch/range.txt"
    node="$scratch/node"
    "$strata" train "$sbm" --set training.epochs=2 --set output.run_dir="$node" >/dev/null
    err eval-link-config 'holds a node classifier, but the config trains link prediction \(data.task: link\)' \
        eval "$sbm" --set data.task=link --checkpoint "$node/checkpoints/run-01.ckpt"
    err infer-node-pairs '--pairs scores node pairs with a link-prediction model, but .* trains a node classifier' \
        infer "$sbm" --checkpoint "$node/checkpoints/run-01.ckpt" --pairs "$scratch/range.txt"
    ;;
  data)
    if [ ! -e "$data_root/ogb/ogbl_ddi/raw/edge.csv.gz" ]; then
      echo "dataset file not found: $data_root/ogb/ogbl_ddi/raw/edge.csv.gz"
      exit 77
    fi
    out="$("$strata" train "$src/configs/graphsage_ddi.yaml" --data-root "$data_root" --set training.epochs=3 \
           --set training.eval_period=1 --set output.log_every=1 --set output.run_dir="$scratch/ddi")"
    expect_rc ddi $? 0
    echo "$out"
    expect ddi "$out" '^ +link split seed 0: 907,725 / 53,395 / 106,791 edges; 1 non-edges per training edge every epoch; scored by Hits@20 \(the dataset.s own: OGB.s master.csv\)$'
    expect ddi "$out" '^model +graphsage: 2 layers 4267 -> 256 -> 256'
    # Three epochs of 14 steps already rank most held-out edges above random non-edges.
    expect ddi "$out" '^Run 1/1: best epoch 000[1-3] \| val Hits@20 0\.[0-9]{4} \| test Hits@20 0\.[0-9]{4} \(ROC-AUC 0\.(8[5-9]|9[0-9])'
    [ "$(grep -c '"steps":14,' "$scratch/ddi/metrics.jsonl")" -eq 3 ] || {
      echo "FAIL: ddi: 907,725 training edges in steps of 65,536 should take 14 steps every epoch"; fails=$((fails + 1)); }
    ev="$("$strata" eval "$src/configs/graphsage_ddi.yaml" --data-root "$data_root" --set training.epochs=3 \
          --set training.eval_period=1 --set output.log_every=1 --checkpoint "$scratch/ddi/checkpoints/run-01.ckpt")"
    expect_rc ddi-eval $? 0
    expect ddi-eval "$ev" 'reproduced bit for bit'
    # Pairs by DrugBank id (mapping/nodeidx2drugid.csv.gz): DB00001 is node 0.
    printf 'DB00001 DB00002\nDB00002,DB00001\n' > "$scratch/drugs.txt"
    inf="$("$strata" infer "$src/configs/graphsage_ddi.yaml" --data-root "$data_root" --set training.epochs=3 \
           --set training.eval_period=1 --set output.log_every=1 --checkpoint "$scratch/ddi/checkpoints/run-01.ckpt" \
           --pairs "$scratch/drugs.txt" --names --out "$scratch/drugs.csv")"
    expect_rc ddi-names $? 0
    # Two drugs' 2-hop neighbourhood is most of ddi (average degree ~425): the whole graph runs.
    expect ddi-names "$inf" '^forward +over the whole graph: the pairs. 2-hop in-neighbourhood holds [0-9,]+ of the 4,267 nodes$'
    expect ddi-names "$(sed -n 2p "$scratch/drugs.csv")" '^0,1,-?[0-9.e+-]+,[01]\.[0-9]{6},[a-z]*,"DB00001","DB00002"$'
    expect ddi-names "$(sed -n 3p "$scratch/drugs.csv")" '^1,0,-?[0-9.e+-]+,[01]\.[0-9]{6},[a-z]*,"DB00002","DB00001"$'
    printf 'DB00001 DB99999\n' > "$scratch/drugs-bad.txt"
    err="$("$strata" infer "$src/configs/graphsage_ddi.yaml" --data-root "$data_root" --set training.epochs=3 \
           --set training.eval_period=1 --set output.log_every=1 --checkpoint "$scratch/ddi/checkpoints/run-01.ckpt" \
           --pairs "$scratch/drugs-bad.txt" --names 2>&1 >/dev/null)"
    expect_rc ddi-bad-name $? 1
    expect ddi-bad-name "$err" "drugs-bad.txt:1: no node of the graph is named 'DB99999'$"
    ;;
esac
[ "$fails" -eq 0 ] && echo "PASS ($mode)"
exit $((fails > 0))
