"""Tests for dplib.learning.local_model: k-RR on the columns of a table, and the classifier trained on them.

Rates are checked with exact binomial tests at a false-failure probability of 1e-6.
"""

import math

import numpy as np
import pandas as pd
import pytest

from dplib.accounting.channels import krr_probabilities
from dplib.learning.local_model import (
    FEATURES,
    PRIVATE_COLUMNS,
    adult_learning_data,
    private_accuracy,
    privatize_columns,
    train_and_score,
)
from dplib.testing import check_fraction

N = 30_000


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "a": pd.Categorical(rng.choice(list("xyz"), N), categories=list("xyz")),
        "b": pd.Categorical(rng.choice(list("pqrstu"), N), categories=list("pqrstu")),
        "plain": rng.choice(["low", "mid", "high"], N),
        "age": rng.integers(18, 90, N),
    })


#: The public domain of the plain column: "none" is a value nobody in the table holds.
PLAIN = {"plain": ["low", "mid", "high", "none"]}


def kept(before, after, column):
    return np.asarray(before[column]).astype(str) == np.asarray(after[column]).astype(str)


def test_budget_is_split_evenly_between_the_columns(table):
    private = privatize_columns(table, ["a", "b", "plain"], 3.3, rng=np.random.default_rng(1), domains=PLAIN)
    check_fraction(kept(table, private, "a"), krr_probabilities(3, 1.1)[0], what="a kept")
    check_fraction(kept(table, private, "b"), krr_probabilities(6, 1.1)[0], what="b kept")
    check_fraction(kept(table, private, "plain"), krr_probabilities(4, 1.1)[0], what="plain kept (k = 4: the domain)")


def test_other_columns_dtypes_and_the_input_are_untouched(table):
    original = table.copy()
    private = privatize_columns(table, ["a", "plain"], 2.0, rng=np.random.default_rng(2), domains=PLAIN)
    assert table.equals(original)
    assert private["age"].equals(table["age"]) and private["b"].equals(table["b"])
    assert private["a"].dtype == table["a"].dtype
    assert set(private["plain"]) == set(PLAIN["plain"])  # "none", held by nobody, is reported too
    assert private.index.equals(table.index) and list(private.columns) == list(table.columns)


def test_categories_absent_from_the_sample_are_reported_at_rate_q():
    sample = pd.DataFrame({"g": pd.Categorical(np.repeat(["a", "b"], N // 2), categories=["a", "b", "c", "d"])})
    private = privatize_columns(sample, ["g"], 1.2, rng=np.random.default_rng(3))
    check_fraction(np.asarray(private["g"]) == "d", krr_probabilities(4, 1.2)[1], what="absent category reported")


def test_a_plain_column_is_randomized_over_its_public_domain_in_its_own_type():
    sample = pd.DataFrame({"band": np.repeat([1, 2, 3], N // 3)})
    private = privatize_columns(sample, ["band"], 1.5, rng=np.random.default_rng(7), domains={"band": [4, 3, 2, 1, 0]})
    assert {type(value) for value in private["band"].tolist()} == {int}
    check_fraction(np.asarray(private["band"]) == 0, krr_probabilities(5, 1.5)[1], what="0, held by nobody, reported")
    check_fraction(kept(sample, private, "band"), krr_probabilities(5, 1.5)[0], what="band kept")


def test_the_domain_is_never_read_from_the_data(table):
    with pytest.raises(ValueError, match=r"column 'plain' is not Categorical, so its public domain must be given in domains"):
        privatize_columns(table, ["a", "plain"], 1.0)
    with pytest.raises(ValueError, match=r"holds 'low', a missing value or one outside its domain"):
        privatize_columns(table, ["plain"], 1.0, domains={"plain": ["mid", "high"]})
    with pytest.raises(ValueError, match=r"domains\['plain'\] must list distinct values"):
        privatize_columns(table, ["plain"], 1.0, domains={"plain": ["low", "mid", "high", "low"]})
    with pytest.raises(ValueError, match=r"domains\['a'\] must list the categories"):
        privatize_columns(table, ["a"], 1.0, domains={"a": ["x", "y"]})
    same = privatize_columns(table, ["a"], 1.0, rng=np.random.default_rng(8), domains={"a": ["z", "y", "x"]})
    assert same["a"].dtype == table["a"].dtype


def test_columns_get_independent_randomness(table):
    doubled = table.assign(copy=table["a"])
    private = privatize_columns(doubled, ["a", "copy"], 2.0, rng=np.random.default_rng(4))
    p = krr_probabilities(3, 1.0)[0]
    check_fraction(kept(doubled, private, "a") & kept(doubled, private, "copy"), p * p, what="both copies kept")


def test_same_seed_same_output(table):
    first = privatize_columns(table, ["a", "b"], 1.0, rng=np.random.default_rng(5))
    second = privatize_columns(table, ["a", "b"], 1.0, rng=np.random.default_rng(5))
    assert first.equals(second)


@pytest.mark.parametrize("epsilon", [0, -1, math.nan, math.inf])
def test_rejects_bad_epsilon(table, epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        privatize_columns(table, ["a"], epsilon)


def test_rejects_unknown_or_no_columns_and_missing_values(table):
    with pytest.raises(ValueError, match="columns must be columns of df"):
        privatize_columns(table, ["nope"], 1.0)
    with pytest.raises(ValueError, match="columns must list at least one column"):
        privatize_columns(table, [], 1.0)
    with pytest.raises(ValueError, match="a missing value or one outside its domain"):
        privatize_columns(pd.DataFrame({"g": pd.Categorical(["a", None, "b"])}), ["g"], 1.0)


def test_learning_data_has_the_whole_domain_and_fixed_sizes():
    train, test = adult_learning_data(train_size=None)
    assert (len(train), len(test)) == (30_162, 15_060)
    assert list(train.columns) == list(PRIVATE_COLUMNS)
    for column in PRIVATE_COLUMNS:
        assert list(train[column].cat.categories) == list(test[column].cat.categories)
    small, _ = adult_learning_data(100)
    small["sex"] = "Female"  # callers get copies: the cache stays clean
    assert adult_learning_data(100)[0]["sex"].nunique() == 2
    with pytest.raises(ValueError, match="train_size"):
        adult_learning_data(0)


def test_train_and_score_beats_the_trivial_rule_and_is_deterministic():
    train, test = adult_learning_data(3_000)
    trivial = (test["income"] == "<=50K").mean()
    accuracy = train_and_score(train, test)
    assert accuracy == train_and_score(train, test)
    assert trivial + 0.04 < accuracy < 0.9
    assert set(FEATURES) < set(train.columns)


def test_private_accuracy_table_and_its_extremes():
    train, test = adult_learning_data(2_000)
    table = private_accuracy([0.01, 500.0], 2, rng=np.random.default_rng(6), train=train, test=test)
    assert table.index.name == "epsilon" and list(table.columns) == ["accuracy_mean", "accuracy_std"]
    assert list(table.index) == [0.01, 500.0, math.inf]
    baseline = train_and_score(train, test)
    assert table.loc[math.inf, "accuracy_mean"] == baseline and table.loc[math.inf, "accuracy_std"] == 0
    assert abs(table.loc[500.0, "accuracy_mean"] - baseline) < 1e-9  # at epsilon 500 nothing changes
    assert table.loc[0.01, "accuracy_mean"] < baseline - 0.03
    with pytest.raises(ValueError, match="trials must be an integer >= 2"):
        private_accuracy([1.0], 1, train=train, test=test)


def test_functions_are_reexported_from_the_package():
    import dplib
    from dplib.learning import local_model as learning_module

    for name in learning_module.__all__:
        if callable(getattr(learning_module, name)):
            assert getattr(dplib, name) is getattr(learning_module, name)
