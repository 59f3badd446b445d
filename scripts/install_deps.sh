#!/usr/bin/env bash
# Installs the Debian packages dpem needs to build, test and run its scripts
# (the Python ones for /usr/bin/python3: plots, scikit-learn references, and
# the Python package dpem: pybind11, pandas, pytest; Open MPI for dpem-mpi),
# skipping those already present. Safe to run repeatedly. Needs root (or sudo).
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libeigen3-dev libsodium-dev libboost-math-dev
  libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev liblapacke-dev libspectra-dev libsqlite3-dev
  clang libclang-rt-14-dev
  python3-numpy python3-matplotlib python3-scipy python3-sklearn
  python3-dev pybind11-dev python3-pybind11 python3-pandas python3-pytest
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
