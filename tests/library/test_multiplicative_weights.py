"""Tests for dplib.synthetic.multiplicative_weights: the workload, the private choice, the update and MWEM's accounting.

The choice is checked by chi-square against exp(epsilon * error / 2) and the measurement noise by
Kolmogorov-Smirnov against Laplace(2T / epsilon), on fixed seeds (dplib.testing's false-failure rates).
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dplib.synthetic.multiplicative_weights as mw
from dplib.synthetic.marginals import marginal
from dplib.synthetic.multiplicative_weights import marginal_queries, multiplicative_weights_update, mwem, select_worst_query
from dplib.testing import check_categorical, check_distribution

DOMAIN = {"x": ("x0", "x1", "x2"), "y": ("y0", "y1"), "z": ("z0", "z1")}
HISTOGRAM = np.array([30.0, 5.0, 12.0, 0.0, 41.0, 8.0, 2.0, 19.0, 7.0, 25.0, 0.0, 11.0])
WORKLOAD = [key for size in (1, 2) for key in itertools.combinations(DOMAIN, size)]


def people_of(histogram):
    """A table with histogram[i] people in cell i of the domain (C order)."""
    cells = np.repeat(np.arange(histogram.size), histogram.astype(int))
    values = np.unravel_index(cells, tuple(len(v) for v in DOMAIN.values()))
    return pd.DataFrame({c: np.asarray(DOMAIN[c])[v] for c, v in zip(DOMAIN, values)})


def test_marginal_queries_answer_every_cell_of_the_workload():
    queries = marginal_queries(DOMAIN, WORKLOAD)
    assert queries.shape == (3 + 2 + 2 + 6 + 6 + 4, 12) and set(np.unique(queries)) == {0.0, 1.0}
    people = people_of(HISTOGRAM)
    expected = np.concatenate([marginal(people, key, DOMAIN).ravel() for key in WORKLOAD])
    assert (queries @ HISTOGRAM == expected).all()


def test_select_worst_query_follows_the_exponential_mechanism_with_the_factor_two():
    errors = np.array([0.0, 3.0, 7.0, 8.0, 12.0])
    rng = np.random.default_rng(1)
    draws = [select_worst_query(errors, 0.5, rng=rng) for _ in range(20_000)]
    weights = np.exp(0.5 * errors / 2)
    check_categorical(draws, weights / weights.sum(), what="choices at epsilon 0.5")
    assert all(type(d) is int for d in draws[:10])


def test_select_worst_query_does_not_overflow():
    rng = np.random.default_rng(2)
    draws = [select_worst_query([12_000.0, 11_998.0, 0.0], 1.0, rng=rng) for _ in range(5_000)]
    check_categorical(draws, [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1)), 0.0], what="huge errors")


def test_select_worst_query_rejects_bad_parameters():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        select_worst_query([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="scores must be a non-empty 1-D array"):
        select_worst_query([], 1.0)


def test_multiplicative_weights_update_is_the_formula_and_keeps_the_total():
    synthetic, query = np.array([40.0, 10.0, 30.0, 20.0]), np.array([1.0, 1.0, 0.0, 0.0])
    updated = multiplicative_weights_update(synthetic, query, 20.0)  # q(A) = 50 is above 20: those cells shrink
    weights = synthetic * np.exp(query * (20.0 - 50.0) / (2 * 100.0))
    assert np.allclose(updated, 100 * weights / weights.sum()) and updated.sum() == pytest.approx(100.0)
    assert updated[0] < 40 and updated[2] > 30
    wild = multiplicative_weights_update(synthetic, query, 1e9)  # no overflow: the query's cells take everything
    assert np.isfinite(wild).all() and wild[:2].sum() == pytest.approx(100.0)


def test_multiplicative_weights_update_rejects_a_query_of_another_shape():
    with pytest.raises(ValueError, match="query must have the shape of synthetic"):
        multiplicative_weights_update([1.0, 2.0], [1.0, 0.0, 1.0], 3.0)


def test_mwem_spends_epsilon_over_its_rounds(monkeypatch):
    spent = []
    original_select, original_laplace = mw.select_worst_query, mw.laplace_mech

    def recording_select(errors, epsilon, rng=None):
        spent.append(("choose", epsilon))
        return original_select(errors, epsilon, rng=rng)

    def recording_laplace(value, sensitivity, epsilon, rng=None):
        spent.append(("measure", epsilon * 1.0 / sensitivity))
        return original_laplace(value, sensitivity, epsilon, rng=rng)

    monkeypatch.setattr(mw, "select_worst_query", recording_select)
    monkeypatch.setattr(mw, "laplace_mech", recording_laplace)
    mwem(HISTOGRAM, marginal_queries(DOMAIN, WORKLOAD), 165.0, 1.2, 8, rng=0)
    assert [kind for kind, _ in spent] == ["choose", "measure"] * 8
    assert np.allclose([epsilon for _, epsilon in spent], 1.2 / 16) and sum(e for _, e in spent) == pytest.approx(1.2)


def test_mwem_measurement_noise_is_laplace_of_scale_2t_over_epsilon(monkeypatch):
    noise = []
    original_laplace = mw.laplace_mech

    def recording_laplace(value, sensitivity, epsilon, rng=None):
        noisy = original_laplace(value, sensitivity, epsilon, rng=rng)
        noise.append(noisy - value)
        return noisy

    monkeypatch.setattr(mw, "laplace_mech", recording_laplace)
    rng = np.random.default_rng(3)
    queries = marginal_queries(DOMAIN, WORKLOAD)
    for _ in range(500):
        mwem(HISTOGRAM, queries, 165.0, 2.0, 4, rng=rng)
    check_distribution(noise, stats.laplace(scale=2 * 4 / 2.0).cdf, what="MWEM's measurement noise, T = 4, epsilon = 2")


def test_mwem_keeps_its_total_and_learns_the_workload():
    queries = marginal_queries(DOMAIN, WORKLOAD)
    synthetic = mwem(HISTOGRAM, queries, 165.0, 200.0, 40, rng=np.random.default_rng(4))
    assert synthetic.shape == (12,) and (synthetic >= 0).all() and synthetic.sum() == pytest.approx(165.0)
    uniform = np.full(12, 165.0 / 12)
    assert np.abs(queries @ synthetic - queries @ HISTOGRAM).max() < 0.2 * np.abs(queries @ uniform - queries @ HISTOGRAM).max()
    again = mwem(HISTOGRAM, queries, 165.0, 200.0, 40, rng=np.random.default_rng(4))
    assert np.array_equal(synthetic, again)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ((HISTOGRAM, np.ones((3, 5)), 165.0, 1.0, 5), r"queries must have shape \(number of queries, 12\)"),
        ((HISTOGRAM, np.ones((3, 12)), -1.0, 1.0, 5), "total must be a finite number >= 0"),
        ((HISTOGRAM, np.ones((3, 12)), 165.0, 0.0, 5), "epsilon must be a finite number > 0"),
        ((HISTOGRAM, np.ones((3, 12)), 165.0, 1.0, 0), "rounds must be an integer >= 1"),
    ],
)
def test_mwem_rejects_bad_parameters(arguments, message):
    with pytest.raises(ValueError, match=message):
        mwem(*arguments)
