"""dpem.GradientEM: the same model file as `dpem fit gradient-em --output`
for the same data and seed (byte for byte), load and pickle, a model
fitted in Python scoring in `dpem score` as in Python and back, scoring
checked against scipy's densities, recovery of the generating beta, and the
privacy conventions (no defaults for epsilon, sigma, tau and the
iterations; a seed voids a private fit; the budget charged once)."""

import json
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import dpem

PRIVATE = {"epsilon": 1.0, "delta": 1e-5}


@pytest.fixture(scope="module")
def generated(cli, tmp_path_factory):
    """For each model, `dpem generate` data (n = 3000, d = 4, SNR 3; rmc with
    20% missing covariates) as (path of the .npy file, X, y, beta*), X and y
    split as the estimator takes them (rmc: NaN where missing)."""
    folder = tmp_path_factory.mktemp("gradient_em")
    data = {}
    for model in ("gmm", "mrm", "rmc"):
        path, truth = folder / f"{model}.npy", folder / f"{model}.json"
        extra = ["--missing-prob", 0.2] if model == "rmc" else []
        cli("generate", "--model", model, "--n", 3000, "--d", 4, "--snr", 3, "--seed", 5,
            *extra, "--output", path, "--truth", truth)
        records = np.load(path)
        beta = np.array(json.loads(truth.read_text())["beta"])
        if model == "gmm":
            X, y = records, None
        else:
            y, X = records[:, 0], records[:, 1:5].copy()
            if model == "rmc":
                X[records[:, 5:] == 0] = np.nan
        data[model] = (path, X, y, beta)
    return data


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpem.PrivacyLeakWarning)
        return estimator.fit(X, y)


# (model, the estimator's parameters, the same fit's `dpem fit gradient-em` flags).
CASES = {
    "gmm-dp": ("gmm", dict(**PRIVATE, sigma=1.0, tau=10.0, max_iter=8),
               ["--epsilon", 1, "--delta", 1e-5, "--sigma", 1, "--tau", 10, "--iterations", 8]),
    "gmm-clipped": ("gmm", dict(method="clipped", **PRIVATE, sigma=1.0, tau=None, clip=2.0,
                                max_iter=6, accountant="zcdp"),
                    ["--method", "clipped", "--epsilon", 1, "--delta", 1e-5, "--sigma", 1,
                     "--clip", 2, "--iterations", 6, "--accountant", "zcdp"]),
    "gmm-dp-em": ("gmm", dict(method="dp-em", **PRIVATE, sigma=1.0, tau=12.0, max_iter=5,
                              zeta=0.05),
                  ["--method", "dp-em", "--epsilon", 1, "--delta", 1e-5, "--sigma", 1,
                   "--tau", 12, "--iterations", 5, "--zeta", 0.05]),
    "mrm-dp-paper": ("mrm", dict(**PRIVATE, sigma=1.0, tau=10.0, max_iter=8,
                                 calibration="paper", step=0.8),
                     ["--epsilon", 1, "--delta", 1e-5, "--sigma", 1, "--tau", 10,
                      "--iterations", 8, "--calibration", "paper", "--step", 0.8]),
    "rmc-dp": ("rmc", dict(**PRIVATE, sigma=1.0, tau=10.0, max_iter=8, robust_scale=6.0),
               ["--epsilon", 1, "--delta", 1e-5, "--sigma", 1, "--tau", 10, "--iterations", 8,
                "--robust-scale", 6]),
    "mrm-plain": ("mrm", dict(epsilon=math.inf, sigma=1.0, tau=None, max_iter=10,
                              init=[1.0, 0.5, -0.5, 0.0]),
                  ["--method", "nonprivate", "--sigma", 1, "--iterations", 10,
                   "--init", "1,0.5,-0.5,0"]),
}


def _estimator(case):
    model, params, _ = CASES[case]
    return dpem.GradientEM(model, **params, random_state=11)


def _cli_fit(cli, case, path, output):
    """`dpem fit gradient-em` of the case on the file `path`, seeded with
    11, writing its model file to `output`; returns what --json prints."""
    model, _, flags = CASES[case]
    return cli("fit", "gradient-em", "--model", model, *flags, "--seed", 11, "--input", path,
               "--json", "--output", output)


@pytest.mark.parametrize("case", CASES)
def test_python_and_cli_write_the_same_model_file(case, generated, cli, tmp_path):
    model, _, _ = CASES[case]
    path, X, y, _ = generated[model]
    _fit(_estimator(case), X, y).to_json(tmp_path / "python.json")
    out = _cli_fit(cli, case, path, tmp_path / "cli.json")
    assert (tmp_path / "python.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert json.loads(out)["format"] == "dpem-gradient-em"
    assert (tmp_path / "cli.json").read_text() == out


@pytest.mark.parametrize("case", CASES)
def test_a_python_model_scores_the_same_in_the_cli(case, generated, cli, tmp_path):
    # The CLI reads the records in the fit's columns: gmm y_1..y_d; mrm y,
    # x_1..x_d; rmc y, x_1..x_d, z_1..z_d (the generated file itself).
    model, _, _ = CASES[case]
    path, X, y, _ = generated[model]
    estimator = _fit(_estimator(case), X, y)
    estimator.to_json(tmp_path / "model.json")
    scores = json.loads(cli("score", "--model", tmp_path / "model.json", "--input", path,
                            "--json"))
    assert scores["n"] == len(X)
    assert scores["mean_log_likelihood"] == estimator.score(X, y)


@pytest.mark.parametrize("case", CASES)
def test_a_cli_model_scores_the_same_in_python(case, generated, cli, tmp_path):
    model, _, _ = CASES[case]
    path, X, y, _ = generated[model]
    _cli_fit(cli, case, path, tmp_path / "cli.json")
    loaded = dpem.load(tmp_path / "cli.json")
    scores = json.loads(cli("score", "--model", tmp_path / "cli.json", "--input", path,
                            "--json"))
    assert loaded.score(X, y) == scores["mean_log_likelihood"]
    # The same seed gives the same parameters in Python as in the CLI.
    assert np.array_equal(loaded.beta_, _fit(_estimator(case), X, y).beta_)


@pytest.mark.parametrize("case", CASES)
def test_load_and_pickle_give_the_fitted_estimator(case, generated, cli, tmp_path):
    model, params, _ = CASES[case]
    path, X, y, _ = generated[model]
    estimator = _fit(_estimator(case), X, y)
    _cli_fit(cli, case, path, tmp_path / "cli.json")
    loaded = dpem.load(tmp_path / "cli.json")
    assert type(loaded) is dpem.GradientEM and loaded.model == model
    given = estimator.get_params()
    for name in ("epsilon", "delta", "sigma", "max_iter", "step", "random_state"):
        assert loaded.get_params()[name] == given[name], name
    for name in ("tau", "clip", "zeta", "accountant", "calibration"):
        if name in params:
            assert loaded.get_params()[name] == given[name], name
    assert np.array_equal(loaded.beta_, estimator.beta_)
    assert loaded.privacy_ == estimator.privacy_ and loaded.n_features_in_ == 4
    assert loaded.score(X, y) == estimator.score(X, y)
    loaded.to_json(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    copy = pickle.loads(pickle.dumps(estimator))
    assert copy._model_json == estimator._model_json
    assert copy.score(X, y) == estimator.score(X, y)


def test_plain_fits_recover_the_generating_beta(generated):
    # Gradient EM on 3000 records at SNR 3 (sigma = 1, ||beta*|| = 3): beta
    # within 0.25 of beta* (of -beta* for the symmetric gmm and mrm).
    for model in ("gmm", "mrm", "rmc"):
        _, X, y, truth = generated[model]
        fit = dpem.GradientEM(model, epsilon=math.inf, sigma=1.0, tau=None, max_iter=40,
                              random_state=3).fit(X, y)
        error = np.linalg.norm(fit.beta_ - truth)
        if model != "rmc":
            error = min(error, np.linalg.norm(fit.beta_ + truth))
        assert error < 0.25, (model, fit.beta_, truth)
        assert fit.privacy_["private"] is False and fit.n_iter_ == 40


def test_gmm_scores_are_the_mixture_density(generated):
    _, X, _, _ = generated["gmm"]
    fit = _fit(_estimator("gmm-dp"), X, None)
    beta, x = fit.beta_, X[:200]
    components = np.stack([
        stats.multivariate_normal(beta, np.eye(4)).logpdf(x),
        stats.multivariate_normal(-beta, np.eye(4)).logpdf(x),
    ], axis=1) + np.log(0.5)
    assert np.allclose(fit.score_samples(x), logsumexp(components, axis=1), rtol=1e-12)
    assert fit.score(x) == pytest.approx(logsumexp(components, axis=1).mean(), rel=1e-12)
    posterior = np.exp(components - logsumexp(components, axis=1, keepdims=True))
    assert np.allclose(fit.predict_proba(x), posterior, rtol=1e-9, atol=1e-15)
    assert np.array_equal(fit.predict(x), np.argmax(posterior, axis=1))
    assert np.array_equal(fit.means_, [beta, -beta])
    # Far from both means, where the densities underflow: still finite.
    assert np.isfinite(fit.score_samples(np.full((1, 4), 1e6))).all()


def test_regression_scores_are_the_conditional_densities(generated):
    _, X, y, _ = generated["mrm"]
    fit = _fit(_estimator("mrm-dp-paper"), X, y)
    m = X @ fit.beta_
    expected = np.logaddexp(stats.norm(m, 1).logpdf(y), stats.norm(-m, 1).logpdf(y)) + np.log(0.5)
    assert fit.score(X, y) == pytest.approx(expected.mean(), rel=1e-12)
    assert not hasattr(fit, "predict") and not hasattr(fit, "score_samples")
    assert np.array_equal(fit.coef_, fit.beta_)

    _, X, y, _ = generated["rmc"]
    fit = _fit(_estimator("rmc-dp"), X, y)
    missing = np.isnan(X)
    mean = np.nansum(X * fit.beta_, axis=1)
    scale = np.sqrt(1.0 + (missing * fit.beta_ ** 2).sum(axis=1))
    assert fit.score(X, y) == pytest.approx(stats.norm(mean, scale).logpdf(y).mean(), rel=1e-12)
    assert np.allclose(fit.predict(X), mean, rtol=1e-12, atol=1e-12)


def test_parameters_without_defaults():
    for missing in ("epsilon", "sigma", "tau", "max_iter"):
        params = {"epsilon": 1.0, "sigma": 1.0, "tau": 1.0, "max_iter": 5}
        del params[missing]
        with pytest.raises(TypeError, match=missing):
            dpem.GradientEM("gmm", **params)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"tau": None}, "tau: the public second-moment bound is required"),
        ({"method": "clipped", "tau": None}, "clip: the clipping threshold C is required"),
        ({"method": "clipped", "clip": 1.0, "robust_scale": 2.0}, "robust_scale: applies to"),
        ({"method": "nonprivate"}, "epsilon: method 'nonprivate' is a plain fit"),
        ({"epsilon": math.inf, "delta": None, "method": "dp"}, "epsilon: method 'dp' is private"),
        ({"epsilon": math.inf, "delta": None}, "tau: not used by method 'nonprivate'"),
        ({"epsilon": 0.0}, "epsilon must be finite and > 0"),
        ({"delta": None}, "delta must be in \\(0, 1\\)"),
        ({"model": "hmm"}, "model: "),
        ({"method": "newton"}, "method: "),
        ({"max_iter": 0}, "iterations T must be in"),
        ({"init": [1.0, 2.0]}, "initial beta must have d = 4"),
    ],
)
def test_errors_name_the_parameter_and_leave_nothing_fitted(params, message, generated):
    _, X, y, _ = generated["rmc"]
    base = dict(model="rmc", epsilon=1.0, delta=1e-5, sigma=1.0, tau=10.0, max_iter=3)
    estimator = dpem.GradientEM(**{**base, **params})
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)


def test_data_is_checked(generated):
    _, X, y, _ = generated["rmc"]
    make = lambda model: dpem.GradientEM(model, epsilon=math.inf, sigma=1.0, tau=None,
                                         max_iter=3)
    with pytest.raises(ValueError, match="requires y to be passed"):
        make("mrm").fit(np.nan_to_num(X))
    with pytest.raises(ValueError, match="Input y contains NaN"):
        make("rmc").fit(X, np.where(np.arange(len(y)) == 3, np.nan, y))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make("rmc").fit(X, y[:-1])
    bad = np.nan_to_num(X)
    bad[6, 2] = np.nan
    with pytest.raises(ValueError, match="X: record 7 has a NaN or infinite value"):
        make("mrm").fit(bad, y)
    bad[6, 2] = np.inf  # rmc: NaN is a missing covariate, an infinite one is refused.
    with pytest.raises(ValueError, match="X: record 7 has a NaN or infinite value"):
        make("rmc").fit(bad, y)
    fit = make("rmc").fit(X, y)
    with pytest.raises(ValueError, match="X: record 7 has a NaN or infinite value"):
        fit.predict(bad)
    with pytest.raises(ValueError, match="requires y to be passed"):
        fit.fit(X)  # A refused refit leaves nothing fitted.
    with pytest.raises(NotFittedError):
        check_is_fitted(fit)


def test_a_seed_voids_a_private_fit_and_unseeded_fits_differ(generated):
    _, X, y, _ = generated["mrm"]
    make = lambda **kw: dpem.GradientEM("mrm", **PRIVATE, sigma=1.0, tau=10.0, max_iter=4, **kw)
    with pytest.warns(dpem.PrivacyLeakWarning, match="VOID"):
        seeded = make(random_state=7).fit(X, y)
    assert seeded.privacy_["guarantee_void"] is True and seeded.privacy_["seed"] == 7
    assert _fit(make(random_state=7), X, y)._model_json == seeded._model_json
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpem.PrivacyLeakWarning)
        first, second = make().fit(X, y), make().fit(X, y)
    assert first.privacy_["guarantee_void"] is False and "seed" not in first.privacy_
    assert 0 < first.privacy_["epsilon"] <= 1.0 and len(first.privacy_["releases"]) == 4
    assert not np.array_equal(first.beta_, second.beta_)
    assert first._get_tags()["non_deterministic"] is True


def test_the_budget_is_charged_once(generated, tmp_path):
    _, X, _, _ = generated["gmm"]
    budget = dpem.Budget(tmp_path / "budget.db", "gmm").init(2.0, 1e-4)
    fit = dpem.GradientEM("gmm", **PRIVATE, sigma=1.0, tau=10.0, max_iter=4,
                          budget=budget).fit(X)
    account = budget.account()
    assert account["charges"] == 1
    assert account["spent_epsilon"] == pytest.approx(1.0, rel=1e-9)
    assert account["spent_epsilon"] >= fit.privacy_["epsilon"]
    with pytest.raises(ValueError, match="non-private fit cannot be charged"):
        dpem.GradientEM("gmm", epsilon=math.inf, sigma=1.0, tau=None, max_iter=4,
                        budget=budget).fit(X)
    assert budget.account()["charges"] == 1


def test_dataframe_names_are_kept_in_the_result(generated, tmp_path):
    _, X, y, _ = generated["mrm"]
    frame = pd.DataFrame(X, columns=["age", "dose", "weight", "height"])
    fit = dpem.GradientEM("mrm", epsilon=math.inf, sigma=1.0, tau=None, max_iter=3,
                          random_state=1).fit(frame, y)
    assert list(fit.feature_names_in_) == ["age", "dose", "weight", "height"]
    assert json.loads(fit._model_json)["feature_names"] == list(frame.columns)
    fit.to_json(tmp_path / "named.json")
    assert list(dpem.load(tmp_path / "named.json").feature_names_in_) == list(frame.columns)
    with pytest.raises(ValueError, match="feature names"):
        fit.score(frame.rename(columns={"age": "years"}), y)
