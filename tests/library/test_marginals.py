"""Tests for dplib.synthetic.marginals: counts over a public domain, their noisy and consistent forms, the TV error.

Randomized functions are checked on fixed seeds against their exact distributions with a false-failure
probability fixed in advance (dplib.testing); epsilon != 1 and several marginals, so a budget spent once per
marginal cannot hide.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dplib.estimation.kary_rr import project_to_simplex
from dplib.synthetic.marginals import consistent_marginals, marginal, marginal_errors, noisy_marginals
from dplib.testing import check_distribution, check_fraction

DOMAIN = {"colour": ("red", "green", "blue", "violet"), "size": ("S", "M", "L"), "shape": ("round", "square")}


def table(n=2_000, seed=0):
    """People whose colour is never violet: an empty category of the domain."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n), "size": rng.choice(["S", "M", "L"], n),
                         "shape": rng.choice(["round", "square"], n)})


# --- marginal ------------------------------------------------------------------------------------


def test_marginal_counts_every_cell_of_the_domain_in_the_order_asked():
    people = table()
    counts = marginal(people, ("colour", "size"), DOMAIN)
    expected = pd.crosstab(people["colour"], people["size"]).reindex(
        index=list(DOMAIN["colour"]), columns=list(DOMAIN["size"]), fill_value=0)
    assert counts.shape == (4, 3) and (counts == expected.to_numpy()).all()
    assert (counts[3] == 0).all()  # violet: in the domain, in nobody's record
    assert (marginal(people, ("size", "colour"), DOMAIN) == counts.T).all()
    assert marginal(people, ("colour", "size", "shape"), DOMAIN).sum(axis=2).tolist() == counts.tolist()
    assert marginal(people, "shape", DOMAIN).tolist() == people["shape"].value_counts()[["round", "square"]].tolist()


def test_marginal_ignores_categories_read_off_the_data():
    people = table()
    as_sample_categories = people.astype("category")  # categories inferred from the sample: no violet, sorted
    assert (marginal(as_sample_categories, ("colour",), DOMAIN) == marginal(people, ("colour",), DOMAIN)).all()


def test_marginal_of_an_empty_table_is_zeros():
    assert marginal(table().iloc[:0], ("colour", "shape"), DOMAIN).tolist() == [[0, 0]] * 4


@pytest.mark.parametrize(
    "data, columns, message",
    [
        (pd.DataFrame({"colour": ["red", "pink"]}), ("colour",), r"data\['colour'\] holds 'pink', which is not in the domain"),
        (pd.DataFrame({"colour": pd.Categorical(["red", None])}), ("colour",), r"data\['colour'\] holds nan"),
        (table(), ("weight",), "columns must be columns of the domain"),
        (table(), (), "columns must name one or more distinct columns"),
        (table(), ("size", "size"), "columns must name one or more distinct columns"),
        (pd.DataFrame({"size": ["S"]}), ("colour",), "data has no column 'colour'"),
    ],
)
def test_marginal_rejects_values_and_columns_outside_the_domain(data, columns, message):
    with pytest.raises(ValueError, match=message):
        marginal(data, columns, DOMAIN)


def test_marginal_rejects_a_bad_domain():
    with pytest.raises(ValueError, match="domain must be a non-empty dict"):
        marginal(table(), ("colour",), [("colour", "red")])
    with pytest.raises(ValueError, match="must list distinct possible values"):
        marginal(table(), ("colour",), {"colour": ("red", "red")})


# --- noisy marginals -----------------------------------------------------------------------------


def test_noisy_marginals_add_laplace_of_scale_m_over_epsilon_to_every_cell():
    people = table()
    wanted = [("colour", "size"), ("size", "shape"), ("colour",)]
    truth = {key: marginal(people, key, DOMAIN) for key in wanted}
    rng = np.random.default_rng(1)
    noise = []
    for _ in range(600):  # 24 cells a call
        noisy = noisy_marginals(people, wanted, 1.5, DOMAIN, rng=rng)
        assert list(noisy) == wanted
        noise += [(noisy[key] - truth[key]).ravel() for key in wanted]
    noise = np.concatenate(noise)
    check_distribution(noise, stats.laplace(scale=3 / 1.5).cdf, what="noise of 3 marginals at epsilon 1.5")
    check_fraction(noise[0::2] > noise[1::2], 0.5, what="neighbouring cells' noise independent")


def test_noisy_marginals_put_noise_on_the_empty_cells():
    people = table()
    noisy = [noisy_marginals(people, [("colour",)], 0.5, DOMAIN, rng=seed)[("colour",)][3] for seed in range(2_000)]
    check_distribution(noisy, stats.laplace(scale=2.0).cdf, what="noisy count of violet, which nobody is")


def test_noisy_marginals_repeat_with_a_seed_and_accept_a_single_column_name():
    first = noisy_marginals(table(), ["colour", ("size", "shape")], 2.0, DOMAIN, rng=5)
    second = noisy_marginals(table(), [("colour",), ("size", "shape")], 2.0, DOMAIN, rng=5)
    assert list(first) == [("colour",), ("size", "shape")]
    assert all(np.array_equal(first[key], second[key]) for key in first)


@pytest.mark.parametrize("epsilon", [0, -1.0, math.inf, math.nan, "1"])
def test_noisy_marginals_reject_a_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        noisy_marginals(table(), [("colour",)], epsilon, DOMAIN)


def test_noisy_marginals_reject_no_or_repeated_marginals():
    with pytest.raises(ValueError, match="marginals must list one or more distinct marginals"):
        noisy_marginals(table(), [], 1.0, DOMAIN)
    with pytest.raises(ValueError, match="marginals must list one or more distinct marginals"):
        noisy_marginals(table(), [("colour",), "colour"], 1.0, DOMAIN)


# --- consistent marginals ------------------------------------------------------------------------


def test_consistent_marginals_share_the_inverse_variance_total_and_are_projections():
    noisy = {("a",): np.array([120.5, -3.2, 40.1]), ("a", "b"): np.array([[60.0, 55.0, -8.0, 4.0],
                                                                          [-2.5, 1.0, -6.0, 0.5],
                                                                          [20.0, -9.0, 11.0, 14.0]])}
    n_hat = (noisy[("a",)].sum() / 3 + noisy[("a", "b")].sum() / 12) / (1 / 3 + 1 / 12)
    consistent = consistent_marginals(noisy)
    for key, counts in noisy.items():
        assert consistent[key].shape == counts.shape and (consistent[key] >= 0).all()
        assert consistent[key].sum() == pytest.approx(n_hat)
        assert np.allclose(consistent[key], project_to_simplex(counts.ravel(), n_hat).reshape(counts.shape))
    assert noisy[("a",)][1] == -3.2  # the input is left alone


def test_consistent_marginals_weigh_small_marginals_more():
    # a 2-cell marginal says 100, a 100-cell marginal 200: the total leans to the small one's (variance 2k b^2)
    consistent = consistent_marginals({("x",): np.array([50.0, 50.0]), ("y",): np.full(100, 2.0)})
    assert consistent[("x",)].sum() == pytest.approx((100 / 2 + 200 / 100) / (1 / 2 + 1 / 100))


def test_consistent_marginals_of_a_negative_total_are_zeros():
    consistent = consistent_marginals({("x",): np.array([-5.0, 1.0, -2.0])})
    assert consistent[("x",)].tolist() == [0.0, 0.0, 0.0]


def test_consistent_marginals_reject_what_is_not_noisy_counts():
    with pytest.raises(ValueError, match="noisy must be a non-empty dict"):
        consistent_marginals({})
    with pytest.raises(ValueError, match="must hold finite numbers"):
        consistent_marginals({("x",): np.array([1.0, np.nan])})


# --- marginal errors -----------------------------------------------------------------------------


def test_marginal_errors_are_the_tv_distance_of_shares_for_every_pair():
    real, synthetic = table(seed=1), table(n=700, seed=2)
    errors = marginal_errors(real, synthetic, DOMAIN)
    assert errors[["first", "second"]].values.tolist() == [["colour", "size"], ["colour", "shape"], ["size", "shape"]]
    for (first, second), tv in zip(errors[["first", "second"]].values, errors["tv_distance"]):
        p = marginal(real, (first, second), DOMAIN) / len(real)
        q = marginal(synthetic, (first, second), DOMAIN) / len(synthetic)
        assert tv == pytest.approx(0.5 * np.abs(p - q).sum())
        assert 0 <= tv <= 1


def test_marginal_errors_do_not_depend_on_the_synthetic_size():
    real, synthetic = table(seed=1), table(n=500, seed=3)
    once = marginal_errors(real, synthetic, DOMAIN)["tv_distance"]
    thrice = marginal_errors(real, pd.concat([synthetic] * 3), DOMAIN)["tv_distance"]
    assert np.allclose(once, thrice)
    assert (marginal_errors(real, real, DOMAIN)["tv_distance"] == 0).all()


def test_marginal_errors_see_a_category_missing_from_the_synthetic_table():
    real = pd.DataFrame({"colour": ["red", "violet"], "size": ["S", "S"], "shape": ["round", "round"]})
    synthetic = pd.DataFrame({"colour": ["red", "red"], "size": ["S", "S"], "shape": ["round", "round"]})
    assert marginal_errors(real, synthetic, DOMAIN)["tv_distance"].tolist() == [0.5, 0.5, 0.0]


def test_marginal_errors_need_rows():
    with pytest.raises(ValueError, match="real and synthetic must hold rows"):
        marginal_errors(table(), table().iloc[:0], DOMAIN)
