#!/usr/bin/python3
"""Private factor analysis: the eigenvalue repairs compared by the held-out
log-likelihood (docs/factor_analysis.md, "The eigenvalue repair").

For each data set, epsilon and repair (`dpem fit fa --eigenvalue-repair
shift-back|shift|floor`), unseeded private fits (delta = 1e-4, L factors,
J = 100) on a training split, each scored (`dpem score`) on the held-out
split; prints the median over the repetitions and the fit's median wall time,
and the median of plain EM's fits (`--epsilon inf`) on the same splits.
All repairs are post-processing of the same kind of release: the choice
never touches the guarantee.

Data sets (--sets):
  olivetti     the 400 x 4096 faces (pixel / 242, public row-norm bound 64,
               origin as centre), random 300 / 100 splits, L = 10: N < d.
  planted-wide a planted factor model, d = 500, L = 5, N = 300 training and
               1,000 held-out records, public bound from the generator: N < d.
  planted-tall the same model with d = 50 and N = 20,000: N >> d, where the
               release is positive definite at large epsilon and the repairs
               coincide.

With --noise-floors K1 K2 ..., the columns are shift-back with
`--variance-noise-floor` K1, K2, ... instead (the floor of Psi in standard
deviations of the release's noise on a diagonal entry).

Usage (from the repository root, after building build/dpem):
    /usr/bin/python3 scripts/fa_repair_experiment.py --repetitions 5
    /usr/bin/python3 scripts/fa_repair_experiment.py --noise-floors 0.25 0.5 1 2 4 \
        --epsilons 0.1 0.3 1 --repetitions 3
    /usr/bin/python3 scripts/fa_repair_experiment.py --sets olivetti \\
        --epsilons 0.3 1 10 1000 --repetitions 3
"""
import os
import subprocess
import tempfile
import time

import numpy as np

from lib import olivetti, options
from lib.scoring import held_out_log_likelihood

REPAIRS = ["shift-back", "shift", "floor"]


def planted(rng, d, factors, n_train, n_test):
    """Records of x = W z + e (z ~ N(0, I), e ~ N(0, diag(psi))), the loadings
    of norm about 1 per coordinate and psi in [0.05, 0.5]; and a public bound
    on the norm from the generating process (a 5-sigma radius)."""
    w = rng.normal(0.0, 1.0 / np.sqrt(factors), (d, factors))
    psi = rng.uniform(0.05, 0.5, d)
    def draw(n):
        return rng.normal(size=(n, factors)) @ w.T + rng.normal(size=(n, d)) * np.sqrt(psi)
    radius = np.sqrt(np.sum(w * w) + psi.sum()) + 5.0 * np.sqrt(np.max(np.sum(w * w, 1) + psi))
    return draw(n_train), draw(n_test), float(radius)


def splits(name, rng, workdir):
    """(train.npy, test.npy, R, L) of one repetition of data set `name`."""
    if name == "olivetti":
        faces = np.loadtxt(olivetti.DATA, delimiter=",") / 242.0
        order = rng.permutation(len(faces))
        train, test, radius, factors = faces[order[:300]], faces[order[300:]], 64.0, 10
    elif name == "planted-wide":
        train, test, radius = planted(rng, 500, 5, 300, 1000)
        factors = 5
    else:
        train, test, radius = planted(rng, 50, 5, 20000, 1000)
        factors = 5
    paths = [os.path.join(workdir, f"{name}-{part}.npy") for part in ("train", "test")]
    np.save(paths[0], train)
    np.save(paths[1], test)
    return paths[0], paths[1], radius, factors


def fit_and_score(args, train, test, radius, factors, epsilon, repair, workdir):
    """A fit with `repair` ("shift-back:K" sets --variance-noise-floor K; None:
    plain EM): its held-out score and seconds."""
    model = os.path.join(workdir, "model.json")
    cmd = [args.dpem, "fit", "fa", "--input", train, "--output", model, "--factors",
           str(factors), "--epsilon", str(epsilon), "--data-norm", str(radius), "--quiet"]
    if repair is not None:  # A private fit.
        name, _, floor = repair.partition(":")
        cmd += ["--delta", "1e-4", "--eigenvalue-repair", name]
        cmd += ["--variance-noise-floor", floor] if floor else []
    start = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True)
    seconds = time.monotonic() - start
    return held_out_log_likelihood(args.dpem, model, test), seconds


def main():
    parser = options.dpem_parser()
    parser.add_argument("--sets", nargs="+", default=["olivetti", "planted-wide", "planted-tall"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.3, 1.0, 10.0, 1000.0])
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261124, help="of the splits and data")
    parser.add_argument("--noise-floors", nargs="+", type=float, default=[],
                        help="instead of the three repairs, shift-back with each of these "
                             "--variance-noise-floor values")
    args = parser.parse_args()
    repairs = [f"shift-back:{k:g}" for k in args.noise_floors] or REPAIRS
    rng = np.random.default_rng(args.seed)
    print(f"Held-out mean log-likelihood (median of {args.repetitions} unseeded fits; "
          f"median seconds per fit)\n")
    print("| data | plain EM | epsilon | " + " | ".join(repairs) + " |")
    print("|---|---|---|" + "---|" * len(repairs))
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.sets:
            results, plain = {}, []
            for _ in range(args.repetitions):
                train, test, radius, factors = splits(name, rng, workdir)
                plain.append(fit_and_score(args, train, test, radius, factors, "inf", None,
                                           workdir)[0])
                for eps in args.epsilons:
                    for repair in repairs:
                        results.setdefault((eps, repair), []).append(
                            fit_and_score(args, train, test, radius, factors, eps, repair,
                                          workdir))
            for eps in args.epsilons:
                cells = []
                for repair in repairs:
                    runs = np.array(results[(eps, repair)])
                    cells.append(f"{np.median(runs[:, 0]):.1f} ({np.median(runs[:, 1]):.2f} s)")
                print(f"| {name} | {np.median(plain):.1f} | {eps:g} | " + " | ".join(cells) + " |",
                      flush=True)


if __name__ == "__main__":
    main()
