"""Tests for dplib.estimation.binary_rr and dplib.estimation.kary_rr: unbiased estimates from randomized reports, their spread,
confidence intervals, the simplex projection and the 2x2 crosstab.

"Unbiased" is checked by simulation: the mean over many independent trials must lie
within about six standard errors of the truth (the normal approximation is made with a
false-failure probability of (1e-6)**1.5, see dplib.testing.check_mean). Spreads are
checked with chi-square bounds on the sample variance at 1e-6. Seeds are fixed, and no
test is ever retried.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import dplib
from dplib.estimation import binary_rr as estimators_module
from dplib.estimation import kary_rr as kary_estimators_module
from dplib.accounting.channels import krr_probabilities, rr_channel
from dplib.estimation.binary_rr import (
    ConfidenceInterval,
    estimate_black_fraction,
    estimate_count,
    estimate_count_std,
    estimate_crosstab,
    estimate_proportion_coin,
    rr_confidence_interval,
)
from dplib.estimation.kary_rr import estimate_krr_counts, krr_count_std, project_to_simplex
from dplib.images import demo_picture
from dplib.mechanisms.kary_randomized_response import k_rand_resp
from dplib.mechanisms.randomized_response import coin_rr, privatize_image, rand_resp
from dplib.testing import binomial_bounds, check_mean

FALSE_FAILURE = 1e-6


def population(n: int, ones: int) -> np.ndarray:
    return np.r_[np.ones(ones, dtype=np.int8), np.zeros(n - ones, dtype=np.int8)]


def assert_std_matches(samples, expected_std, what):
    """Sample variance of (approximately normal) samples vs theory: chi-square bounds at 1e-6."""
    samples = np.asarray(samples, dtype=float)
    dof = samples.size - 1
    ratio = samples.var(ddof=1) / expected_std**2
    low = stats.chi2.ppf(FALSE_FAILURE / 2, dof) / dof
    high = stats.chi2.isf(FALSE_FAILURE / 2, dof) / dof
    assert low <= ratio <= high, f"{what}: sample sd {math.sqrt(ratio) * expected_std:.4g}, expected {expected_std:.4g}"


# --- estimate_proportion_coin -------------------------------------------------------------


def test_estimate_proportion_coin_formula():
    assert estimate_proportion_coin([1, 0, 0, 1]) == 0.5
    assert estimate_proportion_coin([1, 1, 1, 1]) == 1.5  # unbiased estimates can leave [0, 1]
    assert estimate_proportion_coin(np.array([True, False, False, False])) == 0.0
    assert isinstance(estimate_proportion_coin([1, 0]), float)


def test_estimate_proportion_coin_is_unbiased():
    n, trials, truth = 1_000, 3_000, 0.3
    responses = coin_rr(np.broadcast_to(population(n, 300), (trials, n)), rng=np.random.default_rng(1))
    estimates = [estimate_proportion_coin(row) for row in responses]
    # Fixed population: ones say yes w.p. 3/4, zeros w.p. 1/4, each with variance 3/16.
    sd = 2 * math.sqrt(3 / 16 / n)
    check_mean(estimates, truth, sd, what="coin estimates", hint="2*mean - 1 is biased", false_failure=FALSE_FAILURE)
    assert_std_matches(estimates, sd, "coin estimates")


@pytest.mark.parametrize(("responses", "message"), [([], "responses must not be empty"),
                                                    ([0, 2], "responses must hold only 0 and 1, got 2")])
def test_estimate_proportion_coin_validation(responses, message):
    with pytest.raises(ValueError, match=message):
        estimate_proportion_coin(responses)


# --- estimate_black_fraction --------------------------------------------------------------


def test_estimate_black_fraction_formula():
    assert estimate_black_fraction([[1, 0], [0, 1]], alpha=0.5, beta=0.5) == 0.5
    assert estimate_black_fraction([[1, 1], [0, 0]], alpha=1.0, beta=0.3) == 0.5  # nothing randomized
    assert estimate_black_fraction([1, 1, 1, 1], alpha=0.25, beta=1.0) == 1.0


@pytest.mark.parametrize(("alpha", "beta"), [(0.5, 0.5), (0.3, 0.8), (0.8, 0.1)])
def test_estimate_black_fraction_is_unbiased(alpha, beta):
    picture = demo_picture()
    trials = 1_000
    private = privatize_image(np.broadcast_to(picture, (trials, *picture.shape)), alpha, beta,
                              rng=np.random.default_rng(int(10 * alpha + 100 * beta)))
    estimates = [estimate_black_fraction(image, alpha, beta) for image in private]
    black = picture.mean()
    p_black, p_white = alpha + (1 - alpha) * beta, (1 - alpha) * beta
    sd = math.sqrt(black * p_black * (1 - p_black) + (1 - black) * p_white * (1 - p_white)) / math.sqrt(picture.size) / alpha
    check_mean(estimates, black, sd, what="black fraction estimates", false_failure=FALSE_FAILURE)


def test_estimate_black_fraction_validation():
    with pytest.raises(ValueError, match="alpha must be > 0"):
        estimate_black_fraction([1, 0], 0.0, 0.5)
    with pytest.raises(ValueError, match="alpha must be a probability in"):
        estimate_black_fraction([1, 0], 1.5, 0.5)
    with pytest.raises(ValueError, match="beta must be a probability in"):
        estimate_black_fraction([1, 0], 0.5, math.nan)
    with pytest.raises(ValueError, match="private_image must not be empty"):
        estimate_black_fraction(np.empty((0, 0)), 0.5, 0.5)
    with pytest.raises(ValueError, match="private_image must hold only 0 and 1"):
        estimate_black_fraction([[0.5]], 0.5, 0.5)


# --- estimate_count and estimate_count_std -------------------------------------------------


def test_estimate_count_formula():
    assert estimate_count([1, 1, 1, 0], p=0.75, q=0.75) == 4.0
    assert estimate_count([1, 0, 1, 0], p=1.0, q=1.0) == 2.0
    # n (mean + q - 1) / (p + q - 1) with p, q < 1/2: the divisor is negative.
    assert estimate_count([1, 0, 0, 0], p=0.2, q=0.3) == pytest.approx(4 * (0.25 + 0.3 - 1) / (0.2 + 0.3 - 1))
    assert isinstance(estimate_count([1, 0], 0.9, 0.9), float)


@pytest.mark.parametrize(("p", "q", "ones"), [(0.8, 0.6, 600), (0.2, 0.3, 600), (0.75, 0.75, 100), (0.9, 0.05, 1500)])
def test_estimate_count_is_unbiased_and_its_std_matches_estimate_count_std(p, q, ones):
    n, trials = 2_000, 2_000
    responses = rand_resp(np.broadcast_to(population(n, ones), (trials, n)), p, q,
                          rng=np.random.default_rng(int(100 * p + 10 * q) + ones))
    estimates = np.array([estimate_count(row, p, q) for row in responses])
    sd = estimate_count_std(n, ones / n, p, q)
    check_mean(estimates, ones, sd, what=f"count estimates (p={p}, q={q})",
               hint="Did you use p - q instead of p + q - 1?", false_failure=FALSE_FAILURE)
    assert_std_matches(estimates, sd, f"count estimates (p={p}, q={q})")


def test_estimate_count_std_formula_and_scaling():
    assert estimate_count_std(10_000, 0.3, 0.75, 0.75) == pytest.approx(86.60254, rel=1e-6)
    expected = math.sqrt(500 * (0.2 * 0.9 * 0.1 + 0.8 * 0.6 * 0.4)) / abs(0.9 + 0.6 - 1)
    assert estimate_count_std(500, 0.2, 0.9, 0.6) == pytest.approx(expected)
    # The count's spread grows like sqrt(n), the fraction's shrinks like 1/sqrt(n).
    assert estimate_count_std(4_000, 0.3, 0.8, 0.7) == pytest.approx(2 * estimate_count_std(1_000, 0.3, 0.8, 0.7))
    assert estimate_count_std(1_000, 0.3, 1.0, 1.0) == 0.0


def test_estimate_count_validation():
    with pytest.raises(ValueError, match=r"p \+ q must differ from 1"):
        estimate_count([1, 0], 0.5, 0.5)
    with pytest.raises(ValueError, match=r"p \+ q must differ from 1"):
        estimate_count([1, 0], 0.3, 0.7)
    with pytest.raises(ValueError, match="responses must not be empty"):
        estimate_count([], 0.8, 0.8)
    with pytest.raises(ValueError, match="responses must hold only 0 and 1"):
        estimate_count([0, 1, 3], 0.8, 0.8)
    with pytest.raises(ValueError, match="p must be a probability in"):
        estimate_count([1], 1.2, 0.8)
    with pytest.raises(ValueError, match="q must be a probability in"):
        estimate_count([1], 0.8, True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 0.5, 0.8, 0.8), "n must be an integer >= 1"),
        ((10.5, 0.5, 0.8, 0.8), "n must be an integer >= 1"),
        ((True, 0.5, 0.8, 0.8), "n must be an integer >= 1"),
        ((10, 1.5, 0.8, 0.8), "fraction must be a probability in"),
        ((10, 0.5, -0.8, 0.8), "p must be a probability in"),
        ((10, 0.5, 0.8, math.nan), "q must be a probability in"),
        ((10, 0.5, 0.4, 0.6), r"p \+ q must differ from 1"),
    ],
)
def test_estimate_count_std_validation(args, message):
    with pytest.raises(ValueError, match=message):
        estimate_count_std(*args)


# --- rr_confidence_interval ----------------------------------------------------------------


def test_confidence_interval_dataclass():
    interval = ConfidenceInterval(1.0, 3.0)
    low, high = interval
    assert (low, high) == (1.0, 3.0)
    assert 2.0 in interval and 1.0 in interval and 3.5 not in interval
    with pytest.raises(AttributeError):
        interval.low = 0.0  # frozen


def test_rr_confidence_interval_centre_and_width():
    truth = population(10_000, 3_000)
    responses = rand_resp(truth, 0.8, 0.7, rng=np.random.default_rng(0))
    interval = rr_confidence_interval(responses, 0.8, 0.7)
    assert isinstance(interval, ConfidenceInterval)
    centre = estimate_count(responses, 0.8, 0.7)
    assert (interval.low + interval.high) / 2 == pytest.approx(centre)
    # Plug-in of the estimate's own standard deviation (not the binomial sqrt(n y(1-y)), which over-covers).
    half_width = stats.norm.isf(0.025) * estimate_count_std(truth.size, centre / truth.size, 0.8, 0.7)
    assert interval.high - interval.low == pytest.approx(2 * half_width)
    narrow = rr_confidence_interval(responses, 0.8, 0.7, alpha=0.5)
    assert interval.low < narrow.low < narrow.high < interval.high


def test_rr_confidence_interval_covers_95_percent_of_the_time():
    """By simulation: a normal approximation covers *about* 95%, so accept any true coverage in
    [94%, 96%] (exact binomial bounds at 1e-6 around each end)."""
    n, ones, p, q, trials = 1_000, 300, 0.8, 0.7, 4_000
    responses = rand_resp(np.broadcast_to(population(n, ones), (trials, n)), p, q, rng=np.random.default_rng(2024))
    covered = sum(ones in rr_confidence_interval(row, p, q) for row in responses)
    low, high = binomial_bounds(trials, 0.94)[0], binomial_bounds(trials, 0.96)[1]
    assert low <= covered <= high, f"coverage {covered / trials:.2%} (n={trials}), acceptable {low / trials:.2%}..{high / trials:.2%}"


@pytest.mark.parametrize(("n", "ones", "p", "q"),
                         [(1_000, 300, 0.8, 0.7), (400, 100, 0.2, 0.3), (2_000, 100, 0.75, 0.75), (500, 250, 0.9, 0.9)])
def test_rr_confidence_interval_exact_coverage_is_about_95_percent(n, ones, p, q):
    """Exactly: the interval depends on the responses only through the number of 1s, whose
    distribution is Binomial(ones, p) + Binomial(n - ones, 1 - q). The binomial plug-in
    sqrt(n y (1 - y)), which adds the variance of sampling the people, covers about 97% here."""
    pmf = np.convolve(stats.binom.pmf(np.arange(ones + 1), ones, p), stats.binom.pmf(np.arange(n - ones + 1), n - ones, 1 - q))
    coverage = sum(pmf[y] for y in range(n + 1) if ones in rr_confidence_interval(population(n, y), p, q))
    assert 0.94 <= coverage <= 0.96, f"exact coverage {coverage:.4f}"


def test_rr_confidence_interval_clips_the_plugged_in_fraction():
    interval = rr_confidence_interval([0] * 50, 0.8, 0.8)  # estimate -16.7: fraction clipped to 0
    assert interval.high - interval.low == pytest.approx(2 * stats.norm.isf(0.025) * estimate_count_std(50, 0.0, 0.8, 0.8))


def test_rr_confidence_interval_validation():
    with pytest.raises(ValueError, match="alpha must be a number strictly between 0 and 1"):
        rr_confidence_interval([1, 0], 0.8, 0.8, alpha=0)
    with pytest.raises(ValueError, match="alpha must be a number strictly between 0 and 1"):
        rr_confidence_interval([1, 0], 0.8, 0.8, alpha=1.0)
    with pytest.raises(ValueError, match=r"p \+ q must differ from 1"):
        rr_confidence_interval([1, 0], 0.5, 0.5)
    with pytest.raises(ValueError, match="responses must not be empty"):
        rr_confidence_interval([], 0.8, 0.8)


# --- estimate_krr_counts and krr_count_std ----------------------------------------------


def test_estimate_krr_counts_formula():
    np.testing.assert_allclose(estimate_krr_counts([0, 0, 1, 2], k=3, epsilon=math.log(2)), [4.0, 0.0, 0.0])
    counts = estimate_krr_counts([0, 1, 1, 1], k=2, epsilon=math.log(3))
    p, q = krr_probabilities(2, math.log(3))
    np.testing.assert_allclose(counts, (np.array([1, 3]) - q * 4) / (p - q))
    assert counts.shape == (2,) and counts.sum() == pytest.approx(4)


def test_estimate_krr_counts_can_be_negative_and_sum_to_n():
    counts = estimate_krr_counts([0] * 10, k=4, epsilon=0.5)
    assert (counts < 0).any()
    assert counts.sum() == pytest.approx(10)


def test_estimate_krr_counts_accepts_any_shape():
    reports = np.array([[0, 1], [2, 2]])
    np.testing.assert_allclose(estimate_krr_counts(reports, 3, 1.0), estimate_krr_counts(reports.ravel(), 3, 1.0))


def test_estimate_krr_counts_is_unbiased_and_krr_count_std_matches():
    k, epsilon, trials = 4, 1.0, 2_000
    true_counts = np.array([500, 1000, 300, 200])
    truth = np.repeat(np.arange(k), true_counts)
    reports = k_rand_resp(np.broadcast_to(truth, (trials, truth.size)), k, epsilon, rng=np.random.default_rng(77))
    estimates = np.array([estimate_krr_counts(row, k, epsilon) for row in reports])
    sd = krr_count_std(true_counts, epsilon)
    for j in range(k):
        check_mean(estimates[:, j], true_counts[j], sd[j], what=f"estimates of category {j}",
                   hint="Did you compare raw report counts with the truth?", false_failure=FALSE_FAILURE)
        assert_std_matches(estimates[:, j], sd[j], f"estimates of category {j}")


def test_raw_report_counts_are_biased():
    """The classic mistake: raw counts are pulled toward uniform, far beyond their noise."""
    k, epsilon = 4, 0.5
    truth = np.repeat(np.arange(k), [3000, 500, 500, 0])
    raw = np.bincount(k_rand_resp(truth, k, epsilon, rng=0), minlength=k)
    assert raw[3] > 500 and raw[0] < 2000


def test_krr_count_std_formula():
    np.testing.assert_allclose(krr_count_std([50, 50], epsilon=math.log(3)), [8.660254, 8.660254], rtol=1e-6)
    p, q = krr_probabilities(3, 2.0)
    counts = np.array([10, 20, 70])
    expected = np.sqrt(counts * p * (1 - p) + (100 - counts) * q * (1 - q)) / (p - q)
    np.testing.assert_allclose(krr_count_std(counts, 2.0), expected)


def test_estimate_krr_counts_and_std_validation():
    with pytest.raises(ValueError, match=r"reports must hold integers in 0\.\.2, got 3"):
        estimate_krr_counts([0, 3], 3, 1.0)
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        estimate_krr_counts([0, 1], 1, 1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        estimate_krr_counts([0, 1], 2, -1.0)
    with pytest.raises(ValueError, match=r"len\(true_counts\) must be an integer >= 2"):
        krr_count_std([10], 1.0)
    with pytest.raises(ValueError, match="true_counts must hold finite numbers"):
        krr_count_std([10, math.nan], 1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        krr_count_std([10, 10], 0)


# --- project_to_simplex ---------------------------------------------------------------------


def test_project_to_simplex_example():
    np.testing.assert_allclose(project_to_simplex([5.0, -1.0, 2.0], total=6.0), [4.5, 0.0, 1.5])


def test_project_to_simplex_leaves_a_valid_histogram_alone():
    counts = np.array([3.0, 0.0, 5.0, 2.0])
    np.testing.assert_allclose(project_to_simplex(counts, 10), counts)


def assert_kkt(values, total, x):
    """x solves min ||x - v||^2 s.t. x >= 0, sum x = total iff x_i = max(v_i - theta, 0) for one theta."""
    assert (x >= 0).all()
    assert x.sum() == pytest.approx(total, rel=1e-9, abs=1e-9)
    positive = x > 0
    theta = (values - x)[positive]
    assert np.ptp(theta) < 1e-8 * max(1.0, np.abs(values).max())  # one common shift on the support
    assert (values[~positive] <= theta.mean() + 1e-8 * max(1.0, np.abs(values).max())).all()  # zeros sit below it


def test_project_to_simplex_satisfies_the_kkt_conditions():
    rng = np.random.default_rng(0)
    for _ in range(500):
        size = int(rng.integers(1, 12))
        values = rng.normal(0, 50, size)
        total = float(rng.uniform(0.1, 200))
        assert_kkt(values, total, project_to_simplex(values, total))


def test_project_to_simplex_matches_a_numerical_optimiser():
    """Against Lawson-Hanson non-negative least squares, the constraint sum(x) = total a heavily weighted row.

    An active-set method ends exactly, whatever the BLAS's threads (SLSQP at ftol 1e-12 failed its line search on
    one of these 20 problems with single-threaded OpenBLAS). The weight 1e4 moves the optimum by about
    ``1 / weight**2``: 1e-7 here, far inside the tolerance.
    """
    rng = np.random.default_rng(1)
    weight = 1e4
    for _ in range(20):
        values = rng.normal(5, 10, 6)
        total = 20.0
        rows = np.vstack([np.eye(values.size), np.full((1, values.size), weight)])
        solution, _ = optimize.nnls(rows, np.append(values, weight * total))
        np.testing.assert_allclose(project_to_simplex(values, total), solution, atol=1e-5)


def test_project_to_simplex_is_the_closest_valid_histogram():
    rng = np.random.default_rng(2)
    values = np.array([40.0, -12.0, 25.0, -3.0, 8.0])
    total = 60.0
    best = np.linalg.norm(project_to_simplex(values, total) - values)
    candidates = rng.dirichlet(np.ones(values.size), size=20_000) * total
    assert (np.linalg.norm(candidates - values, axis=1) >= best - 1e-9).all()


def test_project_to_simplex_differs_from_clipping():
    values = np.array([5.0, -1.0, 2.0])
    clipped = np.clip(values, 0, None)
    projected = project_to_simplex(values, 6.0)
    assert clipped.sum() == 7.0  # clipping changes the total ...
    assert projected.sum() == pytest.approx(6.0)  # ... projecting keeps it
    rescaled = clipped * 6.0 / clipped.sum()  # and even a rescaled clip is farther away
    assert np.linalg.norm(projected - values) < np.linalg.norm(rescaled - values)


def test_project_to_simplex_total_zero_gives_zeros():
    np.testing.assert_array_equal(project_to_simplex([-1.0, -2.0], 0.0), [0.0, 0.0])
    np.testing.assert_array_equal(project_to_simplex([3.0, 1.0], 0), [0.0, 0.0])


def test_project_to_simplex_survives_a_total_lost_to_rounding():
    result = project_to_simplex([1e20, 0.0], 1.0)
    assert result.shape == (2,) and (result >= 0).all() and np.isfinite(result).all()


def test_project_to_simplex_on_krr_estimates():
    counts = estimate_krr_counts([0] * 10 + [1] * 2, k=4, epsilon=0.5)
    projected = project_to_simplex(counts, 12)
    assert (projected >= 0).all() and projected.sum() == pytest.approx(12)
    assert_kkt(counts, 12, projected)


@pytest.mark.parametrize(
    ("counts", "total", "message"),
    [
        ([[1.0, 2.0]], 1.0, r"counts must be a non-empty 1-D array, got shape \(1, 2\)"),
        ([], 1.0, "counts must be a non-empty 1-D array"),
        ([1.0, math.nan], 1.0, "counts must hold finite numbers"),
        (["a"], 1.0, "counts must hold numbers"),
        ([1.0, 2.0], -1.0, "total must be a finite number >= 0"),
        ([1.0, 2.0], math.nan, "total must be a finite number >= 0"),
        ([1.0, 2.0], math.inf, "total must be a finite number >= 0"),
        ([1.0, 2.0], np.array([1.0, 2.0]), "total must be a single number"),
        ([1.0, 2.0], "3", "total must be a finite number >= 0"),
    ],
)
def test_project_to_simplex_validation(counts, total, message):
    with pytest.raises(ValueError, match=message):
        project_to_simplex(counts, total)


# --- estimate_crosstab ------------------------------------------------------------------------


TRUE_TABLE = np.array([[400, 100], [200, 300]])  # rows a = 0, 1; columns b = 0, 1


def people_from_table(table):
    cells = np.repeat(np.arange(4), np.ravel(table))
    return cells // 2, cells % 2


def test_estimate_crosstab_layout():
    table = estimate_crosstab([1, 0, 1, 1], [1, 1, 0, 1], (0.75, 0.75), (0.75, 0.75))
    assert isinstance(table, pd.DataFrame)
    assert table.index.name == "a" and table.columns.name == "b"
    assert list(table.index) == [0, 1] and list(table.columns) == [0, 1]
    assert table.values.sum() == pytest.approx(4.0)


def test_estimate_crosstab_without_noise_is_the_plain_crosstab():
    a, b = people_from_table(TRUE_TABLE)
    np.testing.assert_allclose(estimate_crosstab(a, b, (1.0, 1.0), (1.0, 1.0)).values, TRUE_TABLE)
    expected = pd.crosstab(pd.Series(a, name="a"), pd.Series(b, name="b")).values
    np.testing.assert_allclose(estimate_crosstab(a, b, (1.0, 1.0), (1.0, 1.0)).values, expected)


def test_estimate_crosstab_is_unbiased_on_a_known_table():
    pq_a, pq_b = (0.8, 0.7), (0.6, 0.9)
    a, b = people_from_table(TRUE_TABLE)
    n, trials = a.size, 2_000
    rng = np.random.default_rng(31)
    reports_a = rand_resp(np.broadcast_to(a, (trials, n)), *pq_a, rng=rng)
    reports_b = rand_resp(np.broadcast_to(b, (trials, n)), *pq_b, rng=rng)
    estimates = np.array([estimate_crosstab(ra, rb, pq_a, pq_b).values.ravel() for ra, rb in zip(reports_a, reports_b)])
    # Exact covariance: each person's report cell is one draw from their row of M = M_a (x) M_b.
    joint = np.kron(rr_channel(*pq_a), rr_channel(*pq_b))
    rows = joint[2 * a + b]
    covariance_reports = np.diag(rows.sum(axis=0)) - rows.T @ rows
    inverse = np.linalg.inv(joint.T)
    sd = np.sqrt(np.diag(inverse @ covariance_reports @ inverse.T))
    for cell in range(4):
        check_mean(estimates[:, cell], TRUE_TABLE.ravel()[cell], sd[cell], what=f"crosstab cell {cell}",
                   false_failure=FALSE_FAILURE)
        assert_std_matches(estimates[:, cell], sd[cell], f"crosstab cell {cell}")
    np.testing.assert_allclose(estimates.sum(axis=1), n)
    # The raw table of reports is biased toward uniform: its expectation is M^T t, not t.
    raw_expected = joint.T @ TRUE_TABLE.ravel()
    assert np.abs(raw_expected - TRUE_TABLE.ravel()).max() > 10 * sd.max() / math.sqrt(trials)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1, 0], [1], (0.8, 0.8), (0.8, 0.8)), "reports_a and reports_b must have the same length, got 2 and 1"),
        (([1, 2], [1, 0], (0.8, 0.8), (0.8, 0.8)), "reports_a must hold only 0 and 1"),
        (([1, 0], [1, -1], (0.8, 0.8), (0.8, 0.8)), "reports_b must hold only 0 and 1"),
        (([1, 0], [1, 0], (0.8, 0.8, 0.8), (0.8, 0.8)), r"pq_a must be a pair \(p, q\)"),
        (([1, 0], [1, 0], 0.8, (0.8, 0.8)), r"pq_a must be a pair \(p, q\)"),
        (([1, 0], [1, 0], (0.8, 0.8), (0.8,)), r"pq_b must be a pair \(p, q\)"),
        (([1, 0], [1, 0], (1.8, 0.8), (0.8, 0.8)), r"pq_a\[0\] must be a probability in"),
        (([1, 0], [1, 0], (0.8, 0.8), (0.8, math.nan)), r"pq_b\[1\] must be a probability in"),
        (([1, 0], [1, 0], (0.8, 0.8), (0.5, 0.5)), r"p \+ q must differ from 1"),
    ],
)
def test_estimate_crosstab_validation(args, message):
    with pytest.raises(ValueError, match=message):
        estimate_crosstab(*args)


def test_reexported_from_the_package():
    for module in (estimators_module, kary_estimators_module):
        for name in module.__all__:
            assert getattr(dplib, name) is getattr(module, name)
