#!/usr/bin/env bash
# Times one `strata bench` command with two strata binaries (say, a commit and its
# parent, built in a git worktree), alternating A and B for each graph and format,
# several rounds, and prints per row the median of the rounds' medians and the ratio
# A / B. On a shared, noisy machine only such side-by-side ratios mean anything.
#
# usage: benchmarks/ab_bench.sh A_STRATA B_STRATA ROUNDS "GRAPH ..." "FORMAT ..." [bench args ...]
#   e.g. git worktree add /tmp/old 71aff5f^ && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#          -DCMAKE_BUILD_TYPE=Release && ninja -C /tmp/old/build strata
#        chrt -f 50 benchmarks/ab_bench.sh /tmp/old/build/apps/strata build/apps/strata 3 \
#          "cora facebook" "hyb:c=1,B=5 bsr:b=4" spmm --feat 32,128 --repeats 40
set -euo pipefail
[ $# -ge 6 ] || { sed -n '2,11p' "$0"; exit 2; }
a="$1" b="$2" rounds="$3" graphs="$4" formats="$5"
shift 5
for bin in "$a" "$b"; do [ -x "$bin" ] || { echo "ab_bench: '$bin' is not an executable" >&2; exit 2; }; done
rows="$(mktemp)"
trap 'rm -f "$rows"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for fmt in $formats; do
    for g in $graphs; do
      for side in A B; do
        bin="$a"; [ "$side" = B ] && bin="$b"
        "$bin" bench "$@" --graph "$g" --format "$fmt" --backend generated \
          | awk -v side="$side" -v g="$g" -v fmt="$fmt" '$2 == "generated" && $4 == "ms" {print side, g, fmt, $1, $3}' >>"$rows"
      done
    done
  done
done
python3 - "$rows" <<'EOF'
import collections, math, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, g, fmt, feat, ms = line.split()
    t[(fmt, g, feat, side)].append(float(ms))
ratios = collections.defaultdict(list)
print(f"{'format':<14} {'graph':<12} {'F':<7} {'A ms':>9} {'B ms':>9} {'A / B':>7}")
for (fmt, g, feat, side) in sorted(t):
    if side != 'A' or (fmt, g, feat, 'B') not in t:
        continue
    ma, mb = statistics.median(t[(fmt, g, feat, 'A')]), statistics.median(t[(fmt, g, feat, 'B')])
    ratios[fmt].append(ma / mb)
    print(f"{fmt:<14} {g:<12} {feat:<7} {ma:9.3f} {mb:9.3f} {ma / mb:7.3f}")
for fmt, v in ratios.items():
    print(f"{fmt}: geomean A / B {math.exp(sum(map(math.log, v)) / len(v)):.3f} (min {min(v):.3f}, max {max(v):.3f})")
EOF
