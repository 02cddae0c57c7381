"""Tests for dplib.mechanisms.randomized_response: Warner's coins, (p, q) randomized response, images.

Rates are checked with exact binomial acceptance regions (false failure 1e-6 each,
fixed in advance, never retried) on fixed seeds. The DP boundary is checked the way
OpenDP does: the empirical log-ratio of output frequencies matches the channel's epsilon.
"""

import math

import numpy as np
import pytest
from scipy import stats

import dplib
from dplib.mechanisms import randomized_response as rr_module
from dplib.accounting.channels import COIN_RR_EPSILON, alpha_beta_to_p_q, get_epsilon
from dplib.images import demo_picture
from dplib.mechanisms.randomized_response import coin_rr, privatize_image, rand_resp
from dplib.testing import check_fraction

FALSE_FAILURE = 1e-6
N = 100_000

ONES = np.ones(N, dtype=int)
ZEROS = np.zeros(N, dtype=int)

BAD_PROBABILITIES = [-0.1, 1.1, math.nan, math.inf, True, "0.5", None, [0.5]]
BAD_BITS = [[0, 2], [0.5], [-1, 1], [[1, 0], [3, 1]], [math.nan]]


def log_ratio_bound(n1: int, p1: float, n2: int, p2: float) -> float:
    """Six-sigma (delta method) bound on |ln(p1_hat / p2_hat) - ln(p1 / p2)|."""
    sd = math.sqrt((1 - p1) / (n1 * p1) + (1 - p2) / (n2 * p2))
    return stats.norm.isf(FALSE_FAILURE**1.5 / 2) * sd


def assert_log_ratio_matches(out_given_1, out_given_0, epsilon, p1, p0):
    """Empirical max |ln P(y|1)/P(y|0)| over y in {0, 1} equals epsilon (both outputs)."""
    rate_1, rate_0 = out_given_1.mean(), out_given_0.mean()
    ratios = [
        (math.log(rate_1 / rate_0), log_ratio_bound(out_given_1.size, p1, out_given_0.size, p0)),
        (math.log((1 - rate_1) / (1 - rate_0)), log_ratio_bound(out_given_1.size, 1 - p1, out_given_0.size, 1 - p0)),
    ]
    observed = max(abs(r) for r, _ in ratios)
    bound = max(b for _, b in ratios)
    assert abs(observed - epsilon) < bound, f"empirical epsilon {observed:.4f}, expected {epsilon:.4f} +/- {bound:.4f}"


# --- coin_rr ------------------------------------------------------------------------------


def test_coin_rr_scalar_in_scalar_out():
    for x in (0, 1, True, np.int64(1)):
        out = coin_rr(x, rng=0)
        assert np.ndim(out) == 0 and int(out) in (0, 1)
        assert not isinstance(out, np.ndarray)


@pytest.mark.parametrize("shape", [(0,), (7,), (4, 5), (2, 3, 4)])
def test_coin_rr_array_in_same_shape_out(shape):
    x = np.random.default_rng(0).integers(0, 2, size=shape)
    out = coin_rr(x, rng=1)
    assert out.shape == shape
    assert np.issubdtype(out.dtype, np.integer)
    assert set(np.unique(out)) <= {0, 1}


def test_coin_rr_accepts_lists_and_bools():
    assert coin_rr([1, 0, 1], rng=0).shape == (3,)
    assert coin_rr(np.array([True, False]), rng=0).shape == (2,)
    assert coin_rr([1.0, 0.0], rng=0).shape == (2,)


def test_coin_rr_same_seed_same_output_different_seeds_differ():
    x = np.random.default_rng(0).integers(0, 2, size=1000)
    np.testing.assert_array_equal(coin_rr(x, rng=np.random.default_rng(5)), coin_rr(x, rng=np.random.default_rng(5)))
    assert not np.array_equal(coin_rr(x, rng=5), coin_rr(x, rng=6))


@pytest.mark.parametrize("x", BAD_BITS)
def test_coin_rr_rejects_non_binary_input(x):
    with pytest.raises(ValueError, match="x must hold only 0 and 1"):
        coin_rr(x)


def test_coin_rr_rejects_strings():
    with pytest.raises(ValueError, match="x must hold only 0 and 1, got dtype"):
        coin_rr(["yes", "no"])


@pytest.fixture(scope="module")
def coin_outputs():
    return coin_rr(ONES, rng=np.random.default_rng(101)), coin_rr(ZEROS, rng=np.random.default_rng(102))


def test_coin_rr_keeps_a_yes_three_quarters_of_the_time(coin_outputs):
    check_fraction(coin_outputs[0], 3 / 4, what="P(yes | yes)", false_failure=FALSE_FAILURE)


def test_coin_rr_says_yes_for_a_no_a_quarter_of_the_time(coin_outputs):
    check_fraction(coin_outputs[1], 1 / 4, what="P(yes | no)", false_failure=FALSE_FAILURE)


def test_coin_rr_draws_independent_coins_per_person(coin_outputs):
    """Coins drawn once for everybody would make neighbours' answers equal: check P(both yes) = 9/16."""
    out = coin_outputs[0]
    check_fraction(out[0::2] & out[1::2], 9 / 16, what="P(two neighbours both say yes)", false_failure=FALSE_FAILURE)


def test_coin_rr_empirical_epsilon_is_ln3(coin_outputs):
    assert_log_ratio_matches(coin_outputs[0], coin_outputs[1], COIN_RR_EPSILON, 3 / 4, 1 / 4)


def test_coin_rr_epsilon_constant():
    assert math.isclose(COIN_RR_EPSILON, math.log(3))
    assert math.isclose(get_epsilon(0.75, 0.75), COIN_RR_EPSILON)
    assert dplib.COIN_RR_EPSILON is rr_module.COIN_RR_EPSILON


# --- rand_resp ----------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "q"), [(0.9, 0.6), (0.3, 0.2), (0.75, 0.25), (0.05, 0.95)])
def test_rand_resp_keeps_a_one_with_p_and_a_zero_with_q(p, q):
    seed = int(1000 * p + 10 * q)
    ones = rand_resp(ONES, p, q, rng=np.random.default_rng(seed))
    zeros = rand_resp(ZEROS, p, q, rng=np.random.default_rng(seed + 1))
    check_fraction(ones, p, what=f"P(1 | 1) with p={p}, q={q}", hint="Did you swap p and q?", false_failure=FALSE_FAILURE)
    check_fraction(zeros == 0, q, what=f"P(0 | 0) with p={p}, q={q}", hint="Did you swap p and q?",
                   false_failure=FALSE_FAILURE)


@pytest.mark.parametrize(("p", "q"), [(0.9, 0.6), (0.3, 0.2), (0.2, 0.6)])
def test_rand_resp_empirical_epsilon_matches_get_epsilon(p, q):
    ones = rand_resp(ONES, p, q, rng=np.random.default_rng(7))
    zeros = rand_resp(ZEROS, p, q, rng=np.random.default_rng(8))
    assert_log_ratio_matches(ones, zeros, get_epsilon(p, q), p, 1 - q)


def test_rand_resp_on_mixed_input_treats_each_entry_by_its_own_value():
    x = np.tile([1, 0], N // 2)
    out = rand_resp(x, 0.8, 0.3, rng=np.random.default_rng(9))
    check_fraction(out[x == 1], 0.8, what="P(1 | 1)", false_failure=FALSE_FAILURE)
    check_fraction(out[x == 0], 0.7, what="P(1 | 0)", false_failure=FALSE_FAILURE)


def test_rand_resp_deterministic_corners():
    x = np.array([0, 1, 1, 0, 1])
    np.testing.assert_array_equal(rand_resp(x, 1.0, 1.0, rng=0), x)
    np.testing.assert_array_equal(rand_resp(x, 0.0, 0.0, rng=0), 1 - x)
    np.testing.assert_array_equal(rand_resp(x, 1.0, 0.0, rng=0), np.ones_like(x))
    np.testing.assert_array_equal(rand_resp(x, 0.0, 1.0, rng=0), np.zeros_like(x))


def test_rand_resp_shapes_and_reproducibility():
    out = rand_resp(1, 0.5, 0.5, rng=0)
    assert np.ndim(out) == 0 and int(out) in (0, 1)
    x = np.random.default_rng(0).integers(0, 2, size=(30, 40))
    assert rand_resp(x, 0.7, 0.6, rng=1).shape == (30, 40)
    np.testing.assert_array_equal(rand_resp(x, 0.7, 0.6, rng=2), rand_resp(x, 0.7, 0.6, rng=2))
    assert not np.array_equal(rand_resp(x, 0.7, 0.6, rng=2), rand_resp(x, 0.7, 0.6, rng=3))


@pytest.mark.parametrize("bad", BAD_PROBABILITIES)
def test_rand_resp_rejects_bad_p_and_q(bad):
    with pytest.raises(ValueError, match="p must be a probability in"):
        rand_resp([1, 0], bad, 0.5)
    with pytest.raises(ValueError, match="q must be a probability in"):
        rand_resp([1, 0], 0.5, bad)


@pytest.mark.parametrize("x", BAD_BITS)
def test_rand_resp_rejects_non_binary_input(x):
    with pytest.raises(ValueError, match="x must hold only 0 and 1"):
        rand_resp(x, 0.5, 0.5)


# --- privatize_image ----------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "beta"), [(0.5, 0.5), (0.3, 0.8), (0.9, 0.1)])
def test_privatize_image_rates(alpha, beta):
    image = np.zeros((200, 500), dtype=int)
    image[:100] = 1  # top half black
    out = privatize_image(image, alpha, beta, rng=np.random.default_rng(int(100 * alpha + 10 * beta)))
    assert out.shape == image.shape
    p, q = alpha_beta_to_p_q(alpha, beta)
    check_fraction(out[:100], alpha + (1 - alpha) * beta, what="P(black | black)", false_failure=FALSE_FAILURE)
    check_fraction(out[100:], (1 - alpha) * beta, what="P(black | white)", false_failure=FALSE_FAILURE)
    assert math.isclose(alpha + (1 - alpha) * beta, p) and math.isclose(1 - (1 - alpha) * beta, q)


def test_privatize_image_corners():
    image = demo_picture()
    np.testing.assert_array_equal(privatize_image(image, 1.0, 0.3, rng=0), image)
    np.testing.assert_array_equal(privatize_image(image, 0.0, 1.0, rng=0), np.ones_like(image))
    np.testing.assert_array_equal(privatize_image(image, 0.0, 0.0, rng=0), np.zeros_like(image))


def test_privatize_image_types_and_reproducibility():
    image = np.eye(20, dtype=bool)
    out = privatize_image(image, 0.5, 0.5, rng=4)
    assert out.shape == (20, 20) and np.issubdtype(out.dtype, np.integer)
    np.testing.assert_array_equal(out, privatize_image(image, 0.5, 0.5, rng=4))
    assert not np.array_equal(out, privatize_image(image, 0.5, 0.5, rng=5))
    assert np.ndim(privatize_image(1, 0.5, 0.5, rng=0)) == 0


@pytest.mark.parametrize("bad", BAD_PROBABILITIES)
def test_privatize_image_rejects_bad_alpha_and_beta(bad):
    with pytest.raises(ValueError, match="alpha must be a probability in"):
        privatize_image(np.eye(3), bad, 0.5)
    with pytest.raises(ValueError, match="beta must be a probability in"):
        privatize_image(np.eye(3), 0.5, bad)


def test_privatize_image_rejects_a_grey_image():
    with pytest.raises(ValueError, match="image must hold only 0 and 1, got 0.5"):
        privatize_image(np.full((3, 3), 0.5), 0.5, 0.5)


def test_reexported_from_the_package():
    for name in rr_module.__all__:
        assert getattr(dplib, name) is getattr(rr_module, name)
