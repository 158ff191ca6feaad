#!/usr/bin/env bash
# One prepared check of the CUDA backend on a machine with an NVIDIA GPU (written for
# an H200 with nvcc, cmake, ninja and Python, but no Debian -dev packages and no
# network). Run scripts/stage-gpu-deps.sh first, where the packages are, and carry
# .deps/ and .gpu-data/ with the checkout. In well under 6 minutes it:
#   1. builds the lean CUDA configuration (core, compiler, CUDA backend, the GPU
#      tests when GoogleTest sources were staged, strata_bench_gpu);
#   2. runs the gpu-labelled tests (every generated kernel against the CPU reference);
#   3. benchmarks generated SpMM and SDDMM against cuSPARSE (default and best
#      algorithm) on Cora, Citeseer, ogbl-ddi, the graphs/ folder and R-MAT scale 20,
#      for F in 32 64 128 256 512, and prints one table and the geomean per graph;
#   4. runs the benchmark's self-check (PASS/FAIL per kernel against a CPU reference
#      and cuSPARSE), which needs no GoogleTest: on six graphs and four feature sizes
#      when the test suites could not be built, a short one after them.
# Results also go to $OUT (tests.txt, bench.txt, check.txt) when it is set. A
# .gpu-cache/ carried with the checkout (scripts/stage-gpu-deps.sh --prefill BENCH)
# seeds the kernel cache, so the benchmark's NVRTC batches need not compile here.
# Environment: STRATA_GPU_BUILD (build folder, default build-gpu), STRATA_GPU_BUDGET
# (seconds, default 345), STRATA_BENCH_ARGS (extra benchmark arguments).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRATA_GPU_BUILD:-$ROOT/build-gpu}"
BUDGET="${STRATA_GPU_BUDGET:-345}"
START=$(date +%s)
RESULTS="${OUT:-$BUILD/results}"
mkdir -p "$RESULTS"

say() { printf '\n== %s (%ds)\n' "$*" "$(( $(date +%s) - START ))"; }
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
# Seconds for a step: what is left minus what later steps need, at least `min`.
budget_for() { local b=$(( $(left) - $1 )); echo $(( b > $2 ? b : $2 )); }
die() { echo "gpu-check: $*" >&2; exit 2; }

[ -d "$ROOT/.deps/include" ] || die ".deps/include is missing: run scripts/stage-gpu-deps.sh where the packages are"
[ -d "$ROOT/.gpu-data" ] || die ".gpu-data is missing: run scripts/stage-gpu-deps.sh where the datasets are"
command -v cmake >/dev/null || die "cmake not found"
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || die "nvcc not found (the CUDA toolkit is needed to build)"
export PATH="$PATH:/usr/local/cuda/bin"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

say "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null ||
  echo "(nvidia-smi not available)"
nvcc --version | tail -n 2

say "configure (lean, CUDA)"
tests=1
gtest_args=(-DSTRATA_BUILD_TESTS=ON)
if [ -f "$ROOT/.deps/googletest/CMakeLists.txt" ]; then
  gtest_args+=(-DSTRATA_GTEST_SOURCE_DIR="$ROOT/.deps/googletest")
else
  tests=0
  gtest_args=(-DSTRATA_BUILD_TESTS=OFF)
  echo "GoogleTest sources were not staged: the test suites are skipped; the self-check still runs"
fi
cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON -DSTRATA_LEAN=ON \
  -DSTRATA_EXTRA_INCLUDE="$ROOT/.deps/include" "${gtest_args[@]}" >"$RESULTS/configure.txt" 2>&1 ||
  { cat "$RESULTS/configure.txt"; die "configure failed"; }
grep -E "^-- Strata:" "$RESULTS/configure.txt"

say "build"
targets=(strata_bench_gpu)
[ "$tests" = 1 ] && targets+=(strata_cuda_tests)
cmake --build "$BUILD" --parallel "$(nproc)" --target "${targets[@]}" >"$RESULTS/build.txt" 2>&1 ||
  { tail -n 60 "$RESULTS/build.txt"; die "build failed"; }
tail -n 1 "$RESULTS/build.txt"

say "unpack graphs"
DATA="$BUILD/gpu-data"
rm -rf "$DATA" && mkdir -p "$DATA/ogbl_ddi"
tar xzf "$ROOT/.gpu-data/citation/cora.tgz" -C "$DATA" cora/cora.cites
tar xzf "$ROOT/.gpu-data/citation/citeseer.tgz" -C "$DATA" citeseer/citeseer.cites
gzip -dc "$ROOT/.gpu-data/ogbl_ddi/edge.csv.gz" >"$DATA/ogbl_ddi/edge.csv"
cp -r "$ROOT/.gpu-data/graphs" "$DATA/graphs"
chmod -R u+w "$DATA"
find "$DATA/graphs" -name '*.gz' -exec gzip -d {} \;

# Kernels compiled here go to a cache inside the build folder, seeded from .gpu-cache.
# The benchmark compiles each candidate batch in a fixed number of NVRTC units, the
# number the prefill used (the units are the cache's entries).
export STRATA_CACHE_DIR="$BUILD/cache"
mkdir -p "$STRATA_CACHE_DIR"
[ -d "$ROOT/.gpu-cache" ] && cp -r "$ROOT/.gpu-cache/." "$STRATA_CACHE_DIR/"
UNITS=16
BENCH="$BUILD/benchmarks/strata_bench_gpu"
status=0

if [ "$tests" = 1 ]; then
  say "gpu tests"
  (cd "$BUILD" && timeout "$(budget_for 200 30)" ctest -L gpu --output-on-failure --timeout 240) \
    >"$RESULTS/tests.txt" 2>&1
  rc=$?
  grep -E "tests passed|tests failed|Failed|Skipped|\*\*\*" "$RESULTS/tests.txt" | tail -n 20
  [ $rc = 0 ] || { echo "gpu tests FAILED (rc $rc; see tests.txt)"; status=1; }
fi

say "benchmark: generated vs cuSPARSE (median of 100 runs, L2 flushed)"
timeout "$(budget_for 45 60)" "$BENCH" --data "$DATA" --graphs all --feats 32,64,128,256,512 --runs 100 --compile-units $UNITS \
  ${STRATA_BENCH_ARGS:-} 2>"$RESULTS/bench-log.txt" | tee "$RESULTS/bench.txt"
rc=${PIPESTATUS[0]}
grep -E "MISMATCH|error" "$RESULTS/bench-log.txt" | head -n 20
[ $rc = 0 ] || { tail -n 3 "$RESULTS/bench-log.txt"; echo "benchmark FAILED or ran out of time (rc $rc)"; status=1; }

# The self-check stands in for the test suites when they could not be built; after
# them (and after the benchmark, which checks every candidate against cuSPARSE) a
# short one is enough.
if [ "$tests" = 1 ]; then
  check_args=(--graphs cora,musae_github,rmat --rmat-scale 12 --feats 17,64)
else
  check_args=(--graphs cora,citeseer,ogbl_ddi,musae_github,wiki_squirrel,rmat --rmat-scale 14 --feats 1,17,64,128)
fi
say "self-check: every kernel against the CPU reference and cuSPARSE"
timeout "$(budget_for 0 30)" "$BENCH" --check --data "$DATA" --compile-units $UNITS "${check_args[@]}" >"$RESULTS/check.txt" 2>&1
rc=$?
grep -E "^FAIL" "$RESULTS/check.txt" | head -n 20
tail -n 1 "$RESULTS/check.txt"
[ $rc = 0 ] || { echo "self-check FAILED or ran out of time (rc $rc; see check.txt)"; status=1; }

say "done: $([ $status = 0 ] && echo all passed || echo FAILURES)"
exit $status
