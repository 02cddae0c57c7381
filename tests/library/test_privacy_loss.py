"""Tests for dplib.accounting.privacy_loss: the loss of each output, its maximum, and the epsilon-DP check.

The boundary is tested as in OpenDP's test_meas.py: Warner's coins pass at ln 3 and fail
at ln 2.999; zeros are handled both ways (0/0 ignored, x/0 infinite).
"""

import importlib
import math
import types

import numpy as np
import pytest

import dplib
from dplib.accounting.channels import krr_channel, rr_channel
import dplib.accounting.privacy_loss as privacy_loss_module
from dplib.accounting.privacy_loss import DP_TOLERANCE, max_privacy_loss, privacy_loss_per_output, satisfies_dp

LN3 = math.log(3)
COINS_D, COINS_D_PRIME = [0.75, 0.25], [0.25, 0.75]


# --- privacy_loss_per_output -----------------------------------------------------------------------------


def test_privacy_loss_per_output():
    np.testing.assert_allclose(privacy_loss_per_output(COINS_D, COINS_D_PRIME), [LN3, -LN3])
    np.testing.assert_allclose(privacy_loss_per_output([0.5, 0.5], [0.5, 0.5]), [0.0, 0.0])


def test_privacy_loss_zeros():
    losses = privacy_loss_per_output([0.5, 0.5, 0.0, 0.0], [0.5, 0.0, 0.5, 0.0])
    assert losses[0] == 0.0
    assert losses[1] == math.inf
    assert losses[2] == -math.inf
    assert math.isnan(losses[3])


def test_privacy_loss_is_silent_on_zeros():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        privacy_loss_per_output([1.0, 0.0], [0.0, 1.0])


# --- max_privacy_loss ----------------------------------------------------------------------------


def test_max_privacy_loss_examples():
    assert math.isclose(max_privacy_loss(COINS_D, COINS_D_PRIME), LN3)
    assert math.isclose(max_privacy_loss([0.5, 0.5, 0.0], [0.25, 0.75, 0.0]), math.log(2))
    assert max_privacy_loss([0.2, 0.8], [0.2, 0.8]) == 0.0
    assert isinstance(max_privacy_loss(COINS_D, COINS_D_PRIME), float)


def test_max_privacy_loss_looks_in_both_directions():
    """One-sided max of ln(p_d / p_d') is ln 1.8 here; the other direction gives ln 5."""
    p_d, p_d_prime = [0.9, 0.1], [0.5, 0.5]
    assert math.isclose(max_privacy_loss(p_d, p_d_prime), math.log(5))
    assert max_privacy_loss(p_d, p_d_prime) == max_privacy_loss(p_d_prime, p_d)
    assert max_privacy_loss(p_d, p_d_prime) > np.max(np.log(np.divide(p_d, p_d_prime)))


def test_max_privacy_loss_ignores_outputs_impossible_under_both():
    assert math.isclose(max_privacy_loss([0.5, 0.0, 0.5], [0.25, 0.0, 0.75]), math.log(2))
    assert max_privacy_loss([0.0, 1.0], [0.0, 1.0]) == 0.0
    assert max_privacy_loss([0.0, 0.0], [0.0, 0.0]) == 0.0


def test_max_privacy_loss_infinite_where_exactly_one_is_zero():
    assert max_privacy_loss([1.0, 0.0], [0.5, 0.5]) == math.inf
    assert max_privacy_loss([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert max_privacy_loss([0.0, 1.0], [1e-300, 1.0 - 1e-300]) == math.inf


def test_max_privacy_loss_of_every_krr_pair_is_epsilon():
    matrix = krr_channel(5, 0.8)
    for x in range(5):
        for x_prime in range(5):
            expected = 0.0 if x == x_prime else 0.8
            assert max_privacy_loss(matrix[x], matrix[x_prime]) == pytest.approx(expected)


# --- satisfies_dp -----------------------------------------------------------------------------------


def test_satisfies_dp_at_the_boundary():
    """OpenDP-style: passes at ln 3 exactly, fails at ln 2.999."""
    assert satisfies_dp(COINS_D, COINS_D_PRIME, LN3) is True
    assert satisfies_dp(COINS_D, COINS_D_PRIME, math.log(2.999)) is False
    assert satisfies_dp(COINS_D_PRIME, COINS_D, LN3)
    assert not satisfies_dp(COINS_D_PRIME, COINS_D, math.log(2.999))


def test_satisfies_dp_tolerance_is_for_rounding_only():
    assert satisfies_dp(COINS_D, COINS_D_PRIME, LN3 - DP_TOLERANCE / 2)
    assert not satisfies_dp(COINS_D, COINS_D_PRIME, LN3 - 1e-9)
    assert DP_TOLERANCE == 1e-12
    matrix = rr_channel(0.9, 0.6)  # computed epsilon carries rounding: still passes at its own value
    assert satisfies_dp(matrix[0], matrix[1], dplib.get_epsilon(0.9, 0.6))


def test_satisfies_dp_fails_for_an_infinite_loss():
    assert not satisfies_dp([1.0, 0.0], [0.5, 0.5], 1e6)
    assert not satisfies_dp([0.5, 0.5], [1.0, 0.0], 1e6)


def test_satisfies_dp_ignores_impossible_outputs():
    assert satisfies_dp([0.75, 0.25, 0.0], [0.25, 0.75, 0.0], LN3)


@pytest.mark.parametrize("epsilon", [0, -1, math.nan, math.inf, True, "1", None, [LN3]])
def test_satisfies_dp_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        satisfies_dp(COINS_D, COINS_D_PRIME, epsilon)


@pytest.mark.parametrize(
    ("p_d", "p_d_prime", "message"),
    [
        ([0.5, 0.5], [0.2, 0.3, 0.5], "p_d and p_d_prime must cover the same outputs, got lengths 2 and 3"),
        ([[0.5, 0.5]], [0.5, 0.5], r"p_d must be a non-empty 1-D array, got shape \(1, 2\)"),
        ([], [], r"p_d must be a non-empty 1-D array, got shape \(0,\)"),
        (0.5, 0.5, r"p_d must be a non-empty 1-D array, got shape \(\)"),
        ([0.5, 0.5], [[0.5, 0.5]], "p_d_prime must be a non-empty 1-D array"),
        ([-0.1, 1.1], [0.5, 0.5], r"p_d must hold probabilities in \[0, 1\]"),
        ([0.5, 0.5], [0.5, 1.5], r"p_d_prime must hold probabilities in \[0, 1\]"),
        ([math.nan, 0.5], [0.5, 0.5], "p_d must hold finite numbers"),
        ([0.5, 0.5], [math.inf, 0.5], "p_d_prime must hold finite numbers"),
        (["a"], [0.5], "p_d must hold numbers"),
    ],
)
@pytest.mark.parametrize("function", [privacy_loss_per_output, max_privacy_loss])
def test_distribution_validation(function, p_d, p_d_prime, message):
    with pytest.raises(ValueError, match=message):
        function(p_d, p_d_prime)
    with pytest.raises(ValueError, match=message):
        satisfies_dp(p_d, p_d_prime, 1.0)


def test_reexported_from_the_package():
    for name in privacy_loss_module.__all__:
        assert getattr(dplib, name) is getattr(privacy_loss_module, name)


def test_module_is_importable_by_its_own_name():
    """Check that dplib.accounting.privacy_loss is the module (no function of that name shadows it)."""
    assert isinstance(dplib.accounting.privacy_loss, types.ModuleType)
    assert importlib.import_module("dplib.accounting.privacy_loss") is dplib.accounting.privacy_loss
