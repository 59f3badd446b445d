#!/usr/bin/env python3
"""Iterate averaging on real data: the average of the last iterates against the last one.

Usage: /usr/bin/python3 scripts/iterate_averaging_experiment.py [--dpem PATH]
       [--sets gowalla synthetic adult moons student lognormal] [--epsilons E ...] [--inits private random]
       [--js J ...] [--repeats R] [--adult DIR] [--option iterate-averaging|adaptive-iterations]

For each set, epsilon, start and J, fits each of R train/test splits twice
with the SAME seed (--seed 1000 + repeat), once with dpem's default
(`--iterate-averaging on`) and once with `--iterate-averaging off`. The
releases, and so every iterate, are the same in the two fits (averaging is
post-processing of released parameters); only the returned parameters
differ. Seeded fits are NOT private: the seed is what makes the comparison
exactly paired. Prints the median held-out log-likelihood per record of
each, and the median over splits of the paired difference (averaged minus
last iterate) with a 95% bootstrap interval, as a Markdown table, and which
fits averaged (the model file's privacy.averaged_iterations).

With --option adaptive-iterations the pair is `--adaptive-iterations on`
(dpem's default) against `off` instead, at the default J (use --js 0): the
adaptive schedule against J = 3 (docs/gmm.md, "Adaptive J"). With the same
seed the start and the first two iterations are the same in both (the same
releases at the same noise); the column of averaged iterates then says in
how many splits the adaptive fit had settled.

Sets (as the other experiment scripts use them):
  - gowalla: data/gowalla_nyc_checkins.csv, a random 90/10 split per repeat,
    K = 5 full, the README's domain (scripts/gmm_mechanisms_experiment.py);
  - synthetic: park2016 Sec. 6's three isotropic 2-D Gaussians, 10,000 train
    and 2,000 test points, K = 3 spherical, the unit ball;
  - adult: the six numeric UCI Adult columns of
    scripts/spherical_first_adult.py, scaled as there, an 80/20 split per
    repeat, K = 5 full, R = sqrt(6);
  - clusters that are not Gaussian, 20,000 train and 4,000 test records
    drawn per repeat, full covariances, a public domain fixed from the
    generating process: moons (scikit-learn's make_moons, noise 0.08,
    K = 6, centre (0.5, 0.25), R = 1.5); student (four centres in 3-D
    at the origin and 4 e_j, Student-t noise with 3 degrees of freedom
    scaled by 0.5, K = 4, centre (1, 1, 1), R = 8, so the tails are
    clipped); lognormal (three centres in 2-D plus exp(N(0, 0.25)) noise
    per coordinate, K = 3, centre (1.5, 1.5), R = 6).

Needs numpy and scikit-learn (/usr/bin/python3) and build/dpem.
"""
import concurrent.futures
import itertools
import json
import os
import subprocess
import tempfile

import numpy as np

from gmm_mechanisms_experiment import SETTINGS, data_for
from lib.options import dpem_parser
from lib.scoring import held_out_log_likelihood
import spherical_first_adult as adult_script

ADULT = dict(k=5, cov="full", domain=["--data-norm", str(np.sqrt(len(adult_script.COLUMNS)))])
NON_GAUSSIAN = {  # name: (K, centre, R)
    "moons": (6, "0.5,0.25", 1.5),
    "student": (4, "1,1,1", 8.0),
    "lognormal": (3, "1.5,1.5", 6.0),
}


def non_gaussian(name, rep, workdir):
    """A draw of one of the NON_GAUSSIAN sets: (train, test) paths, setting."""
    from sklearn.datasets import make_moons
    rng = np.random.default_rng(7000 + rep)
    n = 24000
    if name == "moons":
        x = make_moons(n, noise=0.08, random_state=7000 + rep)[0]
    elif name == "student":
        centres = np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0], [0, 0, 4]], dtype=float)
        x = centres[rng.integers(0, 4, n)] + 0.5 * rng.standard_t(3, (n, 3))
    else:
        centres = np.array([[0, 0], [3, 1], [1, 3]], dtype=float)
        x = centres[rng.integers(0, 3, n)] + np.exp(0.5 * rng.standard_normal((n, 2)))
    paths = [os.path.join(workdir, f"{name}_{rep}_{part}.npy") for part in ("train", "test")]
    np.save(paths[0], x[:20000])
    np.save(paths[1], x[20000:])
    k, centre, radius = NON_GAUSSIAN[name]
    return paths, dict(k=k, cov="full",
                       domain=["--data-norm", str(radius), "--data-center", centre])


def adult_split(rows, rep, workdir):
    rng = np.random.default_rng(99 + rep)
    order = rng.permutation(len(rows))
    cut = len(rows) * 4 // 5
    paths = [os.path.join(workdir, f"adult_{rep}_{part}.npy") for part in ("train", "test")]
    for path, part in zip(paths, (order[:cut], order[cut:])):
        np.save(path, np.ascontiguousarray(rows[part]))
    return paths


def fit(dpem, train, test, setting, eps, init, j, seed, option, on_off, workdir, tag):
    """One seeded fit; (held-out log-likelihood, averaged_iterations, settled)."""
    model = os.path.join(workdir, f"m_{tag}.json")
    cmd = [dpem, "fit", "gmm", "--input", train, "--output", model, "--components",
           str(setting["k"]), "--covariance", setting["cov"], "--quiet", "--threads", "1",
           "--epsilon", str(eps), "--delta", "1e-5", "--init", init, "--seed", str(seed),
           f"--{option}", on_off] + setting["domain"]
    if j > 0:
        cmd += ["--iterations", str(j)]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(model) as f:
        privacy = json.load(f)["privacy"]
    settled = privacy.get("adaptive_iterations", {}).get("settled")
    return held_out_log_likelihood(dpem, model, test), privacy["averaged_iterations"], settled


def run(args):
    workdir = tempfile.mkdtemp()
    rows = adult_script.load(args.adult) if "adult" in args.sets else None
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for name, rep in itertools.product(args.sets, range(args.repeats)):
            if name == "adult":
                (train, test), setting = adult_split(rows, rep, workdir), ADULT
            elif name in NON_GAUSSIAN:
                (train, test), setting = non_gaussian(name, rep, workdir)
            else:
                (train, test), setting = data_for(name, rep, workdir), SETTINGS[name]
            for eps, init, j, averaging in itertools.product(args.epsilons, args.inits, args.js,
                                                             ("on", "off")):
                key = (name, eps, init, j, averaging, rep)
                jobs[key] = pool.submit(fit, args.dpem, train, test, setting, eps, init, j,
                                        1000 + rep, args.option, averaging, workdir,
                                        "_".join(map(str, key)))
        return {key: job.result() for key, job in jobs.items()}


def main():
    parser = dpem_parser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["gowalla", "synthetic", "adult"])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--inits", nargs="+", default=["private"])
    parser.add_argument("--js", type=int, nargs="+", default=[10])
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--adult", default="../shared/data/adult")
    parser.add_argument("--option", default="iterate-averaging",
                        choices=["iterate-averaging", "adaptive-iterations"])
    args = parser.parse_args()
    results = run(args)
    rng = np.random.default_rng(0)
    adaptive = args.option == "adaptive-iterations"
    what = ("adaptive J - J = 3" if adaptive else "averaged - last iterate")
    print(f"Held-out log-likelihood per record, median over {args.repeats} splits; paired "
          f"difference {what}, median [95% bootstrap interval]\n")
    print("| set | epsilon | start | J | " + ("settled" if adaptive else "averaged iterates") +
          " | " + ("J = 3" if adaptive else "last iterate") + " | " +
          ("adaptive" if adaptive else "averaged") + " | difference | on better |")
    print("|---|---:|---|---:|---|---:|---:|---|---:|")
    for name, eps, init, j in itertools.product(args.sets, args.epsilons, args.inits, args.js):
        on = [results[(name, eps, init, j, "on", r)] for r in range(args.repeats)]
        off = np.array([results[(name, eps, init, j, "off", r)][0] for r in range(args.repeats)])
        diff = np.array([s for s, _, _ in on]) - off
        boots = [np.median(rng.choice(diff, len(diff))) for _ in range(2000)]
        counts = "/".join(str(m) for m in sorted({m for _, m, _ in on}))
        if adaptive:
            counts = f"{sum(bool(s) for _, _, s in on)}/{len(on)}"
        print(f"| {name} | {eps:g} | {init} | {j if j else 'default'} | {counts} | "
              f"{np.median(off):.3f} | {np.median([s for s, _, _ in on]):.3f} | "
              f"{np.median(diff):+.4f} [{np.percentile(boots, 2.5):+.4f}, "
              f"{np.percentile(boots, 97.5):+.4f}] | {np.mean(diff > 0) * 100:.0f}% |")


if __name__ == "__main__":
    main()
