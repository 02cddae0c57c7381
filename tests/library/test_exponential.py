"""Tests for dplib.mechanisms.exponential: the exponential mechanism, its Gumbel-max form, and sensitivities.

Both samplers are compared with exponential_probabilities by chi-square tests whose
false-failure probability is fixed in advance ((1e-6)**1.5, see dplib.testing), on fixed seeds.
"""

import itertools
import math
import warnings

import numpy as np
import pytest

import dplib
from dplib.mechanisms import exponential as exponential_module
from dplib.mechanisms.exponential import (
    exponential_mechanism,
    exponential_probabilities,
    report_noisy_max_gumbel,
    score_sensitivity_of_proportion,
)
from dplib.accounting.privacy_loss import satisfies_dp
from dplib.testing import check_categorical

FALSE_FAILURE = 1e-6
N = 100_000
SCORES = [3.0, 1.0, 0.0, 2.0]
SAMPLERS = [exponential_mechanism, report_noisy_max_gumbel]


# --- exponential_probabilities --------------------------------------------------------------


def test_probabilities_example():
    np.testing.assert_allclose(exponential_probabilities([1.0, 0.0], 2.0, 1.0), [0.7310586, 0.2689414], rtol=1e-6)


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(1.0, 1.0), (0.5, 2.0), (3.0, 0.25)])
def test_probabilities_are_proportional_to_exp_epsilon_score_over_twice_the_sensitivity(epsilon, sensitivity):
    scores = np.array(SCORES)
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    assert probabilities.shape == scores.shape
    assert probabilities.sum() == pytest.approx(1.0)
    for i, j in itertools.combinations(range(scores.size), 2):
        expected = math.exp(epsilon * (scores[i] - scores[j]) / (2 * sensitivity))
        assert probabilities[i] / probabilities[j] == pytest.approx(expected)


def test_probabilities_keep_the_factor_two():
    """Dropping the 2 would give the ratio e^epsilon for a score gap of one sensitivity."""
    probabilities = exponential_probabilities([1.0, 0.0], epsilon=2.0, sensitivity=1.0)
    assert probabilities[0] / probabilities[1] == pytest.approx(math.e)


def test_probabilities_do_not_overflow():
    scores = [1e4, 0.0, 9_999.0, -1e4]
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        probabilities = exponential_probabilities(scores, epsilon=10.0, sensitivity=1.0)
    assert np.isfinite(probabilities).all()
    assert probabilities.sum() == pytest.approx(1.0)
    assert probabilities[0] == pytest.approx(1 / (1 + math.exp(-5.0)))
    assert probabilities[2] == pytest.approx(math.exp(-5.0) / (1 + math.exp(-5.0)))
    assert probabilities[1] == 0.0 and probabilities[3] == 0.0


def test_probabilities_of_equal_scores_are_uniform_and_shift_invariant():
    np.testing.assert_allclose(exponential_probabilities([5.0] * 4, 1.0, 1.0), 0.25)
    np.testing.assert_allclose(exponential_probabilities(np.array(SCORES) + 1e6, 1.0, 1.0),
                               exponential_probabilities(SCORES, 1.0, 1.0))


def test_probabilities_satisfy_dp_on_neighbouring_scores():
    """Scores that move by at most the sensitivity change each probability by at most e^epsilon."""
    epsilon, sensitivity = 1.0, 1.0
    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = rng.normal(0, 3, 5)
        neighbour = scores + rng.uniform(-sensitivity, sensitivity, 5)
        assert satisfies_dp(exponential_probabilities(scores, epsilon, sensitivity),
                            exponential_probabilities(neighbour, epsilon, sensitivity), epsilon)
    # At the boundary: one score up by the sensitivity, the others down by it.
    scores = np.zeros(3)
    neighbour = np.array([1.0, -1.0, -1.0])
    p, p_prime = exponential_probabilities(scores, epsilon, 1.0), exponential_probabilities(neighbour, epsilon, 1.0)
    assert satisfies_dp(p, p_prime, epsilon)
    assert not satisfies_dp(p, p_prime, 0.5 * epsilon)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([], 1.0, 1.0), r"scores must be a non-empty 1-D array, got shape \(0,\)"),
        (([[1.0, 2.0]], 1.0, 1.0), "scores must be a non-empty 1-D array"),
        ((3.0, 1.0, 1.0), r"scores must be a non-empty 1-D array, got shape \(\)"),
        (([1.0, math.nan], 1.0, 1.0), "scores must hold finite numbers"),
        (([1.0, math.inf], 1.0, 1.0), "scores must hold finite numbers"),
        ((["a", "b"], 1.0, 1.0), "scores must hold numbers"),
        (([1.0, 2.0], 0.0, 1.0), "epsilon must be a finite number > 0"),
        (([1.0, 2.0], math.inf, 1.0), "epsilon must be a finite number > 0"),
        (([1.0, 2.0], True, 1.0), "epsilon must be a finite number > 0"),
        (([1.0, 2.0], 1.0, -1.0), "sensitivity must be a finite number >= 0"),
        (([1.0, 2.0], 1.0, math.nan), "sensitivity must be a finite number >= 0"),
        (([1.0, 2.0], 1.0, 0.0), "sensitivity must be > 0 for the exponential mechanism"),
    ],
)
@pytest.mark.parametrize("function", [exponential_probabilities, *SAMPLERS])
def test_validation(function, args, message):
    with pytest.raises(ValueError, match=message):
        function(*args)


# --- the two samplers ----------------------------------------------------------------------------


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize(("scores", "epsilon", "sensitivity"),
                         [(SCORES, 1.0, 1.0), ([0.3, 0.1, 0.2], 0.05, 1 / 30), ([1e4, 9_999.0, 0.0], 10.0, 1.0)])
def test_sampler_matches_exponential_probabilities(sampler, scores, epsilon, sensitivity):
    draws = sampler(scores, epsilon, sensitivity, rng=np.random.default_rng(99), size=N)
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    check_categorical(draws, probabilities, what=f"{sampler.__name__} draws",
                      hint="Did you return the argmax instead of a sample?", false_failure=FALSE_FAILURE)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_sampler_one_draw_at_a_time_has_the_same_distribution(sampler):
    rng = np.random.default_rng(5)
    draws = [sampler([1.0, 0.0, 0.5], 2.0, 1.0, rng=rng) for _ in range(6_000)]
    check_categorical(draws, exponential_probabilities([1.0, 0.0, 0.5], 2.0, 1.0), what="single draws",
                      false_failure=FALSE_FAILURE)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_sampler_scalar_without_size(sampler):
    out = sampler(SCORES, 1.0, 1.0, rng=0)
    assert np.ndim(out) == 0 and isinstance(out, int | np.integer)
    assert 0 <= out < len(SCORES)


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize(("size", "shape"), [(0, (0,)), (1, (1,)), (7, (7,)), ((2, 3), (2, 3)), (np.int64(4), (4,))])
def test_sampler_size_gives_the_shape(sampler, size, shape):
    out = sampler(SCORES, 1.0, 1.0, rng=0, size=size)
    assert out.shape == shape
    assert np.issubdtype(out.dtype, np.integer)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_sampler_same_seed_same_output_different_seeds_differ(sampler):
    a = sampler(SCORES, 0.5, 1.0, rng=np.random.default_rng(1), size=200)
    np.testing.assert_array_equal(a, sampler(SCORES, 0.5, 1.0, rng=np.random.default_rng(1), size=200))
    assert not np.array_equal(a, sampler(SCORES, 0.5, 1.0, rng=2, size=200))


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("size", [-1, 2.5, True, "3"])
def test_sampler_rejects_bad_size(sampler, size):
    with pytest.raises(ValueError, match="size must be an integer >= 0"):
        sampler(SCORES, 1.0, 1.0, size=size)


def test_the_mechanism_is_not_the_argmax():
    draws = exponential_mechanism(SCORES, 0.5, 1.0, rng=0, size=1_000)
    assert set(np.unique(draws)) == {0, 1, 2, 3}


# --- score_sensitivity_of_proportion ------------------------------------------------------------------


def test_score_sensitivity_of_proportion():
    assert score_sensitivity_of_proportion(30) == pytest.approx(1 / 30)
    assert score_sensitivity_of_proportion(1) == 1.0


def test_sensitivity_one_for_a_proportion_is_almost_a_coin_flip():
    """Blue socks: 29 of 30 non-violent. With sensitivity 1 the choice stays near a coin flip at epsilon 1."""
    shares = [29 / 30, 1 / 30]
    right = exponential_probabilities(shares, 1.0, score_sensitivity_of_proportion(30))
    wrong = exponential_probabilities(shares, 1.0, 1.0)
    assert right[0] > 0.999 and wrong[0] < 0.65


@pytest.mark.parametrize("n", [0, -1, 1.5, True, math.nan, None])
def test_score_sensitivity_of_proportion_rejects_bad_n(n):
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        score_sensitivity_of_proportion(n)


def test_reexported_from_the_package():
    for name in exponential_module.__all__:
        assert getattr(dplib, name) is getattr(exponential_module, name)
