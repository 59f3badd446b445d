"""dpem.GradientEM: DP gradient EM (wang-dp-gradient-em; docs/gradient_em.md)
for the paper's three models, as a scikit-learn estimator fitted by the
library's ``GradientEmFitTask`` through the same pipeline as ``dpem fit
gradient-em``, and scored by the library as ``dpem score`` scores its model
file."""

import math

import numpy as np
from scipy.special import expit
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

from . import _core
from ._base import REQUIRED, DpemEstimator, as_rows, estimator_init

_MODELS = ("gmm", "mrm", "rmc")


def _model_is(*kinds):
    """available_if's check: the method exists for these models only."""
    return lambda self: self.model in kinds


class GradientEM(DpemEstimator):
    """DP gradient EM (Wang et al., Algorithms 1-3) for three models:

    - ``"gmm"``: y = Z beta + V, Z = +-1 with probability 1/2, V ~ N(0,
      sigma^2 I): a symmetric two-component Gaussian mixture.
      ``fit(X)``, X the records y_i (y is ignored).
    - ``"mrm"``: y = Z <beta, x> + V: a symmetric mixture of two linear
      regressions. ``fit(X, y)``.
    - ``"rmc"``: y = <x, beta> + V with x ~ N(0, I) and covariates missing
      at random: linear regression with missing covariates. ``fit(X, y)``,
      NaN in X marking a missing covariate.

    Each iteration releases one d-vector (the robust, clipped or plain mean
    gradient) by the Gaussian mechanism; the result is the model file that
    ``dpem fit gradient-em --output`` writes (format "dpem-gradient-em":
    ``to_json``, :func:`dpem.load`), which ``dpem score`` reads with data in
    the fit's columns: gmm y_1..y_d; mrm y, x_1..x_d; rmc y, x_1..x_d,
    z_1..z_d (the response first; z_j = 1 observed, 0 missing).

    Parameters
    ----------
    model : {"gmm", "mrm", "rmc"}
    method : {"dp", "clipped", "dp-em", "nonprivate"} or None, default=None
        ``"dp"`` (Algorithm 2, robust mean), ``"clipped"`` (Algorithm 1),
        ``"dp-em"`` (Algorithm 3, gmm only), ``"nonprivate"`` (gradient EM).
        None: "dp" for a finite ``epsilon``, "nonprivate" for infinity.
    epsilon : float
        The total privacy budget (> 0), or ``float("inf")`` for plain
        gradient EM. Keyword-only, no default.
    delta : float or None, default=None
        The total delta in (0, 1); required by a private fit.
    sigma : float
        The model's noise level sigma (> 0), public. Keyword-only, no default.
    tau : float or None
        The PUBLIC bound on the second moment of each gradient (or EM-map)
        coordinate (Assumption 1/2): the data bound of "dp" and "dp-em".
        Keyword-only, no default; None for "clipped" and "nonprivate".
    clip : float or None, default=None
        "clipped": the L2 clipping threshold C (required there).
    max_iter : int
        The number of iterations T (all run). Keyword-only, no default (as
        the CLI's ``--iterations``).
    step : float, default=1.0
        The step size eta (Theorem 4's 2 / (mu + nu) = 1).
    zeta : float, default=0.1
        "dp", "dp-em": the failure probability of Algorithm 2.
    robust_scale : float or None, default=None
        "dp", "dp-em": the robust scale s (public); None: Algorithm 2's.
    accountant : str, default="rdp"
    calibration : {"accountant", "paper"}, default="accountant"
    init : array-like of shape (n_features,) or None, default=None
        The initial beta; None: a random direction of norm ``init_norm``,
        drawn from the fit's generator (never from the data).
    init_norm : float, default=1.0
    random_state, budget, n_jobs
        As for :class:`dpem.GaussianMixture`: a seed voids a private fit.

    Attributes
    ----------
    beta_ : ndarray of shape (n_features,)
        The fitted beta^T (for "gmm" and "mrm", beta and -beta are the same
        model).
    means_ : ndarray of shape (2, n_features)
        "gmm": the components' means, beta_ and -beta_ (weights 1/2,
        covariance sigma^2 I).
    coef_ : ndarray of shape (n_features,)
        "mrm", "rmc": beta_, the regression coefficients.
    privacy_ : dict
        The model file's ``privacy`` block (target and certified (epsilon,
        delta), accountant, calibration, the ledger under ``releases``,
        ``guarantee_void``, and ``seed`` when seeded).
    n_iter_, n_features_in_, feature_names_in_
    """

    _required_parameters = ["model", "epsilon", "sigma", "tau", "max_iter"]
    _fit_function = staticmethod(_core.fit_gradient_em)
    _model_class = _core.GradientEmModel
    _model_format = "dpem-gradient-em"
    _has_domain = False
    _model_params = (
        "model", "max_iter", "sigma", "tau", "clip", "robust_scale", "step", "zeta",
        "calibration", "init_norm",
    )

    __init__ = estimator_init("model", [
        ("method", None), "epsilon", "delta", ("sigma", REQUIRED), ("tau", REQUIRED),
        ("clip", None), ("max_iter", REQUIRED), ("step", 1.0), ("zeta", 0.1),
        ("robust_scale", None), "accountant", ("calibration", "accountant"), "init",
        ("init_norm", 1.0), "random_state", "budget", "n_jobs"])

    # -- the fit -----------------------------------------------------------

    def _model_args(self):
        args = super()._model_args()
        method = self.method
        if method is None:
            try:
                plain = float(self.epsilon) == math.inf
            except (TypeError, ValueError):
                plain = False  # The fit refuses epsilon with its own message.
            method = "nonprivate" if plain else "dp"
        args["method"] = method
        args["init"] = None if self.init is None else [float(v) for v in np.ravel(self.init)]
        return args

    def _check_model(self):
        if self.model not in _MODELS:
            raise ValueError(f"model: 'gmm', 'mrm' or 'rmc', got {self.model!r}")

    def _target(self, y, features):
        """y as a finite float64 vector, one entry per row of features."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None "
                f"(model {self.model!r} is a regression)"
            )
        y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
        y = column_or_1d(y, warn=True)
        check_consistent_length(features, y)
        return y

    def _records(self, X, y):
        """(features, records): X checked, and the array in the CLI's
        layout for the model (_layout)."""
        self._check_model()
        features = as_rows(X)
        return features, self._layout(self.model, features, y)

    def _layout(self, kind, features, y):
        """The records of checked features and y in the CLI's layout for the
        model ``kind``, which the fit and ``dpem score`` read (gmm: the features
        themselves, not copied; mrm: y, X; rmc: y, X with missing entries 0,
        the indicators of the observed ones)."""
        if kind == "gmm":
            return features
        y = self._target(y, features)
        if kind == "mrm":
            return np.ascontiguousarray(np.column_stack([y, features]))
        observed = ~np.isnan(features)
        records = np.column_stack([y, np.where(observed, features, 0.0), observed])
        return np.ascontiguousarray(records, dtype=np.float64)

    def fit(self, X, y=None):
        """Fits the model: X (n_samples x n_features), and y (n_samples,)
        for "mrm" and "rmc" ("gmm" ignores it). A private fit charges
        ``budget`` before it reads the data. Returns self."""
        self._reset()  # Before any check: a refused fit leaves nothing fitted.
        features, records = self._records(X, y)
        self._fit_records(X, records, features)
        return self

    # -- the result --------------------------------------------------------

    def _set_model_attributes(self, model, document):
        self.beta_ = model.beta.copy()
        if model.kind == "gmm":
            self.means_ = np.stack([model.beta, -model.beta])
        else:
            self.coef_ = model.beta.copy()

    @staticmethod
    def _params_of_model(document):
        privacy = document["privacy"]
        private = privacy.get("private", False)
        return {
            "model": document["gradient_em_model"],
            "method": document["method"],
            "epsilon": privacy["target_epsilon"] if private else math.inf,
            "delta": privacy.get("target_delta") if private else None,
            "sigma": document["sigma"],
            "tau": privacy.get("tau"),
            "clip": privacy.get("clip"),
            "max_iter": int(document["iterations"]),
            "step": document["step"],
            "zeta": privacy.get("zeta", 0.1),
            "accountant": privacy.get("accountant", "rdp"),
            "calibration": privacy.get("calibration", "accountant"),
            "random_state": privacy.get("seed") if privacy.get("seeded") else None,
        }

    # -- scoring (post-processing of beta) -----------------------------------

    def _features(self, X):
        """X checked against the fit, for "rmc" with the missing entries
        (NaN) set to 0."""
        rows = self._rows_for_model(X)
        if self._model.kind == "rmc":
            rows = np.where(np.isnan(rows), 0.0, rows)
        _core.check_rows(rows)  # NaN (but rmc's) and infinite entries.
        return rows

    def score(self, X, y=None):
        """The mean log-likelihood: of X for "gmm", of y given X for "mrm"
        and "rmc" (not scikit-learn's R^2 of a regressor); the number
        ``dpem score`` prints for the model file and the same records."""
        records = self._layout(self._model.kind, self._rows_for_model(X), y)
        return float(self._model.score(records))

    @available_if(_model_is("gmm"))
    def score_samples(self, X):
        """"gmm": log p(x) of each row of X under the mixture."""
        return self._model.score_samples(self._rows_for_model(X))

    @available_if(_model_is("gmm"))
    def predict_proba(self, X):
        """"gmm": each row's posterior probability of the components with
        means beta_ (column 0) and -beta_ (column 1)."""
        x = self._features(X)
        t = 2.0 * (x @ self._model.beta) / self._model.sigma ** 2
        return np.column_stack([expit(t), expit(-t)])

    @available_if(_model_is("gmm", "rmc"))
    def predict(self, X):
        """"gmm": the more probable component (0: mean beta_, 1: -beta_).
        "rmc": E[y | observed x] = sum of x_j beta_j over the observed
        covariates (NaN: missing). "mrm" has no point prediction (E[y | x]
        is 0 by the model's symmetry)."""
        x = self._features(X)
        product = x @ self._model.beta
        if self._model.kind == "gmm":
            return np.where(product >= 0.0, 0, 1).astype(np.int64)
        return product

    # -- scikit-learn's tags -------------------------------------------------

    def _more_tags(self):
        tags = super()._more_tags()
        tags.update(requires_y=self.model in ("mrm", "rmc"), allow_nan=self.model == "rmc")
        return tags
