#!/usr/bin/env bash
# A checking run, not part of CI (it takes about three times as long as scripts/test.sh):
# builds Strata and its tests with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-sanitize/ (RelWithDebInfo), compiles the kernels the tests generate under the same
# sanitizers, and runs the suites. Any report fails the test that caused it.
#
# --thread: ThreadSanitizer instead, into build-tsan/. GCC's OpenMP runtime is not
# instrumented, so TSan would report its barriers as races; this mode builds with Clang and
# LLVM's OpenMP runtime, whose Archer tool (libarcher.so, loaded through OMP_TOOL_LIBRARIES)
# tells TSan what the parallel regions, barriers and tasks synchronise. The kernels the tests
# generate are compiled by the same Clang under TSan, so a race inside a generated kernel
# (two threads writing one output row) is reported too.
#
# Extra arguments go to ctest (e.g. -R Formats, -L unit).
set -euo pipefail
MODE=address
if [ "${1:-}" = --thread ]; then
  MODE=thread
  shift
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [ "$MODE" = thread ]; then
  STRATA_BUILD="${STRATA_TSAN_BUILD:-$STRATA_ROOT/build-tsan}"
  SANITIZERS=thread
  STRATA_PACKAGES+=(clang libomp-dev)
  # The CUDA backend stays out: nvcc does not take every Clang as its host compiler, and
  # without a GPU its tests skip anyway.
  EXTRA_CMAKE_ARGS=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSTRATA_CUDA=OFF)
else
  STRATA_BUILD="${STRATA_SANITIZE_BUILD:-$STRATA_ROOT/build-sanitize}"
  SANITIZERS=address,undefined
  EXTRA_CMAKE_ARGS=()
fi
strata_install_packages
strata_configure_and_build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_SANITIZE="$SANITIZERS" "${EXTRA_CMAKE_ARGS[@]}"
# Generated kernels are shared objects loaded into the sanitized process: they are compiled
# with the same checks (STRATA_CXXFLAGS), so a bad slot, index or row owner in a kernel is
# reported too.
if [ "$MODE" = thread ]; then
  archer="$(dirname "$(readlink -f "$(command -v clang++)")")/../lib/libarcher.so"
  [ -f "$archer" ] || { echo "strata sanitize: no $archer (Debian package libomp-dev)" >&2; exit 1; }
  export OMP_TOOL_LIBRARIES="$archer"
  # ignore_noninstrumented_modules: libomp itself is not built with TSan; Archer supplies
  # its synchronisation instead.
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:ignore_noninstrumented_modules=1:second_deadlock_stack=1}"
  # -z undefs: the TSan runtime is in the executable, so a kernel library cannot define its
  # __tsan_ symbols at link time (CompileErrorTest.UndefinedSymbolFailsTheBuildNotTheLoad skips).
  export STRATA_CXXFLAGS="-fsanitize=thread -fno-omit-frame-pointer -Wl,-z,undefs"
else
  export STRATA_CXXFLAGS="-fsanitize=$SANITIZERS -fno-sanitize-recover=all -fno-omit-frame-pointer"
  # Leak checking stays on; halt_on_error makes the first report the test's failure.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
cd "$STRATA_BUILD"
export STRATA_CACHE_DIR="${STRATA_TEST_CACHE_DIR:-$STRATA_BUILD/test-cache}"
# LeanBuild builds a separate, unsanitized tree: nothing of it runs under the sanitizers.
ctest --output-on-failure --parallel "$(nproc)" --timeout 2700 -E '^LeanBuild' "$@"
