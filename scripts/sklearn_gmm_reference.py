#!/usr/bin/python3
"""Reference fits of scikit-learn's GaussianMixture for dpem's EM agreement test.

Writes tests/data/sklearn_gmm_reference.json, read by
src/models/gmm/gmm_sklearn_test.cc, which runs the same number of iterations of
dpem's ComputeStatistics + MStep (MLE, covariance_floor = reg_covar = 1e-6)
from the same initial parameters and compares every fitted parameter.

Regenerate (Debian's numpy/scikit-learn, not a virtual environment):
    apt-get install -y python3-sklearn
    /usr/bin/python3 scripts/sklearn_gmm_reference.py \
        > tests/data/sklearn_gmm_reference.json

Matching scikit-learn exactly (read sklearn/mixture/_gaussian_mixture.py and
_base.py of the version recorded in the JSON):
  * tol = 0: fit stops when abs(change) < tol, which never holds, so exactly
    max_iter (E-step, M-step) pairs run from the initial parameters; the
    ConvergenceWarning this causes is expected and silenced.
  * weights_init, means_init and precisions_init override the k-means
    initialisation (k-means still runs; its result is discarded, and the
    E-step uses only the precision Cholesky factors from precisions_init).
  * precisions_init format per covariance type: full, K x d x d precision
    matrices; diag, K x d precisions (1 / variances); spherical, K
    precisions. We store initial covariances and pass their inverses.
  * scikit-learn's M-step adds 10 * eps to N_k and centres before forming
    the covariances; the differences from dpem's uncentred statistics are at
    rounding level, far below the test's 1e-6 relative tolerance.
"""
import json
import sys
import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

SEED = 20240601
N, D, K = 500, 3, 3
ITERATIONS = (5, 20)
REG_COVAR = 1e-6
TYPES = ("full", "diag", "spherical")


def make_data(rng):
    """Well separated clusters, all rows inside the unit ball."""
    centers = np.array([[-0.45, 0.2, 0.0], [0.35, 0.3, -0.2], [0.0, -0.4, 0.35]])
    labels = rng.choice(K, size=N, p=[0.5, 0.3, 0.2])
    x = centers[labels] + 0.08 * rng.standard_normal((N, D))
    norms = np.linalg.norm(x, axis=1)
    x[norms > 1] /= norms[norms > 1, None]
    return x


def initial_parameters(rng, x, covariance_type):
    """Random start: Dirichlet weights, perturbed data points as means."""
    weights = rng.dirichlet(np.full(K, 3.0))
    means = x[rng.choice(N, size=K, replace=False)] + 0.05 * rng.standard_normal((K, D))
    if covariance_type == "full":
        a = 0.1 * rng.standard_normal((K, D, D))
        covs = np.einsum("kij,klj->kil", a, a) + 0.02 * np.eye(D)
    elif covariance_type == "diag":
        covs = np.stack([np.diag(v) for v in rng.uniform(0.01, 0.05, (K, D))])
    else:
        covs = np.stack([v * np.eye(D) for v in rng.uniform(0.01, 0.05, K)])
    return weights, means, covs


def precisions_init(covs, covariance_type):
    if covariance_type == "full":
        return np.stack([np.linalg.inv(c) for c in covs])
    if covariance_type == "diag":
        return 1.0 / np.stack([np.diag(c) for c in covs])
    return 1.0 / covs[:, 0, 0]


def as_full(covariances, covariance_type):
    """sklearn's covariances_ as K d x d matrices."""
    if covariance_type == "full":
        return covariances
    if covariance_type == "diag":
        return np.stack([np.diag(v) for v in covariances])
    return np.stack([v * np.eye(D) for v in covariances])


def fit(x, init, covariance_type, iterations):
    weights, means, covs = init
    gm = GaussianMixture(
        n_components=K, covariance_type=covariance_type, tol=0.0,
        reg_covar=REG_COVAR, max_iter=iterations, n_init=1,
        weights_init=weights, means_init=means,
        precisions_init=precisions_init(covs, covariance_type), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gm.fit(x)
    assert gm.n_iter_ == iterations, gm.n_iter_
    return {"iterations": iterations, "weights": gm.weights_.tolist(),
            "means": gm.means_.tolist(),
            "covariances": as_full(gm.covariances_, covariance_type).tolist()}


def main():
    rng = np.random.default_rng(SEED)
    x = make_data(rng)
    cases = []
    for covariance_type in TYPES:
        init = initial_parameters(rng, x, covariance_type)
        cases.append({
            "covariance_type": covariance_type,
            "initial": {"weights": init[0].tolist(), "means": init[1].tolist(),
                        "covariances": init[2].tolist()},
            "fits": [fit(x, init, covariance_type, j) for j in ITERATIONS]})
    json.dump({"sklearn_version": sklearn.__version__,
               "numpy_version": np.__version__, "seed": SEED,
               "reg_covar": REG_COVAR, "data": x.tolist(), "cases": cases},
              sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
