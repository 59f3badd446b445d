#!/usr/bin/env bash
# The main job: install what is missing, build dpem, and run a worked
# accounting example (the per-release noise of a private Gaussian-mixture fit
# under every composition method, then one accounting query).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh -DDPEM_BUILD_TESTS=OFF
echo
echo "== Per-release noise for a private 3-component mixture, 10 EM iterations,"
echo "== total (epsilon, delta) = (1, 1e-5), all parameters by Gaussian noise (GGG)"
build/dpem calibrate --epsilon 1 --delta 1e-5 --iterations 10 --components 3 \
  --scenario GGG --accountant all
echo
echo "== What 10 Gaussian releases with noise multiplier 5 cost, tightest accountant"
build/dpem account --mechanism gaussian --noise-multiplier 5 --compositions 10 \
  --delta 1e-5 --accountant rdp
