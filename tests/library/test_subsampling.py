"""Tests for dplib.accounting.subsampling: amplification by Poisson subsampling and the sampled Gaussian mechanism's Rényi DP."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dplib.accounting.dp_gd import dp_gd_epsilon
from dplib.accounting.subsampling import sampled_gaussian_epsilon, sampled_gaussian_rdp, subsampled_epsilon


def test_subsampled_epsilon_formula():
    assert subsampled_epsilon(1.3, 1e-5, 1.0) == pytest.approx((1.3, 1e-5))
    assert subsampled_epsilon(1.3, 1e-5, 0.0) == (0.0, 0.0)
    epsilon, delta = subsampled_epsilon(2.0, 1e-6, 0.05)
    assert epsilon == pytest.approx(math.log(1 + 0.05 * (math.exp(2.0) - 1))) and delta == pytest.approx(5e-8)
    assert subsampled_epsilon(0.01, 0.0, 0.1)[0] == pytest.approx(0.001, rel=0.01)  # about q epsilon
    with pytest.raises(ValueError, match="sampling_rate must be a probability"):
        subsampled_epsilon(1.0, 1e-6, 1.5)


def test_sampled_gaussian_rdp_matches_a_reference_implementation():
    # google/differential-privacy, dp_accounting/rdp/rdp_privacy_accountant_test.py
    # (test_compute_rdp_poisson_sampled_gaussian): q = 0.01, sigma = 2.5, 50 steps, integer orders 5, 50, 100.
    for order, reference in ((5, 2.18075656e-03), (50, 2.38460375e-02), (100, 1.67416308e02)):
        assert 50 * sampled_gaussian_rdp(2.5, 0.01, order) == pytest.approx(reference, rel=1e-4)


def test_sampled_gaussian_rdp_matches_its_defining_integral():
    # A_alpha = E_{z ~ N(0, s^2)} [((1 - q) + q exp((2z - 1) / (2 s^2)))^alpha] (Mironov, Talwar & Zhang 2019)
    for sigma, q, order in ((1.2, 0.05, 3), (2.0, 0.3, 8), (0.9, 0.01, 20)):
        def integrand(z):  # in log space: the power overflows where the density is already 0
            log_ratio = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2))
            return math.exp(stats.norm.logpdf(z, scale=sigma) + order * log_ratio)

        # the integrand's mass sits between 0 and about `order` (its peak for large alpha)
        a_alpha, _ = integrate.quad(integrand, -40 * sigma, order + 40 * sigma, points=[0.0, order / 2, order],
                                    limit=500, epsabs=0, epsrel=1e-11)
        assert sampled_gaussian_rdp(sigma, q, order) == pytest.approx(math.log(a_alpha) / (order - 1), rel=1e-7)
    assert sampled_gaussian_rdp(3.0, 1.0, 7) == pytest.approx(7 / 18)  # q = 1: the Gaussian mechanism


def test_sampled_gaussian_epsilon_shrinks_with_the_sampling_rate():
    full_batch = sampled_gaussian_epsilon(10.0, 1.0, 100, 1e-6)
    # q = 1 is full-batch DP-GD: at most the zCDP figure's, plus the looser RDP conversion's slack
    assert dp_gd_epsilon(10.0, 100, 1e-6) <= full_batch < 1.1 * dp_gd_epsilon(10.0, 100, 1e-6)
    epsilons = [sampled_gaussian_epsilon(1.0, q, 1_000, 1e-5) for q in (0.001, 0.01, 0.1)]
    assert epsilons == sorted(epsilons) and epsilons[0] < 1.0
    assert sampled_gaussian_epsilon(1.0, 0.01, 100, 1e-5) < sampled_gaussian_epsilon(1.0, 0.01, 1_000, 1e-5)
    with pytest.raises(ValueError, match="sampling_rate must be a probability in \\(0, 1\\]"):
        sampled_gaussian_epsilon(1.0, 0.0, 10, 1e-5)
    with pytest.raises(ValueError, match="orders must be an integer >= 2"):
        sampled_gaussian_epsilon(1.0, 0.1, 10, 1e-5, orders=[1.5])
