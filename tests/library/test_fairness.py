"""Tests for dplib.mechanisms.fairness: per-group outcome probabilities of the exponential mechanism.

Every probability is checked against dplib.exponential_probabilities on the two scores
(majority, minority) of each group, and against the closed form
1 / (1 + exp(-epsilon * (n - 2m) / (2 * sensitivity))). The socks scenario of
06_exponential_fairness (Blue: 30 people, 1 violent; Red: 70 people, 9 violent) is
pinned down by its numbers.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dplib
from dplib.mechanisms.exponential import exponential_probabilities
from dplib.mechanisms.fairness import group_outcome_probabilities

SIZES = {"Blue": 30, "Red": 70}
MINORITY = {"Blue": 1, "Red": 9}
EPSILONS = [0.01, 0.05, 0.13, 0.5, 2.0, 10.0]


def test_is_reexported_by_the_package():
    assert dplib.group_outcome_probabilities is group_outcome_probabilities


def test_table_layout():
    table = group_outcome_probabilities(SIZES, MINORITY, EPSILONS)
    assert isinstance(table, pd.DataFrame)
    assert table.index.name == "epsilon" and table.index.tolist() == EPSILONS
    assert table.columns.names == ["outcome", "group"]
    assert table.columns.tolist() == [("majority", "Blue"), ("majority", "Red"), ("minority", "Blue"), ("minority", "Red")]
    assert table["majority"].columns.tolist() == ["Blue", "Red"]


def test_sequences_number_the_groups_and_a_scalar_epsilon_gives_one_row():
    table = group_outcome_probabilities([30, 70], [1, 9], 0.5)
    assert table.shape == (1, 4)
    assert table["minority"].columns.tolist() == [0, 1]


@pytest.mark.parametrize("score", ["count", "proportion"])
@pytest.mark.parametrize("sensitivity", [None, 1.0, 0.3])
def test_agrees_with_the_exponential_mechanism_on_each_group(score, sensitivity):
    table = group_outcome_probabilities(SIZES, MINORITY, EPSILONS, score=score, sensitivity=sensitivity)
    for group, n in SIZES.items():
        m = MINORITY[group]
        scores = np.array([n - m, m], dtype=float) / (n if score == "proportion" else 1)
        delta = sensitivity if sensitivity is not None else (1.0 if score == "count" else 1.0 / n)
        for epsilon in EPSILONS:
            expected = exponential_probabilities(scores, epsilon, delta)
            got = [table.loc[epsilon, ("majority", group)], table.loc[epsilon, ("minority", group)]]
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


def test_closed_form_with_counts_and_the_factor_two():
    table = group_outcome_probabilities(SIZES, MINORITY, EPSILONS)
    for group, n in SIZES.items():
        margin = n - 2 * MINORITY[group]
        expected = [1 / (1 + math.exp(-epsilon * margin / 2)) for epsilon in EPSILONS]
        np.testing.assert_allclose(table["majority"][group], expected, rtol=1e-12)
    np.testing.assert_allclose(table["majority"] + table["minority"], 1.0, rtol=1e-12)


def test_proportion_with_sensitivity_one_over_n_equals_counts():
    counts = group_outcome_probabilities(SIZES, MINORITY, EPSILONS)
    proportions = group_outcome_probabilities(SIZES, MINORITY, EPSILONS, score="proportion")
    np.testing.assert_allclose(proportions.to_numpy(), counts.to_numpy(), rtol=1e-12)


def test_socks_the_smaller_group_pays_with_counts_and_the_order_flips_with_sensitivity_one():
    right = group_outcome_probabilities(SIZES, MINORITY, EPSILONS)
    # Blue is smaller (margin 28 vs 52): it is misreported more often at every epsilon.
    assert (right["minority"]["Blue"] > right["minority"]["Red"]).all()
    np.testing.assert_allclose(right.loc[0.05, "majority"].to_numpy(), [0.668188, 0.785835], atol=1e-6)
    wrong = group_outcome_probabilities(SIZES, MINORITY, EPSILONS, score="proportion", sensitivity=1.0)
    # Sensitivity 1 for a proportion: group size drops out, only the base rate is left
    # (margins 28/30 vs 52/70), Blue now looks better off and even epsilon 2 is near a coin flip.
    assert (wrong["minority"]["Blue"] < wrong["minority"]["Red"]).all()
    assert wrong.loc[2.0, ("majority", "Red")] < 0.7


def test_no_overflow_for_large_groups_and_epsilons():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = group_outcome_probabilities([100_000, 10], [10, 5], [10.0, 1e-3])
    assert np.isfinite(table.to_numpy()).all()
    assert table.loc[10.0, ("majority", 0)] == 1.0 and table.loc[10.0, ("minority", 0)] == 0.0
    # A tie (m = n / 2) is a fair coin at every epsilon.
    np.testing.assert_allclose(table.xs(1, axis=1, level="group").to_numpy(), 0.5)


def test_vectorized_over_many_groups_and_epsilons():
    sizes = np.arange(2, 202)
    table = group_outcome_probabilities(sizes, sizes // 3, np.geomspace(0.01, 10, 50))
    assert table.shape == (50, 400)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"group_sizes": [30, 0]}, "group_sizes must be integers >= 1"),
        ({"group_sizes": [30.5, 70]}, "group_sizes must be integers >= 1"),
        ({"minority_counts": [16, 9]}, "minority_counts must be integers between 0 and half"),
        ({"minority_counts": [-1, 9]}, "minority_counts must be integers between 0 and half"),
        ({"minority_counts": [1, 9, 3]}, "minority_counts must have one entry per group"),
        ({"group_sizes": []}, "group_sizes must be a non-empty 1-D array"),
        ({"epsilons": [0.5, -1]}, "epsilons must be a non-empty 1-D array of finite numbers > 0"),
        ({"epsilons": [np.inf]}, "epsilons must hold finite numbers"),
        ({"score": "share"}, "score must be one of"),
        ({"sensitivity": 0}, "sensitivity must be > 0"),
        ({"sensitivity": -1}, "sensitivity must be a finite number >= 0"),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, match):
    arguments = {"group_sizes": [30, 70], "minority_counts": [1, 9], "epsilons": [0.5]} | kwargs
    with pytest.raises(ValueError, match=match):
        group_outcome_probabilities(
            arguments.pop("group_sizes"), arguments.pop("minority_counts"), arguments.pop("epsilons"), **arguments
        )


def test_mapping_keys_must_agree():
    with pytest.raises(ValueError, match="minority_counts must name the same groups"):
        group_outcome_probabilities({"Blue": 30, "Red": 70}, {"Blue": 1, "Green": 9}, 1.0)
