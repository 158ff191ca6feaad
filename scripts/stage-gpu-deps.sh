#!/usr/bin/env bash
# Stages, on a machine with Strata's Debian packages, what scripts/gpu-check.sh needs
# on a GPU machine that has nvcc, cmake and ninja but no -dev packages and no network:
#   .deps/include      header-only dependencies: Eigen, fmt, CLI11, nlohmann-json, xxhash
#   .deps/googletest   GoogleTest sources (Debian's libgtest-dev), built there by CMake
#   .gpu-data/         the benchmark's graph files, copied unmodified (compressed as
#                      distributed; gpu-check.sh unpacks them): Cora, Citeseer,
#                      ogbl-ddi and the edge lists of ../shared/datasets/graphs
#   .gpu-cache/        with --prefill BENCH (a strata_bench_gpu built here with CUDA):
#                      the benchmark's kernels compiled by NVRTC for sm_90 in the
#                      units gpu-check.sh uses, so the GPU machine's minutes go to
#                      measuring (same NVRTC version needed: the cache key holds it)
# The folders are ignored by git; carry them to the GPU machine with the checkout.
# Usage: scripts/stage-gpu-deps.sh [--no-gtest] [--prefill BENCH]
#        (STRATA_DATA_ROOT: the datasets)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${STRATA_DATA_ROOT:-$ROOT/../shared/datasets}"
with_gtest=1
prefill=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-gtest) with_gtest=0 ;;
    --prefill) [ $# -ge 2 ] || { echo "stage-gpu-deps: --prefill needs the path of strata_bench_gpu" >&2; exit 1; }
               prefill="$2"; shift ;;
    *) echo "stage-gpu-deps: unknown argument '$1' (expected --no-gtest or --prefill BENCH)" >&2; exit 1 ;;
  esac
  shift
done

die() { echo "stage-gpu-deps: $*" >&2; exit 1; }

copy_dir() {  # copy_dir SRC DEST: a header tree, or die naming the Debian package
  [ -d "$1" ] || die "$1 not found (install $3)"
  cp -r "$1" "$2"
}

cd "$ROOT"
rm -rf .deps .gpu-data .gpu-cache
mkdir -p .deps/include

copy_dir /usr/include/eigen3/Eigen .deps/include/ libeigen3-dev
copy_dir /usr/include/fmt .deps/include/ libfmt-dev
copy_dir /usr/include/CLI .deps/include/ libcli11-dev
copy_dir /usr/include/nlohmann .deps/include/ nlohmann-json3-dev
for h in xxhash.h xxh3.h; do
  [ -f "/usr/include/$h" ] || die "/usr/include/$h not found (install libxxhash-dev)"
  cp "/usr/include/$h" .deps/include/
done
if [ "$with_gtest" = 1 ]; then
  if [ -f /usr/src/googletest/CMakeLists.txt ]; then
    cp -r /usr/src/googletest .deps/googletest
  else
    echo "stage-gpu-deps: /usr/src/googletest not found (libgtest-dev); gpu-check.sh will skip the test suites" >&2
  fi
fi

[ -d "$DATA" ] || die "datasets not found at $DATA (set STRATA_DATA_ROOT)"
mkdir -p .gpu-data/citation .gpu-data/ogbl_ddi .gpu-data/graphs
cp "$DATA/citation/cora.tgz" "$DATA/citation/citeseer.tgz" .gpu-data/citation/
cp "$DATA/ogb/ogbl_ddi/raw/edge.csv.gz" .gpu-data/ogbl_ddi/
for dir in "$DATA"/graphs/*/; do
  name="$(basename "$dir")"
  mkdir -p ".gpu-data/graphs/$name"
  # Edge lists only: node features and labels are not needed to time kernels.
  find "$dir" -maxdepth 1 -type f \( -name '*edges*' -o -name '*.txt' -o -name '*.txt.gz' \) \
    -exec cp {} ".gpu-data/graphs/$name/" \;
done

if [ -n "$prefill" ]; then
  [ -x "$prefill" ] || die "--prefill: '$prefill' is not an executable strata_bench_gpu"
  # The kernels depend on the graphs only through their index type (int32 for all
  # of the benchmark's graphs), so a small R-MAT graph stands in for them. The unit
  # count must match gpu-check.sh's UNITS.
  STRATA_CACHE_DIR="$ROOT/.gpu-cache" "$prefill" --compile-only 90 --compile-units 16 --graphs rmat \
    --rmat-scale 10 --feats 32,64,128,256,512
  du -sh .gpu-cache
fi

du -sh .deps .gpu-data
echo "stage-gpu-deps: done; carry .deps, .gpu-data (and .gpu-cache) with the checkout, then run scripts/gpu-check.sh"
