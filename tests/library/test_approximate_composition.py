"""Tests for dplib.accounting.zcdp: zCDP of Gaussian releases, its conversion to epsilon, advanced composition."""

import math

import pytest
from scipy import stats

from dplib.accounting.zcdp import advanced_composition_epsilon, zcdp_rho, zcdp_to_epsilon
from dplib.mechanisms.gaussian import gaussian_delta, gaussian_sigma


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
