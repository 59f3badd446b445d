#!/usr/bin/env python3
"""park2016 Sec. 6, synthetic: test log-likelihood per point against N.

Usage: /usr/bin/python3 scripts/gmm_synthetic_experiment.py [--repeats R] [--out DIR]

Three isotropic 2-D Gaussians (means (-0.5, -0.3), (0.4, -0.4), (0, 0.5),
standard deviation 0.1, equal weights), training sets of N points and test
sets of max(N/10, 1000) points from the same law, for N from 500 to 256,000.
For each (N, repeat) one data set; on it dpem fits a 3-component spherical
mixture in J = 10 iterations (epsilon = 0.9, delta = 1e-4, GGG mechanisms,
public domain: the unit ball around the origin) with non-private EM and with
the noise calibrated by zCDP (the papers' conversion), RDP and advanced
composition, each from its own seeded random start. Reports the median and
interquartile range over repeats of the test log-likelihood per point, as a
Markdown table on stdout and a PNG (DIR/gmm_synthetic.png; default DIR:
docs/figures). Needs numpy and matplotlib (/usr/bin/python3) and build/dpem.
"""
import argparse
import concurrent.futures
import os
import subprocess
import tempfile

import numpy as np

from lib.plots import plot_log_likelihood_quartiles, print_quartile_table
from lib.scoring import held_out_log_likelihood

DPEM = "build/dpem"
NS = [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000]
MEANS = np.array([[-0.5, -0.3], [0.4, -0.4], [0.0, 0.5]])
SD = 0.1
METHODS = [("non-private", None), ("zCDP", "zcdp"), ("RDP", "rdp"), ("advanced", "advanced")]
EPSILON, DELTA, ITERATIONS, K = 0.9, 1e-4, 20, 3


def draw(rng, n):
    labels = rng.integers(0, 3, size=n)
    return MEANS[labels] + SD * rng.standard_normal((n, 2))


def write_npy(path, x):
    np.save(path, np.ascontiguousarray(x, dtype=np.float64))


def fit_and_score(train, test, accountant, seed, workdir):
    model = os.path.join(workdir, f"model_{accountant}_{seed}.json")
    cmd = [DPEM, "fit", "gmm", "--input", train, "--output", model, "--components", str(K),
           "--iterations", str(ITERATIONS), "--covariance", "spherical", "--seed", str(seed),
           "--quiet", "--data-norm", "1", "--mechanisms", "GGG"]
    if accountant is None:
        cmd += ["--epsilon", "inf", "--init", "random"]  # The private fits' start.
    else:
        # The papers' start (the private start is compared in
        # scripts/private_start_real_data.py).
        cmd += ["--epsilon", str(EPSILON), "--delta", str(DELTA), "--accountant", accountant,
                "--init", "random"]
    subprocess.run(cmd, check=True, capture_output=True)
    return held_out_log_likelihood(DPEM, model, test, remove=False)


def run_one(n, rep, workdir):
    rng = np.random.default_rng(1000 * n + rep)
    train = os.path.join(workdir, f"train_{n}_{rep}.npy")
    test = os.path.join(workdir, f"test_{n}_{rep}.npy")
    write_npy(train, draw(rng, n))
    write_npy(test, draw(rng, max(n // 10, 1000)))
    scores = {name: fit_and_score(train, test, acc, 7 * rep + 1, workdir) for name, acc in METHODS}
    os.remove(train)
    os.remove(test)
    return n, scores


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default="docs/figures")
    args = parser.parse_args()
    results = {(n, name): [] for n in NS for name, _ in METHODS}
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        jobs = [pool.submit(run_one, n, rep, workdir) for n in NS for rep in range(args.repeats)]
        for job in concurrent.futures.as_completed(jobs):
            n, scores = job.result()
            for name, value in scores.items():
                results[(n, name)].append(value)
    summary = {key: np.percentile(v, [25, 50, 75]) for key, v in results.items()}
    print(f"Test log-likelihood per point, median [25%, 75%] over {args.repeats} data sets "
          f"(epsilon = {EPSILON}, delta = {DELTA}, J = {ITERATIONS}, K = {K}, spherical, GGG):\n")
    print_quartile_table("N", NS, [name for name, _ in METHODS], summary)
    plot(summary, args)


def plot(summary, args):
    os.makedirs(args.out, exist_ok=True)
    curves = [(name, color, np.array([summary[(n, name)] for n in NS]))
              for (name, _), color in zip(METHODS, ["black", "tab:red", "tab:blue", "tab:gray"])]
    path = os.path.join(args.out, "gmm_synthetic.png")
    plot_log_likelihood_quartiles(
        NS, curves, "number of training points N",
        f"3 isotropic 2-D Gaussians, epsilon = {EPSILON}, delta = {DELTA}, J = {ITERATIONS}", 10,
        path)
    print(f"\n(figure: {path}; {args.repeats} repeats)")


if __name__ == "__main__":
    main()
