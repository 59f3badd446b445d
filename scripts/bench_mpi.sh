#!/usr/bin/env bash
# The MPI backend's per-iteration cost against the threaded engine's, side by
# side in one run (docs/distributed.md): the same fit of N x 10 records
# (K = 10, full covariances, the default private fit) by `dpem --threads P`
# and by `dpem-mpirun -np P --threads 1`, each timed at 2 and 12 iterations;
# the difference over 10 is one iteration's time. Also each rank's bytes per
# iteration (DPEM_MPI_TRAFFIC), at the N given, to show that they do not
# depend on N. Usage: scripts/bench_mpi.sh [N] [P] [ROUNDS]   (defaults 1e6, 2, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000000}"; p="${2:-2}"; rounds="${3:-5}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
data="$(mktemp -d)/x.npy"
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(1)
c = rng.normal(0, 3, (10, 10))
x = c[rng.integers(0, 10, $n)] + rng.normal(size=($n, 10))
np.save('$data', x)"
fit=(fit gmm --input "$data" --components 10 --epsilon 1 --delta 1e-5 --data-norm 30 --output /dev/null)
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
declare -A best
for round in $(seq "$rounds"); do
  for way in threads mpi; do
    for it in 2 12; do
      if [ "$way" = threads ]; then
        t=$(seconds build/dpem "${fit[@]}" --iterations "$it" --threads "$p")
      else
        t=$(seconds build/dpem-mpirun -np "$p" "${fit[@]}" --iterations "$it" --threads 1)
      fi
      key="$way-$it"
      if [ -z "${best[$key]:-}" ] || (( $(echo "$t < ${best[$key]}" | bc -l) )); then best[$key]=$t; fi
    done
  done
done
per_threads=$(echo "(${best[threads-12]} - ${best[threads-2]}) / 10 * 1000" | bc -l)
per_mpi=$(echo "(${best[mpi-12]} - ${best[mpi-2]}) / 10 * 1000" | bc -l)
printf "N = %d, P = %d, best of %d rounds; per iteration: threads %.1f ms, MPI %.1f ms, ratio %.3f\n" \
  "$n" "$p" "$rounds" "$per_threads" "$per_mpi" "$(echo "$per_mpi / $per_threads" | bc -l)"
for it in 2 12; do
  DPEM_MPI_TRAFFIC=1 build/dpem-mpirun -np "$p" "${fit[@]}" --iterations "$it" --threads 1 2>&1 \
    | grep "traffic: rank" | sed "s/^/iterations $it: /"
done
rm -rf "$(dirname "$data")"
