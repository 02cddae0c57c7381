"""Lecture 08's explorer, driven headlessly: the pure view against the formulas, the widget by its controls."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dplib.accounting.zcdp import advanced_composition_epsilon, zcdp_to_epsilon
from dplib.mechanisms.gaussian import analytic_gaussian_sigma
from dplib.widgets.approximate_dp import ACCOUNTINGS, CompositionExplorer, composition_view
from helpers.images import pixels

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_view_matches_the_three_formulas():
    view = composition_view(0.2, 1e-8, 250, delta_total=1e-5)
    sigma = analytic_gaussian_sigma(1.0, 0.2, 1e-8)
    assert view.sigma == pytest.approx(sigma)
    assert view.at_k["basic"] == pytest.approx(250 * 0.2)
    assert view.at_k["advanced"] == pytest.approx(advanced_composition_epsilon(0.2, 250, 1e-5))
    assert view.at_k["zcdp"] == pytest.approx(zcdp_to_epsilon(250 / (2 * sigma**2), 1e-5))
    assert view.deltas == pytest.approx({"basic": 250e-8, "advanced": 250e-8 + 1e-5, "zcdp": 1e-5})
    assert view.ks[0] == 1 and view.ks[-1] == 1000 and (np.diff(view.ks) > 0).all()
    for name in ACCOUNTINGS:  # every curve grows with k
        assert (np.diff(view.totals[name]) > 0).all()


def test_view_shows_who_wins_where():
    few, many = composition_view(0.1, 1e-7, 2), composition_view(0.1, 1e-7, 1000)
    assert few.at_k["basic"] < few.at_k["advanced"]  # advanced composition only pays off at scale
    assert many.at_k["advanced"] < many.at_k["basic"]
    assert many.best == "zcdp" and many.at_k["zcdp"] < many.at_k["basic"] / 10
    large = composition_view(1.5, 1e-7, 1000)  # large epsilon: the second term makes advanced worse than basic
    assert large.at_k["advanced"] > large.at_k["basic"]


def test_view_rejects_bad_parameters():
    with pytest.raises(ValueError, match="k must be an integer <= max_k"):
        composition_view(0.1, 1e-7, 2000, max_k=1000)
    with pytest.raises(ValueError, match="delta"):
        composition_view(0.1, 0.0, 10)
    with pytest.raises(ValueError, match="epsilon"):
        composition_view(-0.1, 1e-7, 10)


def test_explorer_displays_its_widget():
    explorer = CompositionExplorer()
    bundle = explorer._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert bytes(explorer.image.value).startswith(b"\x89PNG")
    assert set(explorer.controls.values()) <= set(explorer.widget.children[0].children)


@pytest.mark.parametrize("control, value", [("k", 700), ("epsilon", 0.5), ("delta", 1e-10), ("delta_total", 1e-3)])
def test_moving_a_control_redraws_the_same_artists(control, value):
    explorer = CompositionExplorer()
    artists_before = list(explorer.ax.get_children())
    png_before, readout_before = bytes(explorer.image.value), explorer.readout.value
    getattr(explorer, control).value = value
    assert getattr(explorer.view, control) == pytest.approx(value, rel=1e-9)
    assert not np.array_equal(pixels(png_before), pixels(explorer.image.value))
    assert explorer.readout.value != readout_before
    assert list(explorer.ax.get_children()) == artists_before


def test_readout_and_markers_follow_k():
    explorer = CompositionExplorer(epsilon=0.1, delta=1e-7, k=10)
    explorer.k.value = 1000
    for name in ACCOUNTINGS:
        x, y = explorer.markers[name].get_data()
        assert x[0] == 1000 and y[0] == pytest.approx(explorer.view.at_k[name])
    assert "1000 queries" in explorer.readout.value and "smallest: zCDP" in explorer.readout.value
    assert math.isclose(explorer.k_line.get_xdata()[0], 1000)
