#!/usr/bin/python3
"""Wall time of factor analysis on the Olivetti faces: dpem's CLI against
scikit-learn's FactorAnalysis, side by side in one run (docs/performance.md).

The 400 x 4096 faces scaled to [0, 1] (pixel / 242) are saved once as .npy.
Each repetition runs, in turn:
  * `dpem fit fa --factors 10 --epsilon 1 --delta 1e-4 --data-norm 64`
    (private; J = 100 EM iterations, the binary's default repair: shift-back
    since 2026-11-24, floor before), with `--epsilon inf` (plain), and the
    private fit with `--eigenvalue-repair floor` and `shift`, each as its
    own process, timed end to end
    (reading the .npy, the pass, the release, the eigenpairs, EM, writing
    the model); with --baseline, the same four fits by a second dpem binary
    (e.g. one built from main, which must know the repairs' names) right after;
  * scikit-learn's `FactorAnalysis(n_components=10)` (its defaults: tol
    1e-2, randomized SVD), as a `python3 -c` process timed end to end
    (start-up, imports, np.load, fit) and, inside it, the fit alone.
Prints every time, the median over the repetitions, and the mean
log-likelihood of the faces under each model (dpem score; scikit-learn's
score, whose model has a fitted mean where dpem's mean is the public origin).

Usage (from the repository root, after building build-fa):
    /usr/bin/python3 scripts/fa_olivetti_timing.py --dpem build-fa/dpem \\
        [--baseline /path/to/other/dpem] [--repetitions 5] [--threads 2]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

from lib import olivetti

SKLEARN = """
import sys, time
t0 = time.monotonic()
import numpy as np
from sklearn.decomposition import FactorAnalysis
x = np.load(sys.argv[1])
t1 = time.monotonic()
fa = FactorAnalysis(n_components=10).fit(x)
t2 = time.monotonic()
print(t2 - t1, fa.n_iter_, fa.score(x))
"""


def timed(cmd, env=None):
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return time.monotonic() - start, out


def dpem_fit(dpem, data, model, epsilon, threads, repair=None):
    cmd = olivetti.fit_command(dpem, data, model, epsilon, 10,
                               ["--quiet", "--threads", str(threads)], 1)
    if repair:
        cmd += ["--eigenvalue-repair", repair]
    seconds, _ = timed(cmd)
    return seconds, olivetti.score(dpem, model, data)["mean_log_likelihood"]


def main():
    p = olivetti.argument_parser()
    p.add_argument("--baseline", help="a second dpem binary, timed after each of --dpem's fits")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    binaries = [("dpem", args.dpem)] + ([("baseline", args.baseline)] if args.baseline else [])
    times = {}
    scores = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "olivetti.npy")
        olivetti.save_faces(data)
        model = os.path.join(tmp, "fa.json")
        for rep in range(args.repetitions):
            for name, binary in binaries:
                for epsilon in ("1", "inf"):
                    key = f"{name} {'private' if epsilon == '1' else 'plain'}"
                    seconds, scores[key] = dpem_fit(binary, data, model, epsilon, args.threads)
                    times.setdefault(key, []).append(seconds)
                for repair in ("floor", "shift"):
                    key = f"{name} private, {repair} repair"
                    seconds, scores[key] = dpem_fit(binary, data, model, "1", args.threads,
                                                    repair)
                    times.setdefault(key, []).append(seconds)
            total, out = timed([sys.executable, "-c", SKLEARN, data], env=env)
            fit_seconds, iterations, scores["scikit-learn plain"] = out.split()
            times.setdefault("scikit-learn plain, process", []).append(total)
            times.setdefault("scikit-learn plain, fit only", []).append(float(fit_seconds))
            print(f"repetition {rep + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s"
                                                       for k, v in times.items()), flush=True)
    print(f"\nmedians over {args.repetitions} repetitions ({args.threads} threads; "
          f"scikit-learn: {iterations} iterations):")
    for key, values in times.items():
        print(f"  {key:32s} {statistics.median(values):7.2f} s  "
              f"(min {min(values):.2f}, max {max(values):.2f})")
    print("mean log-likelihood of the faces:")
    for key, value in scores.items():
        print(f"  {key:32s} {float(value):.6f}")


if __name__ == "__main__":
    main()
