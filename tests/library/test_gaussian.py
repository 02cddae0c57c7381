"""Tests for dplib.gaussian: Gaussian mechanism (classic and analytic), zCDP, advanced composition.

Statistical checks use fixed seeds *and* acceptance regions whose false-failure probability
under a correct implementation is fixed in advance (<= 1e-6). Sensitivity 2 and epsilon 0.5
are used so that a swapped or squared parameter cannot hide.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dplib.gaussian import (
    advanced_composition_epsilon,
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_mech,
    gaussian_sigma,
    l2_sensitivity_of_histogram,
    zcdp_rho,
    zcdp_to_epsilon,
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


def test_zcdp_rho_and_its_composition():
    assert zcdp_rho(2.0, 4.0) == 0.125
    # k Gaussian releases of sigma are one release of sigma / sqrt(k): rho adds up
    assert 10 * zcdp_rho(1.0, 5.0) == pytest.approx(zcdp_rho(1.0, 5.0 / math.sqrt(10)), rel=1e-12)
    with pytest.raises(ValueError, match="sigma"):
        zcdp_rho(1.0, 0.0)
    with pytest.raises(ValueError, match="l2_sensitivity"):
        zcdp_rho(-1.0, 1.0)


def test_zcdp_to_epsilon():
    assert zcdp_to_epsilon(0.125, 1e-5) == pytest.approx(0.125 + 2 * math.sqrt(0.125 * math.log(1e5)), rel=1e-15)
    assert zcdp_to_epsilon(0.0, 1e-5) == 0.0
    with pytest.raises(ValueError, match="delta"):
        zcdp_to_epsilon(0.1, 0.0)
    with pytest.raises(ValueError, match="rho"):
        zcdp_to_epsilon(-0.1, 1e-5)


def test_gaussian_zcdp_conversion_is_valid_but_looser_than_the_exact_delta():
    """rho-zCDP's epsilon at delta must be at least the exact epsilon of the same Gaussian noise."""
    sigma, delta = 4.0, 1e-6
    epsilon = zcdp_to_epsilon(zcdp_rho(1.0, sigma), delta)
    assert gaussian_delta(sigma, 1.0, epsilon) <= delta


def test_zcdp_conversion_of_many_gaussian_releases_overshoots_their_exact_epsilon():
    """The numbers 08 and lecture 8 quote: 1,000 releases with the classic sigma of (0.1, 1e-7), at delta 1e-6."""
    from scipy import optimize

    k, delta = 1_000, 1e-6
    sigma = gaussian_sigma(1.0, 0.1, 1e-7)
    converted = zcdp_to_epsilon(k * zcdp_rho(1.0, sigma), delta)
    # k releases of sensitivity 1 are one release of sensitivity sqrt(k) with the same sigma
    exact = optimize.brentq(lambda e: gaussian_delta(sigma, math.sqrt(k), e) - delta, 1e-6, 50.0, xtol=1e-12)
    assert round(converted, 2) == 3.06 and round(exact, 2) == 2.52
    assert round(advanced_composition_epsilon(0.1, k, delta), 1) == 27.1
    # the conversion is valid (at its epsilon the exact delta is below delta), only loose
    assert gaussian_delta(sigma, math.sqrt(k), converted) < delta


def test_delta_is_not_the_probability_that_the_privacy_loss_exceeds_epsilon():
    """Delta = sigma = 1: (1, 0.127)-DP, yet the loss N(1/2, 1) exceeds 1 with probability 0.309."""
    delta = gaussian_delta(1.0, 1.0, 1.0)
    loss = stats.norm(loc=0.5, scale=1.0)  # N(mu, 2 mu) with mu = Delta^2 / (2 sigma^2) = 1/2
    assert round(delta, 3) == 0.127 and round(loss.sf(1.0), 3) == 0.309
    # the exact condition: delta = E[(1 - e^(epsilon - L))_+]
    from scipy import integrate

    expected, _ = integrate.quad(lambda x: (1 - math.exp(1.0 - x)) * loss.pdf(x), 1.0, 40.0, epsabs=1e-13)
    assert delta == pytest.approx(expected, rel=1e-9)


def test_advanced_composition_has_both_terms():
    epsilon, k, delta_prime = 0.5, 20, 1e-6
    first = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon
    second = k * epsilon * (math.exp(epsilon) - 1)
    assert advanced_composition_epsilon(epsilon, k, delta_prime) == pytest.approx(first + second, rel=1e-14)
    assert advanced_composition_epsilon(0.01, 10_000, 1e-6) < 0.01 * 10_000  # beats basic composition at scale
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        advanced_composition_epsilon(0.1, 0, 1e-6)
    with pytest.raises(ValueError, match="delta_prime"):
        advanced_composition_epsilon(0.1, 10, 1.0)


def test_functions_are_reexported_from_the_package():
    import dplib
    from dplib import gaussian as gaussian_module

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
