"""Tests for dplib.mechanisms.gaussian: the Gaussian mechanism (classic and analytic) and its exact delta.

Statistical checks use fixed seeds *and* acceptance regions whose false-failure probability
under a correct implementation is fixed in advance (<= 1e-6). Sensitivity 2 and epsilon 0.5
are used so that a swapped or squared parameter cannot hide.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dplib.mechanisms.gaussian import (
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_mech,
    gaussian_sigma,
    l2_sensitivity_of_histogram,
)
from dplib.testing import check_distribution, check_fraction

BAD_EPSILONS = [0, -1, math.nan, math.inf, True, "1", None]
BAD_DELTAS = [0, 1, -1e-5, 1.5, math.nan, "0.1", None]
BAD_SENSITIVITIES = [-1, math.nan, math.inf, "2", None]


# --- the classic bound ---------------------------------------------------------------------


def test_gaussian_sigma_is_the_classic_bound():
    assert gaussian_sigma(2.0, 0.5, 1e-5) == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    assert gaussian_sigma(0.0, 0.5, 1e-5) == 0.0
    # the classic mistakes give other numbers
    right = gaussian_sigma(0.7, 0.3, 1e-3)
    for wrong in (0.7 * math.sqrt(2 * math.log(1e3)) / 0.3, 0.7 * 2 * math.log(1.25e3) / 0.3,
                  0.7 * math.sqrt(2 * math.log(1.25e3)) / 0.3**2):
        assert abs(wrong - right) > 1e-3 * right


@pytest.mark.parametrize("epsilon", [1.0, 1.5, 10.0])
def test_gaussian_sigma_refuses_epsilon_from_1_and_points_to_the_analytic_mechanism(epsilon):
    with pytest.raises(ValueError, match="epsilon must be < 1.*analytic_gaussian_sigma"):
        gaussian_sigma(1.0, epsilon, 1e-5)


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_gaussian_sigma_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_sigma(1.0, epsilon, 1e-5)


@pytest.mark.parametrize("delta", BAD_DELTAS)
def test_gaussian_sigma_rejects_bad_delta(delta):
    with pytest.raises(ValueError, match="delta must be a number strictly between 0 and 1"):
        gaussian_sigma(1.0, 0.5, delta)


@pytest.mark.parametrize("sensitivity", BAD_SENSITIVITIES)
def test_gaussian_sigma_rejects_bad_sensitivity(sensitivity):
    with pytest.raises(ValueError, match="l2_sensitivity must be a finite number >= 0"):
        gaussian_sigma(sensitivity, 0.5, 1e-5)


# --- the analytic Gaussian mechanism --------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 0.99, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3, 0.2])
def test_analytic_sigma_meets_the_exact_condition_with_equality(epsilon, delta):
    sigma = analytic_gaussian_sigma(1.0, epsilon, delta)
    assert gaussian_delta(sigma, 1.0, epsilon) == pytest.approx(delta, rel=1e-8)
    # a slightly smaller sigma breaks (epsilon, delta)-DP, a slightly larger one is fine
    assert gaussian_delta(sigma * (1 - 1e-6), 1.0, epsilon) > delta
    assert gaussian_delta(sigma * (1 + 1e-6), 1.0, epsilon) < delta


def test_analytic_delta_matches_the_formula_from_the_normal_cdf():
    sigma, sensitivity, epsilon = 3.0, 2.0, 0.7
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    expected = stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b)
    assert gaussian_delta(sigma, sensitivity, epsilon) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 0.6, 0.95])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_analytic_sigma_is_below_the_classic_one_for_epsilon_below_1(epsilon, delta):
    assert analytic_gaussian_sigma(2.0, epsilon, delta) < gaussian_sigma(2.0, epsilon, delta)


def test_analytic_sigma_scales_with_the_sensitivity_and_is_zero_without_it():
    assert analytic_gaussian_sigma(3.0, 2.0, 1e-6) == pytest.approx(3 * analytic_gaussian_sigma(1.0, 2.0, 1e-6), rel=1e-12)
    assert analytic_gaussian_sigma(0.0, 2.0, 1e-6) == 0.0


@pytest.mark.parametrize("delta", BAD_DELTAS)
def test_analytic_sigma_rejects_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        analytic_gaussian_sigma(1.0, 2.0, delta)


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_analytic_sigma_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        analytic_gaussian_sigma(1.0, epsilon, 1e-5)


# --- the mechanism -----------------------------------------------------------------------


def test_gaussian_mech_noise_follows_the_normal_with_the_classic_sigma():
    noise = gaussian_mech(np.zeros(100_000), 2.0, 0.5, 1e-5, rng=np.random.default_rng(1))
    check_distribution(noise, stats.norm(scale=gaussian_sigma(2.0, 0.5, 1e-5)).cdf, what="classic Gaussian noise")
    # and not the normal of a sigma 5% off
    result = stats.kstest(noise, stats.norm(scale=1.05 * gaussian_sigma(2.0, 0.5, 1e-5)).cdf)
    assert result.pvalue < 1e-6


def test_gaussian_mech_analytic_noise_follows_the_normal_with_the_analytic_sigma():
    values = np.linspace(-50, 50, 100_000)
    noisy = gaussian_mech(values, 2.0, 3.0, 1e-6, rng=np.random.default_rng(2), analytic=True)
    check_distribution(noisy - values, stats.norm(scale=analytic_gaussian_sigma(2.0, 3.0, 1e-6)).cdf,
                       what="analytic Gaussian noise")


def test_gaussian_mech_keeps_shapes_and_draws_independent_noise_per_entry():
    assert np.ndim(gaussian_mech(1.0, 1.0, 0.5, 1e-5, rng=0)) == 0
    grid = gaussian_mech(np.zeros((2, 50_000)), 1.0, 0.5, 1e-5, rng=np.random.default_rng(3))
    assert grid.shape == (2, 50_000)
    check_fraction(grid[0] > grid[1], 0.5, what="first row above the second")


def test_gaussian_mech_same_seed_same_output():
    first = gaussian_mech([1.0, 2.0, 3.0], 1.0, 0.5, 1e-5, rng=np.random.default_rng(4))
    second = gaussian_mech([1.0, 2.0, 3.0], 1.0, 0.5, 1e-5, rng=np.random.default_rng(4))
    assert np.array_equal(first, second)


def test_gaussian_mech_rejects_bad_values():
    with pytest.raises(ValueError, match="value must hold finite numbers"):
        gaussian_mech([1.0, math.nan], 1.0, 0.5, 1e-5)


# --- sensitivity, zCDP, advanced composition -------------------------------------------------


def test_l2_sensitivity_of_histogram():
    assert l2_sensitivity_of_histogram("add_remove") == 1.0
    assert l2_sensitivity_of_histogram("substitute") == pytest.approx(math.sqrt(2), rel=1e-15)
    with pytest.raises(ValueError, match="neighbours must be one of"):
        l2_sensitivity_of_histogram("swap")


def test_functions_are_reexported_from_the_package():
    import dplib
    from dplib.mechanisms import gaussian as gaussian_module

    for name in gaussian_module.__all__:
        if callable(getattr(gaussian_module, name)):
            assert getattr(dplib, name) is getattr(gaussian_module, name)


def test_gaussian_delta_edge_cases_and_validation():
    assert gaussian_delta(0.0, 1.0, 0.5) == 1.0  # no noise: no privacy
    assert gaussian_delta(1.0, 0.0, 0.5) == 0.0  # nothing to hide
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        gaussian_delta(-1.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta(1.0, 1.0, 0.0)
