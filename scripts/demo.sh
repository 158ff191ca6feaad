#!/usr/bin/env bash
# The README's main command: set up (packages, configure, build), then run the main
# job on a default that needs no downloaded files.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
strata_install_packages
strata_configure_and_build
STRATA="$STRATA_BUILD/apps/strata"
"$STRATA" info sbm:nodes=2000,classes=5,seed=1
DATA_ROOT="${STRATA_DATA_ROOT:-$STRATA_ROOT/../shared/datasets}"
if [ -e "$DATA_ROOT/citation/cora.tgz" ]; then
  "$STRATA" info cora --data-root "$DATA_ROOT"
else
  echo "(Cora not found under $DATA_ROOT; set STRATA_DATA_ROOT to run on it)"
fi
