"""dpem.GaussianMixture: a differentially private Gaussian mixture with the
names of scikit-learn's ``sklearn.mixture.GaussianMixture``."""

import numpy as np
from scipy import linalg
from sklearn.base import DensityMixin

from . import _core
from ._base import DpemEstimator, LikelihoodMixin, estimator_init


class GaussianMixture(LikelihoodMixin, DensityMixin, DpemEstimator):
    """A Gaussian mixture fitted by differentially private EM.

    The fit releases, every iteration, the mixture's sufficient statistics
    with calibrated Gaussian noise (docs/gmm.md); ``epsilon=float("inf")``
    fits plain EM with the same code and no noise.

    Parameters
    ----------
    n_components : int
        The number of components K (1 <= K <= n_samples).
    covariance_type : {"full", "diag", "spherical"}, default="full"
    epsilon : float
        The total privacy budget (> 0), or ``float("inf")`` for plain EM.
        Keyword-only, no default.
    delta : float or None, default=None
        The total delta in (0, 1); required by a private fit.
    data_norm : float, "auto", "from_data" or None
        The PUBLIC bound R on each record's L2 norm around ``data_center``;
        records beyond it are clipped. Keyword-only, no default: a private fit
        without it raises ValueError. ``"auto"`` releases the centre and R
        from the data privately, at ``bounds_epsilon`` out of ``epsilon``
        (the CLI's ``--data-norm auto``; docs/bounds.md). ``"from_data"``
        takes R from the data's largest record, which reveals it: the fit
        warns :class:`dpem.PrivacyLeakWarning` and its guarantee is void.
        None is accepted by plain fits only (R is then the data's).
    data_center : array-like of shape (n_features,) or None, default=None
        The PUBLIC centre of the domain (the origin when None; None with
        ``"auto"``, which releases it).
    bounds_epsilon : float or None, default=None
        With ``data_norm="auto"`` (and only then): the pure epsilon spent on
        the domain, in (0, epsilon); the fit gets the rest. The budget is
        charged once, with ``epsilon``, and ``privacy_`` lists the domain's
        releases first.
    max_iter : int or None, default=None
        The number of EM iterations J, all run (no convergence test). None:
        for a private fit from the private start 10 when its noise is small
        for the data's size, else the adaptive schedule of 6 releases
        (``adaptive_iterations``; 3 with it off; docs/gmm.md, "Choosing J"),
        10 from a random start, 100 for plain EM. ``n_iter_`` says which J
        ran.
    accountant : str, default="rdp"
        The composition that calibrates the noise (docs/accounting.md).
    mechanisms : {"joint", "GGG", "LLG"}, default="joint"
    estimator : {"mle", "map"}, default="mle"
        Maximum likelihood, or park2017's MAP estimate with its priors (the
        CLI's ``--estimator``).
    covariance_floor : float, default=1e-6
        Added to every covariance's diagonal, in the unit ball's units (the
        data divided by ``data_norm``; at least 1e-10): the CLI's
        ``--covariance-floor``. Unlike scikit-learn's ``reg_covar`` it is
        not in the data's units.
    init : {"private", "kmeans++", "random"} or None, default=None
        The start; None: "private" for private fits (20% of the budget),
        "kmeans++" for plain EM.
    start_cell_frames : bool, default=True
        The private start's cell frames (the CLI's ``--start-cell-frames``;
        docs/gmm.md, "Cell frames in the fine round"): the records near each
        cell's candidate are released in a frame of the cell's size, which
        sharpens the start where clusters are compact, at the same
        sensitivity. Used with the private start only.
    component_frames : bool, default=True
        Release each component's statistics in a ball around it (the joint
        mechanism only; ``--component-frames``; docs/gmm.md, "Component
        frames").
    frame_radius : float, default=0.0
        The component frames' radius in Mahalanobis units; 0 is the adaptive
        rule (``--frame-radius``).
    frame_clip_correction : bool, default=True
        Undo the frames' clipping shrinkage (``--frame-clip-correction``).
    spherical_first_iteration : bool, default=False
    diagonal_first_iteration : bool, default=True
    budget_schedule : bool, default=True
        The lighter first iteration and its share of the budget
        (``--spherical-first-iteration``, ``--diagonal-first-iteration``,
        ``--budget-schedule``; docs/gmm.md). A fitted model records which
        first iteration a fit used, not these options, so :func:`dpem.load`
        gives them their defaults.
    iterate_averaging : bool, default=True
        From the private start, when the noise is large for the data (the
        rule that keeps the default ``max_iter`` at 3), a fit of
        ``max_iter`` >= 4 returns a weighted average of its last
        ``max_iter // 2`` iterates, the later ones weighing more, instead of
        the last one: less noise, the same releases (``--iterate-averaging``;
        docs/gmm.md, "Averaging the last iterates").
        ``privacy_["averaged_iterations"]`` says how many a fit averaged
        (1: the last iterate alone); :func:`dpem.load` gives the option its
        default.
    adaptive_iterations : bool, default=True
        From the private start with ``max_iter`` unset, where the noise is
        large for the data (where ``max_iter`` would be 3): plan 6 releases,
        the third holding back 70% of its budget; if the released means have
        settled after it, the last three re-release its statistics (the
        noise of the 3-iteration fit's last release), otherwise they are
        three more EM iterations. The same releases either way (``--adaptive-iterations``;
        docs/gmm.md, "Adaptive J"). ``privacy_["adaptive_iterations"]``, if
        present, says whether the fit had settled and the movement that
        decided it; :func:`dpem.load` gives the option its default.
    random_state : int, RandomState or None, default=None
        Seeds the noise and the sampling. On a private fit this makes the
        noise reproducible, so the guarantee is VOID (PrivacyLeakWarning).
    budget : dpem.Budget or None, default=None
        Charged with (epsilon, delta) before the data is read.
    n_jobs : int or None, default=None
        Threads of the fit (None or -1: all cores). The result does not
        depend on it.

    Attributes
    ----------
    weights_, means_, covariances_, precisions_cholesky_
        As scikit-learn's, in the data's units.
    privacy_ : dict
        The model file's privacy block: target and certified (epsilon,
        delta), accountant, every release, and ``guarantee_void``.
    n_iter_ : int
        The iterations run.
    n_features_in_, feature_names_in_
    """

    _required_parameters = ["n_components", "epsilon", "data_norm"]
    _fit_function = staticmethod(_core.fit_gmm)
    _model_class = _core.GmmModel
    _model_format = "dpem-gmm"
    _model_params = ("n_components", "max_iter", "covariance_type", "estimator",
                     "covariance_floor", "init", "mechanisms", "start_cell_frames",
                     "component_frames", "frame_radius", "frame_clip_correction",
                     "spherical_first_iteration", "diagonal_first_iteration", "budget_schedule",
                     "iterate_averaging", "adaptive_iterations")

    __init__ = estimator_init("n_components", [
        ("covariance_type", "full"), "epsilon", "delta", "data_norm", "data_center",
        "bounds_epsilon", "max_iter", "accountant", ("mechanisms", "joint"),
        ("estimator", "mle"), ("covariance_floor", 1e-6), "init", ("start_cell_frames", True),
        ("component_frames", True), ("frame_radius", 0.0), ("frame_clip_correction", True),
        ("spherical_first_iteration", False), ("diagonal_first_iteration", True),
        ("budget_schedule", True), ("iterate_averaging", True),
        ("adaptive_iterations", True), "random_state", "budget",
        "n_jobs"])

    def _set_model_attributes(self, model, document):
        self.weights_ = np.asarray(model.weights)
        self.means_ = np.asarray(model.means)
        full = np.asarray(model.covariances)
        kind = document["covariance_type"]
        if kind == "full":
            self.covariances_ = full
        elif kind == "diag":
            self.covariances_ = np.diagonal(full, axis1=1, axis2=2).copy()
        else:
            self.covariances_ = full[:, 0, 0].copy()
        self.precisions_cholesky_ = _precisions_cholesky(full, kind)

    @staticmethod
    def _own_params_of_model(document, privacy):
        params = {
            "n_components": int(document["components"]),
            "covariance_type": document["covariance_type"],
            "max_iter": int(document["iterations"]),
            "init": document.get("init"),
            "estimator": document.get("estimator", "mle"),
        }
        if privacy.get("private", False):
            params.update(accountant=privacy["accountant"], mechanisms=privacy["mechanisms"],
                          start_cell_frames=bool(privacy.get("start_cell_frames", False)))
            if privacy["mechanisms"] == "joint":  # Frames apply to the joint release only.
                params.update(
                    component_frames=privacy.get("component_frame_radius", 0.0) > 0.0,
                    frame_radius=(privacy["component_frame_radius"]
                                  if privacy.get("component_frame_rule") == "fixed" else 0.0),
                    frame_clip_correction=bool(privacy.get("frame_clip_correction", True)))
        return params

    def predict(self, X):
        """The most probable component of each row of X."""
        return np.asarray(self._model.predict(self._rows_for_model(X)), dtype=np.int64)

    def fit_predict(self, X, y=None):
        """Fits X, then predicts its components."""
        return self.fit(X).predict(X)

    def predict_proba(self, X):
        """Each row's posterior probability of each component (n x K)."""
        return self._model.predict_proba(self._rows_for_model(X))

    def sample(self, n_samples=1):
        """Draws (X, y): n_samples synthetic records and their components.

        Sampling is post-processing: it spends no budget. The draws come from
        the operating system's CSPRNG unless ``random_state`` is set (the
        same draws as ``dpem sample --seed``).
        """
        draws, labels = self._draw_samples(n_samples)
        return draws, np.asarray(labels, dtype=np.int64)

    def _n_parameters(self):
        k, d = self.means_.shape
        covariance = {"full": d * (d + 1) / 2.0, "diag": d, "spherical": 1}
        return int(k * covariance[self.covariance_type] + k * d + k - 1)

    def _minus_twice_log_likelihood(self, X):
        """(-2 log L of X, n): the criteria's first term and X's size."""
        rows = self._rows_for_model(X)
        return -2 * float(self._model.score(rows)) * rows.shape[0], rows.shape[0]

    def bic(self, X):
        """The Bayesian information criterion of X (lower is better)."""
        fit, n = self._minus_twice_log_likelihood(X)
        return fit + self._n_parameters() * np.log(n)

    def aic(self, X):
        """Akaike's information criterion of X (lower is better)."""
        fit, _ = self._minus_twice_log_likelihood(X)
        return fit + 2 * self._n_parameters()


def _precisions_cholesky(full, kind):
    """scikit-learn's precisions_cholesky_ of K full covariance matrices
    that have the structure ``kind``."""
    if kind == "full":
        d = full.shape[1]
        return np.stack(
            [
                linalg.solve_triangular(linalg.cholesky(c, lower=True), np.eye(d), lower=True).T
                for c in full
            ]
        )
    diagonal = np.diagonal(full, axis1=1, axis2=2)
    return 1.0 / np.sqrt(diagonal if kind == "diag" else diagonal[:, 0])
