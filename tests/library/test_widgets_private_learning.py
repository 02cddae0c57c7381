"""Lecture 09's explorer, driven headlessly: the pure view against dplib's DP-GD, the widget by its controls.

The explorers here train on 2,000 people (the lecture's uses 10,000) to keep the tests fast.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dplib.accounting.dp_gd import dp_gd_epsilon
from dplib.learning.logistic_model import adult_design_matrices, logistic_accuracy, nonprivate_logistic_regression
from dplib.learning.noisy_gd import noisy_gradient_descent
from dplib.widgets.private_learning import PrivateLearningExplorer, private_learning_view
from helpers.images import pixels

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PEOPLE = 2_000


@pytest.fixture(scope="module")
def data():
    return adult_design_matrices(PEOPLE)


def test_view_is_the_run_of_dplib_with_the_same_seed(data):
    X_train, y_train, X_test, y_test = data
    view = private_learning_view(0.5, 40.0, 60, learning_rate=1.5, seed=3, max_steps=100, train_size=PEOPLE)
    # the published model: 60 steps from the same seed (the explorer's longer run starts the same way)
    theta = noisy_gradient_descent(X_train, y_train, 0.5, 40.0, 60, 1.5, rng=np.random.default_rng(3))
    assert view.final_accuracy == pytest.approx(logistic_accuracy(theta, X_test, y_test), abs=1e-12)
    no_noise = noisy_gradient_descent(X_train, y_train, 0.5, 0.0, 60, 1.5)
    assert view.accuracy_without_noise[-1] == pytest.approx(logistic_accuracy(no_noise, X_test, y_test), abs=1e-12)
    baseline = logistic_accuracy(nonprivate_logistic_regression(X_train, y_train), X_test, y_test)
    assert view.baseline_accuracy == baseline and view.majority_accuracy == pytest.approx(np.mean(y_test == 0))
    assert view.checkpoints[0] == 0 and view.checkpoints[-1] == 60 and (np.diff(view.checkpoints) > 0).all()
    assert view.accuracy[0] == pytest.approx(view.majority_accuracy)  # theta_0 = 0 predicts <=50K for everybody


def test_epsilon_is_read_under_substitution_only():
    """The run divides every step by len(X): only the substitution epsilon holds, and only it is shown."""
    view = private_learning_view(1.0, 107.0, 100, train_size=PEOPLE)
    assert view.epsilon == pytest.approx(dp_gd_epsilon(107.0, 100, 1e-6, "substitute"))
    assert view.epsilon == pytest.approx(1.0, abs=0.01)
    assert not any("add_remove" in field for field in vars(view))
    silent = private_learning_view(1.0, 0.0, 100, train_size=PEOPLE)
    assert math.isinf(silent.epsilon)


def test_more_noise_costs_accuracy_and_buys_privacy():
    quiet = private_learning_view(1.0, 20.0, 100, train_size=PEOPLE)
    loud = private_learning_view(1.0, 2_000.0, 100, train_size=PEOPLE)
    assert loud.epsilon < quiet.epsilon / 50
    assert loud.final_accuracy < quiet.final_accuracy - 0.02


def test_view_rejects_bad_parameters():
    with pytest.raises(ValueError, match="steps must be an integer <= max_steps"):
        private_learning_view(1.0, 10.0, 301, max_steps=300, train_size=PEOPLE)
    with pytest.raises(ValueError, match="clip_norm must be a finite number > 0"):
        private_learning_view(0.0, 10.0, 10, train_size=PEOPLE)
    with pytest.raises(ValueError, match="noise_multiplier must be a finite number >= 0"):
        private_learning_view(1.0, -1.0, 10, train_size=PEOPLE)


def test_explorer_displays_its_widget():
    explorer = PrivateLearningExplorer(train_size=PEOPLE, max_steps=100)
    assert explorer._repr_mimebundle_()[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert bytes(explorer.image.value).startswith(b"\x89PNG")
    assert set(explorer.controls.values()) <= set(explorer.widget.children[0].children)
    assert "substitution neighbours" in explorer.readout.value and "add/remove" not in explorer.readout.value


@pytest.mark.parametrize("control, value", [("clip_norm", 0.3), ("noise_multiplier", 400.0), ("steps", 40), ("seed", 5)])
def test_moving_a_control_redraws_the_same_artists(control, value):
    explorer = PrivateLearningExplorer(noise_multiplier=100.0, steps=80, train_size=PEOPLE, max_steps=100)
    artists_before = list(explorer.ax.get_children())
    png_before, readout_before = bytes(explorer.image.value), explorer.readout.value
    getattr(explorer, control).value = value
    assert not np.array_equal(pixels(png_before), pixels(explorer.image.value))
    assert explorer.readout.value != readout_before
    assert list(explorer.ax.get_children()) == artists_before


def test_steps_follow_the_slider_and_the_readout_shows_epsilon():
    explorer = PrivateLearningExplorer(noise_multiplier=107.0, steps=100, train_size=PEOPLE, max_steps=100)
    assert "epsilon = 1 at delta = 1e-06" in explorer.readout.value.replace("1.00", "1")
    assert "substitution neighbours" in explorer.readout.value and "add/remove" not in explorer.readout.value
    explorer.steps.value = 25
    x, y = explorer.end_marker.get_data()
    assert x[0] == 25 and y[0] == pytest.approx(explorer.view.final_accuracy)
    assert explorer.view.epsilon == pytest.approx(dp_gd_epsilon(107.0, 25, 1e-6, "substitute"))
    assert explorer.readout.value.startswith("T = 25 steps")
