"""Tests for dplib.mechanisms.kary_randomized_response: generalized randomized response over k values.

Distribution checks are exact binomial tests or chi-square tests whose false-failure
probability is fixed in advance (1e-6 for binomial, 1e-9 for chi-square), on fixed seeds.
"""

import math

import numpy as np
import pytest
from scipy import stats

import dplib
from dplib.accounting.channels import krr_channel, krr_probabilities
from dplib.mechanisms.kary_randomized_response import k_rand_resp
from dplib.testing import check_categorical, check_fraction

FALSE_FAILURE = 1e-6
N = 100_000


def test_scalar_in_scalar_out():
    out = k_rand_resp(2, k=5, epsilon=1.0, rng=0)
    assert np.ndim(out) == 0 and not isinstance(out, np.ndarray)
    assert 0 <= int(out) < 5


@pytest.mark.parametrize("shape", [(0,), (9,), (6, 7), (2, 2, 3)])
def test_array_in_same_shape_out(shape):
    categories = np.random.default_rng(0).integers(0, 4, size=shape)
    out = k_rand_resp(categories, k=4, epsilon=1.0, rng=1)
    assert out.shape == shape
    assert np.issubdtype(out.dtype, np.integer)
    assert ((out >= 0) & (out < 4)).all()


def test_accepts_lists_and_integer_valued_floats():
    assert k_rand_resp([0, 1, 2], 3, 1.0, rng=0).shape == (3,)
    assert k_rand_resp([0.0, 2.0], 3, 1.0, rng=0).shape == (2,)
    assert k_rand_resp([0, 1], 3.0, 1.0, rng=0).shape == (2,)


def test_same_seed_same_output_different_seeds_differ():
    x = np.random.default_rng(0).integers(0, 6, size=1000)
    np.testing.assert_array_equal(k_rand_resp(x, 6, 0.5, rng=np.random.default_rng(3)),
                                  k_rand_resp(x, 6, 0.5, rng=np.random.default_rng(3)))
    assert not np.array_equal(k_rand_resp(x, 6, 0.5, rng=3), k_rand_resp(x, 6, 0.5, rng=4))


@pytest.mark.parametrize(("k", "epsilon"), [(2, 1.0), (4, math.log(3)), (5, 0.5), (10, 2.0)])
def test_truth_rate_is_p(k, epsilon):
    truth = np.arange(N) % k
    reports = k_rand_resp(truth, k, epsilon, rng=np.random.default_rng(k))
    p, _ = krr_probabilities(k, epsilon)
    check_fraction(reports == truth, p, what=f"share of truthful reports (k={k}, epsilon={epsilon})",
                   hint="Is a lie ever equal to the truth? Did you use k instead of k - 1?", false_failure=FALSE_FAILURE)


@pytest.mark.parametrize(("k", "true_value"), [(4, 0), (4, 3), (7, 2)])
def test_lies_are_uniform_over_the_other_values_and_never_the_truth(k, true_value):
    epsilon = 0.7
    reports = k_rand_resp(np.full(N, true_value), k, epsilon, rng=np.random.default_rng(10 * k + true_value))
    lies = reports[reports != true_value]
    # Lies map to 0..k-2 by skipping the true value; they must be uniform (chi-square, 1e-9).
    shifted = lies - (lies > true_value)
    check_categorical(shifted, np.full(k - 1, 1 / (k - 1)), what="lies", false_failure=FALSE_FAILURE)
    # The full report distribution is the channel's row: the truth has probability p, not p + q.
    check_categorical(reports, krr_channel(k, epsilon)[true_value], what="reports", false_failure=FALSE_FAILURE)


def test_every_row_of_the_channel_matches():
    """Reports of a mixed population, split by true value, follow krr_channel row by row."""
    k, epsilon = 4, 1.2
    truth = np.random.default_rng(1).integers(0, k, size=N)
    reports = k_rand_resp(truth, k, epsilon, rng=np.random.default_rng(2))
    channel = krr_channel(k, epsilon)
    for x in range(k):
        check_categorical(reports[truth == x], channel[x], what=f"reports of true value {x}", false_failure=FALSE_FAILURE)


def test_large_epsilon_almost_always_tells_the_truth_and_tiny_epsilon_is_uniform():
    truth = np.arange(10_000) % 3
    np.testing.assert_array_equal(k_rand_resp(truth, 3, 50.0, rng=0), truth)
    reports = k_rand_resp(np.zeros(N, dtype=int), 3, 1e-9, rng=np.random.default_rng(5))
    check_categorical(reports, [1 / 3] * 3, what="reports at epsilon ~ 0", false_failure=FALSE_FAILURE)


def test_empirical_log_ratio_matches_epsilon():
    """OpenDP-style boundary: max over outputs of ln P(y|x)/P(y|x') estimated from samples is epsilon."""
    k, epsilon = 3, 1.5
    from_0 = k_rand_resp(np.zeros(N, dtype=int), k, epsilon, rng=np.random.default_rng(21))
    from_1 = k_rand_resp(np.ones(N, dtype=int), k, epsilon, rng=np.random.default_rng(22))
    p, q = krr_probabilities(k, epsilon)
    rates_0 = np.bincount(from_0, minlength=k) / N
    rates_1 = np.bincount(from_1, minlength=k) / N
    observed = np.abs(np.log(rates_0) - np.log(rates_1)).max()
    sd = math.sqrt((1 - p) / (N * p) + (1 - q) / (N * q))  # delta method for ln(p_hat / q_hat)
    assert abs(observed - epsilon) < stats.norm.isf(FALSE_FAILURE**1.5 / 2) * sd


@pytest.mark.parametrize("k", [1, 0, -2, 2.5, True, math.nan, "4", None])
def test_rejects_bad_k(k):
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        k_rand_resp([0, 1], k, 1.0)


@pytest.mark.parametrize("epsilon", [0, -1, math.nan, math.inf, True, "1"])
def test_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        k_rand_resp([0, 1], 3, epsilon)


@pytest.mark.parametrize(
    ("categories", "message"),
    [
        ([0, 4], r"categories must hold integers in 0\.\.3, got 4$"),
        ([-1, 2], r"categories must hold integers in 0\.\.3, got -1$"),
        ([0.5, 1.0], r"categories must hold integers in 0\.\.3, got non-integer values"),
        ([math.nan], r"categories must hold integers in 0\.\.3, got non-integer values"),
        ([math.inf], r"categories must hold integers in 0\.\.3, got non-integer values"),
        (["a", "b"], r"categories must hold integers in 0\.\.3, got dtype"),
        ([True, False], r"categories must hold integers in 0\.\.3, got dtype bool"),
    ],
)
def test_rejects_bad_categories(categories, message):
    with pytest.raises(ValueError, match=message):
        k_rand_resp(categories, 4, 1.0)


def test_reexported_from_the_package():
    assert dplib.k_rand_resp is k_rand_resp
