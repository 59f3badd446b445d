"""The privacy accountants and the noise calibration of dpem's library: the
functions behind ``dpem account`` and ``dpem calibrate`` (docs/accounting.md).

    from dpem import accounting
    accounting.epsilon("gaussian", noise_multiplier=4.0, releases=10, delta=1e-5)
    accounting.calibrate(epsilon=1.0, delta=1e-5, iterations=10)

Neighbouring data sets differ by replacing one record.
"""

from . import _core

#: The accountants by name, as ``accountant=`` and the CLI's ``--accountant``
#: take them (``"rdp"`` is the default and the tightest).
ACCOUNTANTS = tuple(_core.accountant_names())


def epsilon(mechanism, noise_multiplier, releases, delta, *, accountant="rdp",
            noise="discrete"):
    """The epsilon that ``accountant`` certifies at ``delta`` for ``releases``
    releases of one mechanism.

    mechanism : "gaussian" (L2 sensitivity) or "laplace" (L1 sensitivity).
    noise_multiplier : noise scale / sensitivity (> 0).
    releases : how many releases (>= 1).
    delta : in (0, 1).
    accountant : one of :data:`ACCOUNTANTS`.
    noise : "discrete" (dpem's default sampling) or "continuous".

    ValueError for an argument out of range or an unknown name."""
    return _core.epsilon(mechanism, float(noise_multiplier), int(releases), float(delta),
                         accountant, noise)


def calibrate(epsilon, delta, iterations, *, components=1, scenario="joint",
              accountant="rdp"):
    """The noise of an ``iterations``-iteration private EM fit that meets
    (epsilon, delta): a dict with ``noise_multipliers`` (one per release of
    an iteration), ``per_release_epsilon``, and the ``epsilon`` and ``delta``
    the accountant certifies for every release (``releases`` of them).

    scenario : "joint" (dpem's default: all statistics as one Gaussian
        release per iteration), or park2017's "GGG" / "LLG" (per-parameter
        releases of a ``components``-component mixture).

    A fit's own calibration also reserves the private start's share; this is
    the iterations' calibration alone, as ``dpem calibrate`` prints it."""
    return _core.calibrate(float(epsilon), float(delta), int(iterations), int(components),
                           scenario, accountant)
