"""dpem.Budget: a persistent privacy budget per data set, the SQLite ledger
of the CLI's ``--budget-file`` (dpem/accounting/budget_store.h)."""

import os

from . import _core


class Budget:
    """A data set's privacy budget in a budget file.

    Parameters
    ----------
    path : str or path-like
        The budget file (SQLite), the same file as ``dpem budget
        --budget-file`` and ``dpem fit ... --budget-file``.
    dataset : str
        The data set's ID in that file (the CLI's ``--dataset``). Data in
        memory has no file to hash, so it is always named.

    An estimator given ``budget=Budget(...)`` charges its (epsilon, delta)
    to the data set before it reads the data, and the fit is refused if the
    total would be exceeded. The object holds nothing but ``path`` and
    ``dataset``: every spending happens in ``fit``, in the file. So the copies
    that scikit-learn's ``clone`` makes (GridSearchCV, cross_validate) all
    draw from the same budget, each fit exactly once.
    """

    def __init__(self, path, dataset):
        if not isinstance(dataset, str) or not dataset:
            raise ValueError(f"dataset: a non-empty string, got {dataset!r}")
        self.path = os.fspath(path)
        self.dataset = dataset

    def init(self, epsilon, delta=0.0):
        """Sets the data set's total (epsilon > 0 finite, delta in [0, 1)),
        creating the file if missing. A total cannot change once set
        (calling again with the same total does nothing). Returns self."""
        _core.budget_init(self.path, self.dataset, float(epsilon), float(delta))
        return self

    def account(self):
        """The data set's account: a dict with ``total_epsilon``,
        ``total_delta``, ``spent_epsilon``, ``spent_delta`` and ``charges``
        (the number of fits charged)."""
        return _core.budget_account(self.path, self.dataset)

    def remaining(self):
        """(epsilon, delta) still available."""
        a = self.account()
        return (
            max(0.0, a["total_epsilon"] - a["spent_epsilon"]),
            max(0.0, a["total_delta"] - a["spent_delta"]),
        )

    def __eq__(self, other):
        return (
            isinstance(other, Budget)
            and self.path == other.path
            and self.dataset == other.dataset
        )

    def __hash__(self):
        return hash((self.path, self.dataset))

    def __repr__(self):
        return f"Budget({self.path!r}, {self.dataset!r})"
