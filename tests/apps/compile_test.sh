#!/usr/bin/env bash
# End-to-end checks of `strata compile`: an op's program at each stage and its
# generated source, the RGMS kernels with their register blocking, and bad options
# exiting non-zero with a message naming them.
# Usage: compile_test.sh STRATA_BINARY
set -uo pipefail
strata="$1"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
export STRATA_CACHE_DIR="$scratch/cache"

out="$("$strata" compile spmm --feat 32 --emit stage1 2>&1)" || { echo "$out"; echo "FAIL: spmm stage1 exit code"; exit 1; }
expect stage1 "$out" 'stage I'
out="$("$strata" compile spmm --feat 32 --lanes 16 --emit source 2>&1)" || { echo "FAIL: spmm source exit code"; exit 1; }
expect spmm-source "$out" 'strata_f32x16'
# One lane is a scalar plan: plain loops, no vector types (it failed to lower until PlanFuzz drew it).
out="$("$strata" compile spmm --feat 32 --lanes 1 --emit source 2>&1)" || { echo "$out"; echo "FAIL: lanes 1 exit code"; exit 1; }
expect scalar-source "$out" 'Y_local\[f\] = \(Y_local\[f\] \+ X\['
if grep -q 'strata_f32x' <<<"$out"; then echo "FAIL: a lanes=1 plan used vector types"; fails=$((fails + 1)); fi
# Two accumulator sets: one copy of the row's accumulator per set, the pairs of
# non-zeros in one loop, the odd one out in a peeled tail; refused on another format.
out="$("$strata" compile spmm --feat 16 --lanes 16 --accumulator-sets 2 --emit scheduled 2>&1)" \
  || { echo "$out"; echo "FAIL: accumulator sets exit code"; exit 1; }
expect sets-copies "$out" 'allocate Y_local_rf_16: float32\[16\] in register'
expect sets-pairs "$out" 'for \(j_o, 0, \(A_indptr\[i \+ 1\] - A_indptr\[i\]\) / 2\)'
expect sets-tail "$out" 'for \(j_t, '
err="$("$strata" compile spmm --feat 16 --format coo --accumulator-sets 2 2>&1)"
expect_rc sets-coo $? 1
expect sets-coo "$err" "accumulator sets apply to csr only, not coo"

# RGMS: the transform of F = 32 on 16 lanes blocks 8 pairs of a relation (copies
# u1..u7 of the accumulators, one jammed reduction loop); on 8 lanes at F = 64 one
# pair's 8 accumulators already fill the budget, so it stays unblocked.
out="$("$strata" compile rgms --feat 32 --lanes 16 --kernel transform --emit scheduled 2>&1)" \
  || { echo "$out"; echo "FAIL: rgms scheduled exit code"; exit 1; }
expect rgms-blocked "$out" 'allocate Y_local[_0-9]*_u7: float32\[32\] in register'
expect rgms-tail "$out" 'for \(i2_t, '
out="$("$strata" compile rgms --feat 64 --lanes 8 --kernel transform --emit scheduled 2>&1)" \
  || { echo "FAIL: rgms lanes 8 exit code"; exit 1; }
if grep -q '_u1' <<<"$out"; then echo "FAIL: rgms F=64 on 8 lanes was blocked"; fails=$((fails + 1)); fi
out="$("$strata" compile rgms --feat 16 --feat-out 8 --index int64 --kernel source_transform --emit source 2>&1)" \
  || { echo "$out"; echo "FAIL: rgms source exit code"; exit 1; }
expect rgms-source "$out" 'strata_rgms_source_transform_i16_o8_i64'
out="$("$strata" compile rgms --feat 8 --kernel fused --emit stage1 2>&1)" || { echo "FAIL: rgms stage1 exit code"; exit 1; }
expect rgms-stage1 "$out" 'rgms_aggregate'

err="$("$strata" compile rgms --feat 32 --kernel bogus 2>&1)"
expect_rc bad-kernel $? 1
expect bad-kernel "$err" "rgms: unknown kernel 'bogus' \(expected one of: fused, aggregate, transform, source_transform"
# An option of another op, or one a --plan file replaces, is refused rather than ignored.
err="$("$strata" compile spmm --feat 8 --kernel fused 2>&1)"
expect_rc spmm-kernel $? 1
expect spmm-kernel "$err" '--kernel applies to rgms and gat, not to spmm'
err="$("$strata" compile gat --feat 8 --feat-out 4 2>&1)"
expect_rc gat-feat-out $? 1
expect gat-feat-out "$err" '--feat-out applies to rgms, not to gat'
err="$("$strata" compile spmm --feat 8 --plan "$scratch/none.json" --lanes 8 2>&1)"
expect_rc plan-lanes $? 1
expect plan-lanes "$err" '--lanes: --plan replaces the format and the schedule knobs; drop --lanes'
echo '{"format": "csr", "tile": 7}' > "$scratch/tile7.json"
err="$("$strata" compile spmm --feat 32 --plan "$scratch/tile7.json" --emit lowered 2>&1)"
expect_rc plan-tile $? 1
expect plan-tile "$err" "--plan '.*tile7.json': spmm plan: feature tile 7 does not divide the feature size 32"
err="$("$strata" train "$(dirname "${BASH_SOURCE[0]}")/../../configs/graphsage_sbm.yaml" --set runtime.plans="$scratch/none.json" 2>&1)"
expect_rc train-plans $? 1
expect train-plans "$err" "--set runtime.plans=.*none.json: runtime.plans: cannot open '.*none.json'"
err="$("$strata" compile rgms --feat 32 --device cuda 2>&1)"
expect_rc rgms-cuda $? 1
expect rgms-cuda "$err" 'the RGMS kernels are generated for the CPU only'
# GAT: the fused forward's 8 heads of an edge are weighted with one vector exp, kept
# in a register local (the attention contracted to one edge's scratch, none in
# memory); every kernel of the set prints.
out="$("$strata" compile gat --heads 8 --feat 8 --lanes 16 --kernel fused --emit lowered 2>&1)" \
  || { echo "$out"; echo "FAIL: gat fused exit code"; exit 1; }
expect gat-fused "$out" 'let p = exp\('
expect gat-fused "$out" 'P_edge_local\[ramp\(0, 1, 8\)\] = p'
if grep -q 'param P_edge:' <<<"$out"; then echo "FAIL: gat fused kept its scratch in memory"; fails=$((fails + 1)); fi
# ... derived by the fusion passes, each printed with STRATA_DUMP_IR.
out="$(STRATA_DUMP_IR=1 "$strata" compile gat --heads 2 --feat 4 --kernel fused_online --emit stage1 2>&1)"
for pass in fuse_row_loops inline_elementwise defer_row_normalisation fuse_edge_loops contract_edge_buffers online_softmax; do
  expect gat-fusion-passes "$out" "--- after $pass ---"
done
for k in score softmax aggregate aggregate_eid fused_online recompute sddmm softmax_backward col_sum; do
  "$strata" compile gat --heads 4 --feat 8 --kernel "$k" --emit source > /dev/null 2>&1 \
    || { echo "FAIL: gat --kernel $k exit code"; fails=$((fails + 1)); }
done
err="$("$strata" compile gat --kernel bogus 2>&1)"
expect_rc gat-bad-kernel $? 1
expect gat-bad-kernel "$err" "gat: unknown kernel 'bogus' \(expected one of: score, softmax, softmax_max, softmax_exp, softmax_sum, softmax_norm, aggregate"
# Over other formats: the single-pass programs decompose into the parts (edge
# values through the edge-id map, tasks over the parts); row programs are refused.
out="$("$strata" compile gat --format hyb:c=2,B=2 --kernel softmax_max --emit source 2>&1)" \
  || { echo "$out"; echo "FAIL: gat softmax_max over hyb exit code"; exit 1; }
expect gat-format "$out" 'p0_eid'
expect gat-format "$out" 'num_tasks'
err="$("$strata" compile gat --format ell:w=4 2>&1)"
expect_rc gat-format-fused $? 1
expect gat-format-fused "$err" "gat over ell:w=4: gat_fused_h8_f64_s0p2_i32 works on a row's edges in several passes"

# Max aggregation: row programs, a row's maxima and tie counts in vector registers.
out="$("$strata" compile spmm_max --feat 32 --emit lowered)" || { echo "FAIL: spmm_max exit code"; exit 1; }
expect spmm-max "$out" 'Y_local_0\[ramp\(0, 1, 16\)\] = select\(Y_local_0\[ramp\(0, 1, 16\)\] < X\[.* != X\[.*, X\['
expect spmm-max "$out" 'parallel \(i_chunk'
out="$("$strata" compile spmm_max_grad --feat 8 --emit source)" || { echo "FAIL: spmm_max_grad exit code"; exit 1; }
expect spmm-max-grad "$out" 'strata_spmm_max_grad_f8_i32'
err="$("$strata" compile spmm_max --format hyb:c=1,B=2 2>&1)"
expect_rc spmm-max-format $? 1
expect spmm-max-format "$err" "max aggregation runs on csr only"
err="$("$strata" compile spmv --feat 32 2>&1)"
expect_rc bad-op $? 1
expect bad-op "$err" "unknown op 'spmv' \(expected spmm, sddmm, sddmm_add, spmm_max, spmm_max_grad, rgms or gat\)"

# Options of one op given to another are refused, not ignored.
err="$("$strata" compile sddmm --feat 8 --reduce mean 2>&1)"
expect_rc sddmm-reduce $? 1
expect sddmm-reduce "$err" "--reduce mean: applies to spmm only"
err="$("$strata" compile sddmm_add --feat 8 --x-layout panel:4 2>&1)"
expect_rc sddmm-add-layout $? 1
expect sddmm-add-layout "$err" "--x-layout panel:4: applies to spmm and sddmm only"
# SDDMM panel by panel: O zeroed by its own parallel pass, then one pass per panel
# adding into O, with the panel of X in registers; a padded layout is refused.
out="$("$strata" compile sddmm --feat 128 --lanes 16 --x-layout panel:64 --emit lowered 2>&1)" \
  || { echo "$out"; echo "FAIL: sddmm panels exit code"; exit 1; }
expect sddmm-panel-init "$out" 'parallel \(i_init_chunk, '
expect sddmm-panel-passes "$out" 'for \(f_o, 0, 2\) \[axis=F_o, iter=R\]'
expect sddmm-panel-x "$out" 'X_local_48\[ramp\(0, 1, 16\)\] = X\[ramp\(f_o \* m \* 64 \+ i \* 64 \+ 48, 1, 16\)\]'
expect sddmm-panel-o "$out" 'O_local_0\[0\] = O\[j\]'
err="$("$strata" compile sddmm --feat 8 --x-layout pad:8 2>&1)"
expect_rc sddmm-pad $? 1
expect sddmm-pad "$err" "sddmm: layout pad:8: X and Y are read as rows or panels"
# SDDMM edge groups: a row's edges 16 at a time, each edge's partial vector in its
# own register, one transposing sum stored as a vector; the rest of the row edge by
# edge; refused where the features are not whole vectors.
out="$("$strata" compile sddmm --feat 32 --lanes 16 --edge-groups --emit source 2>&1)" \
  || { echo "$out"; echo "FAIL: sddmm edge groups exit code"; exit 1; }
expect groups-registers "$out" 'strata_f32x16 O_local_rf_t_240;'
expect groups-sum "$out" 'strata_f32x16_store\(&O\[\(A_indptr\[i\] \+ \(j_o \* \(int64_t\)16\)\)\], strata_f32x16_lane_sums\(O_local_rf_t_0, '
expect groups-helper "$out" 'static inline strata_f32x16 strata_f32x16_lane_sums\('
expect groups-tail "$out" 'strata_f32x16_reduce_add\('
# Over COO slots: 16 consecutive slots whatever their rows, each reading its row of
# X through the slot's row id (mid_0), one transposing sum stored at the slots.
out="$("$strata" compile sddmm --feat 32 --lanes 16 --format coo --edge-groups --emit source 2>&1)" \
  || { echo "$out"; echo "FAIL: sddmm coo edge groups exit code"; exit 1; }
expect coo-groups-sum "$out" 'strata_f32x16_store\(&O\[\(coo_tasks\[task\] \+ \(i_j_o \* \(int64_t\)16\)\)\], strata_f32x16_lane_sums\(O_local_rf_t_0, '
expect coo-groups-row "$out" 'strata_f32x16_load\(&X\[\(\(mid_0\[\(coo_tasks\[task\] \+ \(i_j_o \* \(int64_t\)16\)\)\] \* \(int64_t\)32\) - \(int64_t\)32\)\]\)'
# GAT's attention gradient at 8 heads of 8 features: the heads' dot products of an
# edge summed by one transposing reduction and stored as one vector; with 3 heads of
# 17 features, one horizontal sum per head as before.
out="$("$strata" compile gat --kernel sddmm --heads 8 --feat 8 --lanes 16 2>&1)" \
  || { echo "$out"; echo "FAIL: gat sddmm exit code"; exit 1; }
expect gat-heads-together "$out" 'strata_f32x8_store\(&dP\[\(j \* \(int64_t\)8\)\], strata_f32x8_lane_sums\(dP_local_rf_t_0, '
out="$("$strata" compile gat --kernel sddmm --heads 3 --feat 17 --lanes 16 2>&1)" \
  || { echo "$out"; echo "FAIL: gat sddmm 3x17 exit code"; exit 1; }
if grep -q 'lane_sums' <<<"$out"; then echo "FAIL: 3 heads of 17 features used lane_sums"; fails=$((fails + 1)); fi
expect gat-heads-apart "$out" 'strata_f32x16_reduce_add\('
err="$("$strata" compile sddmm --feat 40 --lanes 16 --edge-groups 2>&1)"
expect_rc groups-width $? 1
expect groups-width "$err" "edge groups: the dot product's 40 features must be a whole number of 16-lane vectors"
err="$("$strata" compile spmm --feat 8 --index float32 2>&1)"
expect_rc index-dtype $? 1
expect index-dtype "$err" "--index: expected int32 or int64, got 'float32'"

[ "$fails" -eq 0 ] && echo "compile_test: all checks passed"
exit $((fails > 0))
