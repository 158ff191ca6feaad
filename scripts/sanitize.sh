#!/usr/bin/env bash
# A checking run, not part of CI (it takes about three times as long as scripts/test.sh):
# builds Strata and its tests with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-sanitize/ (RelWithDebInfo), compiles the kernels the tests generate under the same
# sanitizers, and runs the suites. Any report fails the test that caused it.
# Extra arguments go to ctest (e.g. -R Formats, -L unit).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
STRATA_BUILD="${STRATA_SANITIZE_BUILD:-$STRATA_ROOT/build-sanitize}"
SANITIZERS=address,undefined
strata_install_packages
strata_configure_and_build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_SANITIZE="$SANITIZERS"
cd "$STRATA_BUILD"
# Generated kernels are shared objects loaded into the sanitized process: compile them
# with the same checks so an out-of-bounds slot or index in a kernel is reported too.
export STRATA_CXXFLAGS="-fsanitize=$SANITIZERS -fno-sanitize-recover=all -fno-omit-frame-pointer"
export STRATA_CACHE_DIR="${STRATA_TEST_CACHE_DIR:-$STRATA_BUILD/test-cache}"
# Leak checking stays on; halt_on_error makes the first report the test's failure.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# LeanBuild builds a separate, unsanitized tree: nothing of it runs under the sanitizers.
ctest --output-on-failure --parallel "$(nproc)" --timeout 2700 -E '^LeanBuild' "$@"
