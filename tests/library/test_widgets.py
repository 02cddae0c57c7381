"""The explorers' shared rendering (dplib.widgets._render), checked on every lecture's explorer.

Explorers are driven headlessly: set ``.value`` on a control, check what is drawn.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dplib
import dplib.widgets
from dplib.widgets import EstimationExplorer, FairnessExplorer, ImageExplorer, LaplaceExplorer
from dplib.widgets._render import epsilon_text, nice_ceiling
from helpers.images import pixels

EXPLORERS = [LaplaceExplorer, ImageExplorer, EstimationExplorer, FairnessExplorer]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_explorer_displays_its_widget(cls):
    """Check that an explorer at the end of a cell displays as its ipywidgets box, with a PNG figure."""
    explorer = cls()
    bundle = explorer._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert explorer.image.format == "png" and bytes(explorer.image.value).startswith(b"\x89PNG")
    assert set(explorer.controls.values()) <= set(explorer.widget.children[0].children)


@pytest.mark.parametrize(
    "cls, control, value",
    [(LaplaceExplorer, "epsilon", 2.5), (ImageExplorer, "alpha", 0.8), (EstimationExplorer, "epsilon", 2.5),
     (FairnessExplorer, "epsilon", 2.5)],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_moving_a_slider_redraws_the_same_artists(cls, control, value):
    """Check that moving the main slider changes the figure but keeps the artists (updated in place)."""
    explorer = cls()
    artists_before = [list(ax.get_children()) for ax in explorer.figure.axes]
    png_before = bytes(explorer.image.value)
    getattr(explorer, control).value = value
    assert getattr(explorer.view, control) == pytest.approx(value)
    assert bytes(explorer.image.value) != png_before
    assert not np.array_equal(pixels(png_before), pixels(explorer.image.value))
    assert [list(ax.get_children()) for ax in explorer.figure.axes] == artists_before


@pytest.mark.parametrize(
    "cls, moves",
    [
        (LaplaceExplorer, {"epsilon": 0.2, "sensitivity": 4.5, "seed": 3}),
        (ImageExplorer, {"alpha": 0.9, "beta": 0.1, "seed": 5}),
        (EstimationExplorer, {"epsilon": 0.1, "n": 300, "seed": 1}),
        (FairnessExplorer, {"epsilon": 3.0, "Blue size": 400, "Red base rate": 0.4}),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_cached_rendering_matches_a_fresh_draw(cls, moves):
    """Check that after many moves the blitted PNG equals a fresh explorer's full draw of the same values."""
    explorer = cls()
    for name, value in moves.items():
        explorer.controls[name].value = value
    fresh = cls()
    for name, value in moves.items():
        fresh.controls[name].value = value
    fresh._backgrounds.clear()
    assert np.array_equal(pixels(explorer.png()), pixels(fresh.png()))


def test_nice_ceiling_snaps_up_to_steps():
    """Check that axis limits snap up to 1, 2 or 5 times a power of ten, never below the value."""
    for value in (1e-3, 0.23, 0.5, 0.51, 7.0, 10.0, 12.0, 999.0):
        limit = nice_ceiling(value)
        assert limit >= value
        assert limit / 10 ** math.floor(math.log10(limit)) in (1.0, 2.0, 5.0)
    assert nice_ceiling(0.0) == 1.0 and nice_ceiling(-3.0) == 1.0


def test_epsilon_text_is_a_number_or_inf():
    """Check the one epsilon format of titles and readouts."""
    assert epsilon_text(math.log(3)) == "1.099" and epsilon_text(math.inf) == "inf"


def test_package_reexports_every_lecture_module():
    """Check that dplib.widgets re-exports the public names of each lecture module, and dplib loads it lazily."""
    import importlib

    for name in ("laplace", "randomized_response", "estimation", "fairness"):
        module = importlib.import_module(f"dplib.widgets.{name}")
        for public in module.__all__:
            if public.endswith(("Explorer", "View", "_view")):
                assert getattr(dplib.widgets, public) is getattr(module, public)
    assert dplib.widgets is importlib.import_module("dplib.widgets")
