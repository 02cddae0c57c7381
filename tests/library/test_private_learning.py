"""Tests for dplib.learning.noisy_gd: clipping, the noisy step, DP-GD and its accuracy at a budget.

Randomness is tested by distribution, with fixed seeds *and* acceptance regions whose false-failure
probability under a correct implementation is fixed in advance (<= 1e-6, through dplib.testing):
the noise of a noisy step standardized by sigma C is N(0, 1) (Kolmogorov-Smirnov and chi-square),
independent between coordinates and between steps. Clip norm 0.3 and noise multiplier 2.5 keep a
noise of scale 1 (not C) or sqrt(n) sigma C (noise per example) from hiding.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from dplib.accounting.dp_gd import dp_gd_rho, noise_multiplier_for
from dplib.learning.logistic_model import (
    adult_design_matrices,
    logistic_accuracy,
    logistic_loss,
    nonprivate_logistic_regression,
    per_example_gradients,
)
from dplib.learning.noisy_gd import (
    CLIP_NORM,
    DELTA,
    LEARNING_RATE,
    STEPS,
    central_accuracy,
    clip_gradients,
    noisy_gradient,
    noisy_gradient_descent,
    noisy_gradient_descent_path,
)
from dplib.testing import check_categorical, check_distribution, check_fraction

C, SIGMA = 0.3, 2.5


@pytest.fixture(scope="module")
def small():
    """300 people of Adult (50 columns) and a weight vector that gives gradients of many norms."""
    X, y, _, _ = adult_design_matrices(300)
    theta = np.random.default_rng(1).normal(0.0, 0.7, X.shape[1])
    return X, y, theta


def noise_only_design(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """n people with an intercept and d - 1 columns of zeros: only noise ever reaches those d - 1 weights."""
    X = np.zeros((n, d))
    X[:, 0] = 1.0
    return X, np.arange(n) % 2


# --------------------------------------------------------------------------- clipping


def test_clipped_norms_are_at_most_c_exactly_and_directions_are_kept():
    rng = np.random.default_rng(2)
    gradients = rng.normal(size=(20_000, 7)) * 10.0 ** rng.uniform(-3, 3, size=(20_000, 1))
    for clip_norm in (0.3, 1.0, 1e-3, 7.0):
        clipped = clip_gradients(gradients, clip_norm)
        norms = np.linalg.norm(clipped, axis=1)
        assert (norms <= clip_norm).all()  # exactly, not up to rounding
        long = np.linalg.norm(gradients, axis=1) > clip_norm
        assert np.allclose(norms[long], clip_norm, rtol=1e-12)
        assert np.array_equal(clipped[~long], gradients[~long])  # short rows are untouched
        cosines = np.sum(clipped * gradients, axis=1) / (norms * np.linalg.norm(gradients, axis=1))
        assert np.allclose(cosines, 1.0, atol=1e-12)


def test_each_row_is_clipped_on_its_own():
    gradients = np.array([[3.0, 4.0], [0.0, 0.1], [0.0, 0.0]])
    assert np.allclose(clip_gradients(gradients, 1.0), [[0.6, 0.8], [0.0, 0.1], [0.0, 0.0]])
    # clipping the whole batch by its norm (the classic mistake) would shrink the short rows too
    batch_clipped = gradients * min(1.0, 1.0 / np.linalg.norm(gradients))
    assert not np.allclose(clip_gradients(gradients, 1.0), batch_clipped)


def test_clip_gradients_rejects_bad_input():
    with pytest.raises(ValueError, match="clip_norm must be a finite number > 0"):
        clip_gradients(np.ones((2, 2)), 0.0)
    with pytest.raises(ValueError, match="gradients must be a 2-D array"):
        clip_gradients(np.ones(3), 1.0)


# --------------------------------------------------------------------------- the noisy step


def test_noisy_gradient_without_noise_is_the_clipped_mean(small):
    X, y, theta = small
    clipped_mean = clip_gradients(per_example_gradients(theta, X, y), C).mean(axis=0)
    assert np.allclose(noisy_gradient(theta, X, y, C, 0.0), clipped_mean, rtol=1e-12, atol=1e-15)


def test_noise_of_a_step_is_n_0_sigma_c_once_on_the_sum():
    n, d = 25, 20_001
    X, y = noise_only_design(n, d)
    theta = np.zeros(d)
    clipped_sum = clip_gradients(per_example_gradients(theta, X, y), C).sum(axis=0)
    noisy = noisy_gradient(theta, X, y, C, SIGMA, rng=np.random.default_rng(4))
    z = (n * noisy - clipped_sum) / (SIGMA * C)
    check_distribution(z, stats.norm.cdf, what="(n noisy_gradient - clipped sum) / (sigma C)")
    # the same, binned: ten equally likely bins of N(0, 1), chi-square
    check_categorical(np.minimum((stats.norm.cdf(z) * 10).astype(int), 9), [0.1] * 10, what="deciles of z")
    # independent coordinates: each beats the next with probability 1/2
    check_fraction(z[1:-1:2] > z[2::2], 0.5, what="coordinate above the next one")
    # the alternatives a mistake would give are rejected by the same test
    for wrong_scale in (1 / C, math.sqrt(n), n):
        with pytest.raises(AssertionError):
            check_distribution(z * wrong_scale, stats.norm.cdf, what="wrong scale")


def test_noisy_gradient_is_seeded_and_fresh():
    X, y = noise_only_design(5, 200)
    theta = np.zeros(200)
    first = noisy_gradient(theta, X, y, C, SIGMA, rng=np.random.default_rng(5))
    assert np.array_equal(first, noisy_gradient(theta, X, y, C, SIGMA, rng=np.random.default_rng(5)))
    assert not np.array_equal(noisy_gradient(theta, X, y, C, SIGMA), noisy_gradient(theta, X, y, C, SIGMA))


def renyi_divergence(p, q, alpha: float, limit: float) -> float:
    """D_alpha(P || Q) = ln(integral of p^alpha q^(1 - alpha)) / (alpha - 1), over [-limit, limit], by quadrature."""
    def integrand(x):
        return math.exp(alpha * p.logpdf(x) + (1 - alpha) * q.logpdf(x))

    total, _ = integrate.quad(integrand, -limit, limit, points=[0.0], limit=500)
    return math.log(total) / (alpha - 1)


def test_dividing_by_len_x_is_zcdp_under_substitution_only():
    """The noisy sum is rho-zCDP under add/remove; the step divided by len(X) is not zCDP for any rho.

    With n private, the step on n people and on n + 1 is N(S/n, (sigma C/n)^2) against
    N((S + g)/(n + 1), (sigma C/(n + 1))^2): Gaussians of different variances, whose Renyi divergence
    (the wider's from the narrower's) is finite only while alpha < (n + 1)^2 / (2n + 1) (Gil, Alajaji &
    Linder 2013); zCDP asks D_alpha <= rho alpha for every alpha > 1 (Bun & Steinke 2016, Def. 1.1).
    """
    n, d = 3, 20_001
    spreads = {}
    for people in (n, n + 1):  # the noise of noisy_gradient really is sigma C / len(X)
        X, y = noise_only_design(people, d)
        noisy = noisy_gradient(np.zeros(d), X, y, C, SIGMA, rng=np.random.default_rng(people))
        check_distribution(people * noisy[1:] / (SIGMA * C), stats.norm.cdf,
                           what=f"len(X) * noise / (sigma C), {people} people")
        spreads[people] = SIGMA * C / people
    # one more person whose clipped gradient is C in a column where everybody else's is 0
    wide, narrow = stats.norm(0.0, spreads[n]), stats.norm(C / (n + 1), spreads[n + 1])
    threshold = (n + 1) ** 2 / (2 * n + 1)  # 16/7 for n = 3
    below = 2.0
    closed_form = math.log(spreads[n + 1] / spreads[n]) + math.log(
        spreads[n + 1] ** 2 / (below * spreads[n + 1] ** 2 + (1 - below) * spreads[n] ** 2)) / (2 * (below - 1)) + (
        below * (C / (n + 1)) ** 2 / (2 * (below * spreads[n + 1] ** 2 + (1 - below) * spreads[n] ** 2)))
    assert renyi_divergence(wide, narrow, below, 40 * spreads[n]) == pytest.approx(closed_form, rel=1e-6)
    above = 3.0
    assert above > threshold
    grown = [renyi_divergence(wide, narrow, above, k * spreads[n]) for k in (10, 20, 40)]
    assert grown[0] < grown[1] < grown[2] and grown[2] - grown[1] > 10  # no limit: infinite, so no rho bounds it
    # The noisy sums, N(S, (sigma C)^2) against N(S + g, (sigma C)^2), are dp_gd_rho-zCDP at every order
    rho = dp_gd_rho(SIGMA, 1, "add_remove")
    for alpha in (above, 50.0):
        divergence = renyi_divergence(stats.norm(0.0, SIGMA * C), stats.norm(C, SIGMA * C), alpha, 60 * SIGMA * C)
        assert divergence == pytest.approx(rho * alpha, rel=1e-6)


def test_per_person_noise_is_rho_over_n_under_substitution_only():
    """noisy_gradient's Notes and 09's section 3: noise sigma C on every person's gradient makes the sum rho/n-zCDP
    under substitution; under add/remove the sum's variance grows with n, and at n = 10, sigma = 2 the Renyi divergence
    of order 2 is 0.0328 > (rho / n) * 2 = 0.025, infinite from order n + 1."""
    n, sigma = 10, 2.0
    rho = dp_gd_rho(sigma, 1, "add_remove")  # 1 / (2 sigma^2) = 0.125 for noise added once
    spread = sigma * C * math.sqrt(n)  # n noise terms on the sum
    # substitution: same n terms, the sum moves by at most 2C; the rho of that sum is dp_gd_rho(., "substitute") / n
    substituted = renyi_divergence(stats.norm(0.0, spread), stats.norm(2 * C, spread), 2.0, 60 * spread)
    assert substituted == pytest.approx(dp_gd_rho(sigma, 1, "substitute") / n * 2, rel=1e-6)
    # add/remove: one more person brings a gradient C and one more noise term
    wide, narrow = stats.norm(C, sigma * C * math.sqrt(n + 1)), stats.norm(0.0, spread)
    divergence = renyi_divergence(wide, narrow, 2.0, 60 * spread)
    assert divergence == pytest.approx(0.0328, abs=5e-5) and rho / n * 2 == pytest.approx(0.025)
    assert divergence > rho / n * 2
    # finite only while alpha var(narrow) + (1 - alpha) var(wide) > 0: alpha < n + 1 (Gil, Alajaji & Linder 2013)
    assert (n + 1) * spread**2 + (1 - (n + 1)) * (sigma * C) ** 2 * (n + 1) == 0
    beyond = [renyi_divergence(wide, narrow, 2.0 * n, k * spread) for k in (10, 20, 30)]
    assert beyond[0] < beyond[1] < beyond[2] and beyond[2] - beyond[1] > 5  # order 2n: the integral has no limit


@pytest.mark.parametrize("arguments, message", [
    ((np.zeros(3), np.ones((2, 3)), [0, 1], -1.0, 1.0), "clip_norm must be a finite number > 0"),
    ((np.zeros(3), np.ones((2, 3)), [0, 1], 1.0, -0.5), "noise_multiplier must be a finite number >= 0"),
    ((np.zeros(2), np.ones((2, 3)), [0, 1], 1.0, 1.0), "theta must have one entry per column of X"),
    ((np.zeros(3), np.ones((2, 3)), [0, 2], 1.0, 1.0), "y must hold only 0 and 1"),
    ((np.zeros(3), np.ones((2, 3)), [0, 1, 1], 1.0, 1.0), "y must hold one label per row of X"),
])
def test_noisy_gradient_rejects_bad_parameters(arguments, message):
    with pytest.raises(ValueError, match=message):
        noisy_gradient(*arguments)


# --------------------------------------------------------------------------- noisy gradient descent


def test_the_fast_path_is_the_textbook_loop(small):
    X, y, _ = small
    rng = np.random.default_rng(6)
    theta, textbook = np.zeros(X.shape[1]), [np.zeros(X.shape[1])]
    for _ in range(15):
        theta = theta - 0.8 * noisy_gradient(theta, X, y, C, SIGMA, rng=rng)
        textbook.append(theta)
    path = noisy_gradient_descent_path(X, y, C, SIGMA, 15, 0.8, rng=np.random.default_rng(6))
    assert np.allclose(path, textbook, rtol=1e-10, atol=1e-13)
    final = noisy_gradient_descent(X, y, C, SIGMA, 15, 0.8, rng=np.random.default_rng(6))
    assert np.array_equal(final, path[-1])
    # a shorter run from the same seed is the start of the longer one
    assert np.array_equal(noisy_gradient_descent_path(X, y, C, SIGMA, 6, 0.8, rng=np.random.default_rng(6)), path[:7])


def test_every_step_draws_fresh_noise():
    n, d, steps, eta = 4, 20_001, 16, 0.5
    X, y = noise_only_design(n, d)
    path = noisy_gradient_descent_path(X, y, C, SIGMA, steps, eta, rng=np.random.default_rng(7))
    step_sd = eta * SIGMA * C / n
    # only noise reaches the columns of zeros: after T steps, N(0, T (eta sigma C / n)^2)
    check_distribution(path[-1, 1:] / (math.sqrt(steps) * step_sd), stats.norm.cdf, what="theta_T in noise-only columns")
    # each step's move is N(0, (eta sigma C / n)^2), independent of the step before
    moves = np.diff(path[:, 1:], axis=0) / step_sd
    check_distribution(moves.ravel(), stats.norm.cdf, what="one step's move in noise-only columns")
    check_fraction(moves[:-1] * moves[1:] > 0, 0.5, what="two consecutive moves in the same direction")
    # the same noise in every step (the classic mistake) gives T times the move: sqrt(T) = 4 times the spread
    with pytest.raises(AssertionError):
        check_distribution(steps * moves[0] / math.sqrt(steps), stats.norm.cdf, what="reused noise")


def test_gradient_descent_learns_and_validates():
    X_train, y_train, X_test, y_test = adult_design_matrices(2_000)
    theta = noisy_gradient_descent(X_train, y_train, CLIP_NORM, 0.0, STEPS, LEARNING_RATE)
    majority = float(np.mean(y_test == 0))
    assert logistic_accuracy(theta, X_test, y_test) > majority + 0.05
    assert logistic_loss(theta, X_train, y_train) < logistic_loss(np.zeros(X_train.shape[1]), X_train, y_train) - 0.1
    assert np.array_equal(noisy_gradient_descent_path(X_train, y_train, 1.0, 1.0, 0, 1.0), np.zeros((1, 50)))
    with pytest.raises(ValueError, match="steps must be an integer >= 0"):
        noisy_gradient_descent(X_train, y_train, 1.0, 1.0, -1, 1.0)
    with pytest.raises(ValueError, match="learning_rate must be a finite number > 0"):
        noisy_gradient_descent(X_train, y_train, 1.0, 1.0, 3, 0.0)


# --------------------------------------------------------------------------- accuracy


@pytest.fixture(scope="module")
def adult_2000():
    return adult_design_matrices(2_000)


def test_central_accuracy_table(adult_2000):
    table = central_accuracy([0.5, 20.0], 2, rng=np.random.default_rng(8), data=adult_2000)
    assert list(table.columns) == ["accuracy_mean", "accuracy_std"] and table.index.name == "epsilon"
    assert list(table.index) == [0.5, 20.0, math.inf]
    X_train, y_train, X_test, y_test = adult_2000
    baseline = logistic_accuracy(nonprivate_logistic_regression(X_train, y_train), X_test, y_test)
    assert table.loc[math.inf, "accuracy_mean"] == baseline and table.loc[math.inf, "accuracy_std"] == 0
    assert baseline > 0.82
    assert abs(table.loc[20.0, "accuracy_mean"] - baseline) < 0.02
    assert (table["accuracy_std"] < 0.05).all()
    # the same seed, the same table
    again = central_accuracy([0.5, 20.0], 2, rng=np.random.default_rng(8), data=adult_2000)
    pd.testing.assert_frame_equal(table, again)


def test_central_accuracy_uses_the_noise_multiplier_of_each_epsilon(adult_2000, monkeypatch):
    import dplib.learning.noisy_gd as module

    seen = []
    real = module.noisy_gradient_descent
    monkeypatch.setattr(module, "noisy_gradient_descent",
                        lambda X, y, clip_norm, sigma, steps, eta, rng=None: seen.append((len(X), clip_norm, sigma, steps, eta))
                        or real(X, y, clip_norm, sigma, steps, eta, rng=rng))
    central_accuracy([1.0], 3, rng=0, data=adult_2000)
    assert seen == [(2_000, CLIP_NORM, noise_multiplier_for(1.0, DELTA, STEPS, "substitute"), STEPS, LEARNING_RATE)] * 3
