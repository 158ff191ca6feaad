#!/usr/bin/env bash
# The README's main command: set up (packages, configure, build), then train
# GraphSAGE: on Cora when the data root has it, else on a synthetic block model that
# needs no files. One run keeps it to a few seconds; drop the --set for all 10.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
strata_install_packages
strata_configure_and_build
STRATA="$STRATA_BUILD/apps/strata"
DATA_ROOT="${STRATA_DATA_ROOT:-$STRATA_ROOT/../shared/datasets}"
cd "$STRATA_ROOT"
if [ -e "$DATA_ROOT/citation/cora.tgz" ]; then
  "$STRATA" train configs/graphsage_cora.yaml --data-root "$DATA_ROOT" --set training.runs=1
else
  echo "(Cora not found under $DATA_ROOT: training on a synthetic graph; set STRATA_DATA_ROOT to use Cora)"
  "$STRATA" train configs/graphsage_sbm.yaml --set training.runs=1
fi
