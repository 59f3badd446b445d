#!/bin/bash
# Runs the same seeded CLI cases with two dpem binaries, side by side, and
# diffs everything they write: model files, stdout, stderr and exit codes.
# For refactors that promise no change of behaviour (issue 14): build the
# old commit's CLI somewhere (a git worktree), then
#   scripts/compare_cli_outputs.sh OLD/build/dpem build/dpem
# Exit code 0 when every output is identical. The cases (47: GMM with every
# mechanism, covariance and start, k-means with every method, factor
# analysis, gradient EM, released and data-derived domains, budget charges,
# refusals, score/predict/sample/transform) are in scripts/lib/cli_cases.sh.
set -u
if [ $# -ne 2 ]; then echo "usage: $0 OLD_DPEM NEW_DPEM" >&2; exit 2; fi
old="$(realpath "$1")"; new="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work/data" <<'PY'
import os, sys
import numpy as np
out = sys.argv[1]; os.makedirs(out)
r = np.random.default_rng(3)
centres = np.array([[0, 0, 0], [4, 4, 0], [-3, 5, 2], [5, -4, 1]])
x = np.vstack([r.normal(mu, 0.8, (300, 3)) for mu in centres])
np.savetxt(os.path.join(out, "x.csv"), x, delimiter=",")
np.save(os.path.join(out, "x.npy"), x)
PY
bash "$here/lib/cli_cases.sh" "$old" "$work/old" "$work/data" >/dev/null
bash "$here/lib/cli_cases.sh" "$new" "$work/new" "$work/data" >/dev/null
# The budget files hold timestamps; their content is compared through
# `budget show` (a case of its own).
if diff -r -x '*.db' "$work/old" "$work/new"; then
  echo "compare_cli_outputs: every output identical"
else
  exit 1
fi
