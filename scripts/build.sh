#!/usr/bin/env bash
# Configures and builds dpem into build/ (Release, optimised for this machine's
# processor: DPEM_NATIVE_ARCH, see docs/performance.md). Extra arguments go to
# CMake (e.g. -DDPEM_NATIVE_ARCH=OFF for binaries that run on other machines).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDPEM_NATIVE_ARCH=ON "$@" >/dev/null
cmake --build build --parallel "$(nproc)"
