"""Tests for dplib.private_learning: per-example gradients, clipping, the noisy step, DP-GD, its accounting.

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

from dplib.gaussian import gaussian_delta, zcdp_rho, zcdp_to_epsilon
from dplib.learning import FEATURES, adult_learning_data
from dplib.private_learning import (
    CLIP_NORM,
    DELTA,
    LEARNING_RATE,
    STEPS,
    adult_design_matrices,
    central_accuracy,
    clip_gradients,
    design_matrix,
    dp_gd_epsilon,
    dp_gd_rho,
    gradient_sum_sensitivity,
    logistic_accuracy,
    logistic_loss,
    noise_multiplier_for,
    noisy_gradient,
    noisy_gradient_descent,
    noisy_gradient_descent_path,
    nonprivate_logistic_regression,
    per_example_gradients,
    sampled_gaussian_epsilon,
    subsampled_epsilon,
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


# --------------------------------------------------------------------------- data


def test_design_matrix_one_hot_over_the_whole_domain():
    train, test = adult_learning_data(500)
    X, y = design_matrix(train)
    width = 1 + sum(len(train[c].cat.categories) for c in FEATURES)
    assert X.shape == (500, width) == (500, 50)
    assert (X[:, 0] == 1).all() and set(np.unique(X)) == {0.0, 1.0}
    assert (X.sum(axis=1) == 1 + len(FEATURES)).all()  # one category per feature, plus the intercept
    assert np.array_equal(y, (train["income"] == ">50K").to_numpy(dtype=float))
    # the columns come from the domain, not from who is in the frame: one person gives the same layout
    one, _ = design_matrix(train.iloc[:1])
    assert np.array_equal(one, X[:1])
    assert design_matrix(test)[0].shape[1] == width


def test_design_matrix_refuses_frames_without_a_fixed_domain():
    train, _ = adult_learning_data(50)
    with pytest.raises(ValueError, match="missing"):
        design_matrix(train.drop(columns=["sex"]))
    with pytest.raises(ValueError, match="'sex' must be a Categorical"):
        design_matrix(train.assign(sex=train["sex"].astype(str)))


# --------------------------------------------------------------------------- gradients and clipping


def test_per_example_gradients_are_the_derivatives_of_each_loss(small):
    X, y, theta = small
    gradients = per_example_gradients(theta, X, y)
    assert gradients.shape == X.shape
    # central finite differences of person i's own loss, coordinate by coordinate
    h = 1e-6
    for i in (0, 7, 123):
        numerical = [(logistic_loss(theta + h * e, X[i:i + 1], y[i:i + 1])
                      - logistic_loss(theta - h * e, X[i:i + 1], y[i:i + 1])) / (2 * h) for e in np.eye(X.shape[1])]
        assert np.allclose(gradients[i], numerical, atol=1e-7)
    # their mean is the gradient of the mean loss (no sign error, no 1/n inside)
    assert np.allclose(gradients.mean(axis=0), per_example_gradients(theta, X, y).sum(axis=0) / len(X))


def test_per_example_gradients_and_loss_do_not_overflow():
    X, y = np.array([[1.0, 800.0], [1.0, -800.0]]), np.array([0, 1])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        gradients = per_example_gradients([0.0, 1.0], X, y)
        loss = logistic_loss([0.0, 1.0], X, y)
    assert np.allclose(gradients, [[1.0, 800.0], [-1.0, 800.0]])
    assert loss == pytest.approx(800.0)


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
    import dplib.private_learning as module

    seen = []
    real = module.noisy_gradient_descent
    monkeypatch.setattr(module, "noisy_gradient_descent",
                        lambda X, y, clip_norm, sigma, steps, eta, rng=None: seen.append((len(X), clip_norm, sigma, steps, eta))
                        or real(X, y, clip_norm, sigma, steps, eta, rng=rng))
    central_accuracy([1.0], 3, rng=0, data=adult_2000)
    assert seen == [(2_000, CLIP_NORM, noise_multiplier_for(1.0, DELTA, STEPS, "substitute"), STEPS, LEARNING_RATE)] * 3


def test_logistic_accuracy_counts_right_predictions():
    X, y = np.array([[1.0, 2.0], [1.0, -2.0], [1.0, 0.5]]), np.array([1, 0, 0])
    assert logistic_accuracy([0.0, 1.0], X, y) == pytest.approx(2 / 3)
    assert logistic_accuracy([0.0, -1.0], X, y) == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- amplification by subsampling


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
    from dplib.private_learning import _sampled_gaussian_rdp

    for order, reference in ((5, 2.18075656e-03), (50, 2.38460375e-02), (100, 1.67416308e02)):
        assert 50 * _sampled_gaussian_rdp(2.5, 0.01, order) == pytest.approx(reference, rel=1e-4)


def test_sampled_gaussian_rdp_matches_its_defining_integral():
    from dplib.private_learning import _sampled_gaussian_rdp

    # A_alpha = E_{z ~ N(0, s^2)} [((1 - q) + q exp((2z - 1) / (2 s^2)))^alpha] (Mironov, Talwar & Zhang 2019)
    for sigma, q, order in ((1.2, 0.05, 3), (2.0, 0.3, 8), (0.9, 0.01, 20)):
        def integrand(z):  # in log space: the power overflows where the density is already 0
            log_ratio = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2))
            return math.exp(stats.norm.logpdf(z, scale=sigma) + order * log_ratio)

        # the integrand's mass sits between 0 and about `order` (its peak for large alpha)
        a_alpha, _ = integrate.quad(integrand, -40 * sigma, order + 40 * sigma, points=[0.0, order / 2, order],
                                    limit=500, epsabs=0, epsrel=1e-11)
        assert _sampled_gaussian_rdp(sigma, q, order) == pytest.approx(math.log(a_alpha) / (order - 1), rel=1e-7)
    assert _sampled_gaussian_rdp(3.0, 1.0, 7) == pytest.approx(7 / 18)  # q = 1: the Gaussian mechanism


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

