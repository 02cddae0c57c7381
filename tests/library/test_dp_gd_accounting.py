"""Tests for dplib.accounting.dp_gd: the sensitivity of a clipped sum, rho over T steps, epsilon, the noise multiplier."""

import math

import numpy as np
import pytest

from dplib.accounting.zcdp import zcdp_rho, zcdp_to_epsilon
from dplib.accounting.dp_gd import dp_gd_epsilon, dp_gd_rho, gradient_sum_sensitivity, noise_multiplier_for
from dplib.mechanisms.gaussian import gaussian_delta
from dplib.learning.noisy_gd import clip_gradients

C = 0.3


def test_sum_sensitivity_is_c_or_2c_and_reached():
    assert gradient_sum_sensitivity(C, "add_remove") == C
    assert gradient_sum_sensitivity(C, "substitute") == 2 * C
    # brute force: the largest change of the sum over pairs of clipped gradients
    rng = np.random.default_rng(3)
    clipped = clip_gradients(rng.normal(size=(400, 3)) * 5, C)
    changes = np.linalg.norm(clipped[:, None, :] - clipped[None, :, :], axis=2)
    assert changes.max() <= 2 * C and changes.max() > 1.9 * C  # substitution: two near-opposite gradients
    assert np.linalg.norm(clipped, axis=1).max() <= C  # add/remove: one clipped gradient
    with pytest.raises(ValueError, match="neighbours must be one of"):
        gradient_sum_sensitivity(C, "swap")



# --------------------------------------------------------------------------- accounting


def test_rho_charges_every_step_with_the_right_sensitivity():
    assert dp_gd_rho(4.0, 1) == pytest.approx(1 / 32)
    assert dp_gd_rho(4.0, 50) == pytest.approx(50 / 32)  # T steps, not one
    assert dp_gd_rho(4.0, 50, "substitute") == pytest.approx(4 * 50 / 32)  # sensitivity 2C: four times rho
    # C cancels: the Gaussian mechanism with std sigma C on a sum of sensitivity C (or 2C)
    for clip_norm in (0.3, 5.0):
        for neighbours in ("add_remove", "substitute"):
            one_step = zcdp_rho(gradient_sum_sensitivity(clip_norm, neighbours), 4.0 * clip_norm)
            assert dp_gd_rho(4.0, 7, neighbours) == pytest.approx(7 * one_step)


def test_epsilon_is_the_zcdp_conversion_and_an_upper_bound_on_the_exact_one():
    for sigma, steps, delta in ((4.0, 50, 1e-6), (107.0, 100, 1e-6), (1.5, 3, 1e-3)):
        for neighbours, sensitivity in (("add_remove", 1.0), ("substitute", 2.0)):
            epsilon = dp_gd_epsilon(sigma, steps, delta, neighbours)
            assert epsilon == pytest.approx(zcdp_to_epsilon(dp_gd_rho(sigma, steps, neighbours), delta))
            # T Gaussian steps compose to one Gaussian mechanism of sensitivity sqrt(T) Delta: its exact delta
            # at this epsilon (Balle & Wang 2018) is below the delta zCDP promised
            exact = gaussian_delta(sigma, math.sqrt(steps) * sensitivity, epsilon)
            assert exact <= delta


def test_noise_multiplier_solves_the_conversion():
    for epsilon, delta, steps in ((1.0, 1e-6, 100), (0.3, 1e-5, 25), (8.0, 1e-9, 1), (50.0, 0.01, 1000)):
        for neighbours, factor in (("add_remove", 0.5), ("substitute", 2.0)):
            sigma = noise_multiplier_for(epsilon, delta, steps, neighbours)
            assert dp_gd_epsilon(sigma, steps, delta, neighbours) == pytest.approx(epsilon, rel=1e-10)
            # closed form: rho = (sqrt(L + epsilon) - sqrt(L))^2, L = ln(1 / delta); rho = factor T / sigma^2
            L = math.log(1 / delta)
            rho = (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2
            assert sigma == pytest.approx(math.sqrt(factor * steps / rho), rel=1e-9)
    assert noise_multiplier_for(1.0, 1e-6, 100, "substitute") == pytest.approx(
        2 * noise_multiplier_for(1.0, 1e-6, 100, "add_remove"), rel=1e-9)
    assert noise_multiplier_for(0.5, 1e-6, 100) > noise_multiplier_for(1.0, 1e-6, 100)


@pytest.mark.parametrize("call, message", [
    (lambda: dp_gd_rho(0.0, 10), "noise_multiplier must be a finite number > 0"),
    (lambda: dp_gd_rho(1.0, 0), "steps must be an integer >= 1"),
    (lambda: dp_gd_rho(1.0, 10, "replace"), "neighbours must be one of"),
    (lambda: dp_gd_epsilon(1.0, 10, 0.0), "delta must be a number strictly between 0 and 1"),
    (lambda: noise_multiplier_for(-1.0, 1e-6, 10), "epsilon must be a finite number > 0"),
    (lambda: noise_multiplier_for(1.0, 1e-6, 2.5), "steps must be an integer >= 1"),
])
def test_accounting_rejects_bad_parameters(call, message):
    with pytest.raises(ValueError, match=message):
        call()

