"""Tests for dplib.estimation.experiments: error of k-RR count estimates against epsilon, simulated and in theory.

Simulated means are compared with theory within z standard errors, z chosen for a
false-failure probability of (1e-6)**1.5 under the normal approximation; seeds are fixed.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dplib
from dplib.estimation.kary_rr import estimate_krr_counts, krr_count_std
from dplib.estimation.experiments import apportion, error_vs_epsilon, krr_error_vs_epsilon, theoretical_krr_errors
from dplib.mechanisms.kary_randomized_response import k_rand_resp

FALSE_FAILURE = 1e-6
Z = stats.norm.isf(FALSE_FAILURE**1.5 / 2)  # about 6.1
AGE_SEX_COUNTS = [8196, 14831, 6499, 15696]
EPSILONS = [0.1, 0.5, 1.0, 2.0, 4.0]
TRIALS = 300


@pytest.fixture(scope="module")
def table():
    return error_vs_epsilon(AGE_SEX_COUNTS, EPSILONS, trials=TRIALS, rng=np.random.default_rng(12))


def test_error_vs_epsilon_layout(table):
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["l1_mean", "l1_std", "l2_mean", "l2_std"]
    assert table.index.name == "epsilon"
    assert table.index.tolist() == EPSILONS
    assert table.index.dtype == float
    assert (table.to_numpy() > 0).all()


def test_error_decreases_with_epsilon(table):
    assert table["l1_mean"].is_monotonic_decreasing
    assert table["l2_mean"].is_monotonic_decreasing
    assert table["l1_mean"].iloc[0] > 50 * table["l1_mean"].iloc[-1]


def test_l1_error_agrees_with_theory(table):
    theory = theoretical_krr_errors(AGE_SEX_COUNTS, EPSILONS)
    standard_error = table["l1_std"] / math.sqrt(TRIALS)
    gap = (table["l1_mean"] - theory["l1_mean"]).abs()
    assert (gap <= Z * standard_error).all(), pd.concat([table["l1_mean"], theory["l1_mean"], standard_error], axis=1)


def test_l2_error_agrees_with_theory(table):
    """sqrt(sum sigma^2) is sqrt(E L2^2) >= E L2 (Jensen): for k = 4 the mean sits 5-10% below it."""
    theory = theoretical_krr_errors(AGE_SEX_COUNTS, EPSILONS)
    standard_error = table["l2_std"] / math.sqrt(TRIALS)
    assert (table["l2_mean"] <= theory["l2_mean"] + Z * standard_error).all()
    assert (table["l2_mean"] >= 0.85 * theory["l2_mean"] - Z * standard_error).all()


def test_std_is_the_spread_over_trials_not_zero(table):
    """One trial per epsilon misleads: the spread is a sizeable fraction of the mean."""
    ratio = table["l1_std"] / table["l1_mean"]
    assert ((ratio > 0.2) & (ratio < 0.8)).all()


def test_error_vs_epsilon_matches_a_brute_force_simulation():
    """The multinomial shortcut has the same distribution as randomizing every person."""
    true_counts = np.array([300, 200, 100, 400])
    k, epsilon, trials = 4, 1.0, 1_000
    table = error_vs_epsilon(true_counts, [epsilon], trials=trials, rng=np.random.default_rng(3))
    truth = np.repeat(np.arange(k), true_counts)
    reports = k_rand_resp(np.broadcast_to(truth, (trials, truth.size)), k, epsilon, rng=np.random.default_rng(4))
    residuals = np.array([estimate_krr_counts(row, k, epsilon) for row in reports]) - true_counts
    l1 = np.abs(residuals).sum(axis=1)
    l2 = np.sqrt((residuals**2).sum(axis=1))
    for simulated, row in ((l1, "l1"), (l2, "l2")):
        shortcut_mean, shortcut_std = table.loc[epsilon, f"{row}_mean"], table.loc[epsilon, f"{row}_std"]
        standard_error = math.sqrt(simulated.var(ddof=1) / trials + shortcut_std**2 / trials)
        assert abs(simulated.mean() - shortcut_mean) <= Z * standard_error, row
        assert 0.8 < shortcut_std / simulated.std(ddof=1) < 1.25, row


def test_error_vs_epsilon_same_seed_same_table_different_seeds_differ():
    a = error_vs_epsilon([50, 50, 100], [0.5, 1.0], trials=10, rng=1)
    b = error_vs_epsilon([50, 50, 100], [0.5, 1.0], trials=10, rng=np.random.default_rng(1))
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(error_vs_epsilon([50, 50, 100], [0.5, 1.0], trials=10, rng=2))


def test_error_vs_epsilon_accepts_a_single_epsilon_and_a_progress_bar(capsys):
    table = error_vs_epsilon([10, 20], 1.0, trials=5, rng=0, progress=True)
    assert table.index.tolist() == [1.0]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"true_counts": [10]}, "true_counts must be a 1-D array of at least 2 non-negative integer counts"),
        ({"true_counts": [10, -1]}, "true_counts must be a 1-D array of at least 2"),
        ({"true_counts": [10, 2.5]}, "true_counts must be a 1-D array of at least 2"),
        ({"true_counts": [[10, 2]]}, "true_counts must be a 1-D array of at least 2"),
        ({"true_counts": [10, math.nan]}, "true_counts must hold finite numbers"),
        ({"true_counts": ["a", "b"]}, "true_counts must hold numbers"),
        ({"trials": 1}, "trials must be an integer >= 2"),
        ({"trials": 2.5}, "trials must be an integer >= 2"),
        ({"trials": True}, "trials must be an integer >= 2"),
        ({"epsilons": [1.0, 0.0]}, "epsilons must be a finite number > 0"),
        ({"epsilons": [math.inf]}, "epsilons must be a finite number > 0"),
        ({"epsilons": [-1.0]}, "epsilons must be a finite number > 0"),
    ],
)
def test_error_vs_epsilon_validation(kwargs, message):
    arguments = {"true_counts": [10, 20], "epsilons": [1.0], "trials": 5, "rng": 0} | kwargs
    with pytest.raises(ValueError, match=message):
        error_vs_epsilon(**arguments)


def test_theoretical_krr_errors_layout_and_values():
    theory = theoretical_krr_errors([100, 100], [1.0])
    assert list(theory.columns) == ["l1_mean", "l2_mean"]
    assert theory.index.name == "epsilon" and theory.index.tolist() == [1.0]
    assert theory.loc[1.0, "l1_mean"] == pytest.approx(21.65, abs=0.005)
    assert theory.loc[1.0, "l2_mean"] == pytest.approx(19.19, abs=0.005)
    sigma = krr_count_std(AGE_SEX_COUNTS, 0.7)
    theory = theoretical_krr_errors(AGE_SEX_COUNTS, 0.7)
    assert theory.loc[0.7, "l1_mean"] == pytest.approx(math.sqrt(2 / math.pi) * sigma.sum())
    assert theory.loc[0.7, "l2_mean"] == pytest.approx(math.sqrt((sigma**2).sum()))


def test_theoretical_krr_errors_fall_like_one_over_epsilon():
    theory = theoretical_krr_errors(AGE_SEX_COUNTS, [0.001, 0.002, 1.0, 2.0])
    assert theory["l1_mean"].is_monotonic_decreasing
    assert theory.loc[0.001, "l1_mean"] / theory.loc[0.002, "l1_mean"] == pytest.approx(2.0, rel=1e-2)


def test_theoretical_krr_errors_validation():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        theoretical_krr_errors([10, 20], [0.0])
    with pytest.raises(ValueError, match=r"len\(true_counts\) must be an integer >= 2"):
        theoretical_krr_errors([10], [1.0])


def test_reexported_from_the_package():
    assert dplib.error_vs_epsilon is error_vs_epsilon
    assert dplib.theoretical_krr_errors is theoretical_krr_errors


def test_error_vs_epsilon_is_the_krr_simulation_under_its_exercise_name():
    """Check that the 05 exercise name is the k-RR function itself, so disabling one disables both."""
    assert error_vs_epsilon is krr_error_vs_epsilon
    assert dplib.error_vs_epsilon is dplib.krr_error_vs_epsilon


def test_apportion_sums_to_n_and_rejects_bad_n():
    """Check that apportion splits n exactly (largest remainders) and names a bad n."""
    assert apportion([1, 1, 1], 10).tolist() == [4, 3, 3]
    with pytest.raises(ValueError, match="n must be"):
        apportion([1, 2], 0)
