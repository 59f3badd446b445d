#!/usr/bin/env bash
# The main job: install what is missing, build dpem, then fit a private
# Gaussian mixture to the bundled Gowalla check-ins (data/README.md), score
# it, and draw the data with the fitted components next to plain EM's
# (out/gowalla.png). Each step prints a line or two; the output of apt, CMake
# and the compiler goes to out/setup.log, whose end is shown if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
steps_log out/setup.log
echo "dpem set-up (apt, CMake and compiler output: $DPEM_LOG)"
step "Debian packages (scripts/install_deps.sh)" scripts/install_deps.sh
step "building build/dpem (scripts/build.sh)" scripts/build.sh -DDPEM_BUILD_TESTS=OFF

data=data/gowalla_nyc_checkins.csv
# The public domain: the published NYC bounding box (centre and radius in
# degrees), not derived from the records.
domain=(--data-norm 0.36 --data-center 40.70,-73.98)

echo "== Private fit: 5 components, 10 iterations, (epsilon, delta) = (1, 1e-5)"
build/dpem fit gmm --input "$data" --components 5 --iterations 10 \
  --epsilon 1 --delta 1e-5 "${domain[@]}" --output out/gowalla_private.json
build/dpem score --model out/gowalla_private.json --input "$data"

echo "== Non-private EM (its default start, k-means++), for comparison"
build/dpem fit gmm --input "$data" --components 5 --iterations 10 \
  --epsilon inf "${domain[@]}" --output out/gowalla_nonprivate.json
build/dpem score --model out/gowalla_nonprivate.json --input "$data"

step "drawing both models over the data: out/gowalla.png (scripts/plot_gmm.py)" \
  /usr/bin/python3 scripts/plot_gmm.py "$data" out/gowalla_nonprivate.json out/gowalla.png \
  out/gowalla_private.json
echo "== The model files (parameters, domain, guarantee and every release) are in out/"
