"""Tests for dplib.plotting: each helper draws on the ax it is given (or a new one) and returns it.

Figures are rendered with the Agg backend (tests/conftest.py) and never need LaTeX.
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from dplib import plotting
from dplib.estimation.experiments import error_vs_epsilon, theoretical_krr_errors
from dplib.plotting import (
    plot_count_estimates,
    plot_error_vs_epsilon,
    plot_group_probabilities,
    plot_image,
    plot_neighbour_histograms,
)


@pytest.fixture(autouse=True)
def close_figures():
    """Start and end every test with no pyplot figure open (doctests run before, in any order, leave some)."""
    plt.close("all")
    yield
    plt.close("all")


EPSILON_INDEX = pd.Index([0.1, 1.0, 10.0], name="epsilon")
CALLS = {
    "plot_neighbour_histograms": lambda ax: plot_neighbour_histograms(
        np.random.default_rng(0).laplace(0, 1, 500), np.random.default_rng(1).laplace(1, 1, 500), ax=ax
    ),
    "plot_image": lambda ax: plot_image(np.eye(5), title="eye", ax=ax),
    "plot_count_estimates": lambda ax: plot_count_estimates([5, 3, 2], [4.5, 3.2, -0.3], std=[0.5, 0.5, 0.5], ax=ax),
    "plot_error_vs_epsilon": lambda ax: plot_error_vs_epsilon(
        pd.DataFrame({"l1_mean": [10.0, 1.0, 0.1], "l1_std": [1.0, 0.1, 0.01]}, index=EPSILON_INDEX), ax=ax
    ),
    "plot_group_probabilities": lambda ax: plot_group_probabilities(
        pd.DataFrame({"Blue": [0.6, 0.9, 1.0], "Red": [0.7, 0.99, 1.0]}, index=EPSILON_INDEX), ax=ax
    ),
}


def test_every_public_helper_is_covered():
    assert set(plotting.__all__) == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_helper_draws_on_the_given_ax_and_returns_it(name):
    fig, ax = plt.subplots()
    assert CALLS[name](ax) is ax
    assert ax.has_data() or ax.images
    assert plt.get_fignums() == [fig.number]  # no extra figure
    fig.canvas.draw()  # renders without LaTeX
    assert matplotlib.rcParams["text.usetex"] is False


@pytest.mark.parametrize("name", sorted(CALLS))
def test_helper_makes_an_ax_when_none_is_given(name):
    ax = CALLS[name](None)
    assert isinstance(ax, matplotlib.axes.Axes)
    assert ax.figure.number in plt.get_fignums()
    ax.figure.canvas.draw()
    assert matplotlib.rcParams["text.usetex"] is False


def test_helpers_do_not_turn_on_latex_in_their_text():
    for name, call in CALLS.items():
        ax = call(None)
        texts = [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
        texts += [t.get_text() for t in (ax.get_legend().get_texts() if ax.get_legend() else [])]
        assert all(text.get_usetex() is False for text in ax.texts), name
        assert not any("\\" in text for text in texts), name


def test_plot_neighbour_histograms_shares_bins_and_labels():
    ax = plot_neighbour_histograms(np.zeros(10), np.ones(10), bins=5, labels=("D", "D prime"))
    assert len(ax.patches) == 10
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["D", "D prime"]
    assert ax.get_xlabel() == "noisy answer"


def test_plot_image_hides_ticks_and_maps_one_to_black():
    ax = plot_image(np.eye(3))
    assert ax.get_xticks().size == 0 and ax.get_yticks().size == 0
    image = ax.images[0]
    assert image.get_clim() == (0, 1)
    assert image.cmap(image.norm(1))[:3] == (0.0, 0.0, 0.0)
    assert ax.get_title() == ""


def test_plot_count_estimates_draws_both_bars_and_labels():
    ax = plot_count_estimates([5, 3], [4.5, 3.2], labels=["young", "old"])
    assert len(ax.patches) == 4
    assert [t.get_text() for t in ax.get_xticklabels()] == ["young", "old"]


def test_plot_error_vs_epsilon_with_theory_is_log_log():
    table = error_vs_epsilon([100, 200, 300], [0.5, 1.0, 2.0], trials=5, rng=0)
    theory = theoretical_krr_errors([100, 200, 300], [0.5, 1.0, 2.0])
    ax = plot_error_vs_epsilon(table, theory, metric="l2")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.lines) >= 1 and "L2" in ax.get_ylabel()


def test_plot_group_probabilities_one_line_per_column():
    table = pd.DataFrame({"Blue": [0.6, 0.9], "Red": [0.7, 0.99], "Green": [0.5, 0.5]}, index=[0.1, 1.0])
    ax = plot_group_probabilities(table)
    assert [line.get_label() for line in ax.lines] == ["Blue", "Red", "Green"]
