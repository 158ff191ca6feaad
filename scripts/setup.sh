#!/usr/bin/env bash
# Shared set-up for the README's commands: installs (as root) or names (otherwise)
# the Debian packages Strata needs, then configures and builds into build/.
# Sourced by demo.sh and test.sh; usable alone: scripts/setup.sh [extra cmake args].
set -euo pipefail

STRATA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STRATA_BUILD="${STRATA_BUILD:-$STRATA_ROOT/build}"

STRATA_PACKAGES=(g++ cmake ninja-build pkg-config libeigen3-dev libyaml-cpp-dev libgtest-dev
  libarchive-dev zlib1g-dev libcli11-dev nlohmann-json3-dev libfmt-dev libxxhash-dev)

strata_install_packages() {
  local missing=()
  for p in "${STRATA_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "strata setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "strata setup: missing Debian packages. Run this, then try again:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
}

strata_configure_and_build() {
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # A configure that failed (say, before packages were installed) leaves a cache but no
  # build files: configure again rather than asking the user to delete build/.
  if [ ! -f "$STRATA_BUILD/CMakeCache.txt" ] ||
     { [ ! -f "$STRATA_BUILD/build.ninja" ] && [ ! -f "$STRATA_BUILD/Makefile" ]; }; then
    cmake -S "$STRATA_ROOT" -B "$STRATA_BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
  elif [ $# -gt 0 ]; then
    cmake "$STRATA_BUILD" "$@"
  fi
  cmake --build "$STRATA_BUILD" --parallel "$(nproc)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  strata_install_packages
  strata_configure_and_build "$@"
fi
