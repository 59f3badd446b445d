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
step "building build/dpem and the Python package (scripts/build.sh)" \
  scripts/build.sh -DDPEM_BUILD_TESTS=OFF -DDPEM_BUILD_PYTHON=ON -DDPEM_WITH_MPI=ON
# The Python package, copied into /usr/local/lib/python3.X/dist-packages for
# /usr/bin/python3 (cmake/parts/python.cmake): `import dpem` works in any
# shell, and keeps working if build/ is removed. Re-run this script to update it.
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
step "installing the Python package dpem for /usr/bin/python3" \
  $sudo cmake --install build --component python
step "checking /usr/bin/python3 -c 'import dpem' in a clean environment" \
  env -i PATH=/usr/bin:/bin /usr/bin/python3 -c "import dpem"

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
echo "== Python: the README's quick start (examples/python/quick_start.py)"
/usr/bin/python3 examples/python/quick_start.py
echo "== The model files (parameters, domain, guarantee and every release) are in out/"
