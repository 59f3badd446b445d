#!/usr/bin/python3
"""Reproduce the shapes of wang-dp-gradient-em Figures 1-4 and 6-9 with the
dpem CLI (`dpem generate`, `dpem fit gradient-em`), and plot them.

Usage (from the repository root, after building the CLI):
  /usr/bin/python3 scripts/gradient_em_experiment.py --dpem build/dpem \
      --out out/gradient_em --figures docs/figures [--repeats 2]

Settings (Appendix J): SNR ||beta*|| / sigma = 3 with sigma = 1, delta = 1/n,
random initialisation (norm 1, from the seed), step 1, T = 22. The public
second-moment bound tau is taken from the paper's lemmas with constant 1,
evaluated at the (simulated, hence known) truth, as the paper assumes tau known:
  gmm (Lemma 4): ||beta*||_inf^2 + sigma^2
  mrm (Lemma 6): max((||beta*||^2 + sigma^2)^2, d ||beta*||^2)
  rmc (Lemma 8): (sqrt(d) ||beta*|| + sigma^2 + ||beta*||^2)^2
The error is ||beta - beta*||_2, for gmm and mrm up to the sign of beta (both
models are symmetric in beta).
"""
import json
import os

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lib import gradient_em, options
from lib.gradient_em import run, tau_of

MODELS = ["gmm", "mrm", "rmc"]
T = 22
D0, N0, EPS0 = 10, 10000, 0.5
MISSING = 0.1


def generate(a, model, n, d, seed):
    base = os.path.join(a.out, f"{model}_n{n}_d{d}_s{seed}")
    if not os.path.exists(base + ".csv"):
        gradient_em.generate(a.dpem, model, n, d, seed, base + ".csv", base + ".json", MISSING)
    beta, sigma = gradient_em.read_truth(base + ".json")
    return base + ".csv", beta, sigma


def error(model, traj, beta):
    traj = np.asarray(traj)
    e = np.linalg.norm(traj - beta, axis=1)
    if model != "rmc":
        e = np.minimum(e, np.linalg.norm(traj + beta, axis=1))
    return e


def fit(a, model, method, n, d, seed, eps=EPS0, clip=1.0, iters=T, scale=None):
    data, beta, sigma = generate(a, model, n, d, seed)
    cmd = [a.dpem, "fit", "gradient-em", "--model", model, "--method", method, "--input", data,
           "--iterations", str(iters), "--sigma", str(sigma), "--seed", str(1000 + seed),
           "--json", "--trajectory"]
    if method != "nonprivate":
        cmd += ["--epsilon", str(eps), "--delta", str(1.0 / n)]
    if method in ("dp", "dp-em"):
        cmd += ["--tau", repr(tau_of(model, beta, sigma, d))]
    if method == "clipped":
        cmd += ["--clip", str(clip)]
    if scale is not None:  # s = scale * sqrt(tau): public, like tau.
        cmd += ["--robust-scale", repr(scale * np.sqrt(tau_of(model, beta, sigma, d)))]
    out = json.loads(run(cmd))
    return error(model, out["trajectory"], beta)


def mean_curve(a, **kw):
    return np.mean([fit(a, seed=s, **kw) for s in range(a.repeats)], axis=0)


def fig_iterations(a, results):
    """Figures 2-4: error vs t for epsilon in {0.2, 0.5, 1}; Figure 1: clipped vs C."""
    for model in MODELS:
        curves = {"nonprivate": mean_curve(a, model=model, method="nonprivate", n=N0, d=D0)}
        for eps in (0.2, 0.5, 1.0):
            curves[f"dp eps={eps}"] = mean_curve(a, model=model, method="dp", n=N0, d=D0, eps=eps)
            curves[f"dp s=2sqrt(tau) eps={eps}"] = mean_curve(a, model=model, method="dp", n=N0,
                                                               d=D0, eps=eps, scale=2.0)
            curves[f"clipped C=1 eps={eps}"] = mean_curve(a, model=model, method="clipped", n=N0,
                                                         d=D0, eps=eps)
        results[f"iterations_{model}"] = {k: v.tolist() for k, v in curves.items()}
        clip = {f"C={c}": mean_curve(a, model=model, method="clipped", n=N0, d=D0, clip=c)
                for c in (0.1, 0.5, 1, 5, 10)}
        clip["dp"] = curves["dp eps=0.5"]
        clip["nonprivate"] = curves["nonprivate"]
        results[f"clip_{model}"] = {k: v.tolist() for k, v in clip.items()}


def fig_sweeps(a, results):
    """Figures 6-8 (and 9 for gmm with dp-em): final error at T = 22 vs n, d, epsilon."""
    sweeps = {"n": [2000, 5000, 10000, 20000], "d": [2, 5, 10, 20],
              "eps": [0.2, 0.5, 1.0]}
    for model in MODELS:
        methods = ["nonprivate", "dp", "clipped"] + (["dp-em"] if model == "gmm" else [])
        for name, values in sweeps.items():
            table = {}
            for m in methods:
                row = []
                for v in values:
                    kw = dict(model=model, method=m, n=N0, d=D0, eps=EPS0)
                    kw[{"n": "n", "d": "d", "eps": "eps"}[name]] = v
                    row.append(float(mean_curve(a, **kw)[-1]))
                table[m] = row
            results[f"sweep_{name}_{model}"] = {"values": values, "errors": table}


def plot(a, results):
    os.makedirs(a.figures, exist_ok=True)
    for kind, title in (("iterations", "error vs iteration t (n=%d, d=%d)" % (N0, D0)),
                        ("clip", "clipped baseline vs C (eps=%g)" % EPS0)):
        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
        for ax, model in zip(axes, MODELS):
            for label, curve in results[f"{kind}_{model}"].items():
                ax.semilogy(range(len(curve)), curve, label=label,
                            ls="--" if "clipped" in label or label.startswith("C=") else "-")
            ax.set_title(f"{model}: {title}")
            ax.set_xlabel("iteration t")
            ax.set_ylabel("||beta - beta*||")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(a.figures, f"gradient_em_{kind}.png"), dpi=90)
        plt.close(fig)
    if "sweep_n_gmm" not in results:
        return
    fig, axes = plt.subplots(3, 3, figsize=(15, 12))
    for i, model in enumerate(MODELS):
        for j, name in enumerate(("n", "d", "eps")):
            r = results[f"sweep_{name}_{model}"]
            ax = axes[i][j]
            for m, errs in r["errors"].items():
                ax.loglog(r["values"], errs, marker="o", label=m)
            ax.set_title(f"{model}: error at T={T} vs {name}")
            ax.set_xlabel(name)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(a.figures, "gradient_em_sweeps.png"), dpi=90)
    plt.close(fig)


def main():
    p = options.dpem_parser(description=__doc__)
    p.add_argument("--out", default="out/gradient_em")
    p.add_argument("--figures", default="docs/figures")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--only", choices=["iterations", "sweeps", "plot"], default=None)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "results.json")
    results = json.load(open(path)) if os.path.exists(path) else {}
    if a.only in (None, "iterations"):
        fig_iterations(a, results)
        json.dump(results, open(path, "w"))
    if a.only in (None, "sweeps"):
        fig_sweeps(a, results)
        json.dump(results, open(path, "w"))
    plot(a, results)
    print("wrote", path)


if __name__ == "__main__":
    main()
