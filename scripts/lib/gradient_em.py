"""What the gradient EM experiments (scripts/gradient_em_experiment.py,
scripts/gradient_em_n_sweep.py) share: running the CLI, `dpem generate` and
its truth file, and the paper's public bound tau."""
import json
import subprocess

import numpy as np


def run(cmd):
    """Runs `cmd`; its stdout, or RuntimeError with the command and its stderr."""
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + res.stderr)
    return res.stdout


def generate(dpem, model, n, d, seed, data, truth, missing):
    """`dpem generate`: n records in d dimensions at SNR 3 from `seed` into
    `data` (.csv or .npy) and the truth into `truth`; rmc's covariates missing
    with probability `missing`."""
    cmd = [dpem, "generate", "--model", model, "--n", str(n), "--d", str(d), "--snr", "3",
           "--seed", str(seed), "--output", data, "--truth", truth]
    if model == "rmc":
        cmd += ["--missing-prob", str(missing)]
    run(cmd)


def read_truth(path):
    """A truth file of `dpem generate`: (beta as an array, sigma)."""
    with open(path) as f:
        truth = json.load(f)
    return np.array(truth["beta"]), truth["sigma"]


def tau_of(model, beta, sigma, d):
    """The public second-moment bound tau from the paper's lemmas with
    constant 1, at the (known) truth: gmm Lemma 4, mrm Lemma 6, rmc Lemma 8."""
    b2 = float(beta @ beta)
    if model == "gmm":
        return float(np.max(np.abs(beta)) ** 2 + sigma ** 2)
    if model == "mrm":
        return max((b2 + sigma ** 2) ** 2, d * b2)
    return (np.sqrt(d * b2) + sigma ** 2 + b2) ** 2
