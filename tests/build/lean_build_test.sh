#!/usr/bin/env bash
# The lean configuration (STRATA_LEAN: core, compiler, CUDA backend when nvcc is
# there, the strata command and the benchmarks; no datasets, layers or models) is what
# scripts/gpu-check.sh builds on a GPU machine. Built here, in a scratch folder, so a
# change that makes the lean targets depend on the full build's libraries fails CI
# instead of a GPU session. Usage: lean_build_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
cuda=OFF
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] && cuda=ON
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if ! cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSTRATA_LEAN=ON -DSTRATA_CUDA=$cuda \
     -DSTRATA_BUILD_TESTS=OFF >"$build/configure.txt" 2>&1; then
  cat "$build/configure.txt"; echo "FAIL: the lean configuration does not configure"; exit 1
fi
if ! cmake --build "$build" --parallel "$(nproc)" >"$build/build.txt" 2>&1; then
  grep -E "error|undefined reference|FAILED" "$build/build.txt" | head -n 40
  echo "FAIL: the lean configuration (CUDA $cuda) does not build"; exit 1
fi
# To a file, not a pipe: `grep -q` stops reading at the first match, and under pipefail
# the writer's SIGPIPE would fail the test.
"$build/apps/strata" compile spmm --feat 32 --emit source >"$build/kernel.cc" 2>&1 ||
  { cat "$build/kernel.cc"; echo "FAIL: the lean strata compile command failed"; exit 1; }
grep -q "pragma omp parallel for" "$build/kernel.cc" ||
  { echo "FAIL: the lean strata does not compile a kernel"; exit 1; }
echo "lean build (CUDA $cuda): ok"
