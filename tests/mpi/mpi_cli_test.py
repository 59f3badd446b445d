"""dpem-mpi and dpem-mpirun under `mpirun --oversubscribe` (CTest label mpi).

Run by CTest with the build's binaries:
    /usr/bin/python3 tests/mpi/mpi_cli_test.py BUILD_DIR

Checks (docs/distributed.md):
  * P = 1, 2, 3, 4 ranks give the model that `dpem` fits on one process with
    the same seed, to 1e-12 relative (private fits: the same file, byte for
    byte, their released sums being exact), for every model (GMM default private
    fit with frames and the private start, plain GMM from k-means++, GGG/LLG,
    k-means, factor analysis, gradient EM), with the shards given as one
    .npy cut into row ranges or as one file per rank ({rank});
  * a GMM fit that leaves J to its default at a large epsilon runs the quiet
    J = 10 of the whole table's N on every rank (3-D, and 6-D with the
    diagonal first iteration's schedule of 10 weights); one of J = 8 where
    the noise is large averages the same last 4 iterates on every rank; the
    default private fit, noisy for its N, runs the adaptive schedule and
    every rank makes the same choice after its third iteration;
  * a bad shard on one rank: exit 2 on all, one line naming the rank, no
    model file, nothing charged to the budget;
  * score, predict and transform over the shards print or write what they
    do on one process (score to 1e-12 relative);
  * a killed rank: exit 2 with one line naming it, no rank left running;
  * a hung (stopped) rank: the collective steps time out
    (DPEM_COLLECTIVE_TIMEOUT), one line, exit 2, no rank left running.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

BUILD = os.path.abspath(sys.argv[1])
DPEM = os.path.join(BUILD, "dpem")
MPIRUN = os.path.join(BUILD, "dpem-mpirun")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def run(args, timeout=300):
    return subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=timeout)


def numbers(j):
    if isinstance(j, dict):
        return [x for k in sorted(j) for x in numbers(j[k])]
    if isinstance(j, list):
        return [x for v in j for x in numbers(v)]
    if isinstance(j, (int, float)) and not isinstance(j, bool):
        return [float(j)]
    return []


def same_model(a, b):
    """Every number within 1e-12 relative; the structure and strings equal."""
    if json.dumps(a, sort_keys=True, default=str).count(",") != \
       json.dumps(b, sort_keys=True, default=str).count(","):
        return False, "structure differs"
    x, y = np.array(numbers(a)), np.array(numbers(b))
    if x.shape != y.shape:
        return False, "shapes differ"
    worst = float(np.max(np.abs(x - y) / np.maximum(1.0, np.abs(x)))) if x.size else 0.0
    return worst <= 1e-12, "largest relative difference %.3g" % worst


def rank_pids(data):
    """The process id of rank 1 of a running 3-rank fit of `data` (the ranks
    in order of their process ids), or None if they did not all start."""
    for _ in range(100):
        time.sleep(0.1)
        pids = subprocess.run(["pgrep", "-f", "dpem-mpi fit gmm.*" + data],
                              capture_output=True, text=True).stdout.split()
        ranks = []
        for p in pids:
            try:
                if "mpirun" not in open("/proc/%s/cmdline" % p).read():
                    ranks.append(p)
            except OSError:
                pass
        if len(ranks) == 3:
            return sorted(ranks, key=int)[1]
    return None


def disrupt_a_rank(data, out, sig, env, what, expected_line):
    """Starts a 3-rank fit of `data`, sends rank 1 `sig` a second in, and
    checks: exit 2, one line containing `expected_line`, no rank left
    running, no model file `out`."""
    proc = subprocess.Popen([MPIRUN, "-np", "3", "fit", "gmm", "--components", "10", "--epsilon",
                             "1", "--delta", "1e-5", "--data-norm", "8", "--iterations", "200",
                             "--threads", "1", "--input", data, "--output", out],
                            env=env, stderr=subprocess.PIPE, text=True)
    victim = rank_pids(data)
    check(victim is not None, what + ": the three ranks started")
    time.sleep(1.0)
    if victim:
        os.kill(int(victim), sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        err = "(hung)"
    lines = err.strip().splitlines()
    check(proc.returncode == 2, "%s: exit 2 (got %s)" % (what, proc.returncode))
    check(len(lines) == 1 and expected_line in lines[0], "%s: one line: %r" % (what, lines))
    left = subprocess.run(["pgrep", "-f", "dpem-mpi fit gmm.*" + data], capture_output=True, text=True)
    check(left.stdout.strip() == "", what + ": no rank left running")
    check(not os.path.exists(out), what + ": no model file")


def main():
    tmp = tempfile.mkdtemp(prefix="dpem_mpi_test_")
    rng = np.random.default_rng(11)
    n = 6007
    x = np.concatenate([rng.normal(c, 1.0, (n // 3 + (i < n % 3), 3)) for i, c in enumerate((-4, 0, 4))])
    rng.shuffle(x)
    np.save(os.path.join(tmp, "x.npy"), x)
    gem = os.path.join(tmp, "gem.npy")
    r = run([DPEM, "generate", "--model", "rmc", "--n", "4000", "--d", "3", "--snr", "2",
             "--missing-prob", "0.2", "--seed", "3", "--output", gem,
             "--truth", os.path.join(tmp, "truth.json")])
    check(r.returncode == 0, "dpem generate: " + r.stderr.strip())

    def shards(path, ranks):
        """One file per rank, for the {rank} form."""
        data = np.load(path)
        stem = path[:-4]
        for k in range(ranks):
            np.save("%s-%d.npy" % (stem, k), data[len(data) * k // ranks:len(data) * (k + 1) // ranks])
        return stem + "-{rank}.npy"

    common = ["--seed", "20261124", "--threads", "1"]
    cases = {
        "gmm private default": ["fit", "gmm", "--components", "3", "--epsilon", "1", "--delta", "1e-5",
                                "--data-norm", "10"],
        "gmm plain kmeans++": ["fit", "gmm", "--components", "3", "--epsilon", "inf"],
        "gmm llg diagonal": ["fit", "gmm", "--components", "3", "--epsilon", "2", "--delta", "1e-5",
                             "--data-norm", "10", "--mechanisms", "LLG", "--covariance", "diag"],
        "gmm data-norm auto": ["fit", "gmm", "--components", "3", "--epsilon", "1", "--delta", "1e-5",
                               "--data-norm", "auto", "--bounds-epsilon", "0.2"],
        # J left to its default at an epsilon where the noise is small for N
        # (docs/gmm.md, "Choosing J"): 10 iterations, chosen by every rank
        # from the whole table's N; in 6-D also the diagonal first
        # iteration's schedule of 10 weights.
        "gmm quiet default J": ["fit", "gmm", "--components", "3", "--epsilon", "1000", "--delta",
                                "1e-5", "--data-norm", "10"],
        "gmm quiet default J, 6-D": ["fit", "gmm", "--components", "3", "--epsilon", "1000",
                                     "--delta", "1e-5", "--data-norm", "10"],
        # J = 8 where the noise is large for N (docs/gmm.md, "Averaging the
        # last iterates"): every rank returns the same average of the last 4.
        "gmm averaged iterates": ["fit", "gmm", "--components", "3", "--epsilon", "0.2",
                                  "--delta", "1e-5", "--data-norm", "10", "--iterations", "8"],
        "kmeans cdp-gauss": ["fit", "kmeans", "--components", "3", "--epsilon", "1", "--delta", "1e-5",
                             "--data-norm", "10", "--method", "cdp-gauss"],
        "fa private": ["fit", "fa", "--factors", "2", "--epsilon", "1", "--delta", "1e-5",
                       "--data-norm", "10"],
    }
    gem_case = ["fit", "gradient-em", "--model", "rmc", "--method", "dp", "--iterations", "5",
                "--sigma", "1", "--tau", "10", "--epsilon", "1", "--delta", "1e-5", "--json"]
    # Under zCDP at epsilon 1000, delta 1e-5 (rho about 807, 0.8 of it to the
    # iterations) one release's noise on a sum's coordinate is s / sqrt(1.6 rho)
    # = 0.028 s, s the joint split's sums scale (a few units), so
    # r = sigma_1 sqrt(d) K / N is about 3.4e-5 s for N = 6007, d = 6, K = 3,
    # far below 0.006 (RDP, the default, calibrates less noise still): J = 10.
    # The one-process file says so; the ranks' files are the same bytes, so
    # every rank ran that J (from the whole table's N, not its shard's).
    x6 = np.concatenate([rng.normal(c, 1.0, (n // 3 + (i < n % 3), 6)) for i, c in enumerate((-4, 0, 4))])
    rng.shuffle(x6)
    np.save(os.path.join(tmp, "x6.npy"), x6)
    inputs = {"gmm quiet default J, 6-D": "x6.npy"}
    quiet = {"gmm quiet default J": 10, "gmm quiet default J, 6-D": 10}
    for name, args in cases.items():
        data = os.path.join(tmp, inputs.get(name, "x.npy"))
        one = os.path.join(tmp, "one.json")
        r = run([DPEM] + args + common + ["--input", data, "--output", one])
        check(r.returncode == 0, "%s: one process: %s" % (name, r.stderr.strip()[-200:]))
        expected = json.load(open(one))
        if name == "gmm private default":  # Noisy for N: the adaptive schedule.
            check(expected["iterations"] == 6 and
                  "adaptive_iterations" in expected["privacy"],
                  "%s: the adaptive schedule's 6 releases (got J = %s)" %
                  (name, expected["iterations"]))
        if name == "gmm averaged iterates":
            check(expected["privacy"]["averaged_iterations"] == 4,
                  "%s: the last 4 of 8 iterates averaged (got %s)" %
                  (name, expected["privacy"]["averaged_iterations"]))
        if name in quiet:
            check(expected["iterations"] == quiet[name] and expected["n"] == n and
                  len(expected["privacy"]["releases"]) == 2 + quiet[name],
                  "%s: J = %d of N = %d, 2 + J releases (got J = %s)" %
                  (name, quiet[name], n, expected["iterations"]))
            if name.endswith("6-D"):
                weights = expected["privacy"]["iteration_weights"]
                check(len(weights) == 10 and weights[0] == 0.5 and weights[-1] == 1.5,
                      "%s: the diagonal first iteration's schedule of 10 weights" % name)
        for ranks in (1, 2, 3, 4):
            for form, path in (("row ranges", data), ("{rank} files", shards(data, ranks))):
                out = os.path.join(tmp, "dist.json")
                if os.path.exists(out):
                    os.remove(out)
                r = run([MPIRUN, "-np", str(ranks), "fit"] + args[1:] + common +
                        ["--input", path, "--output", out])
                ok = r.returncode == 0 and os.path.exists(out)
                same, how = same_model(expected, json.load(open(out))) if ok else (False, r.stderr.strip()[-300:])
                if ok and "inf" not in args:
                    # A private fit's released sums are exact: the same bits.
                    same = same and open(out).read() == open(one).read()
                check(ok and same, "%s: P = %d, %s: %s" % (name, ranks, form, how))
    # score, predict and transform over the shards: the one-process output.
    data = os.path.join(tmp, "x.npy")
    models = {}
    for name, args in (("gmm", cases["gmm private default"]), ("kmeans", cases["kmeans cdp-gauss"]),
                       ("fa", cases["fa private"])):
        models[name] = os.path.join(tmp, name + ".json")
        run([DPEM] + args + common + ["--input", data, "--output", models[name]])
    uses = [("score", "gmm", ["--json"]), ("score", "kmeans", ["--json"]), ("score", "fa", ["--json"]),
            ("predict", "gmm", ["--proba"]), ("predict", "kmeans", []), ("transform", "fa", [])]
    for command, model, extra in uses:
        out = os.path.join(tmp, "out.csv")
        one_args = [command, "--model", models[model]] + extra
        if command == "transform":
            one_args += ["--output", out]
        r = run([DPEM] + one_args + ["--input", data])
        expected = r.stdout if command != "transform" else open(out).read()
        for ranks in (2, 3):
            r = run([MPIRUN, "-np", str(ranks)] + one_args + ["--input", shards(data, ranks)])
            got = r.stdout if command != "transform" else open(out).read()
            if r.returncode != 0:
                same, how = False, r.stderr
            elif command == "score":
                same, how = same_model(json.loads(expected), json.loads(got))
            elif extra == ["--proba"]:
                # Per-record values: the same to rounding (a shard's rows may
                # meet the vectorised kernels at another alignment).
                a = np.loadtxt(expected.splitlines(), delimiter=",")
                b = np.loadtxt(got.splitlines(), delimiter=",")
                worst = float(np.max(np.abs(a - b))) if a.shape == b.shape else np.inf
                same, how = worst <= 1e-12, "largest difference %.3g" % worst
            else:
                same, how = got == expected and r.returncode == 0, "identical" if got == expected else r.stderr
            check(same, "%s %s: P = %d: %s" % (command, model, ranks, how))

    r = run([DPEM] + gem_case + common + ["--input", gem])
    check(r.returncode == 0, "gradient-em rmc: one process")
    expected = json.loads(r.stdout)
    for ranks in (2, 3):
        r = run([MPIRUN, "-np", str(ranks), "fit"] + gem_case[1:] + common + ["--input", gem])
        same, how = same_model(expected, json.loads(r.stdout)) if r.returncode == 0 else (False, r.stderr)
        check(same, "gradient-em rmc: P = %d: %s" % (ranks, how))

    # A bad shard on rank 1: exit 2, one line naming the rank, nothing charged or written.
    bad = shards(os.path.join(tmp, "x.npy"), 3)
    data1 = np.load(bad.replace("{rank}", "1"))
    data1[4, 1] = np.nan
    np.save(bad.replace("{rank}", "1"), data1)
    budget = os.path.join(tmp, "budget.db")
    r = run([DPEM, "budget", "init", "--budget-file", budget, "--dataset", "D", "--epsilon", "2",
             "--delta", "1e-4"])
    check(r.returncode == 0, "budget init")
    out = os.path.join(tmp, "bad.json")
    r = run([MPIRUN, "-np", "3", "fit", "gmm", "--components", "3", "--epsilon", "1", "--delta",
             "1e-5", "--data-norm", "10", "--input", bad, "--output", out, "--budget-file", budget,
             "--dataset", "D"])
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2, "bad shard: exit 2 (got %d)" % r.returncode)
    check(len(lines) == 1 and "rank 1:" in lines[0] and "not a valid table" in lines[0]
          and "row" not in lines[0].split("withheld")[0],
          "bad shard: one line naming rank 1, the reason withheld: %r" % lines)
    check(not os.path.exists(out), "bad shard: no model file")
    def charges():
        shown = run([DPEM, "budget", "show", "--budget-file", budget, "--json"])
        return [d["charges"] for d in json.loads(shown.stdout)["datasets"] if d["dataset"] == "D"][0]

    check(charges() == 0, "bad shard: nothing charged")
    good = shards(os.path.join(tmp, "x.npy"), 3)
    r = run([MPIRUN, "-np", "3", "fit", "gmm", "--components", "3", "--epsilon", "1", "--delta",
             "1e-5", "--data-norm", "10", "--input", good, "--output", out, "--budget-file", budget,
             "--dataset", "D"])
    check(r.returncode == 0 and charges() == 1, "good shards: charged once (by rank 0)")

    # A killed rank: the others are ended, exit 2, one line naming it. A hung
    # (stopped) rank: the collective steps time out, one line, exit 2.
    big = os.path.join(tmp, "big.npy")
    np.save(big, np.random.default_rng(2).normal(size=(400000, 10)))
    disrupt_a_rank(big, os.path.join(tmp, "killed.json"), signal.SIGKILL, ENV, "killed rank",
                   "died (signal 9")
    disrupt_a_rank(big, os.path.join(tmp, "hung.json"), signal.SIGSTOP,
                   dict(ENV, DPEM_COLLECTIVE_TIMEOUT="3"), "hung rank",
                   "no answer from the other ranks within 3 s")
    shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
