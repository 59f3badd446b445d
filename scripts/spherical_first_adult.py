#!/usr/bin/env python3
"""The spherical first iteration on real data in d >= 5: UCI Adult.

Usage: /usr/bin/python3 scripts/spherical_first_adult.py [--dpem PATH]
       [--adult DIR] [--repeats R] [--epsilons E ...] [--components K] [--seed S]
       [--js J ...] [--adaptive]

The six numeric columns of adult.data (age, fnlwgt, education-num,
capital-gain, capital-loss, hours-per-week; 32,561 rows), each divided by a
round public bound of its own (100 years, 1.5e6, 16 education levels, 1e5
(the file caps capital gain at 99,999), 5,000, 100 hours a week), so that
every record lies in the ball of radius R = sqrt(6) about the origin. For each repeat, a new
random 90/10 train/test split; for each epsilon (delta = 1e-5), K full
components, the default J: the default fit (the diagonal first
iteration and its budget schedule, the private start's cell frames), that
without the cell frames (`--start-cell-frames off`), that with
`--budget-schedule off`, the
full first iteration (`--diagonal-first-iteration off`),
the opt-in spherical first iteration with its budget schedule
(`--spherical-first-iteration on`), and that with `--budget-schedule off`,
unseeded; with --js, the default fit and the default fit at each J
instead (docs/gmm.md, "Choosing J"); with --adaptive, the default fit and
the same with `--adaptive-iterations off` (docs/gmm.md, "Adaptive J"). Prints the held-out mean
log-likelihood per record, median [25%, 75%], and the medians of the paired
differences from the default. Needs numpy
(/usr/bin/python3).
"""
import concurrent.futures
import os
import subprocess
import tempfile

import numpy as np

from lib.options import dpem_parser
from lib.scoring import held_out_log_likelihood

COLUMNS = (0, 2, 4, 10, 11, 12)
SCALES = np.array([100.0, 1.5e6, 16.0, 1e5, 5000.0, 100.0])
VARIANTS = {
    "default": [],
    "no start cell frames": ["--start-cell-frames", "off"],
    "diagonal first, equal budget": ["--budget-schedule", "off"],
    "full first": ["--diagonal-first-iteration", "off"],
    "spherical first": ["--spherical-first-iteration", "on"],
    "spherical first, equal budget": ["--spherical-first-iteration", "on",
                                      "--budget-schedule", "off"],
}


def load(adult_dir):
    rows = np.loadtxt(os.path.join(adult_dir, "adult.data"), delimiter=",", usecols=COLUMNS)
    return rows / SCALES


def fit_and_score(dpem, train, test, k, eps, flags, workdir, tag):
    model = os.path.join(workdir, f"m_{tag}.json")
    subprocess.run([dpem, "fit", "gmm", "--input", train, "--output", model, "--components",
                    str(k), "--epsilon", str(eps), "--delta", "1e-5", "--data-norm",
                    str(np.sqrt(len(COLUMNS))), "--quiet", "--threads", "1"] + flags,
                   check=True, capture_output=True)
    return held_out_log_likelihood(dpem, model, test)


def main():
    parser = dpem_parser(description=__doc__.split("\n")[0])
    parser.add_argument("--adult", default="../shared/data/adult")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 4.0])
    parser.add_argument("--components", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--js", type=int, nargs="+", default=[],
                        help="compare the default fit with the same at each J instead")
    parser.add_argument("--adaptive", action="store_true",
                        help="compare the default fit with --adaptive-iterations off instead")
    args = parser.parse_args()
    variants = VARIANTS
    if args.adaptive:
        variants = {"default": [], "adaptive J off": ["--adaptive-iterations", "off"]}
    if args.js:
        variants = {"default": []}
        variants.update({f"J = {j}": ["--iterations", str(j)] for j in args.js})
    x = load(args.adult)
    rng = np.random.default_rng(args.seed)
    results = {}
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        jobs = {}
        tags = iter(range(10**9))
        for rep in range(args.repeats):
            order = rng.permutation(len(x))
            cut = len(x) * 9 // 10
            train = os.path.join(workdir, f"train_{rep}.npy")
            test = os.path.join(workdir, f"test_{rep}.npy")
            np.save(train, x[order[:cut]])
            np.save(test, x[order[cut:]])
            for eps in args.epsilons:
                for name, flags in variants.items():
                    jobs.setdefault((eps, name), []).append(pool.submit(
                        fit_and_score, args.dpem, train, test, args.components, eps, flags,
                        workdir, str(next(tags))))
        results = {key: np.array([f.result() for f in v]) for key, v in jobs.items()}
    others = [name for name in variants if name != "default"]
    print(f"Adult, 6 numeric columns, K = {args.components} full, {args.repeats} splits: "
          "held-out log-likelihood per record, median [25%, 75%]\n")
    print("| epsilon | " + " | ".join(variants) + " | "
          + " | ".join(f"{name} - default (paired median)" for name in others) + " |")
    print("|---:|" + "---|" * (len(variants) + len(others)))
    for eps in args.epsilons:
        cells = []
        for name in variants:
            q = np.percentile(results[(eps, name)], [25, 50, 75])
            cells.append(f"{q[1]:.3f} [{q[0]:.3f}, {q[2]:.3f}]")
        for name in others:
            cells.append(f"{np.median(results[(eps, name)] - results[(eps, 'default')]):+.3f}")
        print(f"| {eps} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
