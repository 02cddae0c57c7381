"""Tests for dplib.accounting.budgets: composition, histograms, the averaging attack, budgets, AboveThreshold.

Randomized functions are checked on fixed seeds against their exact distributions with a
false-failure probability fixed in advance (1e-6 for binomial and KS tests, 1e-9 for
chi-square, see dplib.testing). epsilon != 1 and sensitivity != 1 throughout, so swapped
or multiplied scales cannot hide.
"""

import math

import numpy as np
import pytest
from scipy import stats

import dplib
from dplib.accounting.budgets import (
    BudgetExceededError,
    PrivacyAccountant,
    above_threshold,
    above_threshold_probabilities,
    averaging_attack,
    averaging_attack_tail,
    histogram_sensitivity,
    noisy_histogram,
    parallel_epsilon,
    sequential_epsilon,
)
from dplib.testing import check_categorical, check_distribution, check_fraction

BAD_EPSILONS = [0, -1, math.nan, math.inf, True, "1", None]


# --- sequential and parallel composition --------------------------------------------------------


def test_sequential_adds_and_parallel_takes_the_largest():
    assert sequential_epsilon([0.5, 0.25, 1.0]) == 1.75
    assert parallel_epsilon([0.5, 0.25, 1.0]) == 1.0
    assert sequential_epsilon(np.array([0.3])) == parallel_epsilon([0.3]) == 0.3
    assert sequential_epsilon([]) == parallel_epsilon([]) == 0.0


def test_parallel_composition_is_the_largest_under_add_remove_and_the_two_largest_under_substitution():
    """The claim of parallel_epsilon's docstring, on Laplace counts of three disjoint parts (scales 1 / epsilon_i).

    The privacy loss of an output y between D and D' is sum_i epsilon_i (|y_i - f(D')_i| - |y_i - f(D)_i|); its
    largest value over y is sum_i epsilon_i |f(D)_i - f(D')_i|. Removing a person changes one count; substituting
    one moves a person from one part to another, and the worst move is between the two parts with the largest epsilons.
    """
    epsilons = np.array([0.5, 0.25, 1.0])

    def worst_loss(change):
        return float(np.sum(epsilons * np.abs(change)))

    removals = [np.eye(3)[i] for i in range(3)]
    moves = [np.eye(3)[i] - np.eye(3)[j] for i in range(3) for j in range(3) if i != j]
    assert max(worst_loss(c) for c in removals) == parallel_epsilon(epsilons) == 1.0
    assert max(worst_loss(c) for c in moves) == 1.5 == sum(sorted(epsilons)[-2:])
    # the histogram is the case of equal epsilons: under substitution its L1 sensitivity is 2
    assert max(float(np.abs(c).sum()) for c in moves) == histogram_sensitivity("substitute")


def test_sequential_epsilon_sums_without_rounding_drift():
    assert sequential_epsilon([0.1] * 10) == 1.0  # plain sum() gives 0.9999999999999999


@pytest.mark.parametrize("function", [sequential_epsilon, parallel_epsilon])
@pytest.mark.parametrize("epsilons", [[0.1, -0.2], [math.nan], [math.inf, 1.0], ["a"]])
def test_composition_rejects_bad_epsilons(function, epsilons):
    with pytest.raises(ValueError, match="epsilons must"):
        function(epsilons)


# --- histogram sensitivity -----------------------------------------------------------------------


def test_histogram_sensitivity_of_each_neighbour_notion():
    assert histogram_sensitivity("add_remove") == 1
    assert histogram_sensitivity("substitute") == 2


@pytest.mark.parametrize("neighbours", ["add", "Substitute", "", None, 1, "bounded"])
def test_histogram_sensitivity_rejects_other_notions(neighbours):
    with pytest.raises(ValueError, match="neighbours must be 'add_remove' or 'substitute'"):
        histogram_sensitivity(neighbours)


def test_substitution_moves_a_histogram_by_exactly_two():
    rng = np.random.default_rng(0)
    data = rng.integers(0, 5, 50)
    changed = data.copy()
    changed[7] = (data[7] + 1) % 5
    removed = np.delete(data, 7)
    count = lambda x: np.bincount(x, minlength=5)  # noqa: E731
    assert np.abs(count(data) - count(changed)).sum() == histogram_sensitivity("substitute")
    assert np.abs(count(data) - count(removed)).sum() == histogram_sensitivity("add_remove")


# --- noisy_histogram ---------------------------------------------------------------------------


def test_noisy_histogram_shape_and_seed():
    out = noisy_histogram([0, 0, 3], k=5, epsilon=0.5, rng=1)
    assert out.shape == (5,) and out.dtype == float
    np.testing.assert_array_equal(out, noisy_histogram([0, 0, 3], 5, 0.5, rng=np.random.default_rng(1)))
    assert not np.array_equal(noisy_histogram([0], 5, 0.5), noisy_histogram([0], 5, 0.5))


def test_noisy_histogram_noise_is_laplace_one_over_epsilon_on_every_bin():
    """Noise of scale 1/epsilon = 2 (not k/epsilon = 20), on empty bins too, independent across bins."""
    k, epsilon = 10, 0.5
    categories = np.repeat([0, 3], [30, 5])  # eight empty bins
    true = np.bincount(categories, minlength=k)
    rng = np.random.default_rng(2)
    noise = np.array([noisy_histogram(categories, k, epsilon, rng=rng) - true for _ in range(3_000)])
    check_distribution(noise.ravel(), stats.laplace(scale=2.0).cdf, what="noisy_histogram noise")
    check_distribution(noise[:, 5], stats.laplace(scale=2.0).cdf, what="noise on an empty bin")
    check_fraction(noise[:, 1] > noise[:, 2], 0.5, what="bin 1's noise above bin 2's")


def test_noisy_histogram_validation():
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        noisy_histogram([0], 1, 0.5)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        noisy_histogram([0], 3, 0.0)
    with pytest.raises(ValueError, match=r"categories must hold integers in 0\.\.2"):
        noisy_histogram([0, 3], 3, 0.5)


# --- averaging attack ----------------------------------------------------------------------------


def test_averaging_attack_returns_a_float_and_follows_the_seed():
    out = averaging_attack(10.0, 2.0, 0.5, k=5, rng=3)
    assert isinstance(out, float)
    assert out == averaging_attack(10.0, 2.0, 0.5, k=5, rng=np.random.default_rng(3))
    assert averaging_attack(10.0, 2.0, 0.5, 5) != averaging_attack(10.0, 2.0, 0.5, 5)


def test_averaging_attack_with_one_query_is_the_laplace_mechanism():
    rng = np.random.default_rng(4)
    answers = [averaging_attack(10.0, 2.0, 0.5, 1, rng=rng) - 10.0 for _ in range(20_000)]
    check_distribution(answers, stats.laplace(scale=4.0).cdf, what="averaging_attack with k = 1")


@pytest.mark.parametrize("k", [4, 100])
def test_averaging_attack_spread_matches_its_exact_tail(k):
    """Mean of k Laplace(4): the share at least t from the truth is the Gamma-difference tail."""
    rng = np.random.default_rng(k)
    errors = np.abs([averaging_attack(10.0, 2.0, 0.5, k, rng=rng) - 10.0 for _ in range(10_000)])
    t = 0.674 * math.sqrt(2) * 4.0 / math.sqrt(k)  # about the median error
    check_fraction(errors >= t, averaging_attack_tail(t, 2.0, 0.5, k), what=f"errors >= {t:.3f} for k = {k}")


def test_averaging_attack_tail_limits():
    assert averaging_attack_tail(2.0, 1.0, 0.5, 1) == pytest.approx(math.exp(-1.0), rel=1e-9)
    assert averaging_attack_tail(0.0, 1.0, 0.5, 7) == 1.0
    assert averaging_attack_tail(1.0, 0.0, 0.5, 7) == 0.0
    # Central limit: for large k the mean is about normal with std sqrt(2) b / sqrt(k).
    b, k = 4.0, 400
    assert averaging_attack_tail(0.2, 2.0, 0.5, k) == pytest.approx(2 * stats.norm.sf(0.2 / (math.sqrt(2) * b / 20)), rel=0.02)


def test_averaging_attack_validation():
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        averaging_attack(1.0, 1.0, 0.5, 0)
    with pytest.raises(ValueError, match="sensitivity must be"):
        averaging_attack(1.0, -1.0, 0.5, 3)
    with pytest.raises(ValueError, match="true_value must be a finite number"):
        averaging_attack(math.nan, 1.0, 0.5, 3)


# --- PrivacyAccountant ---------------------------------------------------------------------------


def test_accountant_spends_and_reports():
    accountant = PrivacyAccountant(1.0)
    accountant.spend(0.25)
    accountant.spend(0.5)
    assert accountant.spent == 0.75 and accountant.remaining == 0.25
    assert "spent=0.75" in repr(accountant)


def test_three_spends_of_a_tenth_fit_a_budget_of_three_tenths():
    assert 0.1 + 0.1 + 0.1 > 0.3 and math.fsum([0.1] * 3) > 0.3  # the trap the tolerance is for
    accountant = PrivacyAccountant(0.3)
    for _ in range(3):
        accountant.spend(0.1)
    assert accountant.remaining == 0.0
    with pytest.raises(BudgetExceededError):
        accountant.spend(1e-6)


def test_budget_is_exact_at_the_boundary_up_to_the_stated_tolerance():
    accountant = PrivacyAccountant(1.0)
    accountant.spend(1.0 + 0.5e-9)  # within TOLERANCE
    with pytest.raises(BudgetExceededError):
        PrivacyAccountant(1.0).spend(1.0 + 2e-9)


def test_a_refused_spend_changes_nothing():
    accountant = PrivacyAccountant(0.5)
    accountant.spend(0.4)
    with pytest.raises(BudgetExceededError, match="would exceed the budget 0.5") as refused:
        accountant.spend(0.2)
    assert isinstance(refused.value, ValueError) and dplib.BudgetExceededError is BudgetExceededError
    assert accountant.spent == 0.4 and accountant.remaining == pytest.approx(0.1)
    accountant.spend(0.1)
    assert accountant.remaining == 0.0


@pytest.mark.parametrize("budget", BAD_EPSILONS)
def test_accountant_rejects_a_bad_budget(budget):
    with pytest.raises(ValueError, match="budget must be a finite number > 0"):
        PrivacyAccountant(budget)


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_accountant_rejects_a_bad_spend_without_charging_it(epsilon):
    accountant = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0") as error:
        accountant.spend(epsilon)
    assert not isinstance(error.value, BudgetExceededError)
    assert accountant.spent == 0.0


# --- AboveThreshold -----------------------------------------------------------------------------


def test_above_threshold_obvious_cases():
    assert above_threshold([-1e3, 1e3, 1e3], 0.0, 0.8, rng=0) == 1
    assert above_threshold([-1e3, -1e3], 0.0, 0.8, rng=0) == -1
    assert above_threshold([], 0.0, 0.8, rng=0) == -1
    assert isinstance(above_threshold([0.0], 0.0, 0.8, rng=0), int)


def test_above_threshold_follows_the_seed():
    queries = np.zeros(30)
    runs = [above_threshold(queries, 5.0, 0.8, rng=np.random.default_rng(s)) for s in range(20)]
    assert runs == [above_threshold(queries, 5.0, 0.8, rng=s) for s in range(20)]
    assert len(set(runs)) > 1


def test_above_threshold_probabilities_single_query_closed_form():
    """One query: P(nu - rho >= g) for nu ~ Lap(4/eps), rho ~ Lap(2/eps), by numerical convolution."""
    epsilon, gap = 0.5, 8.0
    expected = stats.laplace(scale=8.0).expect(lambda nu: stats.laplace(scale=4.0).cdf(nu - gap), lb=-np.inf, ub=np.inf)
    p = above_threshold_probabilities([0.0], gap, epsilon)
    assert p[0] == pytest.approx(expected, abs=1e-7)
    assert p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(above_threshold_probabilities([0.0], 0.0, epsilon), [0.5, 0.5], atol=1e-9)


@pytest.mark.parametrize(("queries", "threshold", "epsilon"), [
    ([0.0] * 30, 5.0, 0.8),  # many queries below: the shared threshold noise shows
    ([-4.0, 0.0, 4.0, 8.0], 4.0, 2.0),
    ([0.0], 8.0, 0.5),
])
def test_above_threshold_follows_its_exact_distribution(queries, threshold, epsilon):
    rng = np.random.default_rng(5)
    m = len(queries)
    draws = np.array([above_threshold(queries, threshold, epsilon, rng=rng) for _ in range(20_000)])
    draws[draws == -1] = m
    bins = doubling_bins(m)
    merged = np.bincount(bins, weights=above_threshold_probabilities(queries, threshold, epsilon))
    check_categorical(bins[draws], merged, what=f"above_threshold({queries[:4]}..., {threshold}, {epsilon})")


def doubling_bins(m):
    """Bin of each outcome 0..m (m stands for -1): indices 0, 1, 2-3, 4-7, ... and -1 on its own."""
    indices = np.arange(m)
    bins = np.where(indices == 0, 0, np.floor(np.log2(np.maximum(indices, 1))).astype(int) + 1)
    return np.append(bins, bins.max(initial=-1) + 1)


def test_fresh_threshold_noise_per_query_has_another_distribution():
    """The mistake the assignment catches: a new threshold noise for every query is not AboveThreshold."""
    rng = np.random.default_rng(6)
    queries, threshold, epsilon, n = np.zeros(30), 5.0, 0.8, 20_000
    above = queries + rng.laplace(0, 4 / epsilon, (n, 30)) >= threshold + rng.laplace(0, 2 / epsilon, (n, 30))
    fresh = np.where(above.any(1), above.argmax(1), 30)
    bins = doubling_bins(30)
    merged = np.bincount(bins, weights=above_threshold_probabilities(queries, threshold, epsilon))
    with pytest.raises(AssertionError, match="too far from the expected"):
        check_categorical(bins[fresh], merged, what="fresh threshold noise")


def test_above_threshold_validation():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        above_threshold([0.0], 0.0, -1.0)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        above_threshold([0.0], math.inf, 1.0)
    with pytest.raises(ValueError, match="queries must be a 1-D array"):
        above_threshold([[0.0]], 0.0, 1.0)
