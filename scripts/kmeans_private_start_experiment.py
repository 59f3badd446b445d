#!/usr/bin/env python3
"""Private k-means with the private start against the issue-18 peer table.

Usage: /usr/bin/python3 scripts/kmeans_private_start_experiment.py [--dpem PATH]
       [--fits F] [--iterations J ...] [--epsilons E ...] [--sets NAME ...]

Data sets (the issue's table, same data, same radius, same objective):
  synth10:  100,000 x 10, 16 Gaussian clusters, Google's generator
            (learning/clustering/demo/data_generation.py, re-implemented here:
            centres uniform in the ball of radius 1 - 1/ratio, each cluster
            N(centre, (1 / (ratio sqrt(d)))^2 I), ratio 8 as in Google's demo,
            points clipped to the unit ball); public domain: the unit ball.
  synth100: 100,000 x 100, 64 clusters, the same generator (Google's README
            set); the unit ball.
  gowalla:  data/gowalla_nyc_checkins.csv, K = 5; the README's domain, centre
            (40.70, -73.98), R = 0.36.
For each set, epsilon and J: F unseeded `dpem fit kmeans --method cdp-gauss`
fits (delta 1e-6, Google's demo value) with the default private start and
with --init random (the start before issue 18). The objective is the mean
squared distance to the nearest centre on the data, as a multiple of
scikit-learn's KMeans (k-means++, n_init=10). Prints medians [min, max] and
the wall time of one fit. Needs numpy and scikit-learn (/usr/bin/python3).
"""
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.cluster import KMeans

from lib import options

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOWALLA = os.path.join(ROOT, "data", "gowalla_nyc_checkins.csv")


def google_synthetic(rng, n, d, k, ratio=8.0):
    """Google's demo generator (see the module docstring), radius 1."""
    centres = rng.standard_normal((k, d))
    centres *= ((1 - 1 / ratio) * rng.uniform(size=k) ** (1 / d)
                / np.linalg.norm(centres, axis=1))[:, None]
    per = np.full(k, n // k)
    per[-1] += n % k
    x = rng.normal(0, 1 / (ratio * np.sqrt(d)), size=(n, d)) + np.repeat(centres, per, axis=0)
    norms = np.linalg.norm(x, axis=1)
    x[norms > 1] /= norms[norms > 1][:, None]
    return x


def data_set(name, rng):
    if name == "synth10":
        return google_synthetic(rng, 100000, 10, 16), 16, ["--data-norm", "1"]
    if name == "synth100":
        return google_synthetic(rng, 100000, 100, 64), 64, ["--data-norm", "1"]
    x = np.loadtxt(GOWALLA, delimiter=",", skiprows=1)
    return x, 5, ["--data-norm", "0.36", "--data-center", "40.70,-73.98"]


def objective(x, centres):
    d2 = (x**2).sum(1)[:, None] - 2 * x @ centres.T + (centres**2).sum(1)[None]
    return float(np.maximum(d2.min(1), 0).mean())


def fit(args, path, model, k, j, eps, init, domain):
    cmd = [args.dpem, "fit", "kmeans", "--input", path, "--output", model, "--components",
           str(k), "--epsilon", str(eps), "--delta", "1e-6",
           "--method", "cdp-gauss", "--quiet", "--threads", "2"] + domain
    if j > 0:  # 0: dpem's default J (its model file says which).
        cmd += ["--iterations", str(j)]
    if init:
        cmd += ["--init", init]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    seconds = time.perf_counter() - start
    m = json.load(open(model))
    return np.array(m["centres"]), seconds, m["iterations"]


def main():
    parser = options.dpem_parser(os.path.join(ROOT, "build", "dpem"))
    parser.add_argument("--fits", type=int, default=10)
    parser.add_argument("--iterations", type=int, nargs="+", default=[0],
                        help="J of each fit; 0 (the default): dpem's default J")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--sets", nargs="+", default=["synth10", "synth100", "gowalla"])
    parser.add_argument("--seed", type=int, default=2021)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("| data | K | eps | J | scikit-learn | dpem private start | dpem random start "
          "| seconds per fit (private start) |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            x, k, domain = data_set(name, rng)
            path, model = os.path.join(tmp, f"{name}.npy"), os.path.join(tmp, "m.json")
            np.save(path, x)
            ref = objective(x, KMeans(k, n_init=10, random_state=0).fit(x).cluster_centers_)
            for eps in args.epsilons:
                for j in args.iterations:
                    cells, secs, runs = [], [], set()
                    for init in [None, "random"]:
                        ratios = []
                        for _ in range(args.fits):
                            c, s, ran = fit(args, path, model, k, j, eps, init, domain)
                            ratios.append(objective(x, c) / ref)
                            if init is None:
                                secs.append(s)
                                runs.add(ran)
                        r = np.array(ratios)
                        cells.append(f"{np.median(r):.2f}x [{r.min():.2f}, {r.max():.2f}]")
                    shown = j if j > 0 else "default " + "/".join(str(v) for v in sorted(runs))
                    print(f"| {name} | {k} | {eps:g} | {shown} | {ref:.4g} | {cells[0]} | "
                          f"{cells[1]} | {np.median(secs):.2f} |", flush=True)


if __name__ == "__main__":
    main()
