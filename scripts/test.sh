#!/usr/bin/env bash
# Builds dpem with its tests, benchmarks and Python package, runs every test
# (the Python package's pytest suite among them: CTest label python, against
# build/python), then installs it to a scratch prefix and builds
# examples/with_cmake against it with find_package(dpem). Long audits and experiments are not part of this. The
# output of apt, CMake and the compiler goes to out/test.log (its end is shown
# if a step fails); CTest's and the fuzzers' output is printed as before.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
steps_log out/test.log
step "Debian packages (scripts/install_deps.sh)" scripts/install_deps.sh
step "building build/ with the tests, benchmarks and Python package (scripts/build.sh)" \
  scripts/build.sh -DDPEM_BUILD_TESTS=ON -DDPEM_BUILD_BENCHMARKS=ON -DDPEM_BUILD_PYTHON=ON \
    -DDPEM_WITH_MPI=ON
(cd build && ctest --output-on-failure --parallel "$(nproc)" --timeout 900)
# A short fuzzing run of the CSV, .npy and model-file readers (clang++,
# ASan + UBSan, build-fuzz); FUZZ_SECONDS per target, 0 skips it.
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then scripts/fuzz.sh "${FUZZ_SECONDS:-20}"; fi

prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix/usr" >/dev/null
cmake -S examples/with_cmake -B "$prefix/example-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix/usr" >/dev/null
cmake --build "$prefix/example-build" >/dev/null
"$prefix/example-build/calibrate_example"
echo "find_package(dpem) example: 1 passed, 0 failed"
