"""What the Olivetti factor analysis scripts (scripts/fa_olivetti_experiment.py,
scripts/fa_olivetti_timing.py) share: their options, the faces, and the
`dpem fit fa` / `dpem score` runs."""
import json
import subprocess

import numpy as np

from . import options

DATA = "/work/shared/data/olivetti/olivetti_faces_uint8.csv"


def argument_parser():
    """The scripts' options, starting with --dpem (the binary, built in build-fa)."""
    return options.dpem_parser("build-fa/dpem")


def save_faces(path):
    """The 400 x 4096 faces scaled to [0, 1] (pixel / 242, as scikit-learn
    does), saved as .npy at `path`."""
    np.save(path, np.loadtxt(DATA, delimiter=",") / 242.0)


def fit_command(dpem, data, model, epsilon, factors, flags, seed):
    """`dpem fit fa` of `data` into `model` with the public row-norm bound 64
    (every pixel is <= 1) and `flags`; a private fit (epsilon not "inf") has
    delta = 1e-4 and `seed`."""
    cmd = [dpem, "fit", "fa", "--factors", str(factors), "--input", data, "--output", model,
           "--epsilon", epsilon, "--data-norm", "64"] + flags
    if epsilon != "inf":
        cmd += ["--delta", "1e-4", "--seed", str(seed)]
    return cmd


def score(dpem, model, data):
    """`dpem score --json` of `data` under `model`, parsed."""
    return json.loads(subprocess.run([dpem, "score", "--json", "--model", model, "--input", data],
                                     check=True, capture_output=True, text=True).stdout)
