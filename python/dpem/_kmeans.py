"""dpem.KMeans: differentially private k-means with the names of
scikit-learn's ``sklearn.cluster.KMeans``."""

import numpy as np
from sklearn.base import ClusterMixin

from . import _core
from ._base import DpemEstimator, estimator_init


class KMeans(ClusterMixin, DpemEstimator):
    """k-means by differentially private Lloyd iterations (docs/kmeans.md).

    Parameters
    ----------
    n_clusters : int
        The number of centres K.
    epsilon, delta, data_norm, data_center, bounds_epsilon, random_state, budget, n_jobs
        As for :class:`dpem.GaussianMixture`.
    max_iter : int or None, default=None
        The number of iterations J, all run. None: from the private start,
        1 if the centres' noise is large (few records per cluster, small
        epsilon; docs/kmeans.md, "Choosing J") and 3 otherwise; 10 from a
        random start; 100 for plain Lloyd.
    method : {"cdp-gauss", "cdp-laplace", "dplloyd", "dplloyd-zcdp"}
    accountant : str, default="rdp"
        The composition of cdp-gauss and cdp-laplace (the DPLloyd methods
        fix theirs: linear and zcdp).
    init : {"private", "kmeans++", "random"} or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
        The nearest centre of each training record, computed after the fit
        from the released centres and the data, in this process: it is not
        part of the release (it reads the records without noise).
    privacy_, n_iter_, n_features_in_, feature_names_in_
    """

    _required_parameters = ["n_clusters", "epsilon", "data_norm"]
    _fit_function = staticmethod(_core.fit_kmeans)
    _model_class = _core.KmeansModel
    _model_format = "dpem-kmeans"
    _model_params = ("n_clusters", "max_iter", "method", "init")

    __init__ = estimator_init("n_clusters", [
        "epsilon", "delta", "data_norm", "data_center", "bounds_epsilon", "max_iter",
        ("method", "cdp-gauss"), "accountant", "init", "random_state", "budget", "n_jobs"])

    def _set_model_attributes(self, model, document):
        self.cluster_centers_ = np.asarray(model.centres)

    @staticmethod
    def _own_params_of_model(document, privacy):
        params = {
            "n_clusters": int(document["components"]),
            "max_iter": int(document["iterations"]),
            "method": document["method"],
            "init": document.get("init"),
        }
        if privacy.get("private", False) and document["method"] in ("cdp-gauss", "cdp-laplace"):
            params["accountant"] = privacy["accountant"]
        return params

    def fit(self, X, y=None):
        """Fits the centres to X (see DpemEstimator.fit), then labels X."""
        rows = self._fit_rows(X)
        self.labels_ = np.asarray(self._model.predict(rows), dtype=np.int64)
        return self

    def predict(self, X):
        """The index of each row's nearest centre."""
        return np.asarray(self._model.predict(self._rows_for_model(X)), dtype=np.int64)

    def nicv(self, X):
        """The normalised intra-cluster variance of X, (1/n) sum of squared
        distances to the nearest centre: the number ``dpem score`` prints."""
        return float(self._model.nicv(self._rows_for_model(X)))

    def score(self, X, y=None):
        """Minus the sum of squared distances to the nearest centre (as
        scikit-learn's KMeans.score: greater is better), n times -nicv(X)."""
        rows = self._rows_for_model(X)
        return -float(self._model.nicv(rows)) * rows.shape[0]
