#!/usr/bin/env python3
"""How often a private Gaussian-mixture fit reaches the optimum, by start.

Usage: /usr/bin/python3 scripts/private_start_experiment.py [--dpem PATH]
       [--fits F] [--iterations J ...  (0: dpem's default J)] [--epsilon E] [--inits private random]
       [--frames default no-cell-frames no-averaging no-adaptive diagonal-equal full-first
                 spherical-first spherical-equal wide sqrtd sqrtd-raw] [--scenarios 3x2 8x5 ...] [--seed S] [--workers W]

Draws well-separated Gaussian mixtures as scripts/gmm_init_experiment.py does
(K = 3 to 10 components with unequal weights in d = 2 to 10 dimensions, full
covariances, means at least 8 standard deviations apart), N = 20,000 training
and 20,000 held-out test records each. The public domain is centred at the
origin with radius R = max_k ||mu_k|| + 3 sqrt(d) max_k sqrt(lambda_max(Sigma_k))
(a bound from the generating process, not from the sample). On each mixture,
F private fits (epsilon, delta = 1e-5, full covariances, joint release; NO
seed: each fit draws its noise from the OS) per start, per J and per frame
rule (--frames: `default`, dpem's adaptive radius with the clip correction
and, in d >= 5, the diagonal first iteration and, since 2026-11-24, the
cell frames in the private start's fine round; `no-cell-frames`, the
default without them (`--start-cell-frames off`); `no-averaging`, the
default returning its last iterate (`--iterate-averaging off`; the average
of the last iterates applies at J >= 4 when the noise is large for the
data); `no-adaptive`, the default with `--adaptive-iterations off` (J = 3
where the default J runs the adaptive schedule); `full-first`, the same with
the first iteration releasing full covariances (the default before the
diagonal first iteration);
`spherical-first`, the same with the opt-in spherical first iteration and
its budget schedule (`--spherical-first-iteration on`, d >= 5 only);
`spherical-equal`, that with the budget spread equally over the
iterations; `wide`, the fixed radius sqrt(d) + 2 without the correction,
the default before 2026-11-24's frame change; `sqrtd` and `sqrtd-raw`, the
fixed radius sqrt(d) with and without the correction; these three with the
full first iteration). Reference:
scikit-learn's best of 10 k-means++ starts (n_init=10, max_iter=500). Prints,
per mixture, the fraction of fits whose held-out mean log-likelihood is
within 0.05 nats per record of the reference's, and the median gap, as a
Markdown table; a default-J column (--iterations 0) also says which J its
fits ran ("[J = 10]"). Needs numpy and scikit-learn (/usr/bin/python3).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.mixture import GaussianMixture

from gmm_init_experiment import N_TEST, N_TRAIN, TOLERANCE, draw_mixture, sample
from lib.scoring import held_out_log_likelihood

DEFAULT_SCENARIOS = ["3x2", "5x3", "8x5", "6x8", "10x4", "10x10"]  # K x d
DEFAULT_JS = {}  # (training file, init, flags) -> the J that the default-J fits ran.


def public_radius(mixture):
    _, means, covariances = mixture
    d = means.shape[1]
    spread = max(np.sqrt(np.linalg.eigvalsh(c).max()) for c in covariances)
    return float(np.linalg.norm(means, axis=1).max() + 3.0 * np.sqrt(d) * spread)


FRAME_RULES = {  # --frames: (fixed radius as a function of d or None, clip correction,
    #                spherical first iteration[, other flags])
    "default": (None, "on", "off"),
    "no-cell-frames": (None, "on", "off", ["--start-cell-frames", "off"]),
    "no-averaging": (None, "on", "off", ["--iterate-averaging", "off"]),
    "no-adaptive": (None, "on", "off", ["--adaptive-iterations", "off"]),
    "diagonal-equal": (None, "on", "off", ["--budget-schedule", "off"]),
    "full-first": (None, "on", "off", ["--diagonal-first-iteration", "off"]),
    "spherical-first": (None, "on", "on"),
    "spherical-equal": (None, "on", "on", ["--budget-schedule", "off"]),
    "wide": (lambda d: np.sqrt(d) + 2.0, "off", "off", ["--diagonal-first-iteration", "off"]),
    "sqrtd": (np.sqrt, "on", "off", ["--diagonal-first-iteration", "off"]),
    "sqrtd-raw": (np.sqrt, "off", "off", ["--diagonal-first-iteration", "off"]),
}

FRAME_LABELS = {"default": "", "no-cell-frames": ", no start cell frames",
                "no-averaging": ", last iterate",
                "no-adaptive": ", adaptive J off",
                "diagonal-equal": ", diagonal first, equal budget",
                "full-first": ", full first iteration",
                "spherical-first": ", spherical first iteration",
                "spherical-equal": ", spherical first, equal budget"}  # Column titles.


def frame_flags(frames, d):
    """dpem's flags for a frame rule of --frames, in d dimensions."""
    radius, correction, spherical, *extra = FRAME_RULES[frames]
    flags = ["--frame-clip-correction", correction, "--spherical-first-iteration", spherical]
    flags += extra[0] if extra else []
    return flags if radius is None else flags + ["--frame-radius", str(radius(d))]


def private_fit(args, train, test, k, j, init, flags, radius, workdir, tag):
    """One private fit with dpem's extra `flags`; its held-out mean log-likelihood."""
    model = os.path.join(workdir, f"model-{tag}.json")
    cmd = [args.dpem, "fit", "gmm", "--input", train, "--output", model, "--components",
           str(k), "--epsilon", str(args.epsilon), "--delta", "1e-5",
           "--data-norm", str(radius), "--quiet", "--threads", "1", "--init", init] + flags
    if j > 0:  # 0: dpem's default J.
        cmd += ["--iterations", str(j)]
    subprocess.run(cmd, check=True, capture_output=True)
    if j == 0:  # Which J the default ran (docs/gmm.md, "Choosing J").
        with open(model) as f:
            DEFAULT_JS.setdefault((train, init, tuple(flags)), set()).add(
                json.load(f)["iterations"])
    return held_out_log_likelihood(args.dpem, model, test)


def run_scenario(args, k, d, rng, workdir, pool):
    mixture = draw_mixture(rng, k, d)
    x, x_test = sample(rng, mixture, N_TRAIN), sample(rng, mixture, N_TEST)
    train = os.path.join(workdir, f"train-{k}-{d}.npy")
    test = os.path.join(workdir, f"test-{k}-{d}.npy")
    np.save(train, x)
    np.save(test, x_test)
    ref = GaussianMixture(k, n_init=10, max_iter=500, tol=1e-6,
                          random_state=int(rng.integers(2**31))).fit(x).score(x_test)
    radius = public_radius(mixture)
    jobs = {}
    for init, j, frames in columns(args):
        jobs[(init, j, frames)] = [
            pool.submit(private_fit, args, train, test, k, j, init, frame_flags(frames, d),
                        radius, workdir, f"{k}-{d}-{init}-{j}-{frames}-{f}")
            for f in range(args.fits)]
    runs = {key: np.array([f.result() for f in futures]) for key, futures in jobs.items()}
    return ref, radius, runs


def ran_j(train, init, j, flags):
    """For a default-J column: the J its fits ran, e.g. " [J = 10]"."""
    if j > 0:
        return ""
    ran = DEFAULT_JS.get((train, init, tuple(flags)), ())
    return " [J = " + "/".join(str(x) for x in sorted(ran)) + "]"


def columns(args):
    return [(init, j, frames) for init in args.inits for j in args.iterations
            for frames in args.frames]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dpem", default="build/dpem")
    parser.add_argument("--fits", type=int, default=20)
    parser.add_argument("--iterations", type=int, nargs="+", default=[10])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--inits", nargs="+", default=["private", "random"])
    parser.add_argument("--frames", nargs="+", default=["default"], choices=list(FRAME_RULES))
    parser.add_argument("--scenarios", nargs="+", default=DEFAULT_SCENARIOS)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.time()
    print(f"Private fits at epsilon = {args.epsilon}, delta = 1e-5, {args.fits} unseeded fits "
          f"each: fits within {TOLERANCE} nats/record of scikit-learn's best of 10 starts "
          f"(held-out), and the median gap in nats/record.\n")
    header = [f"{init}, " + (f"J = {j}" if j > 0 else "default J") + FRAME_LABELS.get(frames, f", {frames} frames")
              for init, j, frames in columns(args)]
    print("| K | d | R | reference | " + " | ".join(header) + " |")
    print("|---|---|---|---|" + "---|" * len(header))
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        for scenario in args.scenarios:
            k, d = (int(v) for v in scenario.split("x"))
            ref, radius, runs = run_scenario(args, k, d, rng, workdir, pool)
            cells = [f"{int(np.sum(v >= ref - TOLERANCE))}/{len(v)} ({np.median(ref - v):.3f})"
                     + ran_j(os.path.join(workdir, f"train-{k}-{d}.npy"), init, j,
                             frame_flags(frames, d))
                     for (init, j, frames), v in runs.items()]
            print(f"| {k} | {d} | {radius:.1f} | {ref:.3f} | " + " | ".join(cells) + " |",
                  flush=True)
    print(f"\n({time.time() - start:.0f} s; mixture seed {args.seed})")


if __name__ == "__main__":
    main()
