"""The averaging-attack explorer of lecture 7, driven headlessly: set ``.value`` on a control, check the view."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dplib.widgets.composition import AveragingExplorer, averaging_view
from helpers.images import pixels

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


# --------------------------------------------------------------------------- the pure view


def test_view_counts_what_the_accountant_answers():
    view = averaging_view(k=50, epsilon=0.1, budget=1.0)
    assert (view.answered, view.refused) == (10, 40)  # ten spends of 0.1 fit 1.0 despite rounding
    assert view.spent == pytest.approx(1.0) and view.total_epsilon == pytest.approx(5.0)
    assert averaging_view(k=5, epsilon=2.0, budget=1.0).answered == 0
    assert math.isnan(averaging_view(k=5, epsilon=2.0, budget=1.0).budgeted_error)
    assert averaging_view(k=5, epsilon=0.1, budget=10.0).refused == 0


def test_view_running_mean_and_band():
    view = averaging_view(k=400, epsilon=0.5, budget=5.0, sensitivity=2.0, true_value=10.0, rng=3)
    assert view.answers.shape == view.running_mean.shape == view.band.shape == (400,)
    np.testing.assert_allclose(view.running_mean[-1], view.answers.mean())
    np.testing.assert_allclose(view.running_mean[0], view.answers[0])
    np.testing.assert_allclose(view.band, 2 * math.sqrt(2) * 4.0 / np.sqrt(np.arange(1, 401)))
    assert view.attack_error == pytest.approx(abs(view.answers.mean() - 10.0))
    assert view.budgeted_error == pytest.approx(abs(view.answers[:10].mean() - 10.0))


def test_view_more_queries_extend_the_same_answers():
    short, long = averaging_view(20, 0.5, 5.0, rng=4), averaging_view(200, 0.5, 5.0, rng=4)
    np.testing.assert_array_equal(long.answers[:20], short.answers)
    assert not np.array_equal(averaging_view(20, 0.5, 5.0, rng=5).answers, short.answers)


def test_view_chance_within_one_grows_with_k_and_epsilon():
    chances = [averaging_view(k, 0.5, 5.0).within_one for k in (1, 10, 100, 1000)]
    assert chances == sorted(chances) and chances[0] == pytest.approx(1 - math.exp(-0.5))
    assert chances[-1] > 0.99
    assert averaging_view(10, 2.0, 5.0).within_one > averaging_view(10, 0.5, 5.0).within_one


def test_the_mean_closes_in_like_one_over_root_k():
    """Over many seeds the error of the mean of k answers has std sqrt(2) b / sqrt(k), not b sqrt(2)."""
    errors = np.array([averaging_view(400, 0.5, 5.0, rng=s).running_mean[[0, 399]] - 100.0 for s in range(400)])
    first, last = errors.std(axis=0)
    assert 2.2 < first < 3.5  # one answer: sqrt(2) * 2 = 2.83
    assert 0.1 < last < 0.18  # 400 answers: 2.83 / 20 = 0.14


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"k": 0, "epsilon": 0.5, "budget": 1.0}, "k must be an integer >= 1"),
    ({"k": 5, "epsilon": 0.0, "budget": 1.0}, "epsilon must be a finite number > 0"),
    ({"k": 5, "epsilon": 0.5, "budget": -1.0}, "budget must be a finite number > 0"),
])
def test_view_rejects_bad_controls(kwargs, message):
    with pytest.raises(ValueError, match=message):
        averaging_view(**kwargs)


# --------------------------------------------------------------------------- the widget


def test_explorer_displays_its_widget():
    explorer = AveragingExplorer()
    bundle = explorer._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert bytes(explorer.image.value).startswith(b"\x89PNG")
    assert set(explorer.controls.values()) <= set(explorer.widget.children[0].children)


def test_moving_a_control_redraws_the_figure_and_the_readout():
    explorer = AveragingExplorer(k=200, epsilon=0.5, budget=5.0)
    before_png, before_text = pixels(explorer.image.value), explorer.readout.value
    assert "200 answers at epsilon 0.5" in before_text and "answers 10 and refuses 190" in before_text
    explorer.k.value = 1_000
    assert explorer.view.k == 1_000 and explorer.mean_line.get_xdata().size == 1_000
    after_png = pixels(explorer.image.value)
    assert before_png.shape == after_png.shape and (np.abs(before_png - after_png).sum(axis=2) > 0).mean() > 0.01
    assert "1000 answers" in explorer.readout.value


def test_budget_slider_moves_the_refused_region():
    explorer = AveragingExplorer(k=100, epsilon=0.5, budget=2.0)
    assert explorer.view.answered == 4
    assert explorer.refused_span.get_x() == pytest.approx(4.5)
    explorer.budget.value = 100.0
    assert explorer.view.refused == 0 and explorer.refused_span.get_width() == 0
    assert "refuses 0" in explorer.readout.value
    explorer.budget.value = 0.1
    assert "refuses every query" in explorer.readout.value


def test_epsilon_slider_changes_the_noise():
    explorer = AveragingExplorer(k=500, epsilon=0.1, budget=5.0, seed=1)
    wide = np.std(explorer.view.answers)
    explorer.epsilon.value = 2.0
    assert np.std(explorer.view.answers) < wide / 5  # scale 0.5 instead of 10
    assert explorer.ax.get_ylim() == pytest.approx((100 - 2.5, 100 + 2.5))


def test_sliders_offer_round_numbers_only():
    explorer = AveragingExplorer(epsilon=0.5, budget=5.0)
    assert 0.5 in explorer.epsilon.options and 5.0 in explorer.budget.options
    with pytest.raises(ValueError, match="budget must be one of"):
        AveragingExplorer(budget=4.0)


def test_seed_changes_only_the_draws():
    explorer = AveragingExplorer(k=50, seed=0)
    answers, answered = explorer.view.answers.copy(), explorer.view.answered
    explorer.seed.value = 1
    assert not np.array_equal(explorer.view.answers, answers) and explorer.view.answered == answered
