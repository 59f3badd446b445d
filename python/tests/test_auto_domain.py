"""data_norm="auto" with bounds_epsilon: the public domain released from the
data inside the fit (the CLI's --data-norm auto --bounds-epsilon;
docs/bounds.md): one budget charge of the total epsilon, the domain's
releases listed first in privacy_, the same model file as the CLI's for the
same seed, and the refusals, before anything is charged."""

import json
import math
import warnings

import numpy as np
import pytest

import dpem

# (class, size, `dpem fit` model and size flags)
ESTIMATORS = [
    (dpem.GaussianMixture, {"n_components": 3}, ["gmm", "--components", 3]),
    (dpem.KMeans, {"n_clusters": 3}, ["kmeans", "--method", "cdp-gauss", "--components", 3]),
    (dpem.FactorAnalysis, {"n_components": 2}, ["fa", "--factors", 2]),
]
IDS = [cls.__name__ for cls, _, _ in ESTIMATORS]


@pytest.fixture(scope="module")
def blobs_npy(blobs, tmp_path_factory):
    path = tmp_path_factory.mktemp("auto") / "blobs.npy"
    np.save(path, blobs)
    return path


@pytest.mark.parametrize("cls, size, _", ESTIMATORS, ids=IDS)
def test_the_budget_is_charged_once_with_the_total_epsilon(cls, size, _, blobs, tmp_path):
    budget = dpem.Budget(tmp_path / "budget.db", "blobs").init(3.0, 1e-4)
    estimator = cls(**size, epsilon=1.0, delta=1e-5, data_norm="auto", bounds_epsilon=0.25,
                    budget=budget)
    with warnings.catch_warnings():
        # Unseeded: nothing is void. (A RuntimeWarning that the released
        # outside fraction is above 1/2 comes in about 1% of the draws.)
        warnings.simplefilter("error", dpem.PrivacyLeakWarning)
        estimator.fit(blobs)
    account = budget.account()
    assert account["charges"] == 1
    assert account["spent_epsilon"] == 1.0 and account["spent_delta"] == 1e-5
    privacy = estimator.privacy_
    assert privacy["guarantee_void"] is False
    assert privacy["target_epsilon"] == 1.0 and 0 < privacy["epsilon"] <= 1.0
    # The domain's releases first: a median per coordinate and the radius
    # (two permute-and-flip steps each), and the noisy outside count.
    labels = [release["label"] for release in privacy["releases"]]
    from_bounds = [label.startswith("bounds / ") for label in labels]
    assert from_bounds == [True] * (2 * 3 + 3) + [False] * (len(labels) - 9)
    transform = json.loads(estimator._model_json)["data_transform"]
    assert transform["from_data"] is False and transform["data_norm"] > 0
    assert len(transform["center"]) == 3


@pytest.mark.parametrize("cls, size, command", ESTIMATORS, ids=IDS)
def test_python_and_cli_write_the_same_model_file(cls, size, command, blobs, blobs_npy, cli,
                                                  tmp_path):
    estimator = cls(**size, epsilon=1.0, delta=1e-5, data_norm="auto", bounds_epsilon=0.2,
                    random_state=11)
    with pytest.warns(dpem.PrivacyLeakWarning):
        estimator.fit(blobs)
    estimator.to_json(tmp_path / "python.json")
    cli("fit", *command, "--epsilon", 1, "--delta", 1e-5, "--data-norm", "auto",
        "--bounds-epsilon", 0.2, "--seed", 11, "--quiet", "--input", blobs_npy,
        "--output", tmp_path / "cli.json")
    assert (tmp_path / "python.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    # A loaded model has the released domain as its (now public) domain.
    loaded = dpem.load(tmp_path / "cli.json")
    transform = json.loads(estimator._model_json)["data_transform"]
    assert loaded.data_norm == transform["data_norm"] and loaded.bounds_epsilon is None
    assert loaded.data_center == transform["center"] and loaded.epsilon == 1.0
    assert loaded.score(blobs) == estimator.score(blobs)


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"bounds_epsilon": None}, ValueError, "bounds_epsilon goes with data_norm='auto'"),
        ({"data_norm": 5.0}, ValueError, "bounds_epsilon goes with data_norm='auto'"),
        ({"data_center": [0.0, 0.0, 0.0]}, ValueError, "releases the centre too"),
        ({"epsilon": math.inf, "delta": None}, ValueError, "only for a private fit"),
        ({"bounds_epsilon": 1.0}, ValueError, "must be below the fit's total epsilon"),
        ({"bounds_epsilon": -0.1}, ValueError, "epsilon"),
        ({"bounds_epsilon": "0.1"}, TypeError, "bounds_epsilon"),
        ({"data_norm": "automatic"}, ValueError, "data_norm: a number, 'auto'"),
    ],
)
def test_refusals_charge_nothing(params, error, message, blobs, tmp_path):
    budget = dpem.Budget(tmp_path / "budget.db", "blobs").init(3.0, 1e-4)
    base = {"epsilon": 1.0, "delta": 1e-5, "data_norm": "auto", "bounds_epsilon": 0.2,
            "budget": budget}
    estimator = dpem.GaussianMixture(3, **{**base, **params})
    with pytest.raises(error, match=message):
        estimator.fit(blobs)
    assert budget.account()["charges"] == 0
    assert not hasattr(estimator, "privacy_")
