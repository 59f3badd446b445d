"""Model files, dpem.load and pickle; and the CLI: the same input and seed
give the same model file byte for byte, and a model fitted in Python scores,
predicts and samples in the CLI as in Python."""

import json
import math
import pickle

import numpy as np
import pytest

import dpem

from conftest import GOWALLA_DOMAIN

GOWALLA_FLAGS = ["--data-norm", "0.36", "--data-center", "40.70,-73.98"]

# (estimator, the same fit as `dpem fit` arguments), all seeded with 11.
CASES = {
    "gmm-private": (
        dpem.GaussianMixture(
            5, epsilon=1.0, delta=1e-5, random_state=11, **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 5, "--epsilon", 1, "--delta", 1e-5, *GOWALLA_FLAGS],
    ),
    "gmm-private-diag-ggg": (
        dpem.GaussianMixture(
            3, covariance_type="diag", mechanisms="GGG", max_iter=6, accountant="zcdp",
            epsilon=2.0, delta=1e-6, random_state=11, **GOWALLA_DOMAIN,
        ),
        ["gmm", "--components", 3, "--covariance", "diag", "--mechanisms", "GGG",
         "--iterations", 6, "--accountant", "zcdp", "--epsilon", 2, "--delta", 1e-6,
         *GOWALLA_FLAGS],
    ),
    "gmm-private-no-cell-frames": (
        dpem.GaussianMixture(
            5, epsilon=1.0, delta=1e-5, start_cell_frames=False, random_state=11,
            **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 5, "--epsilon", 1, "--delta", 1e-5, "--start-cell-frames",
         "off", *GOWALLA_FLAGS],
    ),
    "gmm-private-averaged": (  # Noisy for the data: the last 5 iterates averaged.
        dpem.GaussianMixture(
            5, epsilon=0.5, delta=1e-5, max_iter=10, random_state=11, **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 5, "--epsilon", 0.5, "--delta", 1e-5, "--iterations", 10,
         *GOWALLA_FLAGS],
    ),
    "gmm-private-last-iterate": (
        dpem.GaussianMixture(
            5, epsilon=0.5, delta=1e-5, max_iter=10, iterate_averaging=False, random_state=11,
            **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 5, "--epsilon", 0.5, "--delta", 1e-5, "--iterations", 10,
         "--iterate-averaging", "off", *GOWALLA_FLAGS],
    ),
    "gmm-private-adaptive": (  # Noisy for the data: the default J is adaptive.
        dpem.GaussianMixture(5, epsilon=0.5, delta=1e-5, random_state=11, **GOWALLA_DOMAIN),
        ["gmm", "--components", 5, "--epsilon", 0.5, "--delta", 1e-5, *GOWALLA_FLAGS],
    ),
    "gmm-private-adaptive-off": (
        dpem.GaussianMixture(
            5, epsilon=0.5, delta=1e-5, adaptive_iterations=False, random_state=11,
            **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 5, "--epsilon", 0.5, "--delta", 1e-5, "--adaptive-iterations",
         "off", *GOWALLA_FLAGS],
    ),
    "gmm-private-options": (
        dpem.GaussianMixture(
            4, epsilon=1.0, delta=1e-5, estimator="map", covariance_floor=1e-5,
            frame_radius=2.5, frame_clip_correction=False, spherical_first_iteration=True,
            diagonal_first_iteration=False, budget_schedule=False, random_state=11,
            **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 4, "--epsilon", 1, "--delta", 1e-5, "--estimator", "map",
         "--covariance-floor", 1e-5, "--frame-radius", 2.5, "--frame-clip-correction", "off",
         "--spherical-first-iteration", "on", "--diagonal-first-iteration", "off",
         "--budget-schedule", "off", *GOWALLA_FLAGS],
    ),
    "gmm-private-no-component-frames": (
        dpem.GaussianMixture(
            3, epsilon=1.0, delta=1e-5, component_frames=False, random_state=11,
            **GOWALLA_DOMAIN
        ),
        ["gmm", "--components", 3, "--epsilon", 1, "--delta", 1e-5, "--component-frames", "off",
         *GOWALLA_FLAGS],
    ),
    "gmm-plain": (
        dpem.GaussianMixture(4, epsilon=math.inf, random_state=11, max_iter=20,
                             **GOWALLA_DOMAIN),
        ["gmm", "--components", 4, "--epsilon", "inf", "--iterations", 20, *GOWALLA_FLAGS],
    ),
    "kmeans-private": (
        dpem.KMeans(5, epsilon=1.0, delta=1e-5, random_state=11, **GOWALLA_DOMAIN),
        ["kmeans", "--method", "cdp-gauss", "--components", 5, "--epsilon", 1,
         "--delta", 1e-5, *GOWALLA_FLAGS],
    ),
    "kmeans-dplloyd": (
        dpem.KMeans(4, method="dplloyd", max_iter=5, epsilon=2.0, random_state=11,
                    **GOWALLA_DOMAIN),
        ["kmeans", "--method", "dplloyd", "--components", 4, "--iterations", 5,
         "--epsilon", 2, *GOWALLA_FLAGS],
    ),
    "fa-private": (
        dpem.FactorAnalysis(1, epsilon=1.0, delta=1e-5, random_state=11, **GOWALLA_DOMAIN),
        ["fa", "--factors", 1, "--epsilon", 1, "--delta", 1e-5, *GOWALLA_FLAGS],
    ),
}


def _fit(estimator, X):
    with pytest.warns(dpem.PrivacyLeakWarning) if estimator.epsilon != math.inf else _none():
        return estimator.fit(X)


class _none:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture(scope="module")
def gowalla_npy(gowalla, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "gowalla.npy"
    np.save(path, gowalla)
    return path


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_python_and_cli_write_the_same_model_file(case, gowalla, gowalla_npy, cli, tmp_path):
    estimator, arguments = CASES[case]
    _fit(estimator, gowalla).to_json(tmp_path / "python.json")
    cli("fit", *arguments, "--seed", 11, "--quiet", "--input", gowalla_npy,
        "--output", tmp_path / "cli.json")
    assert (tmp_path / "python.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


def test_iterate_averaging_is_recorded(gowalla):
    averaged = _fit(CASES["gmm-private-averaged"][0], gowalla)
    last = _fit(CASES["gmm-private-last-iterate"][0], gowalla)
    assert averaged.privacy_["averaged_iterations"] == 5
    assert last.privacy_["averaged_iterations"] == 1
    # The same seed, so the same releases; only the returned parameters differ.
    assert averaged.privacy_["releases"] == last.privacy_["releases"]
    assert not np.array_equal(averaged.means_, last.means_)


def test_adaptive_iterations_are_recorded(gowalla):
    adaptive = _fit(CASES["gmm-private-adaptive"][0], gowalla)
    fixed = _fit(CASES["gmm-private-adaptive-off"][0], gowalla)
    assert adaptive.n_iter_ == 6 and fixed.n_iter_ == 3
    choice = adaptive.privacy_["adaptive_iterations"]
    assert choice["settled"] == (choice["movement"] < 1.0)
    assert adaptive.privacy_["averaged_iterations"] == (1 if choice["settled"] else 3)
    assert "adaptive_iterations" not in fixed.privacy_
    # The start's two releases and the first two iterations' have the same
    # shares of the budget (their noise agrees to the calibration's last
    # digits: six releases or three at the same total); the third holds back
    # 70% of its share for the three later ones.
    releases, three = adaptive.privacy_["releases"], fixed.privacy_["releases"]
    assert len(releases) == 8 and len(three) == 5
    for a, b in zip(releases[:4], three[:4]):
        assert a["label"] == b["label"]
        assert a["noise_scale"] == pytest.approx(b["noise_scale"], rel=1e-3)
    assert releases[4]["noise_scale"] == pytest.approx(three[4]["noise_scale"] / 0.3 ** 0.5,
                                                       rel=1e-3)
    assert [r["label"] for r in releases[5:]] == [
        f"iteration {it} / joint statistics" for it in (4, 5, 6)]


@pytest.mark.parametrize("case", ["gmm-private", "kmeans-private", "fa-private"])
def test_a_python_model_scores_the_same_in_the_cli(case, gowalla, gowalla_npy, cli, tmp_path):
    estimator, _ = CASES[case]
    _fit(estimator, gowalla).to_json(tmp_path / "model.json")
    scores = json.loads(cli("score", "--model", tmp_path / "model.json",
                            "--input", gowalla_npy, "--json"))
    if case.startswith("kmeans"):
        assert scores["nicv"] == estimator.nicv(gowalla)
        assert estimator.score(gowalla) == pytest.approx(-scores["nicv"] * len(gowalla), 1e-12)
    else:
        assert scores["mean_log_likelihood"] == estimator.score(gowalla)
    if not case.startswith("fa"):
        labels = cli("predict", "--model", tmp_path / "model.json", "--input", gowalla_npy)
        assert np.array_equal(np.array(labels.split(), dtype=int), estimator.predict(gowalla))


def test_a_python_mixture_samples_as_the_cli_does(gowalla, cli, tmp_path):
    estimator, _ = CASES["gmm-private"]
    _fit(estimator, gowalla).to_json(tmp_path / "model.json")
    cli("sample", "--model", tmp_path / "model.json", "-n", 50, "--seed", 11,
        "--output", tmp_path / "synthetic.csv")
    draws, labels = estimator.sample(50)
    assert np.array_equal(np.loadtxt(tmp_path / "synthetic.csv", delimiter=","), draws)
    assert labels.shape == (50,) and set(labels) <= set(range(5))


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_load_returns_the_fitted_estimator(case, gowalla, tmp_path):
    estimator, _ = CASES[case]
    _fit(estimator, gowalla).to_json(tmp_path / "model.json")
    loaded = dpem.load(tmp_path / "model.json")
    assert type(loaded) is type(estimator)
    # The parameters the file records; max_iter and init as the fit resolved them.
    params, given = loaded.get_params(), estimator.get_params()
    for name in ("epsilon", "delta", "data_norm", "data_center", "random_state"):
        assert params[name] == given[name], name
    if case.startswith("gmm"):
        for name in ("covariance_type", "estimator", "mechanisms", "start_cell_frames",
                     "component_frames", "frame_radius", "frame_clip_correction"):
            assert params[name] == given[name], name
    # Factor analysis may stop before max_iter (tol); the rest run them all.
    assert loaded.n_iter_ == estimator.n_iter_
    assert loaded.max_iter == (estimator.max_iter or 100 if case.startswith("fa")
                               else estimator.n_iter_)
    if case.startswith("fa"):
        assert 1 <= estimator.n_iter_ <= loaded.max_iter and loaded.tol == estimator.tol
    assert loaded.privacy_ == estimator.privacy_
    assert loaded.score(gowalla) == estimator.score(gowalla)
    loaded.to_json(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "model.json").read_bytes()


def test_load_reads_a_model_file_of_the_cli(gowalla_npy, gowalla, cli, tmp_path):
    cli("fit", "gmm", "--components", 3, "--epsilon", 1, "--delta", 1e-5, *GOWALLA_FLAGS,
        "--quiet", "--input", gowalla_npy, "--output", tmp_path / "cli.json")
    loaded = dpem.load(tmp_path / "cli.json")
    assert isinstance(loaded, dpem.GaussianMixture) and loaded.n_components == 3
    assert loaded.privacy_["guarantee_void"] is False
    scores = json.loads(cli("score", "--model", tmp_path / "cli.json", "--input", gowalla_npy,
                            "--json"))
    assert loaded.score(gowalla) == scores["mean_log_likelihood"]


def test_load_refuses_other_files(tmp_path):
    (tmp_path / "other.json").write_text('{"format": "something"}')
    with pytest.raises(ValueError, match="not a dpem model file"):
        dpem.load(tmp_path / "other.json")


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_pickle_round_trips(case, gowalla):
    estimator, _ = CASES[case]
    _fit(estimator, gowalla)
    copy = pickle.loads(pickle.dumps(estimator))
    assert copy._model_json == estimator._model_json
    assert copy.score(gowalla) == estimator.score(gowalla)
    if hasattr(estimator, "predict"):
        assert np.array_equal(copy.predict(gowalla), estimator.predict(gowalla))
    if hasattr(estimator, "transform"):
        assert np.array_equal(copy.transform(gowalla), estimator.transform(gowalla))


def test_mixture_attributes_follow_scikit_learn(gowalla):
    from scipy import linalg
    # Free parameters of 3 components in 2-D: 2 weights, 6 means, and 9, 6
    # or 3 covariance entries.
    for kind, shape, free in [("full", (3, 2, 2), 17), ("diag", (3, 2), 14),
                              ("spherical", (3,), 11)]:
        gm = dpem.GaussianMixture(3, covariance_type=kind, epsilon=math.inf, random_state=0,
                                  **GOWALLA_DOMAIN).fit(gowalla)
        assert gm.weights_.shape == (3,) and gm.means_.shape == (3, 2)
        assert gm.covariances_.shape == shape
        assert gm.precisions_cholesky_.shape == shape
        full = gm._model.covariances
        for k in range(3):
            p = gm.precisions_cholesky_[k]
            p = p if kind == "full" else np.diag(np.broadcast_to(p, (2,)))
            assert np.allclose(p @ p.T, linalg.inv(full[k]), rtol=1e-9)
        n = len(gowalla)
        fit = -2 * gm.score(gowalla) * n
        assert gm.bic(gowalla) == pytest.approx(fit + free * np.log(n), rel=1e-12)
        assert gm.aic(gowalla) == pytest.approx(fit + 2 * free, rel=1e-12)
        assert np.mean(gm.score_samples(gowalla)) == pytest.approx(gm.score(gowalla), 1e-12)
        assert np.allclose(gm.predict_proba(gowalla).sum(axis=1), 1)


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
def test_factor_analysis_score_samples_is_the_gaussian_log_density(epsilon, blobs):
    from scipy import stats
    fa = dpem.FactorAnalysis(2, epsilon=epsilon, delta=1e-5, data_norm=5.0,
                             data_center=[0.1, -0.2, 0.0])
    fa.fit(blobs)
    # Independently of the library's Woodbury computation: the dense
    # covariance W W^T + Psi from the attributes, and scipy's density.
    w = fa.components_.T
    covariance = w @ w.T + np.diag(fa.noise_variance_)
    expected = stats.multivariate_normal(fa.mean_, covariance).logpdf(blobs)
    got = fa.score_samples(blobs)
    assert got.shape == (len(blobs),)
    # Both computations lose about cond(covariance) units in the last place:
    # an unseeded private fit's noise variances can be near the floor, where
    # 1e-10 alone failed 92 of 3,000 unseeded fits; this bound none (2026-11-24).
    rtol = max(1e-10, 1e-13 * np.linalg.cond(covariance))
    assert np.allclose(got, expected, rtol=rtol, atol=1e-10)
    assert np.mean(got) == pytest.approx(fa.score(blobs), rel=1e-12)
    assert np.array_equal(fa.mean_, [0.1, -0.2, 0.0])


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
def test_factor_analysis_tol_reaches_the_fit(epsilon, blobs, tmp_path):
    def fit(**kwargs):
        fa = dpem.FactorAnalysis(2, epsilon=epsilon, delta=1e-5, data_norm=5.0, max_iter=7,
                                 random_state=3, **kwargs)
        _fit(fa, blobs)
        fa.to_json(tmp_path / "fa.json")
        return fa, json.loads((tmp_path / "fa.json").read_text())

    every, document = fit(tol=0.0)  # 0: all max_iter iterations.
    assert every.n_iter_ == 7 and document["iterations_run"] == 7
    assert document["tolerance"] == 0.0
    loose, document = fit(tol=0.5)
    assert document["tolerance"] == 0.5 and loose.tol == 0.5
    assert 1 <= loose.n_iter_ == document["iterations_run"] <= 7
    with pytest.raises(ValueError, match="tolerance"):
        dpem.FactorAnalysis(2, epsilon=epsilon, delta=1e-5, data_norm=5.0, tol=-1.0).fit(blobs)
