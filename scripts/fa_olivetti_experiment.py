#!/usr/bin/python3
"""Private factor analysis on the Olivetti faces (park2017 Sec. 7, Fig. 5).

Runs `dpem fit fa` with L = 10 factors at epsilon in {0.2, 0.3, 1, inf}
(delta = 1e-4) on the 400 x 4096 faces scaled to [0, 1] (pixel / 242, as
scikit-learn does), with the public row-norm bound R = sqrt(4096) = 64 (every
pixel is <= 1) and the origin as public centre, and plots the columns of W as
64 x 64 images: one row per epsilon, one column per factor.

Usage (from the repository root, after building build-fa):
    /usr/bin/python3 scripts/fa_olivetti_experiment.py \
        --dpem build-fa/dpem --out docs/figures/fa_olivetti.png
    /usr/bin/python3 scripts/fa_olivetti_experiment.py --dpem build-fa/dpem \
        --epsilons 3,10,100,1000 --out docs/figures/fa_olivetti_large_epsilon.png
Prints the wall time of every fit and the mean log-likelihood of the faces
under each model (dpem score).
"""
import json
import os
import subprocess
import tempfile
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from lib import olivetti, options

EPSILONS = "inf,1,0.3,0.2"


def fit(dpem, data, out, eps, args):
    cmd = olivetti.fit_command(dpem, data, out, eps, args.factors,
                               ["--iterations", str(args.iterations), "--quiet"], args.seed)
    start = time.monotonic()
    subprocess.run(cmd, check=True)
    seconds = time.monotonic() - start
    score = olivetti.score(dpem, out, data)
    with open(out) as f:
        model = json.load(f)
    return np.array(model["parameters"]["loadings"]), seconds, score, model["privacy"]


def main():
    p = olivetti.argument_parser()
    p.add_argument("--out", default="docs/figures/fa_olivetti.png")
    p.add_argument("--factors", type=int, default=10)
    options.add_iterations_and_seed(p, iterations=100, seed=1)
    p.add_argument("--epsilons", default=EPSILONS,
                   help="comma-separated epsilons, one figure row each (inf: non-private)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "olivetti.npy")
        olivetti.save_faces(data)
        rows = []
        for eps in args.epsilons.split(","):
            w, seconds, score, privacy = fit(args.dpem, data, os.path.join(tmp, eps + ".json"),
                                             eps, args)
            print(f"epsilon {eps}: fit {seconds:.1f} s wall, mean log-likelihood "
                  f"{score['mean_log_likelihood']:.1f}, certified epsilon "
                  f"{privacy.get('epsilon', 'n/a')}, noise multiplier "
                  f"{privacy.get('noise_multiplier', 'n/a')}", flush=True)
            rows.append((eps, w))
    fig, axes = plt.subplots(len(rows), args.factors,
                             figsize=(1.2 * args.factors, 1.35 * len(rows)))
    for r, (eps, w) in enumerate(rows):
        for k in range(args.factors):
            ax = axes[r, k]
            ax.imshow(w[:, k].reshape(64, 64), cmap="gray")
            ax.set_xticks([])
            ax.set_yticks([])
            if k == 0:
                ax.set_ylabel("non-private" if eps == "inf" else f"eps = {eps}", fontsize=8)
    fig.suptitle(f"Columns of W, Olivetti faces, L = {args.factors}, delta = 1e-4", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
