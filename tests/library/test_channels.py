"""Tests for dplib.accounting.channels: exact epsilons of randomized-response channels and conversions.

Like OpenDP's tests, the guarantee is checked exactly at its boundary, and every closed
form is compared with a brute-force maximum of the log-ratio over outputs, both directions.
"""

import itertools
import math

import numpy as np
import pytest

import dplib
from dplib.accounting import channels as channels_module
from dplib.accounting.channels import (
    COIN_RR_EPSILON,
    alpha_beta_epsilon,
    alpha_beta_to_p_q,
    channel_epsilon,
    get_epsilon,
    get_p_q,
    krr_channel,
    krr_probabilities,
    rr_channel,
)
from dplib.accounting.privacy_loss import max_privacy_loss, satisfies_dp

LN3 = math.log(3)
GRID = [0.0, 0.05, 0.2, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0]
BAD_PROBABILITIES = [-0.01, 1.01, math.nan, math.inf, True, "0.5", None, [0.5]]


def brute_force_epsilon(matrix) -> float:
    """max over outputs and ordered pairs of inputs of |ln M[x, y] / M[x', y]|."""
    matrix = np.asarray(matrix, dtype=float)
    return max(max_privacy_loss(matrix[x], matrix[x_prime]) for x, x_prime in itertools.permutations(range(len(matrix)), 2))


# --- rr_channel ---------------------------------------------------------------------------


def test_rr_channel_layout():
    np.testing.assert_allclose(rr_channel(0.75, 0.6), [[0.6, 0.4], [0.25, 0.75]])
    for p, q in itertools.product(GRID, GRID):
        matrix = rr_channel(p, q)
        assert matrix.shape == (2, 2)
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
        assert matrix[1, 1] == p and matrix[0, 0] == q  # P(1|1) = p, P(0|0) = q


@pytest.mark.parametrize("bad", BAD_PROBABILITIES)
def test_rr_channel_rejects_bad_probabilities(bad):
    with pytest.raises(ValueError, match="p must be a probability in"):
        rr_channel(bad, 0.5)
    with pytest.raises(ValueError, match="q must be a probability in"):
        rr_channel(0.5, bad)


# --- get_epsilon ---------------------------------------------------------------------------


def test_get_epsilon_of_warner_coins_is_ln3():
    assert math.isclose(get_epsilon(0.75, 0.75), LN3)


def test_get_epsilon_below_one_half():
    """The formula ln(p / (1 - q)) assumes p, q >= 1/2; the exact epsilon looks at both outputs."""
    assert math.isclose(get_epsilon(0.25, 0.25), LN3)
    # p = 0.2, q = 0.6: P(1|1)/P(1|0) = 0.2/0.4, P(0|1)/P(0|0) = 0.8/0.6 -> ln 2 is the larger.
    assert math.isclose(get_epsilon(0.2, 0.6), math.log(2))
    assert math.isclose(get_epsilon(0.6, 0.2), math.log(2))
    # p = 0.1, q = 0.3: ratios 0.1/0.7 and 0.9/0.3 -> ln 7.
    assert math.isclose(get_epsilon(0.1, 0.3), math.log(7))
    assert get_epsilon(0.2, 0.6) >= 0 and not math.isclose(get_epsilon(0.1, 0.3), math.log(0.1 / 0.7))


def test_get_epsilon_is_symmetric_in_relabelling():
    """Swapping the meaning of 0 and 1 swaps p and q; flipping every output maps (p, q) to (1-p, 1-q)."""
    for p, q in itertools.product(GRID, GRID):
        assert get_epsilon(p, q) == pytest.approx(get_epsilon(q, p))
        assert get_epsilon(p, q) == pytest.approx(get_epsilon(1 - p, 1 - q))


def test_get_epsilon_equals_brute_force_over_a_grid():
    for p, q in itertools.product(GRID, GRID):
        assert get_epsilon(p, q) == pytest.approx(brute_force_epsilon(rr_channel(p, q))), (p, q)


@pytest.mark.parametrize(("p", "q"), [(1, 1), (0, 0), (1, 0.5), (0.5, 1), (0.3, 0), (0, 0.2), (1, 0.99)])
def test_get_epsilon_infinite_when_an_output_is_possible_under_one_input_only(p, q):
    assert get_epsilon(p, q) == math.inf


@pytest.mark.parametrize(("p", "q"), [(0.5, 0.5), (0.3, 0.7), (0.9, 0.1), (1, 0), (0, 1)])
def test_get_epsilon_zero_when_p_plus_q_is_one(p, q):
    # 1 - 0.9 is not exactly 0.1 in floating point: zero up to rounding.
    assert get_epsilon(p, q) == pytest.approx(0.0, abs=1e-12)


def test_get_epsilon_validation():
    with pytest.raises(ValueError, match="p must be a probability in"):
        get_epsilon(1.5, 0.5)
    with pytest.raises(ValueError, match="q must be a probability in"):
        get_epsilon(0.5, -0.5)


# --- channel_epsilon ------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "epsilon"), [(2, 0.1), (2, LN3), (3, 1.0), (4, 0.5), (10, 2.0), (50, 5.0)])
def test_channel_epsilon_of_krr_channel_is_epsilon(k, epsilon):
    assert math.isclose(channel_epsilon(krr_channel(k, epsilon)), epsilon, rel_tol=1e-9)


def test_channel_epsilon_examples():
    assert math.isclose(channel_epsilon([[0.75, 0.25], [0.25, 0.75]]), LN3)
    assert channel_epsilon([[1.0, 0.0], [0.5, 0.5]]) == math.inf
    assert channel_epsilon(np.eye(3)) == math.inf
    assert channel_epsilon([[0.2, 0.8], [0.2, 0.8], [0.2, 0.8]]) == 0.0
    assert channel_epsilon([[0.3, 0.7]]) == 0.0  # one input: nothing to distinguish
    assert isinstance(channel_epsilon([[0.5, 0.5], [0.5, 0.5]]), float)


def test_channel_epsilon_ignores_outputs_that_never_happen():
    assert math.isclose(channel_epsilon([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]]), math.log(2))


def test_channel_epsilon_takes_the_worst_column_and_both_directions():
    # Column 0: 0.1 vs 0.4 (ln 4); column 1: 0.9 vs 0.6 (ln 1.5). The ratio 0.1/0.4 is < 1: only |.| finds it.
    assert math.isclose(channel_epsilon([[0.1, 0.9], [0.4, 0.6]]), math.log(4))
    random_channels = np.random.default_rng(0).dirichlet(np.ones(5), size=(20, 4))
    for matrix in random_channels:
        assert channel_epsilon(matrix) == pytest.approx(brute_force_epsilon(matrix))


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([0.5, 0.5], r"matrix must be 2-D \(rows = inputs, columns = outputs\), got shape \(2,\)"),
        (np.ones((2, 2, 1)) / 2, "matrix must be 2-D"),
        (np.empty((0, 2)), "matrix must be 2-D"),
        ([[1.5, -0.5], [0.5, 0.5]], r"matrix must hold probabilities in \[0, 1\]"),
        ([[0.5, 0.4], [0.5, 0.5]], "matrix rows must each sum to 1"),
        ([[math.nan, 1.0], [0.5, 0.5]], "matrix must hold finite numbers"),
        ([["a", "b"]], "matrix must hold numbers"),
    ],
)
def test_channel_epsilon_validation(matrix, message):
    with pytest.raises(ValueError, match=message):
        channel_epsilon(matrix)


# --- get_p_q -------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.01, 0.5, LN3, 2.0, 10.0])
def test_get_p_q_is_symmetric_and_achieves_epsilon_exactly(epsilon):
    p, q = get_p_q(epsilon)
    assert p == q
    assert math.isclose(p, math.exp(epsilon) / (1 + math.exp(epsilon)))
    assert math.isclose(get_epsilon(p, q), epsilon, rel_tol=1e-9)


def test_get_p_q_examples_and_no_overflow():
    assert get_p_q(LN3) == pytest.approx((0.75, 0.75))
    assert get_p_q(1000.0) == (1.0, 1.0)
    assert all(isinstance(v, float) for v in get_p_q(1.0))


@pytest.mark.parametrize("epsilon", [0, -1, math.nan, math.inf, True, "1", None])
def test_get_p_q_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        get_p_q(epsilon)


# --- krr_probabilities and krr_channel ---------------------------------------------------


@pytest.mark.parametrize(("k", "epsilon"), [(2, 1.0), (4, LN3), (7, 0.3), (100, 4.0)])
def test_krr_probabilities(k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    assert math.isclose(p, math.exp(epsilon) / (math.exp(epsilon) + k - 1))
    assert math.isclose(q, 1 / (math.exp(epsilon) + k - 1))
    assert math.isclose(p / q, math.exp(epsilon))
    assert math.isclose(p + (k - 1) * q, 1.0)


def test_krr_probabilities_examples_and_no_overflow():
    assert krr_probabilities(4, LN3) == pytest.approx((0.5, 1 / 6))
    p2, q2 = krr_probabilities(2, LN3)  # k = 2 is binary RR with p = q = 3/4
    assert p2 == pytest.approx(get_p_q(LN3)[0]) and q2 == pytest.approx(1 - p2)
    p, q = krr_probabilities(3, 1000.0)
    assert p == 1.0 and q == 0.0


def test_krr_probabilities_validation():
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        krr_probabilities(1, 1.0)
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        krr_probabilities(2.5, 1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        krr_probabilities(3, 0.0)


def test_krr_channel():
    np.testing.assert_allclose(krr_channel(3, math.log(2)), [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    matrix = krr_channel(6, 1.3)
    p, q = krr_probabilities(6, 1.3)
    assert matrix.shape == (6, 6)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.diag(matrix), p)
    np.testing.assert_allclose(matrix[~np.eye(6, dtype=bool)], q)
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        krr_channel(1, 1.0)


# --- the DP boundary, as in OpenDP -----------------------------------------------------


def test_warner_coins_satisfy_ln3_but_not_less():
    matrix = rr_channel(0.75, 0.75)
    assert satisfies_dp(matrix[0], matrix[1], LN3)
    assert not satisfies_dp(matrix[0], matrix[1], math.log(2.999))
    assert satisfies_dp(matrix[1], matrix[0], COIN_RR_EPSILON)


@pytest.mark.parametrize(("k", "epsilon"), [(3, 0.5), (5, 2.0)])
def test_krr_satisfies_its_epsilon_for_every_pair_and_not_less(k, epsilon):
    matrix = krr_channel(k, epsilon)
    for x, x_prime in itertools.permutations(range(k), 2):
        assert satisfies_dp(matrix[x], matrix[x_prime], epsilon)
        assert not satisfies_dp(matrix[x], matrix[x_prime], epsilon * 0.999)


# --- the image channel -----------------------------------------------------------------------


def test_alpha_beta_to_p_q():
    assert alpha_beta_to_p_q(0.5, 0.5) == (0.75, 0.75)
    assert alpha_beta_to_p_q(1.0, 0.3) == (1.0, 1.0)
    assert alpha_beta_to_p_q(0.0, 0.3) == pytest.approx((0.3, 0.7))
    p, q = alpha_beta_to_p_q(0.2, 0.9)
    assert p == pytest.approx(0.2 + 0.8 * 0.9) and q == pytest.approx(0.2 + 0.8 * 0.1)


def test_alpha_beta_epsilon():
    assert math.isclose(alpha_beta_epsilon(0.5, 0.5), LN3)
    assert alpha_beta_epsilon(1.0, 0.5) == math.inf
    assert alpha_beta_epsilon(0.0, 0.5) == 0.0  # nothing kept: the output ignores the picture
    assert alpha_beta_epsilon(0.5, 1.0) == math.inf  # a white output proves the pixel was white
    for alpha, beta in itertools.product(GRID, GRID):
        assert alpha_beta_epsilon(alpha, beta) == pytest.approx(get_epsilon(*alpha_beta_to_p_q(alpha, beta)))


@pytest.mark.parametrize("bad", BAD_PROBABILITIES)
def test_alpha_beta_validation(bad):
    with pytest.raises(ValueError, match="alpha must be a probability in"):
        alpha_beta_to_p_q(bad, 0.5)
    with pytest.raises(ValueError, match="beta must be a probability in"):
        alpha_beta_epsilon(0.5, bad)


def test_reexported_from_the_package():
    for name in channels_module.__all__:
        assert getattr(dplib, name) is getattr(channels_module, name)
