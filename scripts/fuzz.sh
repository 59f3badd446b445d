#!/usr/bin/env bash
# Builds dpem's libFuzzer targets (fuzz/: the CSV, .npy and model-file readers)
# with clang++ and AddressSanitizer + UBSan in build-fuzz, then runs each one
# for a bounded time, seeded from the hostile-input corpus (tests/hostile).
# Fails (non-zero exit) on the first crash, sanitizer report or timeout; the
# crashing input is left as build-fuzz/crash-<target>-*.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60; or FUZZ_SECONDS)
#        FUZZ_TARGETS="csv npy" scripts/fuzz.sh  (a subset)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-60}}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
targets="${FUZZ_TARGETS:-csv npy gmm_model}"

CXX="${FUZZ_CXX:-clang++}" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDPEM_BUILD_FUZZERS=ON -DDPEM_BUILD_TESTS=OFF -DDPEM_BUILD_CLI=OFF \
  -DDPEM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target $(for t in $targets; do printf '%s_fuzzer ' "$t"; done) >/dev/null

seeds_of() {
  case "$1" in
    csv) ls tests/hostile/data/*.csv ;;
    npy) ls tests/hostile/data/*.npy ;;
    gmm_model) ls tests/hostile/models/*.json ;;
  esac
}

for t in $targets; do
  corpus="$build/corpus-$t"
  mkdir -p "$corpus"
  cp $(seeds_of "$t") "$corpus/"
  log="$build/fuzz-$t.log"
  echo "fuzzing $t for ${seconds} s (corpus $corpus, log $log)"
  if ! "$build/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/crash-$t-" \
      "$corpus" >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "FUZZ FAILURE in $t: see $log and $build/crash-$t-*" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/  $t: /"
done
echo "fuzzing: no crash in $targets"
