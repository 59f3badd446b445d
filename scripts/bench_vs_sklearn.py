#!/usr/bin/python3
"""Times dpem and scikit-learn's GaussianMixture side by side, in one run, on
the same generated data, and prints per-iteration times, their ratio and
peak memory (docs/performance.md).

Per-iteration time: each library fits with J = 1 and J = 1 + I iterations
(plain EM: dpem --epsilon inf; scikit-learn tol=0, so every iteration runs),
and the difference is divided by I, which cancels loading, initialisation
and start-up. Peak memory: the maximum resident set size of the process,
from /usr/bin/time -v.

    /usr/bin/python3 scripts/bench_vs_sklearn.py [--iterations 20] [--cases ...]
    /usr/bin/python3 scripts/bench_vs_sklearn.py --memory-test   # N = 1e7 .npy
    /usr/bin/python3 scripts/bench_vs_sklearn.py --fa-olivetti   # + factor analysis

Gaussian mixtures: dpem's plain fit, its private default (component frames)
and the private fit with --component-frames off, each against scikit-learn's
GaussianMixture, and private / plain; k-means: dpem's private cdp-gauss and
plain Lloyd against scikit-learn's KMeans (Lloyd). Every figure of
docs/performance.md's tables comes from one run of this script.

Run it with nothing else loading the machine.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from lib import options

CASES = {
    "1e6x10,K10,full": (1_000_000, 10, 10, "full"),
    "1e5x100,K10,full": (100_000, 100, 10, "full"),
    "1e6x2,K5,spherical": (1_000_000, 2, 5, "spherical"),
    # Elongated clusters: each covariance a random rotation of eigenvalues
    # from 0.1 to 10 (make_data's `elongated`).
    "1e5x50,K8,full,elongated": (100_000, 50, 8, "full", "elongated"),
}

# k-means cases: dpem's private default (cdp-gauss) and plain Lloyd against
# scikit-learn's KMeans (Lloyd, one start, tol 0 so every iteration runs).
KMEANS_CASES = {
    "kmeans 1e6x10,K10": (1_000_000, 10, 10),
}
KMEANS_VARIANTS = {
    "plain": ["--epsilon", "inf"],
    "private": ["--epsilon", "1", "--delta", "1e-6", "--data-norm", "{norm}",
                "--method", "cdp-gauss"],
}

SKLEARN_KMEANS = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.cluster import KMeans
warnings.filterwarnings("ignore")
x = np.load(sys.argv[1])
k, iters = int(sys.argv[2]), int(sys.argv[3])
km = KMeans(n_clusters=k, algorithm="lloyd", n_init=1, max_iter=iters, tol=0.0,
            init="random", random_state=0)
t = time.perf_counter(); km.fit(x); t = time.perf_counter() - t
print(json.dumps({"seconds": t, "n_iter": int(km.n_iter_)}))
"""

SKLEARN_FIT = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.mixture import GaussianMixture
warnings.filterwarnings("ignore")
x = np.load(sys.argv[1])
k, cov, iters = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
gm = GaussianMixture(n_components=k, covariance_type=cov, max_iter=iters, tol=0.0,
                     n_init=1, init_params="random_from_data", reg_covar=1e-6,
                     random_state=0)
t = time.perf_counter(); gm.fit(x); t = time.perf_counter() - t
print(json.dumps({"seconds": t, "n_iter": int(gm.n_iter_)}))
"""


def timed(cmd):
    """Runs cmd under /usr/bin/time -v: (wall seconds, peak RSS bytes, stdout)."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return wall, rss_kb * 1024, p.stdout


def make_data(path, n, d, k, seed=0, shape="round"):
    """K well-separated Gaussian clusters, written as float64 .npy: centres
    with N(0, 16) coordinates and unit normal noise, or (`elongated`) centres
    with N(0, 64) coordinates and each cluster's covariance a random rotation
    of eigenvalues spread evenly in log scale from 0.1 to 10."""
    rng = np.random.default_rng(seed)
    if shape == "elongated":
        centres = rng.normal(scale=8.0, size=(k, d))
        factors = []
        for _ in range(k):
            q, _ = np.linalg.qr(rng.normal(size=(d, d)))
            factors.append(q * np.sqrt(np.logspace(-1, 1, d)))
    else:
        centres = rng.normal(scale=4.0, size=(k, d))
    labels = rng.integers(0, k, size=n)
    x = np.lib.format.open_memmap(path, mode="w+", dtype="<f8", shape=(n, d))
    step = 1_000_000
    for s in range(0, n, step):
        e = min(n, s + step)
        noise = rng.normal(size=(e - s, d))
        for j in range(k if shape == "elongated" else 0):
            rows = labels[s:e] == j
            noise[rows] = noise[rows] @ factors[j].T
        x[s:e] = centres[labels[s:e]] + noise
    x.flush()
    del x


# dpem's variants of each Gaussian-mixture case: the plain fit, the private
# default (component frames) and the private fit with --component-frames off.
# Private fits use a public bound that holds for make_data's clusters; the
# seed makes them reproducible (and so not private: timing only).
DPEM_VARIANTS = {
    "plain": ["--epsilon", "inf"],
    "private": ["--epsilon", "1", "--delta", "1e-6", "--data-norm", "{norm}"],
    "private-frames-off": ["--epsilon", "1", "--delta", "1e-6", "--data-norm", "{norm}",
                           "--component-frames", "off"],
}


def data_norm(path):
    """A public bound for the case's data: its largest norm, rounded up."""
    x = np.load(path, mmap_mode="r")
    return str(int(np.ceil(np.sqrt((x.astype(np.float64) ** 2).sum(axis=1).max()))))


def dpem_fit(dpem, path, k, cov, iters, out, threads, variant="plain", norm="1"):
    cmd = [dpem, "fit", "gmm", "--input", path, "--output", out, "--components", str(k),
           "--iterations", str(iters), "--covariance", cov,
           "--seed", "1", "--quiet", "--threads", str(threads)]
    cmd += [a.replace("{norm}", norm) for a in DPEM_VARIANTS[variant]]
    return timed(cmd)


def kmeans_fit(dpem, path, k, iters, out, threads, variant, norm):
    cmd = [dpem, "fit", "kmeans", "--input", path, "--output", out, "--components", str(k),
           "--iterations", str(iters), "--seed", "1", "--quiet", "--threads", str(threads)]
    cmd += [a.replace("{norm}", norm) for a in KMEANS_VARIANTS[variant]]
    if variant == "plain":
        cmd += ["--method", "cdp-gauss"]
    return timed(cmd)


def sklearn_kmeans(path, k, iters):
    wall, rss, out = timed(["/usr/bin/python3", "-c", SKLEARN_KMEANS, path, str(k), str(iters)])
    r = json.loads(out)
    return r["seconds"], r["n_iter"], rss


def run_kmeans_case(name, spec, args, tmp):
    n, d, k = spec
    path = os.path.join(tmp, "x.npy")
    make_data(path, n, d, k)
    model = os.path.join(tmp, "m.json")
    norm = data_norm(path)
    j0, j1 = 1, 1 + args.iterations
    s0, _, _ = sklearn_kmeans(path, k, j0)
    s1, n_iter, s_rss = sklearn_kmeans(path, k, j1)
    sk = (s1 - s0) / (n_iter - 1)
    row = {"case": name, "n": n, "d": d, "k": k, "sklearn_seconds_per_iteration": sk,
           "sklearn_iterations": n_iter, "sklearn_peak_rss_mb": s_rss / 2**20, "dpem": {}}
    note = "" if n_iter == j1 else f" (it converged after {n_iter} iterations)"
    print(f"{name:>20}  sklearn {sk:8.4f} s/it  peak RSS {s_rss / 2**20:6.0f} MB{note}",
          flush=True)
    for variant in KMEANS_VARIANTS:
        d0, _, _ = kmeans_fit(args.dpem, path, k, j0, model, args.threads, variant, norm)
        d1, d_rss, _ = kmeans_fit(args.dpem, path, k, j1, model, args.threads, variant, norm)
        dp = (d1 - d0) / args.iterations
        row["dpem"][variant] = {"seconds_per_iteration": dp, "speedup": sk / dp,
                                "peak_rss_mb": d_rss / 2**20}
        print(f"{'':>20}  dpem {variant:<18} {dp:8.4f} s/it  sklearn / dpem {sk / dp:6.1f}x  "
              f"peak RSS {d_rss / 2**20:6.0f} MB", flush=True)
    os.remove(path)
    return row


def sklearn_fit(path, k, cov, iters):
    wall, rss, out = timed(["/usr/bin/python3", "-c", SKLEARN_FIT, path, str(k), cov, str(iters)])
    r = json.loads(out)
    assert r["n_iter"] == iters, r
    return r["seconds"], rss


def run_case(name, spec, args, tmp):
    n, d, k, cov = spec[:4]
    path = os.path.join(tmp, "x.npy")
    make_data(path, n, d, k, shape=spec[4] if len(spec) > 4 else "round")
    model = os.path.join(tmp, "m.json")
    norm = data_norm(path)
    j0, j1 = 1, 1 + args.iterations
    s0, _ = sklearn_fit(path, k, cov, j0)
    s1, s_rss = sklearn_fit(path, k, cov, j1)
    sk = (s1 - s0) / args.iterations
    row = {"case": name, "n": n, "d": d, "k": k, "covariance": cov,
           "sklearn_seconds_per_iteration": sk, "sklearn_peak_rss_mb": s_rss / 2**20,
           "data_mb": os.path.getsize(path) / 2**20, "dpem": {}}
    print(f"{name:>20}  sklearn {sk:8.4f} s/it  peak RSS {row['sklearn_peak_rss_mb']:6.0f} MB  "
          f"(data {row['data_mb']:.0f} MB, public bound {norm})", flush=True)
    for variant in args.variants:
        d0, _, _ = dpem_fit(args.dpem, path, k, cov, j0, model, args.threads, variant, norm)
        d1, d_rss, _ = dpem_fit(args.dpem, path, k, cov, j1, model, args.threads, variant, norm)
        dp = (d1 - d0) / args.iterations
        row["dpem"][variant] = {"seconds_per_iteration": dp, "speedup": sk / dp,
                                "peak_rss_mb": d_rss / 2**20}
        print(f"{'':>20}  dpem {variant:<18} {dp:8.4f} s/it  sklearn / dpem {sk / dp:6.1f}x  "
              f"peak RSS {d_rss / 2**20:6.0f} MB", flush=True)
    plain = row["dpem"].get("plain")
    for variant, r in row["dpem"].items():
        if plain and variant != "plain":
            print(f"{'':>20}  {variant} / plain: "
                  f"{r['seconds_per_iteration'] / plain['seconds_per_iteration']:.2f}x", flush=True)
    os.remove(path)
    return row


def memory_test(args, tmp):
    n, d, k = 10_000_000, 10, 10
    path = os.path.join(tmp, "big.npy")
    make_data(path, n, d, k)
    size = os.path.getsize(path)
    model = os.path.join(tmp, "m.json")
    cmd = [args.dpem, "fit", "gmm", "--input", path, "--output", model, "--components", str(k),
           "--iterations", "2", "--epsilon", "1", "--delta", "1e-6", "--data-norm", "40",
           "--seed", "1", "--quiet"]
    wall, rss, _ = timed(cmd)
    print(f"N = 1e7, d = 10, K = 10, private fit, 2 iterations: file {size / 2**20:.0f} MB, "
          f"peak RSS {rss / 2**20:.0f} MB = {rss / size:.2f} x the file, {wall:.1f} s")
    os.remove(path)
    return {"file_mb": size / 2**20, "peak_rss_mb": rss / 2**20, "ratio": rss / size,
            "seconds": wall}


def main():
    ap = options.dpem_parser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=20,
                    help="I (default 20; fewer makes the difference noisier)")
    ap.add_argument("--threads", type=int, default=0, help="dpem --threads (default all)")
    ap.add_argument("--cases", nargs="*", default=list(CASES) + list(KMEANS_CASES),
                    choices=list(CASES) + list(KMEANS_CASES))
    ap.add_argument("--variants", nargs="*", default=list(DPEM_VARIANTS),
                    choices=list(DPEM_VARIANTS), help="dpem's fits of each case")
    ap.add_argument("--memory-test", action="store_true")
    ap.add_argument("--fa-olivetti", action="store_true",
                    help="also time factor analysis of the Olivetti faces against scikit-learn "
                         "(scripts/fa_olivetti_timing.py, 3 repetitions)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    try:
        from threadpoolctl import threadpool_info
        blas = [(i["internal_api"], i.get("version"), i["num_threads"]) for i in threadpool_info()]
    except ImportError:
        blas = "unknown"
    print(f"machine: {os.cpu_count()} CPUs; numpy {np.__version__}; numpy BLAS/OpenMP: {blas}")
    results = {"cases": [], "memory": None}
    with tempfile.TemporaryDirectory(dir=os.environ.get("DPEM_BENCH_DIR")) as tmp:
        for name in args.cases:
            if name in KMEANS_CASES:
                results["cases"].append(run_kmeans_case(name, KMEANS_CASES[name], args, tmp))
            else:
                results["cases"].append(run_case(name, CASES[name], args, tmp))
        if args.memory_test:
            results["memory"] = memory_test(args, tmp)
    if args.fa_olivetti:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fa_olivetti_timing.py")
        subprocess.run(["/usr/bin/python3", script, "--dpem", args.dpem, "--repetitions", "3",
                        "--threads", str(args.threads or os.cpu_count())], check=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
