"""dpem.Budget: the CLI's SQLite ledger, charged by every fit before it
reads the data; clone, Pipeline and GridSearchCV spend it exactly once per
fit."""

import json
import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

import dpem


@pytest.fixture
def budget(tmp_path):
    return dpem.Budget(tmp_path / "budget.db", "blobs").init(20.0, 1e-3)


def _mixture(budget, **params):
    settings = {"epsilon": 0.5, "delta": 1e-5, "data_norm": 5.0, "budget": budget}
    return dpem.GaussianMixture(3, **{**settings, **params})


def test_a_fit_charges_its_epsilon_and_delta_once(budget, blobs):
    _mixture(budget).fit(blobs)
    account = budget.account()
    assert account["charges"] == 1
    assert account["spent_epsilon"] == pytest.approx(0.5)
    assert account["spent_delta"] == pytest.approx(1e-5)
    assert budget.remaining() == pytest.approx((19.5, 1e-3 - 1e-5))


def test_a_budget_that_would_be_exceeded_refuses_the_fit(budget, blobs):
    estimator = _mixture(budget, epsilon=25.0)
    bad = blobs.copy()
    bad[0, 0] = np.nan  # Never read: the charge is refused first.
    with pytest.raises(dpem.DpemError, match="exceed"):
        estimator.fit(bad)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    assert budget.account()["charges"] == 0


def test_the_charge_comes_before_the_data_is_read(budget, blobs):
    bad = blobs.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X: record 1 has a NaN"):
        _mixture(budget).fit(bad)
    assert budget.account()["charges"] == 1  # As the CLI: charged, never refunded.


def test_invalid_options_and_plain_fits_charge_nothing(budget, blobs):
    with pytest.raises(ValueError, match="data_norm"):
        _mixture(budget, data_norm=None).fit(blobs)
    with pytest.raises(ValueError, match="non-private fit cannot be charged"):
        dpem.GaussianMixture(3, epsilon=math.inf, data_norm=None, budget=budget).fit(blobs)
    assert budget.account()["charges"] == 0


def test_an_unknown_data_set_is_refused(tmp_path, blobs):
    dpem.Budget(tmp_path / "b.db", "known").init(1.0)
    with pytest.raises(dpem.DpemError):
        _mixture(dpem.Budget(tmp_path / "b.db", "unknown")).fit(blobs)


def test_clones_share_the_budget_and_each_fit_spends_once(budget, blobs):
    estimator = _mixture(budget)
    copy = clone(estimator)
    assert copy.budget == budget and copy.budget is not budget
    assert budget.account()["charges"] == 0  # Neither init nor clone spends.
    copy.fit(blobs)
    estimator.fit(blobs)
    assert budget.account()["charges"] == 2


def test_a_pipeline_spends_once_per_fit(budget, blobs):
    pipeline = Pipeline([("mixture", _mixture(budget))])
    pipeline.fit(blobs)
    pipeline.score(blobs)
    pipeline.predict(blobs)
    assert budget.account()["charges"] == 1


def test_grid_search_spends_once_per_fit(budget, blobs):
    search = GridSearchCV(_mixture(budget), {"n_components": [2, 3]}, cv=3)
    search.fit(blobs)
    # 2 candidates x 3 folds, then the refit on all the data.
    account = budget.account()
    assert account["charges"] == 2 * 3 + 1
    assert account["spent_epsilon"] == pytest.approx(7 * 0.5)
    assert search.best_estimator_.privacy_["private"]


def test_cross_validation_in_processes_spends_once_per_fit(budget, blobs):
    cross_validate(_mixture(budget), blobs, cv=2, n_jobs=2)
    assert budget.account()["charges"] == 2


def test_the_cli_sees_the_same_ledger(budget, blobs, cli):
    _mixture(budget).fit(blobs)
    (account,) = json.loads(cli("budget", "show", "--budget-file", budget.path, "--json"))[
        "datasets"
    ]
    assert account == budget.account()


def test_budget_needs_a_data_set_name(tmp_path):
    with pytest.raises(ValueError, match="dataset"):
        dpem.Budget(tmp_path / "b.db", "")
