"""dpem: differentially private EM, as scikit-learn estimators.

    import dpem
    gm = dpem.GaussianMixture(5, epsilon=1.0, delta=1e-5, data_norm=0.36,
                              data_center=[40.70, -73.98]).fit(X)
    synthetic, _ = gm.sample(1000)

The estimators (GaussianMixture, KMeans, FactorAnalysis, GradientEM) fit
through dpem's C++ library, the same code as the ``dpem`` command-line tool;
their model files are the CLI's (``to_json``, :func:`load`). ``epsilon`` and
the data bound (``data_norm``; GradientEM's ``tau``) have no defaults. See
docs/python.md.
"""

import json

from . import accounting
from ._base import DpemError, PrivacyLeakWarning
from ._budget import Budget
from ._factor_analysis import FactorAnalysis
from ._gradient_em import GradientEM
from ._kmeans import KMeans
from ._mixture import GaussianMixture

__all__ = [
    "Budget",
    "DpemError",
    "FactorAnalysis",
    "GaussianMixture",
    "GradientEM",
    "KMeans",
    "PrivacyLeakWarning",
    "accounting",
    "load",
]
__version__ = "0.1.0"

_ESTIMATORS = {
    cls._model_format: cls for cls in (GaussianMixture, KMeans, FactorAnalysis, GradientEM)
}


def load(path):
    """The fitted estimator of a model file written by ``dpem fit`` (for
    GradientEM, ``dpem fit gradient-em --output``) or by an estimator's
    ``to_json``; its parameters are those the file records. ValueError for
    a file that is not a dpem model file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        kind = json.loads(text).get("format")
    except (ValueError, AttributeError):
        kind = None
    if kind not in _ESTIMATORS:
        raise ValueError(f"{path}: not a dpem model file of a known format (got {kind!r})")
    return _ESTIMATORS[kind]._from_model_json(text)
