"""Tests for dplib.synthetic.sampling: the Adult table, the generators and synthesize.

Sampled records are checked by chi-square against the marginals they were drawn from (fixed seeds, false-failure
probability fixed in advance by dplib.testing); synthesize is checked against its three steps run by hand.
"""

import numpy as np
import pandas as pd
import pytest

import dplib.synthetic.sampling
from dplib.synthetic.marginals import consistent_marginals, marginal, noisy_marginals
from dplib.synthetic.sampling import (
    ADULT_DOMAIN,
    ADULT_TREE,
    adult_synthetic_data,
    sample_independent,
    sample_tree,
    synthesize,
)
from dplib.testing import check_categorical

DOMAIN = {"b": ("b0", "b1"), "a": ("a0", "a1", "a2"), "c": ("c0", "c1", "c2", "c3"), "d": ("d0", "d1")}
TREE = [("b", "a"), ("b", "c"), ("c", "d")]  # b has two children: a tree, not a chain
P_B = np.array([0.4, 0.6])
A_GIVEN_B = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
C_GIVEN_B = np.array([[0.5, 0.3, 0.2, 0.0], [0.1, 0.2, 0.3, 0.4]])
D_GIVEN_C = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.05, 0.95]])
TABLES = {("b", "a"): 1_000 * P_B[:, None] * A_GIVEN_B, ("b", "c"): 1_000 * P_B[:, None] * C_GIVEN_B,
          ("c", "d"): 1_000 * (P_B @ C_GIVEN_B)[:, None] * D_GIVEN_C}


def codes(frame, column, domain=DOMAIN):
    positions = pd.Index(domain[column]).get_indexer(frame[column].astype(str))
    assert (positions >= 0).all()
    return positions


# --- the Adult table -----------------------------------------------------------------------------


def test_adult_synthetic_data_is_five_columns_over_the_public_domain():
    private, test = adult_synthetic_data()
    assert private.shape == (30_162, 5) and test.shape == (15_060, 5)
    for frame in (private, test):
        assert list(frame.columns) == list(ADULT_DOMAIN)
        for column, values in ADULT_DOMAIN.items():
            assert tuple(frame[column].cat.categories) == values and frame[column].notna().all()
    assert marginal(private, ("education",), ADULT_DOMAIN)[0] == 45  # preschool: a small group
    private.loc[0, "sex"] = "Female" if private.loc[0, "sex"] == "Male" else "Male"
    assert not adult_synthetic_data()[0].equals(private)  # copies: a caller cannot change the next one's data


def test_the_tree_covers_the_domain_with_income_at_the_root():
    assert ADULT_TREE[0][0] == "income"
    assert {child for _, child in ADULT_TREE} | {"income"} == set(ADULT_DOMAIN)


# --- the generators ------------------------------------------------------------------------------


def test_sample_independent_draws_each_column_from_its_marginal_and_independently():
    domain = {"colour": ("red", "green", "blue"), "size": ("S", "M", "L", "XL")}
    counts = {("colour",): np.array([500.0, 300.0, 200.0]), ("size",): np.array([0.0, 250.0, 500.0, 250.0])}
    rows = sample_independent(counts, domain, 30_000, rng=np.random.default_rng(3))
    assert list(rows.columns) == ["colour", "size"] and len(rows) == 30_000
    colour, size = codes(rows, "colour", domain), codes(rows, "size", domain)
    check_categorical(colour, [0.5, 0.3, 0.2], what="colours")
    check_categorical(size, [0.0, 0.25, 0.5, 0.25], what="sizes")
    check_categorical(colour * 4 + size, np.outer([0.5, 0.3, 0.2], [0, 0.25, 0.5, 0.25]).ravel(), what="pairs")


def test_sample_independent_refuses_negative_counts():
    with pytest.raises(ValueError, match="make the marginals consistent first"):
        sample_independent({("x",): np.array([3.0, -1.0])}, {"x": ("u", "v")}, 10)
    with pytest.raises(ValueError, match=r"marginals has no 1-way marginal \('y',\)"):
        sample_independent({("x",): np.array([3.0, 1.0])}, {"x": ("u", "v"), "y": ("p", "q")}, 10)


def test_sample_tree_keeps_every_edge_and_the_dependence_through_the_tree():
    rows = sample_tree(TABLES, TREE, DOMAIN, 40_000, rng=np.random.default_rng(4))
    assert list(rows.columns) == list(DOMAIN) and len(rows) == 40_000
    drawn = {column: codes(rows, column) for column in DOMAIN}
    check_categorical(drawn["b"], P_B, what="the root")
    for parent, child in TREE:
        table = TABLES[(parent, child)]
        check_categorical(drawn[parent] * table.shape[1] + drawn[child], (table / table.sum()).ravel(),
                          what=f"({parent}, {child})")
    joint = np.einsum("b,ba,bc->ac", P_B, A_GIVEN_B, C_GIVEN_B)
    check_categorical(drawn["a"] * 4 + drawn["c"], joint.ravel(), what="(a, c), siblings")


def test_sample_tree_uses_the_child_margin_for_an_empty_row():
    tables = {("b", "c"): np.array([[300.0, 200.0, 0.0, 0.0], [100.0, 100.0, 300.0, 0.0]]),
              ("c", "d"): np.array([[200.0, 200.0], [60.0, 240.0], [0.0, 0.0], [0.0, 0.0]])}
    domain = {"b": DOMAIN["b"], "c": DOMAIN["c"], "d": DOMAIN["d"]}
    rows = sample_tree(tables, [("b", "c"), ("c", "d")], domain, 20_000, rng=np.random.default_rng(5))
    c, d = codes(rows, "c", domain), codes(rows, "d", domain)
    check_categorical(d[c == 2], [260 / 700, 440 / 700], what="d where c's row is all zeros")
    check_categorical(d[c == 0], [0.5, 0.5], what="d where c = c0")


@pytest.mark.parametrize(
    "tree, message",
    [
        ([("b", "a"), ("c", "d"), ("b", "c")], r"edge \('c', 'd'\) does not"),
        ([("b", "a"), ("b", "c"), ("c", "a")], r"edge \('c', 'a'\) does not"),
        ([("b", "a"), ("b", "c")], "tree must cover the domain's columns"),
        ([], r"tree must list \(parent, child\) edges"),
    ],
)
def test_sample_tree_rejects_a_bad_tree(tree, message):
    with pytest.raises(ValueError, match=message):
        sample_tree(TABLES, tree, DOMAIN, 10)


def test_sample_tree_rejects_a_table_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"must have shape \(2, 3\)"):
        sample_tree({**TABLES, ("b", "a"): TABLES[("b", "a")].T}, TREE, DOMAIN, 10)


# --- synthesize ----------------------------------------------------------------------------------


def small_adult(n=3_000):
    return adult_synthetic_data()[0].sample(n, random_state=0).reset_index(drop=True)


def test_synthesize_is_measure_then_make_consistent_then_sample():
    people = small_adult()
    table = synthesize(people, 2.0, ADULT_TREE, ADULT_DOMAIN, rng=np.random.default_rng(6))
    rng = np.random.default_rng(6)
    consistent = consistent_marginals(noisy_marginals(people, list(ADULT_TREE), 2.0, ADULT_DOMAIN, rng=rng))
    n_hat = int(round(consistent[ADULT_TREE[0]].sum()))
    by_hand = sample_tree(consistent, ADULT_TREE, ADULT_DOMAIN, n_hat, rng=rng)
    assert table.equals(by_hand) and len(table) == n_hat


def test_synthesized_records_follow_the_post_processed_marginals():
    people = small_adult()
    rng = np.random.default_rng(7)
    consistent = consistent_marginals(noisy_marginals(people, list(ADULT_TREE), 0.5, ADULT_DOMAIN, rng=rng))
    records = sample_tree(consistent, ADULT_TREE, ADULT_DOMAIN, 60_000, rng=rng)
    root = consistent[ADULT_TREE[0]].sum(axis=1) / consistent[ADULT_TREE[0]].sum()
    drawn = {column: codes(records, column, ADULT_DOMAIN) for column in ADULT_DOMAIN}
    check_categorical(drawn["income"], root, what="income, the root")
    for parent, child in ADULT_TREE[:3]:  # the root's children: P(root) times the row's conditional
        table = consistent[(parent, child)]
        expected = root[:, None] * table / table.sum(axis=1, keepdims=True)
        keep = expected.ravel() * 60_000 >= 20  # check_categorical needs 20 expected per category
        pairs = drawn[parent] * table.shape[1] + drawn[child]
        observed = np.isin(pairs, np.flatnonzero(keep))
        check_categorical(np.searchsorted(np.flatnonzero(keep), pairs[observed]),
                          expected.ravel()[keep] / expected.ravel()[keep].sum(), what=f"({parent}, {child})")
    assert (consistent[("education", "race")] == 0).any()  # projection zeroes cells; they are never drawn
    impossible = np.flatnonzero(consistent[("education", "race")].ravel() == 0)
    assert not np.isin(drawn["education"] * 5 + drawn["race"], impossible).any()


def test_synthesize_never_reads_the_table_after_measuring(monkeypatch):
    measured = {}

    def measure_then_empty(data, marginals, epsilon, domain, rng=None):
        measured.update(noisy_marginals(data, marginals, epsilon, domain, rng=rng))
        for column in list(data.columns):  # a synthesize that looks again finds no record of the domain
            data[column] = "erased"
        return dict(measured)

    monkeypatch.setattr(dplib.synthetic.sampling, "noisy_marginals", measure_then_empty)
    table = synthesize(small_adult(), 3.0, ADULT_TREE, ADULT_DOMAIN, rng=np.random.default_rng(8))
    assert len(table) == int(round(consistent_marginals(measured)[ADULT_TREE[0]].sum())) > 2_900


def test_synthesize_rejects_a_bad_epsilon_before_reading_the_data():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        synthesize(None, 0.0, ADULT_TREE, ADULT_DOMAIN)
