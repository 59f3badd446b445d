"""scikit-learn's estimator checks, for every estimator in plain mode
(epsilon = inf) and private mode (GradientEM: each of its three models).

The checks seed every fit (sklearn's set_random_state sets random_state=0),
so the private fits here are seeded, hence void and warned about: expected,
and silenced. KMeans's private instance runs at epsilon = 100: check_clustering
asks for an adjusted Rand index above 0.4 on 50 records, which a private
k-means at epsilon = 1 misses in about a third of its draws.

Skipped, and why (test_skipped_checks_are_exactly_these asserts the list):
- check_parameters_default_constructible, every instance: sklearn skips it
  for estimators with required parameters (_required_parameters); epsilon and
  data_norm (GradientEM: epsilon, sigma, tau and max_iter, as the CLI's
  flags) have no defaults by design, so no estimator can be built bare.
  test_required_parameters_have_no_defaults checks what it would otherwise.
- in private mode, what the non_deterministic tag exempts: the checks that
  compare two fits or a fit and a fit_transform (check_pipeline_consistency,
  check_transformer_general twice, check_transformer_data_not_an_array), and
  check_methods_sample_order_invariance and check_methods_subset_invariance,
  which sklearn does not even yield for such estimators.
"""

import inspect
import math
import unittest
import warnings

import pytest
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

import dpem

GRADIENT_EM_MODELS = ("gmm", "mrm", "rmc")
PLAIN = [
    dpem.GaussianMixture(3, epsilon=math.inf, data_norm=None),
    dpem.KMeans(3, epsilon=math.inf, data_norm=None),
    dpem.FactorAnalysis(2, epsilon=math.inf, data_norm=None),
] + [
    dpem.GradientEM(model, epsilon=math.inf, sigma=1.0, tau=None, max_iter=5)
    for model in GRADIENT_EM_MODELS
]
PRIVATE = [
    dpem.GaussianMixture(3, epsilon=1.0, delta=1e-5, data_norm=5.0),
    dpem.KMeans(3, epsilon=100.0, delta=1e-5, data_norm=3.0),
    dpem.FactorAnalysis(2, epsilon=1.0, delta=1e-5, data_norm=5.0),
] + [
    dpem.GradientEM(model, epsilon=1.0, delta=1e-5, sigma=1.0, tau=10.0, max_iter=5)
    for model in GRADIENT_EM_MODELS
]
NON_DETERMINISTIC = {
    "check_pipeline_consistency",
    "check_transformer_general",
    "check_transformer_data_not_an_array",
}


@parametrize_with_checks(PLAIN + PRIVATE)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpem.PrivacyLeakWarning)
        check(estimator)


def _skipped_checks(estimator):
    skipped = set()
    for est, check in check_estimator(estimator, generate_only=True):
        name = getattr(check, "func", check).__name__
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(est)
        except unittest.SkipTest:
            skipped.add(name)
    return skipped


@pytest.mark.parametrize("estimator", PLAIN + PRIVATE, ids=repr)
def test_skipped_checks_are_exactly_these(estimator):
    expected = {"check_parameters_default_constructible"}
    if estimator in PRIVATE:
        names = NON_DETERMINISTIC if hasattr(estimator, "transform") else {
            "check_pipeline_consistency"
        }
        expected |= names
    assert _skipped_checks(estimator) == expected
    assert estimator._get_tags()["non_deterministic"] == (estimator in PRIVATE)


# A value for each required parameter.
REQUIRED_VALUES = {
    "n_components": 2, "n_clusters": 2, "model": "gmm", "epsilon": 1.0, "data_norm": 1.0,
    "sigma": 1.0, "tau": 1.0, "max_iter": 5,
}


@pytest.mark.parametrize(
    "cls, bound",
    [(dpem.GaussianMixture, "data_norm"), (dpem.KMeans, "data_norm"),
     (dpem.FactorAnalysis, "data_norm"), (dpem.GradientEM, "tau")],
)
def test_required_parameters_have_no_defaults(cls, bound):
    # What check_parameters_default_constructible checks, for the others.
    params = inspect.signature(cls.__init__).parameters
    required = [name for name, p in params.items() if name != "self" and p.default is p.empty]
    assert required == cls._required_parameters
    assert params["epsilon"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params[bound].kind is inspect.Parameter.KEYWORD_ONLY
    assert params[bound].default is inspect.Parameter.empty
    allowed = (str, int, float, bool, type(None))
    for name, p in params.items():
        if name != "self" and p.default is not p.empty:
            assert isinstance(p.default, allowed), name
    kwargs = {name: REQUIRED_VALUES[name] for name in required}
    estimator = cls(**kwargs)
    assert {k: estimator.get_params()[k] for k in kwargs} == kwargs
    assert vars(estimator).keys() == estimator.get_params().keys()
