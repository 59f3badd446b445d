"""The privacy conventions of the estimators (docs/python.md): no defaults
for epsilon and the data bound, opting into a bound from the data warns and
voids the guarantee, a seed voids a private fit, epsilon = inf is a plain
fit, errors are the library's and leave nothing fitted."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import dpem

ESTIMATORS = [
    (dpem.GaussianMixture, {"n_components": 3}),
    (dpem.KMeans, {"n_clusters": 3}),
    (dpem.FactorAnalysis, {"n_components": 2}),
]
IDS = [cls.__name__ for cls, _ in ESTIMATORS]


def _fit_quietly(estimator, X):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X)
    return caught


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_epsilon_and_data_norm_are_required_keywords(cls, size):
    with pytest.raises(TypeError, match="epsilon"):
        cls(*size.values(), data_norm=1.0)
    with pytest.raises(TypeError, match="data_norm"):
        cls(*size.values(), epsilon=1.0)
    with pytest.raises(TypeError):
        cls(*size.values(), 1.0, 1.0)  # Not positional.


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_a_private_fit_without_a_bound_names_data_norm(cls, size, blobs):
    estimator = cls(**size, epsilon=1.0, delta=1e-5, data_norm=None)
    with pytest.raises(ValueError, match="data_norm"):
        estimator.fit(blobs)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_a_bound_from_the_data_warns_and_voids_the_guarantee(cls, size, blobs):
    estimator = cls(**size, epsilon=1.0, delta=1e-5, data_norm="from_data")
    caught = _fit_quietly(estimator, blobs)
    leaks = [w for w in caught if issubclass(w.category, dpem.PrivacyLeakWarning)]
    assert len(leaks) == 1 and "data norm bound R was computed from the data" in str(
        leaks[0].message
    )
    assert issubclass(dpem.PrivacyLeakWarning, RuntimeWarning)
    assert estimator.privacy_["guarantee_void"] is True
    assert estimator.privacy_["private"] is True


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_random_state_seeds_a_private_fit_and_voids_it(cls, size, blobs):
    make = lambda: cls(**size, epsilon=1.0, delta=1e-5, data_norm=5.0, random_state=7)
    first, second = make(), make()
    caught = _fit_quietly(first, blobs)
    _fit_quietly(second, blobs)
    assert any(issubclass(w.category, dpem.PrivacyLeakWarning) for w in caught)
    assert first.privacy_["guarantee_void"] and first.privacy_["seed"] == 7
    assert first._model_json == second._model_json


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_unseeded_private_fits_differ_and_do_not_warn(cls, size, blobs):
    make = lambda: cls(**size, epsilon=1.0, delta=1e-5, data_norm=5.0)
    first, second = make(), make()
    assert _fit_quietly(first, blobs) == []
    _fit_quietly(second, blobs)
    assert first.privacy_["guarantee_void"] is False
    assert 0 < first.privacy_["epsilon"] <= 1.0
    assert first._model_json != second._model_json


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_infinite_epsilon_is_a_plain_fit(cls, size, blobs):
    estimator = cls(**size, epsilon=math.inf, data_norm=None)
    assert _fit_quietly(estimator, blobs) == []
    assert estimator.privacy_["private"] is False
    assert estimator._get_tags()["non_deterministic"] is False


@pytest.mark.parametrize(
    "params, message",
    [
        ({"epsilon": 0.0}, "epsilon must be > 0"),
        ({"delta": 2.0}, "delta must be in \\(0, 1\\)"),
        ({"covariance_type": "tied"}, "covariance_type: .*accepted: full, diag, spherical"),
        ({"init": "kmeans++"}, "cannot start from k-means\\+\\+"),
        ({"accountant": "nope"}, "accountant: "),
        ({"n_components": 601}, "601"),
        ({"data_center": [0.0, 0.0]}, "centre has 2 coordinates"),
        ({"estimator": "bayes"}, "estimator: "),
        ({"covariance_floor": 1e-11}, "covariance floor must be finite and >= 1e-10"),
        ({"frame_radius": -1.0}, "frame radius must be finite and >= 0"),
    ],
)
def test_errors_are_the_librarys_and_leave_nothing_fitted(params, message, blobs):
    base = {"n_components": 3, "epsilon": 1.0, "delta": 1e-5, "data_norm": 5.0}
    estimator = dpem.GaussianMixture(**{**base, **params})
    with pytest.raises(ValueError, match=message):
        estimator.fit(blobs)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)


def test_a_failed_refit_leaves_the_estimator_unfitted(blobs):
    estimator = dpem.GaussianMixture(3, epsilon=math.inf, data_norm=None).fit(blobs)
    bad = blobs.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="X: record 5 has a NaN or infinite value"):
        estimator.fit(bad)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    assert not hasattr(estimator, "n_features_in_")


@pytest.mark.parametrize("cls, size", ESTIMATORS, ids=IDS)
def test_a_refit_refused_by_the_shape_checks_leaves_nothing_fitted(cls, size, blobs):
    estimator = cls(**size, epsilon=math.inf, data_norm=None).fit(blobs)
    with pytest.raises(ValueError, match="2D array"):
        estimator.fit(blobs[:, 0])
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)


def test_wrong_types_raise_type_error(blobs):
    with pytest.raises(TypeError, match="epsilon"):
        dpem.GaussianMixture(3, epsilon="1", data_norm=5.0).fit(blobs)
    with pytest.raises(TypeError, match="budget"):
        dpem.GaussianMixture(3, epsilon=1.0, delta=1e-5, data_norm=5.0, budget="b.db").fit(blobs)
    with pytest.raises(ValueError, match="data_norm"):
        dpem.GaussianMixture(3, epsilon=1.0, delta=1e-5, data_norm="nope").fit(blobs)


def test_scoring_refuses_non_finite_records_as_the_fit_does(blobs):
    estimator = dpem.GaussianMixture(3, epsilon=math.inf, data_norm=None).fit(blobs)
    bad = blobs[:10].copy()
    bad[2, 0] = np.inf
    for method in ("predict", "predict_proba", "score", "score_samples"):
        with pytest.raises(ValueError, match="X: record 3 has a NaN or infinite value"):
            getattr(estimator, method)(bad)
