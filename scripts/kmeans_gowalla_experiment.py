#!/usr/bin/python3
"""k-means on Gowalla check-in locations: park2016 Fig. 3A and park2017 Fig. 4.

Runs `dpem fit kmeans` with every method (cdp-gauss, cdp-laplace, dplloyd,
dplloyd-zcdp, and plain Lloyd with --epsilon inf) on many random 1% subsets
of the world-wide Gowalla check-ins, scores each model's NICV on its subset
with `dpem score --json`, and writes

  out/kmeans_gowalla/results.json          every NICV, and the quartiles
  docs/figures/kmeans_gowalla_nicv.png      interquartile ranges vs epsilon
  docs/figures/kmeans_gowalla_clusters.png  clusters at epsilon = 0.01

Usage (after scripts/build.sh or a build in build-kmeans):
  /usr/bin/python3 scripts/kmeans_gowalla_experiment.py [--dpem build/dpem]
      [--subsets 100] [--skip-picture | --only-picture] [--start-iterations J]

Data: /work/shared/data/gowalla/LBSN_Gowalla_3 (157,251 check-ins of 1,000
users, joined on poi_id with the POI coordinates), as (latitude, longitude)
in degrees. Public domain: the centre (0, 0) and R = sqrt(90^2 + 180^2), the
range of any (lat, lon) pair; no bound is computed from the records.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

from lib import options

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/work/shared/data/gowalla/LBSN_Gowalla_3"
R = math.hypot(90.0, 180.0)
METHODS = ["dplloyd", "dplloyd-zcdp", "cdp-laplace", "cdp-gauss"]
# dpem's own methods again, from the private start (issue 18; the columns
# above start every method at random, as the papers do).
PRIVATE_START = ["cdp-laplace", "cdp-gauss"]
STARTED = [m + " + private start" for m in PRIVATE_START]
EPSILONS = [float(e) for e in np.logspace(-2, 0, 8)]
DELTA = 1e-4
K, J = 3, 10  # park2016's testGowalla.m: K = 3, maxIter = 10.


def load_checkins():
    coords = {}
    with open(os.path.join(DATA, "Gowalla_poi_coos.txt")) as f:
        for line in f:
            poi, lat, lon = line.split()
            coords[poi] = (float(lat), float(lon))
    rows = []
    with open(os.path.join(DATA, "Gowalla_checkins.txt")) as f:
        for line in f:
            poi = line.split()[1]
            rows.append(coords[poi])
    return np.array(rows)


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: " + " ".join(args) + "\n" + r.stderr)
    return r.stdout


def fit_and_score(dpem, data, model, method, epsilon, seed, k=K, j=J, init="random"):
    args = [dpem, "fit", "kmeans", "--input", data, "--output", model, "--method", method,
            "--components", str(k), "--iterations", str(j), "--epsilon", epsilon,
            "--data-norm", repr(R), "--seed", str(seed), "--quiet"]
    if epsilon != "inf":
        args += ["--init", init]
    if method != "dplloyd" and epsilon != "inf":
        args += ["--delta", repr(DELTA)]
    run(args)
    return json.loads(run([dpem, "score", "--json", "--model", model, "--input", data]))["nicv"]


def experiment(dpem, x, subsets, tmp, start_iterations=J):
    rng = np.random.default_rng(2016)
    n = len(x) // 100
    nicv = {m: [[] for _ in EPSILONS] for m in METHODS + STARTED}
    nicv["lloyd"] = []
    model = os.path.join(tmp, "m.json")
    for s in range(subsets):
        data = os.path.join(tmp, "subset.csv")
        np.savetxt(data, x[rng.choice(len(x), n, replace=False)], delimiter=",", fmt="%.10g")
        # The same seed for every method: the same initial centres.
        nicv["lloyd"].append(fit_and_score(dpem, data, model, "cdp-gauss", "inf", s))
        for m in METHODS:
            for i, e in enumerate(EPSILONS):
                nicv[m][i].append(fit_and_score(dpem, data, model, m, repr(e), s))
        for m, started in zip(PRIVATE_START, STARTED):
            for i, e in enumerate(EPSILONS):
                nicv[started][i].append(fit_and_score(dpem, data, model, m, repr(e), s,
                                                      j=start_iterations, init="private"))
        print(f"subset {s + 1}/{subsets}", file=sys.stderr)
    return n, nicv


def quartiles(v):
    return [float(q) for q in np.percentile(np.array(v) / R**2, [25, 50, 75])]


def plot_nicv(nicv, path, start_iterations=J):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colours = {"dplloyd": "grey", "dplloyd-zcdp": "black", "cdp-laplace": "tab:blue",
               "cdp-gauss": "tab:red", "cdp-laplace + private start": "tab:cyan",
               "cdp-gauss + private start": "tab:orange"}
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in METHODS + STARTED:
        q = np.array([quartiles(v) for v in nicv[m]])
        style = "--" if m in STARTED else "-"
        ax.fill_between(EPSILONS, q[:, 0], q[:, 2], color=colours[m], alpha=0.2)
        label = f"{m}, J = {start_iterations}" if m in STARTED else m
        ax.plot(EPSILONS, q[:, 1], style, color=colours[m], marker="o", ms=3, label=label)
    q = quartiles(nicv["lloyd"])
    ax.axhspan(q[0], q[2], color="green", alpha=0.3, label="Lloyd (non-private)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epsilon (delta = 1e-4; dplloyd: pure DP)")
    ax.set_ylabel("NICV (unit-ball units)")
    ax.set_title(f"Gowalla 1% subsets, K = {K}, J = {J} from random starts")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def picture(dpem, x, tmp, path):
    """park2017 Fig. 4: all check-ins, epsilon = 0.01, delta = 1e-4, and K = 5,
    J = 40 as the authors' script for that figure (pmkt3/compute_NICV.m)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = os.path.join(tmp, "all.csv")
    np.savetxt(data, x, delimiter=",", fmt="%.10g")
    panels = [("lloyd", "inf")] + [(m, "0.01") for m in METHODS]
    sub = np.random.default_rng(0).choice(len(x), 7000, replace=False)
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4))
    for ax, (m, e) in zip(axes, panels):
        model = os.path.join(tmp, f"pic_{m}.json")
        nicv = fit_and_score(dpem, data, model, "cdp-gauss" if m == "lloyd" else m, e, 1,
                             k=5, j=40)
        labels = np.array([int(v) for v in
                           run([dpem, "predict", "--model", model, "--input", data]).split()])
        centres = np.array(json.load(open(model))["centres"])
        ax.scatter(x[sub, 1], x[sub, 0], c=labels[sub], s=2, cmap="tab10", vmin=0, vmax=9)
        ax.scatter(centres[:, 1], centres[:, 0], marker="x", s=80, c="dimgray", linewidths=3)
        ax.set_title(f"{m} (NICV {nicv / R**2:.2e})", fontsize=9)
        ax.set_xlim(-180, 180)
        ax.set_ylim(-90, 90)
        ax.set_xlabel("longitude")
    axes[0].set_ylabel("latitude")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = options.dpem_parser(os.path.join(ROOT, "build", "dpem"))
    p.add_argument("--subsets", type=int, default=100)
    p.add_argument("--skip-picture", action="store_true")
    p.add_argument("--start-iterations", type=int, default=J,
                   help="J of the private-start columns (default: the papers' J = 10)")
    p.add_argument("--only-picture", action="store_true")
    a = p.parse_args()
    x = load_checkins()
    out = os.path.join(ROOT, "out", "kmeans_gowalla")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if a.only_picture:
            picture(a.dpem, x, tmp,
                    os.path.join(ROOT, "docs", "figures", "kmeans_gowalla_clusters.png"))
            return
        n, nicv = experiment(a.dpem, x, a.subsets, tmp, a.start_iterations)
        summary = {"records": len(x), "subset_size": n, "subsets": a.subsets, "K": K, "J": J,
                   "delta": DELTA, "data_norm": R, "epsilons": EPSILONS,
                   "private_start_iterations": a.start_iterations,
                   "nicv_unit_ball_quartiles": {
                       m: [quartiles(v) for v in nicv[m]] for m in METHODS + STARTED},
                   "lloyd_quartiles": quartiles(nicv["lloyd"]), "nicv_degrees2": nicv}
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(summary, f, indent=1)
        plot_nicv(nicv, os.path.join(ROOT, "docs", "figures", "kmeans_gowalla_nicv.png"),
                  a.start_iterations)
        if not a.skip_picture:
            picture(a.dpem, x, tmp,
                    os.path.join(ROOT, "docs", "figures", "kmeans_gowalla_clusters.png"))
    print(json.dumps({k: v for k, v in summary.items() if k != "nicv_degrees2"}, indent=1))


if __name__ == "__main__":
    main()
