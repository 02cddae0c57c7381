"""dplib.mechanisms.discrete_laplace: samplers on a grid have no gaps; the exact sampler follows the discrete Laplace law exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dplib.mechanisms.discrete_laplace as discrete_laplace
from dplib.mechanisms.discrete_laplace import (
    discrete_laplace_steps,
    exact_grid_laplace,
    grid_laplace,
    on_grid,
    opendp_laplace,
    opendp_laplace_epsilon,
)
from dplib.testing import check_categorical


def discrete_laplace_shares(scale: float, granularity: float, width: int) -> np.ndarray:
    r = math.exp(-granularity / scale)
    steps = np.arange(-width, width + 1)
    shares = (1 - r) / (1 + r) * r ** np.abs(steps)
    shares[[0, -1]] = r**width / (1 + r)
    return shares


def test_grid_laplace_rounds_the_value_and_adds_discrete_laplace_steps():
    noisy = grid_laplace(np.full(20_000, 3.3), 0.5, 0.5, rng=8)
    steps = (noisy - 3.5) / 0.5
    assert np.array_equal(steps, np.round(steps))
    check_categorical(np.clip(steps, -6, 6).astype(int) + 6, discrete_laplace_shares(0.5, 0.5, 6), what="grid steps")
    assert isinstance(grid_laplace(3.3, 0.5, 0.5, rng=0), np.floating | float)
    with pytest.raises(ValueError, match="granularity must be a finite number > 0"):
        grid_laplace(1.0, 1.0, 0.0)


def test_every_grid_point_comes_from_both_neighbours():
    """Grid outputs of 0 and of 1 cover the same points: nothing for the membership attack to use."""
    from_zero = set(grid_laplace(np.zeros(20_000), 1.0, 0.25, rng=9))
    from_one = set(grid_laplace(np.ones(20_000), 1.0, 0.25, rng=10))
    central = {k * 0.25 for k in range(-8, 13)}
    assert central <= from_zero and central <= from_one


def test_opendp_samples_the_same_discrete_laplace_on_its_grid():
    draws = opendp_laplace(40.0, 1.0, 20_000, k=-1)
    steps = (draws - 40.0) / 0.5
    assert np.array_equal(steps, np.round(steps))
    check_categorical(np.clip(steps, -8, 8).astype(int) + 8, discrete_laplace_shares(1.0, 0.5, 8),
                      what="OpenDP's grid steps")  # false failure 1e-6: OpenDP takes no seed


def test_opendp_charges_the_rounding_of_the_input():
    assert opendp_laplace_epsilon(1.0, 2.0, k=-10) == pytest.approx((1 + 2.0**-10) / 2)
    assert opendp_laplace_epsilon(1.0, 2.0) == pytest.approx(0.5)


# --- The exact sampler (Canonne, Kamath & Steinke 2020): exact probabilities, every integer reachable -------------------


@pytest.mark.parametrize("gamma", [(0, 1), (1, 3), (1, 1), (5, 7)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    numerator, denominator = gamma
    draws = discrete_laplace.bernoulli_exp(np.full(200_000, numerator), np.full(200_000, denominator),
                                           np.random.default_rng(20))
    p = math.exp(-numerator / denominator)
    assert abs(draws.mean() - p) <= 6 * math.sqrt(p * (1 - p) / 200_000) + 1e-12


@pytest.mark.parametrize("scale_steps", [0.5, 2.0, 3.75, 2.0**20])
def test_discrete_laplace_steps_follow_the_discrete_laplace_law(scale_steps):
    steps = discrete_laplace_steps(scale_steps, 40_000, rng=21)
    assert steps.dtype == np.int64 and steps.shape == (40_000,)
    if scale_steps > 100:  # on a fine grid: the Laplace distribution of scale 2**20 steps
        assert stats.kstest(steps / scale_steps, stats.laplace().cdf).pvalue > 1e-6
        return
    width = 3 if scale_steps < 1 else 8  # at least 20 expected draws in each tail
    check_categorical(np.clip(steps, -width, width) + width, discrete_laplace_shares(scale_steps, 1.0, width),
                      what="exact steps")


def test_discrete_laplace_steps_have_no_largest_value(monkeypatch):
    """No cut-off: V counts Bernoulli(1/e) successes with no bound, so any number of steps is reachable.

    Forcing 500 successes in a row (the first 500 draws of Bernoulli(e^-1)) gives a draw of at least 500 steps;
    numpy's geometric sampler cannot go beyond 73 at g / b = 1/2 (its arithmetic stops there).
    """
    real = discrete_laplace.bernoulli_exp
    forced = {"left": 500}

    def scripted(numerator, denominator, rng):
        result = real(numerator, denominator, rng)
        if np.all(np.asarray(numerator) == np.asarray(denominator)):  # the Bernoulli(1/e) draws of V
            result = np.full(result.shape, forced["left"] > 0)
            forced["left"] -= 1
        else:
            result = np.ones(result.shape, dtype=bool)  # keep U
        return result

    monkeypatch.setattr(discrete_laplace, "bernoulli_exp", scripted)
    assert abs(int(discrete_laplace_steps(2.0, rng=22))) >= 1_000  # X = U + 2 V with V = 500 (scale 2 = 2 / 1)


def test_discrete_laplace_steps_refuse_bad_scales():
    with pytest.raises(ValueError, match="scale_steps must be a finite number > 0"):
        discrete_laplace_steps(0.0)
    with pytest.raises(ValueError, match="scale_steps must be > 0 with numerator and denominator below 2\\*\\*40"):
        discrete_laplace_steps(0.1)  # 0.1 as a double has denominator 2**55


def test_exact_grid_laplace_is_on_the_grid_seeded_and_shaped():
    noisy = exact_grid_laplace(np.full((3, 400), 7.3), 1.5, 2.0**-4, rng=23)
    assert noisy.shape == (3, 400) and on_grid(noisy, 7.3, 2.0**-4).all()
    assert np.array_equal(noisy, exact_grid_laplace(np.full((3, 400), 7.3), 1.5, 2.0**-4, rng=23))
    assert isinstance(exact_grid_laplace(1.0, 1.0, rng=0), np.floating | float)
    assert exact_grid_laplace(1.0, 1.0, size=5, rng=0).shape == (5,)
    assert on_grid(noisy, 7.3125, 2.0**-4).all()  # 7.3 * 16 = 116.8 rounds to 117 steps: 7.3125
    with pytest.raises(ValueError, match="granularity must be a power of two"):
        exact_grid_laplace(1.0, 1.0, 0.3)


def test_on_grid_is_exact_membership():
    assert on_grid(3.0 + 2.0**-20, 2.0) and not on_grid(3.0 + 2.0**-21, 2.0)
    with pytest.raises(ValueError, match="outputs"):
        on_grid(np.nan, 0.0)
    assert on_grid(np.array([0.5, 0.75]), 0.3, 0.25).tolist() == [True, True]

