"""Scoring fitted models with the dpem CLI, for the experiment scripts."""
import json
import os
import subprocess


def held_out_log_likelihood(dpem, model, data, remove=True):
    """The mean log-likelihood per record of `data` under the model file
    `model` (`dpem score --json`); the model file is deleted afterwards
    unless `remove` is False."""
    out = subprocess.run([dpem, "score", "--model", model, "--input", data, "--json"],
                         check=True, capture_output=True, text=True).stdout
    if remove:
        os.remove(model)
    return json.loads(out)["mean_log_likelihood"]
