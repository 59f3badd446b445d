#!/usr/bin/python3
"""Reference fits of scikit-learn's FactorAnalysis for dpem's factor analysis.

Writes tests/data/sklearn_fa_reference.json, read by
src/models/factor_analysis/factor_analysis_sklearn_test.cc. Each case holds data drawn from a
planted factor model and then centred exactly (so that dpem's model, whose
mean is the public centre 0, and sklearn's, whose mean is the sample mean,
are the same family), and sklearn's fit with tight tolerance: its mean
log-likelihood score(X), noise variances and covariance W W^T + Psi.

Regenerate (deterministic):
    /usr/bin/python3 scripts/sklearn_fa_reference.py
"""
import json
import os

import numpy as np
import sklearn
from sklearn.decomposition import FactorAnalysis

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                   "sklearn_fa_reference.json")


def make_case(name, n, d, factors, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(d, factors))
    psi = rng.uniform(0.1, 0.6, size=d)
    z = rng.normal(size=(n, factors))
    x = z @ w.T + rng.normal(size=(n, d)) * np.sqrt(psi)
    x -= x.mean(axis=0)
    fa = FactorAnalysis(n_components=factors, tol=1e-12, max_iter=100000,
                        svd_method="lapack", random_state=0).fit(x)
    return {
        "name": name,
        "factors": factors,
        "x": x.tolist(),
        "mean_log_likelihood": float(fa.score(x)),
        "noise_variances": fa.noise_variance_.tolist(),
        "covariance": fa.get_covariance().tolist(),
        "n_iter": int(fa.n_iter_),
    }


def main():
    cases = [
        make_case("d6_l2", 300, 6, 2, 1),
        make_case("d10_l3", 500, 10, 3, 2),
        make_case("d5_l1", 200, 5, 1, 3),
    ]
    with open(OUT, "w") as f:
        json.dump({"sklearn_version": sklearn.__version__, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
