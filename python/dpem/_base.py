"""What dpem's estimators share: their privacy parameters, the fit through
the C++ pipeline, the fitted model file, warnings, pickling and tags.

Every fit goes through the library's one private-fit pipeline (dpem._core,
over dpem/pipeline/fit_pipeline.h): the options are validated, the budget is
charged, the data is read (without a copy for a C-contiguous float64 array),
the noise drawn, and the model file's text returned. The estimator keeps that
text (``to_json`` writes it, pickling stores it) and a model parsed from it,
which does all scoring, so that a model scores the same in Python and in the
CLI.
"""

import inspect
import json
import math
import numbers
import os
import tempfile
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import _get_feature_names, check_array, check_is_fitted

from . import _core
from ._budget import Budget


class PrivacyLeakWarning(RuntimeWarning):
    """A fit whose differential-privacy guarantee does not hold.

    Raised (as a warning) when a private fit takes its data bound from the
    data (``data_norm="from_data"``) or is seeded (``random_state``): the
    model is still fitted, and its ``privacy_["guarantee_void"]`` is True with
    the reasons in ``privacy_["void_reasons"]``.
    """


DpemError = _core.DpemError


def as_rows(X):
    """X as a 2-D C-contiguous float64 NumPy array.

    An array that is one already (a memory-mapped one included) is returned
    as is, never copied; anything else (other dtypes, Fortran order, lists,
    DataFrames) is converted. Values are not checked here: the library
    refuses NaN and infinite entries with its own message.
    """
    return check_array(
        X, dtype=np.float64, order="C", force_all_finite=False, ensure_min_samples=1
    )


def _real(name, value, allow_none=False):
    """``value`` as a float, or None when allowed; TypeError naming it."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {value!r}")
    return float(value)


def _threads(n_jobs):
    """The engine's thread count for scikit-learn's ``n_jobs``: None or -1
    is every core (0), -2 all but one, and so on."""
    if n_jobs is None:
        return 0
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs: expected an integer or None, got {n_jobs!r}")
    if n_jobs == 0:
        raise ValueError("n_jobs: 0 is not a number of threads (None or -1: all cores)")
    if n_jobs > 0:
        return int(n_jobs)
    return 0 if n_jobs == -1 else max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


def seed_of(random_state):
    """The library's seed for ``random_state``: None (the operating system's
    CSPRNG), an integer >= 0, or a seed drawn from a RandomState."""
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state: must be >= 0, got {random_state}")
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _data_norm(value):
    """(R or None, from_data, auto) for the ``data_norm`` parameter."""
    if isinstance(value, str):
        if value not in ("auto", "from_data"):
            raise ValueError(
                f"data_norm: a number, 'auto', 'from_data' or None (plain fits), got {value!r}"
            )
        return None, value == "from_data", value == "auto"
    return _real("data_norm", value, allow_none=True), False, False


def _domain_fit_args(data_norm, data_center, bounds_epsilon):
    """The fit's arguments for the public domain: ``data_norm`` (R, "auto",
    "from_data" or None), ``data_center`` and ``bounds_epsilon`` (with
    "auto": the pure epsilon of the domain's release, the CLI's
    ``--data-norm auto --bounds-epsilon``)."""
    norm, from_data, auto = _data_norm(data_norm)
    bounds_epsilon = _real("bounds_epsilon", bounds_epsilon, allow_none=True)
    if auto != (bounds_epsilon is not None):
        raise ValueError(
            "bounds_epsilon goes with data_norm='auto' (the domain is then released from the "
            "data at bounds_epsilon, out of epsilon), and it needs one"
        )
    if auto and data_center is not None:
        raise ValueError("data_norm='auto' releases the centre too: data_center must be None")
    return {
        "data_norm": norm,
        "data_norm_from_data": from_data,
        "data_norm_auto": auto,
        "bounds_epsilon": bounds_epsilon,
        "data_center": None if data_center is None else [float(c) for c in np.ravel(data_center)],
    }


# The constructor parameters that dpem's estimators share, with their
# defaults (REQUIRED: no default), written once as the CLI's fit flags are
# (tools/fit_flags.h): the privacy target, the public domain, the start, the
# seed, the budget and the threads. docs/python.md, "The privacy conventions".
REQUIRED = inspect.Parameter.empty
SHARED_PARAMETERS = {
    "epsilon": REQUIRED,
    "delta": None,
    "data_norm": REQUIRED,
    "data_center": None,
    "bounds_epsilon": None,
    "max_iter": None,
    "accountant": "rdp",
    "init": None,
    "random_state": None,
    "budget": None,
    "n_jobs": None,
}


def estimator_init(first, keywords):
    """An estimator's ``__init__``: ``first`` positional, then the keyword-only
    ``keywords`` in order, each a name of SHARED_PARAMETERS (its shared
    default) or a ``(name, default)`` pair; it stores each argument as the
    attribute of its name and nothing else, as scikit-learn expects. Its
    signature is explicit (``__signature__``), so ``get_params``, ``clone``
    and ``help`` see the parameters as if they were written out."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for entry in keywords:
        name, default = entry if isinstance(entry, tuple) else (entry, SHARED_PARAMETERS[entry])
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        self._store_params(bound.arguments)

    __init__.__signature__ = signature
    return __init__


class DpemEstimator(BaseEstimator):
    """Base of dpem's estimators (not for direct use).

    A subclass sets ``_fit_function`` (a dpem._core fit), ``_model_class``
    (the dpem._core model parsed from the model file), ``_model_format``,
    ``_model_params`` (its parameters that the fit takes besides the shared
    ones), and implements ``_set_model_attributes`` and ``_own_params_of_model``.
    A model without a public domain (GradientEM) sets ``_has_domain`` False:
    its fit takes no domain arguments, its model file has no
    ``data_transform``, and it replaces ``_params_of_model`` whole.
    """

    _fit_function = None
    _model_class = None
    _model_format = None
    _model_params = ()
    _has_domain = True

    def _store_params(self, params):
        """Stores each constructor parameter as the attribute of its name,
        and nothing else, as scikit-learn expects of ``__init__``
        (``params``: the constructor's ``locals()``)."""
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    # -- the fit ---------------------------------------------------------

    def _shared_fit_args(self):
        """The arguments every model's fit takes (python/src/common.h)."""
        budget = self.budget
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget: expected a dpem.Budget or None, got {budget!r}")
        args = {}
        if type(self)._has_domain:
            args = _domain_fit_args(self.data_norm, self.data_center, self.bounds_epsilon)
        return {
            **args,
            "epsilon": _real("epsilon", self.epsilon),
            "delta": _real("delta", self.delta, allow_none=True),
            "accountant": getattr(self, "accountant", None),
            "threads": _threads(self.n_jobs),
            "seed": seed_of(self.random_state),
            "budget_file": None if budget is None else os.fspath(budget.path),
            "dataset": None if budget is None else budget.dataset,
            "command": f"dpem.{type(self).__name__}.fit",
        }

    def _model_args(self):
        """The model's own arguments (python/src/<model>_bindings.cc): the
        parameters named by ``_model_params``."""
        return {name: getattr(self, name) for name in type(self)._model_params}

    def _fit_rows(self, X):
        """Fits X; returns the checked array (for labels_ and the like)."""
        self._reset()  # Before any check: a refused fit leaves nothing fitted.
        rows = as_rows(X)
        self._fit_records(X, rows, rows)
        return rows

    def _fit_records(self, X, records, features):
        """Fits ``records``, the array the library reads (a C-contiguous
        float64 array: X's rows, or for a regression the CLI's columns of y
        and X); ``X`` is the data as given (its column names are kept, in
        the model file too) and ``features`` its checked array.

        Nothing of a previous fit survives a call, and a failed call leaves
        the estimator unfitted.
        """
        self._reset()
        names = _get_feature_names(X)
        shared = self._shared_fit_args()
        shared["feature_names"] = None if names is None else [str(n) for n in names]
        model_json, lines = type(self)._fit_function(records, shared, self._model_args())
        try:
            self._set_fitted(model_json)
            self._check_feature_names(X, reset=True)
            self._check_n_features(features, reset=True)
        except BaseException:
            self._reset()
            raise
        self._warn(lines)

    def fit(self, X, y=None):
        """Fits the model to X (n_samples x n_features); y is ignored.

        A private fit (finite ``epsilon``) charges ``budget`` before it reads
        the data, and draws its noise from the operating system's CSPRNG
        unless ``random_state`` is set (which voids its guarantee and warns
        :class:`PrivacyLeakWarning`). Returns self.
        """
        self._fit_rows(X)
        return self

    def _reset(self):
        """Removes every fitted attribute (those ending in "_", and the
        model): the estimator is unfitted."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        for name in ("_model", "_model_json"):
            self.__dict__.pop(name, None)

    def _set_fitted(self, model_json):
        """Sets every fitted attribute from the model file's text."""
        model = type(self)._parse_model(model_json)
        document = json.loads(model_json)
        self._model_json = model_json
        self._model = model
        self.privacy_ = document["privacy"]
        # The iterations run where the model file says (factor analysis
        # stops at its tol), else the J that every iteration ran.
        self.n_iter_ = document.get("iterations_run", document["iterations"])
        self._set_model_attributes(model, document)

    @classmethod
    def _parse_model(cls, model_json):
        """The model that scores, parsed from the model file's text by the
        library (ValueError for a bad file)."""
        return cls._model_class.from_json(model_json)

    def _set_model_attributes(self, model, document):
        raise NotImplementedError

    def _warn(self, lines):
        """The pipeline's warnings: PrivacyLeakWarning for those that say why
        the guarantee is void, RuntimeWarning for the others."""
        reasons = self.privacy_.get("void_reasons", [])
        for line in lines:
            void = any(reason in line for reason in reasons)
            warnings.warn(line, PrivacyLeakWarning if void else RuntimeWarning, stacklevel=4)

    def _draw_samples(self, n_samples):
        """The model's ``sample(n, seed)`` for n_samples >= 1 synthetic
        records (post-processing: no budget spent), seeded by
        ``random_state`` if set, else from the operating system's CSPRNG."""
        check_is_fitted(self)
        if n_samples < 1:
            raise ValueError(f"n_samples: must be >= 1, got {n_samples}")
        return self._model.sample(int(n_samples), seed_of(self.random_state))

    def _rows_for_model(self, X):
        """X checked against the fit (features and their names) as rows."""
        check_is_fitted(self)
        self._check_feature_names(X, reset=False)
        rows = as_rows(X)
        self._check_n_features(rows, reset=False)
        return rows

    # -- model files and pickling -----------------------------------------

    def to_json(self, path):
        """Writes the model file (the CLI's format, byte for byte what
        ``dpem fit`` writes for the same fit) to ``path``, atomically."""
        check_is_fitted(self)
        directory = os.path.dirname(os.path.abspath(path))
        fd, temporary = tempfile.mkstemp(prefix=".dpem-model-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(self._model_json)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise

    @classmethod
    def _from_model_json(cls, model_json):
        """The fitted estimator of a model file's text (see dpem.load)."""
        document = json.loads(model_json)
        estimator = cls(**cls._params_of_model(document))
        estimator._set_fitted(model_json)
        estimator.n_features_in_ = int(document["dimension"])
        if document.get("feature_names"):
            estimator.feature_names_in_ = np.asarray(document["feature_names"], dtype=object)
        return estimator

    @classmethod
    def _params_of_model(cls, document):
        """The constructor parameters that a model file records: the shared
        ones (_shared_params_of_model), then the model's own
        (``_own_params_of_model(document, privacy)``)."""
        params = cls._shared_params_of_model(document)
        params.update(cls._own_params_of_model(document, document["privacy"]))
        return params

    @staticmethod
    def _shared_params_of_model(document):
        """The shared constructor parameters that a model file records."""
        privacy = document["privacy"]
        transform = document["data_transform"]
        private = privacy.get("private", False)
        return {
            "epsilon": privacy["target_epsilon"] if private else math.inf,
            "delta": (privacy.get("target_delta") or None) if private else None,  # 0: pure DP.
            "data_norm": "from_data" if transform["from_data"] else transform["data_norm"],
            "data_center": transform.get("center"),
            "bounds_epsilon": None,
            "random_state": privacy.get("seed") if privacy.get("seeded") else None,
        }

    def __getstate__(self):
        state = dict(super().__getstate__())  # A copy: it may be __dict__ itself.
        state.pop("_model", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_model_json" in state:
            self._model = type(self)._parse_model(state["_model_json"])

    # -- scikit-learn's tags ----------------------------------------------

    def _more_tags(self):
        # A private fit draws fresh noise from the operating system on every
        # call: two fits differ, by design. Only a seed (random_state) makes
        # it repeatable, and a seed voids the guarantee.
        try:
            private = float(self.epsilon) != math.inf
        except (TypeError, ValueError):
            private = True
        return {"non_deterministic": private}


class LikelihoodMixin:
    """The log-likelihood of a model with a density (GaussianMixture,
    FactorAnalysis), per row and mean, computed by the library's model.
    Listed before scikit-learn's DensityMixin, whose ``score`` it replaces."""

    def score_samples(self, X):
        """log p(x) of each row of X under the model (factor analysis:
        log N(x; mean_, W W^T + Psi), as scikit-learn's
        FactorAnalysis.score_samples); ``score`` is their mean."""
        return self._model.score_samples(self._rows_for_model(X))

    def score(self, X, y=None):
        """The mean log-likelihood of X: the number ``dpem score`` prints."""
        return float(self._model.score(self._rows_for_model(X)))
