#!/usr/bin/python3
"""Times the same fit from Python (dpem.GaussianMixture.fit) and from the CLI
(dpem fit gmm) on the same 1e6 x 10 .npy file, interleaved, and prints each
run and the overhead of Python (docs/python.md, "Overhead").

Both fit a private 10-component full-covariance mixture with the same
options, seeded with the same seed so that the two model files can be
compared byte for byte (they must be equal: the same computation), on 2
threads. The CLI's time is the wall time of its whole process (reading the
memory-mapped file, the fit, writing the model file); Python's is the time of
the fit() call, on the array memory-mapped (np.load(mmap_mode="r")) and read
into memory (np.load), neither copied by dpem. On a shared machine, compare
the runs of one round (the median of the per-round ratios).

    PYTHONPATH=build/python /usr/bin/python3 scripts/bench_python_overhead.py \\
        [--cli build/dpem] [--rounds 5] [--threads 2]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

import dpem

N, D, K = 1_000_000, 10, 10
OPTIONS = {"epsilon": 1.0, "delta": 1e-5, "data_norm": 12.0, "max_iter": 10, "seed": 7}


def make_data(path):
    """N records of a K-component mixture in D dimensions, centres in a
    ball of radius 6, unit covariances."""
    rng = np.random.default_rng(1)
    centres = rng.uniform(-6 / np.sqrt(D), 6 / np.sqrt(D), size=(K, D))
    x = centres[rng.integers(0, K, size=N)] + rng.standard_normal((N, D))
    np.save(path, x)


def time_cli(cli, data, model, threads):
    o = OPTIONS
    command = [cli, "fit", "gmm", "--input", data, "--output", model, "--components", str(K),
               "--iterations", str(o["max_iter"]), "--epsilon", str(o["epsilon"]),
               "--delta", str(o["delta"]), "--data-norm", str(o["data_norm"]),
               "--seed", str(o["seed"]), "--threads", str(threads), "--quiet"]
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start


def time_python(x, model, threads):
    o = OPTIONS
    estimator = dpem.GaussianMixture(
        K, epsilon=o["epsilon"], delta=o["delta"], data_norm=o["data_norm"],
        max_iter=o["max_iter"], random_state=o["seed"], n_jobs=threads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpem.PrivacyLeakWarning)  # Seeded: expected.
        start = time.perf_counter()
        estimator.fit(x)
        elapsed = time.perf_counter() - start
    estimator.to_json(model)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default="build/dpem")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "x.npy")
        make_data(data)
        mapped = np.load(data, mmap_mode="r")
        loaded = np.load(data)
        times = {"cli": [], "python-mmap": [], "python-array": []}
        for r in range(args.rounds):
            times["cli"].append(time_cli(args.cli, data, os.path.join(tmp, "cli.json"),
                                         args.threads))
            times["python-mmap"].append(
                time_python(mapped, os.path.join(tmp, "mmap.json"), args.threads))
            times["python-array"].append(
                time_python(loaded, os.path.join(tmp, "array.json"), args.threads))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f} s" for k, v in times.items()),
                  flush=True)
        files = [open(os.path.join(tmp, f), "rb").read()
                 for f in ("cli.json", "mmap.json", "array.json")]
        print("model files identical:", files[0] == files[1] == files[2])
    # The machine may be shared: each round's three runs are close in time,
    # so the median of the per-round ratios is the most robust figure.
    cli_median, cli_min = statistics.median(times["cli"]), min(times["cli"])
    for name in ("python-mmap", "python-array"):
        ratios = [p / c for p, c in zip(times[name], times["cli"])]
        median, best = statistics.median(times[name]), min(times[name])
        print(f"{name}: median of per-round ratios {100 * (statistics.median(ratios) - 1):+.1f}%; "
              f"median {median:.3f} s against the CLI's {cli_median:.3f} s; "
              f"best {best:.3f} s against {cli_min:.3f} s ({100 * (best / cli_min - 1):+.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
