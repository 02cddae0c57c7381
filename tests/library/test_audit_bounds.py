"""dplib.auditing.confidence_bounds: exact Clopper-Pearson intervals, the lower bound on epsilon, and exact detection probabilities."""

import math

import numpy as np
import pytest
from scipy import stats

from dplib.auditing.confidence_bounds import clopper_pearson, detection_probability, epsilon_lower_bound, miss_probability


# --------------------------------------------------------------------------- intervals and bounds


@pytest.mark.parametrize("successes, trials, alpha", [(0, 10, 0.05), (3, 10, 0.1), (10, 10, 0.05), (7, 20_000, 1e-7),
                                                      (19_990, 20_000, 1e-6), (500, 1_000, 0.5)])
def test_clopper_pearson_is_scipys_exact_interval(successes, trials, alpha):
    expected = stats.binomtest(successes, trials).proportion_ci(confidence_level=1 - alpha, method="exact")
    assert clopper_pearson(successes, trials, alpha) == pytest.approx((expected.low, expected.high), rel=1e-8, abs=1e-15)


def test_clopper_pearson_ends_in_closed_form():
    """At k = 0 the high end is 1 - (alpha/2)^(1/n); at k = n the low end is (alpha/2)^(1/n)."""
    assert clopper_pearson(0, 50, 0.02) == pytest.approx((0.0, 1 - 0.01 ** (1 / 50)), rel=1e-12)
    assert clopper_pearson(50, 50, 0.02) == pytest.approx((0.01 ** (1 / 50), 1.0), rel=1e-12)


def test_clopper_pearson_covers_with_at_least_the_stated_probability():
    """Exact coverage, summed over every count: at least 1 - alpha, and each end fails at most alpha / 2."""
    trials, alpha = 40, 0.1
    counts = np.arange(trials + 1)
    ends = np.array([clopper_pearson(k, trials, alpha) for k in counts])
    for p in np.linspace(0.01, 0.99, 37):
        pmf = stats.binom.pmf(counts, trials, p)
        assert pmf[ends[:, 0] > p].sum() <= alpha / 2 + 1e-12
        assert pmf[ends[:, 1] < p].sum() <= alpha / 2 + 1e-12


@pytest.mark.parametrize("call, message", [
    (lambda: clopper_pearson(11, 10, 0.05), "successes must be an integer in 0..trials = 10, got 11"),
    (lambda: clopper_pearson(-1, 10, 0.05), "successes must be an integer >= 0"),
    (lambda: clopper_pearson(1, 0, 0.05), "trials must be an integer >= 1"),
    (lambda: clopper_pearson(1, 10, 1.0), "alpha must be a number strictly between 0 and 1"),
    (lambda: epsilon_lower_bound(1, 2.5, 10, 0.05), "successes_d_prime must be an integer"),
    (lambda: epsilon_lower_bound(11, 1, 10, 0.05), "successes_d must be an integer in 0..trials = 10, got 11"),
])
def test_bad_parameters_are_named(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_epsilon_lower_bound_uses_the_ends_that_weaken_the_claim():
    low, _ = clopper_pearson(60, 200, 0.05)
    _, high = clopper_pearson(20, 200, 0.05)
    assert epsilon_lower_bound(60, 20, 200, 0.05) == pytest.approx(math.log(low / high))
    assert epsilon_lower_bound(60, 20, 200, 0.05) < math.log(60 / 20)  # never the point estimate
    assert math.isfinite(epsilon_lower_bound(200, 0, 200, 0.05))
    assert epsilon_lower_bound(20, 60, 200, 0.05) == 0.0  # the other direction is another event
    assert epsilon_lower_bound(200, 200, 200, 0.05) == 0.0  # never negative


# --------------------------------------------------------------------------- exact detection probabilities


@pytest.mark.parametrize("p_num, p_den, trials, alpha, epsilon", [(0.3, 0.1, 30, 0.2, 0.5), (0.5, 0.5, 25, 0.4, 0.0),
                                                                 (0.9, 0.05, 20, 0.05, 1.5)])
def test_detection_probability_is_the_exact_double_sum(p_num, p_den, trials, alpha, epsilon):
    counts = np.arange(trials + 1)
    bounds = np.array([[epsilon_lower_bound(a, b, trials, alpha) for b in counts] for a in counts])
    joint = np.outer(stats.binom.pmf(counts, trials, p_num), stats.binom.pmf(counts, trials, p_den))
    exact = joint[bounds > epsilon].sum()
    assert detection_probability(p_num, p_den, trials, alpha, epsilon) == pytest.approx(exact, rel=1e-10, abs=1e-15)
    assert miss_probability(p_num, p_den, trials, alpha, epsilon) == pytest.approx(1 - exact, rel=1e-10, abs=1e-15)


def test_a_single_tight_event_false_alarms_far_below_alpha():
    """Both interval ends must fail together: at alpha = 0.05 an event with ratio exactly e^1 alarms < 1% of the time."""
    p = 0.3
    assert detection_probability(p, p / math.e, 2_000, 0.05, 1.0) < 0.01


def test_detection_and_miss_probabilities_of_many_events_at_once_are_those_of_each():
    """Arrays of probabilities (11's false-alarm test passes 340 events) give each event's probability, in one pass."""
    p_num, p_den = np.array([0.5, 0.3, 0.02, 0.9]), np.array([0.5, 0.1, 0.01, 0.95])
    together = detection_probability(p_num, p_den, 200, 0.3, 0.25)
    assert together.shape == (4,)
    assert together == pytest.approx([detection_probability(a, b, 200, 0.3, 0.25) for a, b in zip(p_num, p_den)],
                                     rel=1e-12, abs=1e-300)
    missed = miss_probability(p_num, p_den, 200, 0.3, 0.25)
    assert missed == pytest.approx(1 - together, rel=1e-10, abs=1e-15)
    assert isinstance(detection_probability(0.5, 0.1, 200, 0.3, 0.25), float)
