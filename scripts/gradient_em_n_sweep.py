#!/usr/bin/python3
"""Final error of DP gradient EM against n (wang-dp-gradient-em), to show how
the DP / non-private error ratio behaves as n grows.

Usage (from the repository root, after building the CLI):
  /usr/bin/python3 scripts/gradient_em_n_sweep.py --dpem build/dpem --repeats 5

For each model, n and repeat r it runs `dpem generate` (data seed r) and then
`dpem fit gradient-em` (fit seed 1000 + r, --threads 1) with
  dp           Algorithm 2 with dpem's default scale s = sqrt(n tau eps~) / (2 beta_s),
               beta_s = sqrt(log(d / zeta)), zeta = 0.1 (dpem's repair of line 1)
  dp-printed-s Algorithm 2 with the s printed in line 1, sqrt(n tau eps~) / (2 log(1/delta)),
               passed as --robust-scale
  clipped      Algorithm 1, C = 1
  nonprivate   gradient EM
and records the final error ||beta^T - beta*||_2 (up to the sign of beta for
gmm and mrm) and, for the private methods, the per-coordinate noise standard
deviation the fit recorded. The data file is deleted after its fits.

Settings as in scripts/gradient_em_experiment.py (docs/gradient_em.md): SNR 3,
sigma = 1, d = 10, T = 22, step 1, epsilon = 0.5, delta = 1/n, random
initialisation of norm 1 (from the fit seed), rmc with 10% missing covariates,
tau from the paper's lemmas with constant 1 at the known truth. The table
reports medians over the repeats and the ratios of medians; the slope is the
least-squares slope of log(median error) against log(n).

--delta D fixes delta for every n instead (to separate n from log(1/delta)).
Writes docs/figures/<name>.{md,png,json} (--figures, --name; default name
gradient_em_n_sweep) and prints the runtime.
"""
import argparse
import json
import math
import os
import tempfile
import time

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lib import gradient_em, options
from lib.gradient_em import run, tau_of

T = 22
D = 10
EPS = 0.5
MISSING = 0.1
METHODS = ["nonprivate", "dp", "dp-printed-s", "clipped"]


def eps_tilde(eps, delta):
    l = math.log(1.0 / delta)
    return math.sqrt(l + eps) - math.sqrt(l)


def printed_scale(n, tau, eps, delta):
    """Algorithm 2, line 1, as printed: s = sqrt(n tau eps~) / (2 log(1/delta))."""
    return math.sqrt(n * tau * eps_tilde(eps, delta)) / (2.0 * math.log(1.0 / delta))


def final_error(model, beta_hat, beta):
    e = np.linalg.norm(beta_hat - beta)
    if model != "rmc":
        e = min(e, np.linalg.norm(beta_hat + beta))
    return float(e)


def one_dataset(a, work, model, n, rep):
    base = os.path.join(work, f"{model}_n{n}_r{rep}")
    gradient_em.generate(a.dpem, model, n, D, rep, base + ".npy", base + ".json", MISSING)
    beta, sigma = gradient_em.read_truth(base + ".json")
    tau = tau_of(model, beta, sigma, D)
    delta = 1.0 / n if a.delta is None else a.delta
    out = {}
    for m in a.methods:
        cmd = [a.dpem, "fit", "gradient-em", "--model", model, "--input", base + ".npy",
               "--iterations", str(T), "--sigma", str(sigma), "--seed", str(1000 + rep),
               "--threads", "1", "--json",
               "--method", "dp" if m.startswith("dp") else m]
        if m != "nonprivate":
            cmd += ["--epsilon", str(EPS), "--delta", repr(delta)]
        if m.startswith("dp"):
            cmd += ["--tau", repr(tau)]
        if m == "dp-printed-s":
            cmd += ["--robust-scale", repr(printed_scale(n, tau, EPS, delta))]
        if m == "clipped":
            cmd += ["--clip", "1"]
        j = json.loads(run(cmd))
        g = j.get("guarantee", {})
        out[m] = {"error": final_error(model, np.array(j["beta"]), beta),
                  "noise_stddev": g.get("noise_stddev"), "robust_scale": g.get("robust_scale")}
    os.remove(base + ".npy")
    return out


def summarise(raw, models, ns, methods):
    s = {}
    for model in models:
        s[model] = {}
        for m in methods:
            med = [float(np.median([r[m]["error"] for r in raw[model][str(n)]])) for n in ns]
            slope = float(np.polyfit(np.log(ns), np.log(med), 1)[0])
            noise = [raw[model][str(n)][0][m]["noise_stddev"] for n in ns]
            s[model][m] = {"median": med, "slope": slope, "noise_stddev": noise}
    return s


def table(s, models, ns, methods, cmd, runtime, repeats, dlabel):
    lines = [f"Command: `{cmd}` (runtime {runtime:.0f} s, {repeats} repeats per point; "
             "data seed r, fit seed 1000 + r, r = 0..%d)." % (repeats - 1), "",
             "Median final error ||beta^T - beta*|| (d = %d, T = %d, eps = %g, %s); "
             "ratio = median / median of nonprivate; slope = fitted exponent of n."
             % (D, T, EPS, dlabel),
             ""]
    head = "| model | method | " + " | ".join(f"n = {n:.0e}" for n in ns) + " | slope |"
    lines += [head, "|---|---|" + "---:|" * (len(ns) + 1)]
    for model in models:
        base = s[model]["nonprivate"]["median"]
        for m in methods:
            r = s[model][m]
            cells = []
            for i in range(len(ns)):
                c = f"{r['median'][i]:.3g}"
                if m != "nonprivate":
                    c += f" ({r['median'][i] / base[i]:.1f}x)"
                cells.append(c)
            lines.append(f"| {model} | {m} | " + " | ".join(cells) + f" | {r['slope']:.2f} |")
    lines += ["", "Per-coordinate noise standard deviation per iteration (repeat 0):", "",
              "| model | method | " + " | ".join(f"n = {n:.0e}" for n in ns) + " |",
              "|---|---|" + "---:|" * len(ns)]
    for model in models:
        for m in methods:
            if m in ("dp", "dp-printed-s", "clipped") and m in s[model]:
                lines.append(f"| {model} | {m} | " + " | ".join(
                    f"{v:.3g}" for v in s[model][m]["noise_stddev"]) + " |")
    return "\n".join(lines) + "\n"


def plot(s, models, ns, methods, path, dlabel):
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        for m in methods:
            ax.loglog(ns, s[model][m]["median"], marker="o",
                      label=f"{m} (slope {s[model][m]['slope']:.2f})",
                      ls="--" if m == "clipped" else "-")
        ref = s[model]["nonprivate"]["median"][0] * (np.array(ns) / ns[0]) ** -0.5
        ax.loglog(ns, ref, color="gray", ls=":", label="n^-1/2")
        ax.set_title(f"{model}: median error at T={T}, d={D}, eps={EPS}")
        ax.set_xlabel(f"n ({dlabel})")
        ax.set_ylabel("||beta^T - beta*||")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    p = options.dpem_parser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--models", default="gmm,mrm,rmc")
    p.add_argument("--ns", default="1000,10000,100000,1000000")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--delta", type=float, default=None,
                   help="fixed delta for every n (default: delta = 1/n, as the paper)")
    p.add_argument("--figures", default="docs/figures")
    p.add_argument("--name", default="gradient_em_n_sweep", help="output file stem")
    p.add_argument("--work", default=None, help="scratch folder for data (default: a temp dir)")
    a = p.parse_args()
    a.methods = a.methods.split(",")
    models = a.models.split(",")
    ns = [int(float(x)) for x in a.ns.split(",")]
    t0 = time.time()
    raw = {}
    with tempfile.TemporaryDirectory(dir=a.work) as work:
        for model in models:
            raw[model] = {}
            for n in ns:
                raw[model][str(n)] = [one_dataset(a, work, model, n, r) for r in range(a.repeats)]
                print(f"{model} n={n} done ({time.time() - t0:.0f} s)", flush=True)
    runtime = time.time() - t0
    s = summarise(raw, models, ns, a.methods)
    cmd = "/usr/bin/python3 scripts/gradient_em_n_sweep.py " + " ".join(
        [f"--dpem {a.dpem}", f"--repeats {a.repeats}"]
        + ([f"--models {a.models}"] if a.models != "gmm,mrm,rmc" else [])
        + ([f"--ns {a.ns}"] if a.ns != "1000,10000,100000,1000000" else [])
        + ([f"--methods {','.join(a.methods)}"] if a.methods != METHODS else [])
        + ([f"--delta {a.delta!r}"] if a.delta is not None else [])
        + ([f"--name {a.name}"] if a.name != "gradient_em_n_sweep" else []))
    dlabel = "delta = 1/n" if a.delta is None else f"delta = {a.delta:g}"
    os.makedirs(a.figures, exist_ok=True)
    md = table(s, models, ns, a.methods, cmd, runtime, a.repeats, dlabel)
    stem = os.path.join(a.figures, a.name)
    with open(stem + ".md", "w") as f:
        f.write(md)
    with open(stem + ".json", "w") as f:
        json.dump({"command": cmd, "runtime_s": runtime, "ns": ns, "delta": a.delta or "1/n",
                   "raw": raw, "summary": s}, f, indent=1)
    plot(s, models, ns, a.methods, stem + ".png", dlabel)
    print(md)
    print(f"runtime {runtime:.0f} s")


if __name__ == "__main__":
    main()
