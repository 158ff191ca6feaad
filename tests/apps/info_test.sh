#!/usr/bin/env bash
# End-to-end checks of `strata info`: the table, --json, the exit code and message
# for a bad name, and (mode "data") Cora loaded twice, parsed then from the cache.
# Usage: info_test.sh STRATA_BINARY unit|error|data DATA_ROOT
set -uo pipefail
strata="$1"
mode="$2"
data_root="${STRATA_DATA_ROOT:-$3}"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="$scratch/cache"

case "$mode" in
  unit)
    out="$("$strata" info sbm:nodes=300,classes=3,seed=1)" || { echo "FAIL: exit code $?"; exit 1; }
    echo "$out"
    err="$(STRATA_LOG=loud "$strata" info sbm:nodes=300,classes=3,seed=1 2>&1 >/dev/null)"
    expect_rc log-typo $? 0
    expect log-typo "$err" "^strata: warning: STRATA_LOG: unknown log level 'loud' \\(expected error, warn, info or debug\\); logging at info"
    expect table "$out" '^sbm  sbm:nodes=300,classes=3,'
    expect table "$out" 'cache: not cached \(generator\)'
    expect table "$out" '^  nodes +300$'
    expect table "$out" '^  edges +3,000  undirected, both directions stored$'
    expect table "$out" '^  features +32 dims, dense float32$'
    expect table "$out" '^  classes +3, 300 of 300 nodes labelled$'
    expect table "$out" '^  splits +train 180, val 60, test 60'
    expect table "$out" '^  in +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +10\.00 +0$'
    expect table "$out" '^  8-15 '
    json="$("$strata" info sbm:nodes=300,classes=3,seed=1 --json)" || { echo "FAIL: --json exit code"; exit 1; }
    expect json "$json" '^  "nodes": 300,$'
    expect json "$json" '^  "edges": 3000,$'
    expect json "$json" '"cache": "not cached \(generator\)"'
    expect json "$json" '"histogram": \['
    # --graph names the dataset as in inspect, tune, bench and export.
    named="$("$strata" info --graph sbm:nodes=300,classes=3,seed=1)"
    expect_rc graph-flag $? 0
    expect graph-flag "$named" '^  nodes +300$'
    err="$("$strata" info 2>&1)"
    expect_rc no-dataset $? 1
    expect no-dataset "$err" "strata info: name the dataset, as the first argument or with --graph"
    err="$("$strata" info cora --graph citeseer 2>&1)"
    expect_rc two-datasets $? 2
    expect two-datasets "$err" "excludes"
    reject help-required "$("$strata" info --help)" "REQUIRED"
    # A DGL CSVDataset folder, found by its meta.yaml; its masks are the splits.
    mkdir -p "$scratch/dgl"
    printf 'dataset_name: tiny\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n' \
      > "$scratch/dgl/meta.yaml"
    printf 'node_id,label,train_mask,val_mask,test_mask,feat\n0,0,True,False,False,"1,0"\n1,1,False,True,False,"0,1"\n2,1,False,False,True,"1,1"\n' \
      > "$scratch/dgl/nodes.csv"
    printf 'src_id,dst_id\n0,1\n1,2\n2,0\n' > "$scratch/dgl/edges.csv"
    out="$(STRATA_CACHE_DIR="$scratch/cache" "$strata" info "$scratch/dgl")"
    expect_rc dglcsv $? 0
    expect dglcsv "$out" '^tiny +dglcsv:'
    expect dglcsv "$out" '^  features +2 dims, dense float32$'
    expect dglcsv "$out" '^  splits +train 1, val 1, test 1 +\(train_mask/val_mask/test_mask columns of nodes.csv\)$'
    ;;
  error)
    err="$("$strata" info corra 2>&1 >/dev/null)"
    rc=$?
    [ "$rc" -eq 1 ] || { echo "FAIL: exit code $rc, expected 1"; fails=$((fails + 1)); }
    expect error "$err" "unknown dataset 'corra', did you mean 'cora'\?"
    expect error "$err" 'known datasets: cora, citeseer'
    err="$("$strata" info rmat:scale=4,edge_factr=2 2>&1 >/dev/null)"
    expect error "$err" "rmat: unknown parameter 'edge_factr', did you mean 'edge_factor'\?"
    # A matrix that declares 2^31 columns loads (3 rows), but its transpose needs 16 GiB: under a
    # 4 GiB address-space limit the error names the input and its size.
    printf '%%%%MatrixMarket matrix coordinate real general\n3 2147483648 1\n1 1 1.0\n' > "$scratch/wide.mtx"
    # AddressSanitizer and ThreadSanitizer reserve terabytes of address space, so a sanitized
    # build gets only STRATA_MEMORY_LIMIT, Strata's own budget, which names the input the same way.
    # grep reads all of nm's output (not -q): under pipefail, nm killed by SIGPIPE would fail the test.
    if nm -D "$strata" 2>/dev/null | grep -E ' __(asan|tsan)_init$' >/dev/null; then
      echo "note: sanitized build: no address-space limit (ulimit -v), STRATA_MEMORY_LIMIT only"
    else
      err="$(ulimit -v 4000000; "$strata" info --graph "mtx:$scratch/wide.mtx" --no-cache 2>&1 >/dev/null)"
      rc=$?
      [ "$rc" -eq 1 ] || { echo "FAIL: wide matrix: exit code $rc, expected 1"; fails=$((fails + 1)); }
      expect wide "$err" "^strata: error: strata info 'mtx:.*wide.mtx' \(3 x 2147483648, 1 edges\): out of host memory"
    fi
    err="$(STRATA_MEMORY_LIMIT=4G "$strata" info --graph "mtx:$scratch/wide.mtx" --no-cache 2>&1 >/dev/null)"
    rc=$?
    [ "$rc" -eq 1 ] || { echo "FAIL: wide matrix, STRATA_MEMORY_LIMIT: exit code $rc, expected 1"; fails=$((fails + 1)); }
    expect wide-limit "$err" "^strata: error: strata info 'mtx:.*wide.mtx' \(3 x 2147483648, 1 edges\): out of host memory: a buffer of 16.0 GiB does not fit in the .* left under STRATA_MEMORY_LIMIT=4G"
    ;;
  data)
    if [ ! -e "$data_root/citation/cora.tgz" ]; then
      echo "dataset file not found: $data_root/citation/cora.tgz"
      exit 77
    fi
    first="$("$strata" info cora --data-root "$data_root")" || { echo "FAIL: exit code"; exit 1; }
    second="$("$strata" info cora --data-root "$data_root")" || { echo "FAIL: exit code"; exit 1; }
    echo "$second"
    expect first "$first" 'cache: miss \(parsed, cache written\)'
    expect second "$second" 'cache: hit, '
    expect second "$second" '^  nodes +2,708$'
    expect second "$second" '^  edges +5,429  directed$'
    expect second "$second" '^  features +1,433 dims, dense float32$'
    expect second "$second" '^  classes +7, 2,708 of 2,708 nodes labelled$'
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
exit $((fails > 0))
