#!/usr/bin/env bash
# The README's test command: set up (packages, configure, build), then run every
# test suite with ctest. Extra arguments go to ctest (e.g. -L unit, -R Graph).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
strata_install_packages
strata_configure_and_build
cd "$STRATA_BUILD"
# Kernels compiled by the tests go to a fresh cache inside the build tree, so a run
# measures cold compiles and never depends on a user's cache.
export STRATA_CACHE_DIR="${STRATA_TEST_CACHE_DIR:-$STRATA_BUILD/test-cache}"
ctest --output-on-failure --parallel "$(nproc)" --timeout 900 "$@"
