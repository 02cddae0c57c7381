"""dplib.attacks.reconstruction: least squares on noisy subset counts recovers the secret bits, unless the noise is of order sqrt(n)."""

from __future__ import annotations

import numpy as np
import pytest

from dplib.attacks.reconstruction import answer_queries, reconstruct, reconstruction_accuracy, subset_queries


def test_subset_queries_are_random_halves():
    queries = subset_queries(200, 300, rng=0)
    assert queries.shape == (300, 200) and set(np.unique(queries)) == {0, 1}
    assert abs(queries.mean() - 0.5) < 0.01
    assert not np.array_equal(queries, subset_queries(200, 300, rng=1))


def test_answers_are_the_counts_plus_noise():
    queries = subset_queries(30, 50, rng=2)
    secret = np.random.default_rng(3).integers(0, 2, 30)
    assert np.array_equal(answer_queries(queries, secret, 0.0), queries @ secret)
    noise = answer_queries(queries, secret, 2.0, rng=4) - queries @ secret
    assert 1.5 < noise.std() < 2.5
    with pytest.raises(ValueError, match="queries must be an \\(m, n\\) matrix with n = len\\(secret\\) = 30"):
        answer_queries(queries[:, :10], secret, 1.0)
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        answer_queries(queries, secret, -1.0)


def test_reconstruct_rounds_the_least_squares_solution_to_bits():
    rng = np.random.default_rng(5)
    secret = rng.integers(0, 2, 100)
    queries = subset_queries(100, 400, rng=rng)
    assert np.array_equal(reconstruct(queries, queries @ secret), secret)
    bits = reconstruct(queries, answer_queries(queries, secret, 1.0, rng=rng))
    assert bits.dtype.kind == "i" and set(np.unique(bits)) <= {0, 1}
    assert np.array_equal(bits, secret)
    with pytest.raises(ValueError, match="m = len\\(answers\\) = 3"):
        reconstruct(queries, [1.0, 2.0, 3.0])


def test_noise_of_order_sqrt_n_keeps_the_attack_far_from_perfect():
    table = reconstruction_accuracy(100, 400, [0.5, 10.0, 40.0], trials=4, rng=6)
    assert table.index.name == "sigma" and list(table.columns) == ["accuracy_mean", "accuracy_std", "sigma_over_sqrt_n"]
    assert table.loc[0.5, "accuracy_mean"] == 1.0
    assert 0.6 < table.loc[10.0, "accuracy_mean"] < 0.75  # sigma = sqrt(n)
    assert table.loc[40.0, "accuracy_mean"] < 0.6


@pytest.mark.parametrize("people, queries, sigma", [(40, 160, 0.25), (128, 512, 0.5)])
def test_the_notebooks_noise_leaves_every_bit_beyond_eight_standard_deviations(people, queries, sigma):
    """11_auditing's tests of reconstruct: the least-squares error of entry i is N(0, sigma^2 [(A^T A)^-1]_ii)."""
    worst = 0.0
    for seed in range(300):
        A = subset_queries(people, queries, rng=seed).astype(float)
        worst = max(worst, sigma * float(np.sqrt(np.diag(np.linalg.inv(A.T @ A))).max()))
    assert worst < 0.06  # a bit is wrong only if its entry errs by 1/2: more than 8 standard deviations


def test_least_squares_error_has_sd_two_sigma_over_root_m_minus_n():
    """Each entry of x_hat - x has variance sigma^2 [(A^T A)^-1]_ii, about 4 sigma^2 / (m - n) (inverse Wishart mean):
    at m = 4n that is 15% more than 4 sigma^2 / m, and it predicts the 0.81 of bits recovered at sigma = sqrt(n) / 2."""
    n, m = 128, 512
    sds = [np.sqrt(np.diag(np.linalg.inv(A.T @ A))).mean()
           for A in (subset_queries(n, m, rng=seed).astype(float) for seed in range(5))]
    assert np.mean(sds) == pytest.approx(2 / np.sqrt(m - n), rel=0.03)
    assert abs(np.mean(sds) - 2 / np.sqrt(m)) > 0.1 * 2 / np.sqrt(m)
