#!/usr/bin/python3
"""Times two dpem CLI builds side by side, in one run, on the same data: a
change's speed-up per iteration (docs/performance.md).

    /usr/bin/python3 scripts/bench_cli_ab.py --before /tmp/dpem_old --after build/dpem \\
        [--iterations 20] [--repetitions 5] [--gradient-em] [--high-d]

Build the "before" binary from the parent commit (for instance
`git worktree add /tmp/before HEAD~1`, then configure and build its target
`dpem`). Each case fits with J = 1 and J = 1 + I iterations and divides the
difference by I (which cancels start-up, loading and the start); the two
builds alternate within each repetition, and the median over repetitions is
printed with after / before. The data: bench_vs_sklearn.py's (1e6, 10, 10)
clusters, written once to $DPEM_BENCH_DIR (default: a temporary directory);
with --high-d also its (1e5, 100, 10) clusters and its elongated
(1e5, 50, 8) ones.
Seeded fits (timing only: a seeded private fit is not private). Run it
with nothing else loading the machine.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vs_sklearn import data_norm, make_data  # noqa: E402

CASES = {
    "k-means private (cdp-gauss)": ["kmeans", "--method", "cdp-gauss", "{private}"],
    "GMM plain, full": ["gmm", "--covariance", "full", "--epsilon", "inf"],
    "GMM private default, full": ["gmm", "--covariance", "full", "{private}"],
}
# Gradient EM (wang-dp-gradient-em) on `dpem generate --model gmm` data,
# (N, d) = (1e6, 10): the robust mean (dp, dp-em) and the clipped baseline.
GRADIENT_EM = ["gradient-em", "--model", "gmm", "--sigma", "1", "--epsilon", "1",
               "--delta", "1e-5"]
GRADIENT_EM_CASES = {
    "gradient EM dp (robust mean)": GRADIENT_EM + ["--method", "dp", "--tau", "10"],
    "gradient EM dp-em (robust mean)": GRADIENT_EM + ["--method", "dp-em", "--tau", "10"],
    "gradient EM clipped": GRADIENT_EM + ["--method", "clipped", "--clip", "5"],
}


# Gaussian mixtures in more dimensions (--high-d): (name, N, d, K, shape, fits).
HIGH_D_CASES = [
    ("1e5x100", 100_000, 100, 10, "round",
     {"GMM plain, full": CASES["GMM plain, full"],
      "GMM private default, full": CASES["GMM private default, full"]}),
    ("1e5x50_elongated", 100_000, 50, 8, "elongated",
     {"GMM plain, full": CASES["GMM plain, full"]}),
]


def per_iteration(binary, args, path, out, iterations, threads, k=10):
    def run(j):
        extra = ["--components", str(k), "--quiet"] if args[0] != "gradient-em" else []
        start = time.perf_counter()
        subprocess.run([binary, "fit"] + args + extra + ["--input", path, "--output", out,
                       "--iterations", str(j), "--seed", "1", "--threads", str(threads)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - start
    return (run(1 + iterations) - run(1)) / iterations


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="the dpem binary before the change")
    p.add_argument("--after", required=True, help="the dpem binary after the change")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--gradient-em", action="store_true",
                   help="also the gradient EM methods (robust mean and clipped)")
    p.add_argument("--high-d", action="store_true",
                   help="also Gaussian mixtures at (1e5, 100, 10) and elongated (1e5, 50, 8)")
    a = p.parse_args()
    tmp = os.environ.get("DPEM_BENCH_DIR") or tempfile.mkdtemp()
    path = os.path.join(tmp, "ab_1e6x10.npy")
    if not os.path.exists(path):
        make_data(path, 1_000_000, 10, 10)
    out = os.path.join(tmp, "ab_model.json")
    cases = {name: (case, path, 10) for name, case in CASES.items()}
    if a.high_d:
        for label, n, d, k, shape, fits in HIGH_D_CASES:
            hpath = os.path.join(tmp, f"ab_{label}.npy")
            if not os.path.exists(hpath):
                make_data(hpath, n, d, k, shape=shape)
            cases.update({f"{name} ({label})": (case, hpath, k) for name, case in fits.items()})
    if a.gradient_em:
        gpath = os.path.join(tmp, "ab_gradient_em_1e6x10.npy")
        if not os.path.exists(gpath):
            subprocess.run([a.after, "generate", "--model", "gmm", "--n", "1000000", "--d", "10",
                            "--snr", "3", "--seed", "3", "--output", gpath, "--truth",
                            os.path.join(tmp, "ab_gradient_em_truth.json")],
                           check=True, stdout=subprocess.DEVNULL)
        cases.update({name: (case, gpath, 10) for name, case in GRADIENT_EM_CASES.items()})
    for name, (case, data, k) in cases.items():
        private = ["--epsilon", "1", "--delta", "1e-6", "--data-norm", data_norm(data)]
        args = []
        for word in case:
            args += private if word == "{private}" else [word]
        times = {"before": [], "after": []}
        for _ in range(a.repetitions):
            for label in times:
                binary = a.before if label == "before" else a.after
                times[label].append(per_iteration(binary, args, data, out, a.iterations,
                                                  a.threads, k))
        med = {label: statistics.median(v) * 1e3 for label, v in times.items()}
        print(f"{name:44s} before {med['before']:7.2f} ms/it  after {med['after']:7.2f} ms/it  "
              f"after / before {med['after'] / med['before']:.2f}", flush=True)


if __name__ == "__main__":
    main()
