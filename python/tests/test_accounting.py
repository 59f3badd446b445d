"""dpem.accounting: the library's accountants and calibration from Python,
checked against closed forms and against the CLI's `account` and
`calibrate`."""

import json
import math

import pytest

from dpem import accounting


def test_every_accountant_is_named():
    assert "rdp" in accounting.ACCOUNTANTS
    assert {"linear", "zcdp", "ma"} <= set(accounting.ACCOUNTANTS)


def test_zcdp_of_continuous_gaussians_is_bun_steinkes_conversion():
    # J Gaussian releases with noise multiplier z are J / (2 z^2)-zCDP, and
    # rho-zCDP gives (rho + 2 sqrt(rho ln(1/delta)), delta) (Prop. 1.3, 1.6).
    z, j, delta = 4.0, 10, 1e-5
    rho = j / (2 * z * z)
    expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    got = accounting.epsilon("gaussian", z, j, delta, accountant="zcdp", noise="continuous")
    # The library rounds its certificates up, never down.
    assert expected <= got == pytest.approx(expected, rel=1e-9)


def test_linear_composition_of_continuous_laplaces_adds_their_epsilons():
    got = accounting.epsilon("laplace", 8.0, 5, 1e-6, accountant="linear", noise="continuous")
    assert 5 / 8.0 <= got == pytest.approx(5 / 8.0, rel=1e-9)


def test_epsilon_equals_the_cli(cli):
    for accountant in accounting.ACCOUNTANTS:
        out = json.loads(cli("account", "--mechanism", "gaussian", "--noise-multiplier", 3,
                             "--compositions", 7, "--delta", 1e-5, "--accountant", accountant,
                             "--json"))
        got = accounting.epsilon("gaussian", 3, 7, 1e-5, accountant=accountant)
        assert got == out["epsilon"], accountant


def test_calibrate_meets_the_target_and_matches_the_cli(cli):
    result = accounting.calibrate(1.0, 1e-5, 10)
    assert result["epsilon"] <= 1.0 and result["releases"] == 10
    (z,) = result["noise_multipliers"]
    assert accounting.epsilon("gaussian", z, 10, 1e-5) == pytest.approx(result["epsilon"],
                                                                        rel=1e-9)
    ggg = accounting.calibrate(1.0, 1e-5, 10, components=3, scenario="GGG")
    out = json.loads(cli("calibrate", "--epsilon", 1, "--delta", 1e-5, "--iterations", 10,
                         "--components", 3, "--scenario", "GGG", "--json"))
    assert ggg["noise_multipliers"] == [r["noise_multiplier"] for r in out["releases"]]


@pytest.mark.parametrize("call", [
    lambda: accounting.epsilon("gaussian", 1.0, 1, 1e-5, accountant="nope"),
    lambda: accounting.epsilon("cauchy", 1.0, 1, 1e-5),
    lambda: accounting.epsilon("gaussian", 1.0, 0, 1e-5),
    lambda: accounting.calibrate(1.0, 2.0, 10),
    lambda: accounting.calibrate(1.0, 1e-5, 10, scenario="XYZ"),
])
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()
