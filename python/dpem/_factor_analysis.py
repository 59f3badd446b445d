"""dpem.FactorAnalysis: differentially private factor analysis with the
names of scikit-learn's ``sklearn.decomposition.FactorAnalysis``."""

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._base import DpemEstimator, LikelihoodMixin, estimator_init


class FactorAnalysis(LikelihoodMixin, TransformerMixin, DpemEstimator):
    """Factor analysis from one private release of the second moment, then
    EM on it (park2017 Sec. 6; docs/factor_analysis.md).

    The model is x = mean + W z + e with z ~ N(0, I) and e ~ N(0, Psi). The
    mean is NOT estimated: it is the public ``data_center`` (the origin when
    None), never a data mean, which would leak the data.

    Parameters
    ----------
    n_components : int
        The number of factors L (1 <= L <= n_features).
    epsilon, delta, data_norm, data_center, bounds_epsilon, random_state, budget, n_jobs
        As for :class:`dpem.GaussianMixture`.
    max_iter : int or None, default=None
        EM iterations on the released matrix at most (post-processing); None: 100.
    tol : float, default=1e-2
        EM stops after an iteration that raised the total log-likelihood
        (n_samples times the mean per record) of the released matrix by
        less than ``tol``, as scikit-learn's ``tol``; 0 runs all ``max_iter``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The loadings W, transposed (as scikit-learn's).
    noise_variance_ : ndarray of shape (n_features,)
    mean_ : ndarray of shape (n_features,)
        The public centre.
    n_iter_ : int
        The EM iterations run (at most ``max_iter``).
    privacy_, n_features_in_, feature_names_in_
    """

    _required_parameters = ["n_components", "epsilon", "data_norm"]
    _fit_function = staticmethod(_core.fit_fa)
    _model_class = _core.FaModel
    _model_format = "dpem-fa"
    _model_params = ("n_components", "max_iter", "tol")

    __init__ = estimator_init("n_components", [
        "epsilon", "delta", "data_norm", "data_center", "bounds_epsilon", "max_iter",
        ("tol", 1e-2), "random_state", "budget", "n_jobs"])

    def _set_model_attributes(self, model, document):
        self.components_ = np.asarray(model.loadings).T.copy()
        self.noise_variance_ = np.asarray(model.noise_variances)
        self.mean_ = np.asarray(model.mean)

    @staticmethod
    def _own_params_of_model(document, privacy):
        return {"n_components": int(document["factors"]), "max_iter": int(document["iterations"]),
                "tol": float(document.get("tolerance", 0.0))}  # 0: files from before tol.

    def transform(self, X):
        """E[z | x] for each row of X (n x L), as ``dpem transform``."""
        return self._model.transform(self._rows_for_model(X))

    def get_covariance(self):
        """The model's covariance W W^T + Psi."""
        check_is_fitted(self)
        w = self.components_
        return w.T @ w + np.diag(self.noise_variance_)

    def sample(self, n_samples=1):
        """n_samples synthetic records (post-processing: no budget spent),
        seeded by ``random_state`` if set."""
        return self._draw_samples(n_samples)
