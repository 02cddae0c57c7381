"""Lecture 10's explorer, driven headlessly: the pure view against dplib's synthesis, the widget by its controls."""

from __future__ import annotations


import numpy as np
import pytest

from dplib.synthetic.marginals import consistent_marginals, marginal, marginal_errors, noisy_marginals
from dplib.synthetic.sampling import ADULT_DOMAIN, ADULT_TREE, adult_synthetic_data, sample_independent, synthesize
from dplib.widgets.synthetic_data import PAIRS, SyntheticDataExplorer, synthetic_view
from helpers.images import pixels

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_tree_view_is_dplibs_synthesis_from_the_same_seed():
    view = synthetic_view(0.7, "tree", ("age", "income"), seed=5)
    private, _ = adult_synthetic_data()
    table = synthesize(private, 0.7, ADULT_TREE, ADULT_DOMAIN, rng=np.random.default_rng(5))
    assert np.allclose(view.tv, marginal_errors(private, table, ADULT_DOMAIN)["tv_distance"])
    assert view.n_synthetic == len(table) and view.n_real == len(private)
    assert np.allclose(view.true_shares, marginal(private, ("age", "income"), ADULT_DOMAIN) / len(private))
    assert np.allclose(view.synthetic_shares, marginal(table, ("age", "income"), ADULT_DOMAIN) / len(table))
    assert view.synthetic_shares.shape == (6, 2) and view.pair_tv == view.tv[PAIRS.index(("age", "income"))]


def test_one_way_view_samples_independent_columns_from_the_five_marginals():
    view = synthetic_view(2.0, "one_way", seed=1)
    private, _ = adult_synthetic_data()
    rng = np.random.default_rng(1)
    one_way = consistent_marginals(noisy_marginals(private, [(c,) for c in ADULT_DOMAIN], 2.0, ADULT_DOMAIN, rng=rng))
    table = sample_independent(one_way, ADULT_DOMAIN, int(round(one_way[("age",)].sum())), rng=rng)
    assert np.allclose(view.tv, marginal_errors(private, table, ADULT_DOMAIN)["tv_distance"])
    assert view.marginals_measured == [(c,) for c in ADULT_DOMAIN]


def test_the_tree_keeps_its_edges_and_independence_loses_them():
    tree, independent = synthetic_view(1.0, "tree", seed=2), synthetic_view(1.0, "one_way", seed=2)
    edges = [PAIRS.index(edge) for edge in ((a, b) if (a, b) in PAIRS else (b, a) for a, b in ADULT_TREE)]
    assert (tree.tv[edges] < 0.02).all() and tree.mean_tv < independent.mean_tv
    assert independent.tv[PAIRS.index(("education", "income"))] > 0.05


def test_view_rejects_bad_parameters():
    with pytest.raises(ValueError, match="measured must be one of"):
        synthetic_view(1.0, "all")
    with pytest.raises(ValueError, match="pair must be one of"):
        synthetic_view(1.0, "tree", ("income", "education"))
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        synthetic_view(0.0)


def test_explorer_rejects_a_pair_that_is_not_one_of_the_ten():
    with pytest.raises(ValueError, match="pair must be one of"):
        SyntheticDataExplorer(pair=("income", "age"))


def test_explorer_displays_its_widget():
    explorer = SyntheticDataExplorer()
    assert explorer._repr_mimebundle_()[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert bytes(explorer.image.value).startswith(b"\x89PNG")
    assert set(explorer.controls.values()) <= set(explorer.widget.children[0].children)


@pytest.mark.parametrize("control, value", [("epsilon", 0.05), ("measured", "one_way"), ("seed", 7),
                                            ("pair", ("age", "education"))])
def test_moving_a_control_redraws_the_same_artists(control, value):
    explorer = SyntheticDataExplorer(epsilon=1.0)
    axes = (explorer.ax_errors, explorer.ax_true, explorer.ax_synthetic)
    artists_before = [list(ax.get_children()) for ax in axes]
    png_before, readout_before = bytes(explorer.image.value), explorer.readout.value
    getattr(explorer, control).value = value
    assert not np.array_equal(pixels(png_before), pixels(explorer.image.value))
    assert explorer.readout.value != readout_before
    assert [list(ax.get_children()) for ax in axes] == artists_before


def test_a_new_pair_relabels_the_pictures_and_follows_the_view():
    explorer = SyntheticDataExplorer(pair=("age", "sex"))
    explorer.pair.value = ("age", "income")  # the same shape, other labels: the background must not be reused
    assert [t.get_text() for t in explorer.ax_true.get_xticklabels()] == list(ADULT_DOMAIN["income"])
    assert explorer.ax_true.get_xlabel() == "income"
    fresh = SyntheticDataExplorer(pair=("age", "income"))
    assert np.array_equal(pixels(explorer.image.value), pixels(fresh.image.value))  # the new labels are drawn
    assert np.allclose(explorer.images[1].get_array(), explorer.view.synthetic_shares)
    assert [bar.get_width() for bar in explorer.bars.patches] == pytest.approx(explorer.view.tv.tolist())
    assert "age x income" in explorer.readout.value and "add/remove" in explorer.readout.value
