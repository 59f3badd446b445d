#!/usr/bin/env python3
"""The noise floor of dpem's private GMM release: an oracle that knows the labels.

Usage: /usr/bin/python3 scripts/private_noise_floor_experiment.py [--dpem PATH]
       [--draws D] [--epsilon E] [--scenarios 3x2 8x5 ...] [--seed S] [--spherical-first]

Draws the mixtures of scripts/private_start_experiment.py (same seed, same
order, so the same data and the same reference: scikit-learn's best of 10
k-means++ starts) and asks how close to that reference ANY fit could come
with dpem's release at epsilon = E, delta = 1e-5, if its start, its
responsibilities and its frames were perfect. The oracle knows each training
record's true component and the true means and covariances, and makes one
joint release of the framed statistics exactly as one dpem iteration does
(src/models/gmm: the block split DefaultJointNoiseSplit, the adaptive frame
radius, the clip correction, the eigenvalue floor of the framed covariance at
sqrt(d) times the second moment's noise over the released count), with the
noise multiplier that dpem's own calibration gives, read from the ledger of a
real fit:

- "one release": one iteration at the whole budget and no private start
  (`--init random --iterations 1`); no iterative private fit can have less
  noise in its last release.
- "last iteration": the multiplier of the last iteration of the default fit
  (the private start and J = 3; with --spherical-first, in d >= 5, the
  spherical first iteration and its budget schedule): the noise of dpem's
  last release as it is.

Continuous Gaussian noise stands in for dpem's discrete noise (the same
variance to a factor below 1 + 1e-5). Prints, per mixture and budget, the
number of D noise draws within 0.05 nats per record of the reference and the
median gap, beside the gap of the noiseless oracle (the labelled sample's own
Gaussians). Needs numpy, scipy and scikit-learn (/usr/bin/python3).
"""
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from scipy import special, stats
from sklearn.mixture import GaussianMixture

from gmm_init_experiment import N_TEST, N_TRAIN, TOLERANCE, draw_mixture, sample_with_labels
from lib.options import dpem_parser
from private_start_experiment import DEFAULT_SCENARIOS, public_radius

GRID_POINTS, GRID_HALF_WIDTH = 81, 2.0  # DefaultJointNoiseSplit's grid.
MAX_CLIP_CORRECTION = 4.0               # kMaxClipCorrection.


def joint_sensitivity(s_n, s_1, s_2):
    """JointSensitivity for full covariances (docs/privacy.md, Theorem 1)."""
    a, b = s_1 * s_1, s_2 * s_2
    different = 2 / s_n ** 2 + 2 / a + 2 / b
    same = 2 / a + 2 / b + b / (2 * a * a) if b <= 2 * a else 4 / a
    return np.sqrt(max(different, same))


def default_split(d, k):
    """DefaultJointNoiseSplit(kFull, d, k): (s_n, s_1, s_2) at sensitivity 1."""
    ratios = 10.0 ** np.linspace(-GRID_HALF_WIDTH, GRID_HALF_WIDTH, GRID_POINTS)
    best, best_loss = None, np.inf
    for r_n in ratios:
        for r_2 in ratios:
            scale = joint_sensitivity(r_n, 1.0, r_2)
            s = (r_n * scale, scale, r_2 * scale)
            loss = (1 + 1 / k) * s[0] ** 2 + d * s[1] ** 2 + d * d * s[2] ** 2
            if loss < best_loss:
                best, best_loss = s, loss
    return best


def frame_radius(n_k, second_noise, d):
    """AdaptiveFrameRadii for one component of n_k records."""
    lo, hi = np.sqrt(d) + 2 / d, np.sqrt(d) + 2
    if not second_noise > 0:
        return hi
    return np.sqrt(np.clip(np.sqrt(max(n_k, 1.0)) / second_noise, lo * lo, hi * hi))


def clip_correction(observed, rho, d):
    """FrameClipCorrection: (mean factor, second-moment factor)."""
    r2 = rho * rho
    if not observed > 0 or observed < 1e-8 * r2:
        return 1.0, 1.0
    if observed >= r2:
        return MAX_CLIP_CORRECTION, MAX_CLIP_CORRECTION

    def clipped_square(c):  # E[min(c X_d, rho^2)]
        t = r2 / c
        return c * d * stats.chi2.cdf(t, d + 2) + r2 * stats.chi2.sf(t, d)

    lo, hi = 1e-8 * r2 / d, r2 / d
    while clipped_square(hi) < observed:
        hi *= 2
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if clipped_square(mid) < observed else (lo, mid)
    c = 0.5 * (lo + hi)
    t = r2 / c
    root_moment = np.sqrt(2) * np.exp(special.gammaln((d + 1) / 2) - special.gammaln(d / 2))
    clipped_norm = c * d * stats.chi2.cdf(t, d + 2) + rho * np.sqrt(c) * root_moment * \
        stats.chi2.sf(t, d + 1)
    second = np.clip(c * d / observed, 1.0, MAX_CLIP_CORRECTION)
    mean = np.clip(c * d / clipped_norm, 1.0, MAX_CLIP_CORRECTION)
    return mean, second


def oracle_release(x, labels, mixture, multiplier, split, n, rng):
    """One joint release of the framed statistics with the true labels and
    frames (multiplier 0: no noise). Returns (weights, means, covariances)."""
    weights, means, covariances = mixture
    k, d = means.shape
    s_n, s_1, s_2 = (s * multiplier for s in split)
    counts = np.array([np.sum(labels == c) for c in range(k)], float)
    noisy_counts = counts + s_n * rng.standard_normal(k)
    noisy_counts = np.maximum(noisy_counts, 1.0)
    out_means, out_covs = [], []
    for c in range(k):
        chol = np.linalg.cholesky(covariances[c])
        rho = frame_radius(weights[c] * n, s_2, d)
        z = np.linalg.solve(chol, (x[labels == c] - means[c]).T).T
        u = z * np.minimum(1.0, rho / np.maximum(np.linalg.norm(z, axis=1), 1e-300))[:, None] / rho
        a = u.sum(0) + s_1 * rng.standard_normal(d)
        noise = s_2 * rng.standard_normal((d, d)) / np.sqrt(2)
        b = u.T @ u + np.triu(noise, 1) + np.triu(noise, 1).T + np.diag(
            s_2 * rng.standard_normal(d))
        mean_f, second_f = clip_correction(rho * rho * np.trace(b) / noisy_counts[c], rho, d)
        a, b = a * mean_f, b * second_f
        m = a / noisy_counts[c]
        cov = b / noisy_counts[c] - np.outer(m, m)
        floor = np.sqrt(d) * s_2 / noisy_counts[c]
        vals, vecs = np.linalg.eigh(cov)
        cov = (vecs * np.maximum(vals, max(floor, 1e-12))) @ vecs.T
        scale = rho * chol
        out_means.append(means[c] + scale @ m)
        out_covs.append(scale @ cov @ scale.T)
    return noisy_counts / noisy_counts.sum(), np.array(out_means), out_covs


def mean_log_likelihood(params, x):
    weights, means, covariances = params
    logs = np.column_stack([
        np.log(w) + stats.multivariate_normal(m, c, allow_singular=True).logpdf(x)
        for w, m, c in zip(weights, means, covariances)])
    return float(np.mean(special.logsumexp(logs, axis=1)))


def calibrated_multiplier(dpem, train, radius, k, epsilon, extra, workdir):
    """The noise multiplier of the last release of a dpem fit with flags `extra`."""
    model = os.path.join(workdir, "calibration.json")
    subprocess.run([dpem, "fit", "gmm", "--input", train, "--output", model, "--components",
                    str(k), "--epsilon", str(epsilon), "--delta", "1e-5", "--data-norm",
                    str(radius), "--quiet", "--threads", "1"] + extra,
                   check=True, capture_output=True)
    with open(model) as f:
        last = json.load(f)["privacy"]["releases"][-1]  # The last iteration's release.
    return last["noise_scale"] / last["sensitivity"]


def main():
    parser = dpem_parser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--scenarios", nargs="+", default=DEFAULT_SCENARIOS)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--spherical-first", action="store_true",
                        help="the default fit with --spherical-first-iteration on")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    noise_rng = np.random.default_rng()
    start = time.time()
    print(f"Oracle releases at epsilon = {args.epsilon}, delta = 1e-5 ({args.draws} noise "
          f"draws): draws within {TOLERANCE} nats/record of scikit-learn's best of 10 starts "
          "(held-out), and the median gap in nats/record.\n")
    print("| K | d | smallest component | noiseless oracle | one release (multiplier) | "
          "last iteration of the default (multiplier) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as workdir:
        for scenario in args.scenarios:
            k, d = (int(v) for v in scenario.split("x"))
            mixture = draw_mixture(rng, k, d)
            x, labels = sample_with_labels(rng, mixture, N_TRAIN)
            x_test, _ = sample_with_labels(rng, mixture, N_TEST)
            ref = GaussianMixture(k, n_init=10, max_iter=500, tol=1e-6,
                                  random_state=int(rng.integers(2**31))).fit(x).score(x_test)
            radius = public_radius(mixture)
            train = os.path.join(workdir, "train.npy")
            np.save(train, x)
            # dpem's split is for records in the unit ball; the oracle's frames
            # are scale-free, so only the multiplier and the split matter.
            split = default_split(d, k)
            exact = ref - mean_log_likelihood(
                oracle_release(x, labels, mixture, 0.0, split, N_TRAIN, noise_rng), x_test)
            cells = []
            default = ["--spherical-first-iteration", "on"] if args.spherical_first else []
            for extra in (["--init", "random", "--iterations", "1"], default):
                multiplier = calibrated_multiplier(args.dpem, train, radius, k, args.epsilon,
                                                   extra, workdir)
                gaps = np.array([ref - mean_log_likelihood(
                    oracle_release(x, labels, mixture, multiplier, split, N_TRAIN, noise_rng),
                    x_test) for _ in range(args.draws)])
                cells.append(f"{int(np.sum(gaps <= TOLERANCE))}/{len(gaps)} "
                             f"({np.median(gaps):.2f}; {multiplier:.2f})")
            print(f"| {k} | {d} | {int(np.min(np.bincount(labels)))} | {exact:.3f} | "
                  + " | ".join(cells) + " |", flush=True)
    print(f"\n({time.time() - start:.0f} s; mixture seed {args.seed})")


if __name__ == "__main__":
    main()
