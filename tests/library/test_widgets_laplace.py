"""The Laplace explorer (dplib.widgets.laplace): its view and its drawing, driven headlessly."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dplib
from dplib.widgets.laplace import LaplaceExplorer, laplace_view


def histogram_std(stairs) -> float:
    """Standard deviation of a density histogram drawn as a StepPatch."""
    values, edges, _ = stairs.get_data()
    mass = values * np.diff(edges)
    centers = (edges[:-1] + edges[1:]) / 2
    mean = np.sum(mass * centers) / mass.sum()
    return float(np.sqrt(np.sum(mass * (centers - mean) ** 2) / mass.sum()))


def test_laplace_spread_scales_with_sensitivity_over_epsilon():
    """Check that the histograms' spread is proportional to sensitivity / epsilon (Laplace sd = sqrt(2) b)."""
    explorer = LaplaceExplorer(epsilon=1.0, sensitivity=1.0)
    spreads = {}
    for epsilon, sensitivity in [(1.0, 1.0), (1.0, 2.0), (0.5, 1.0), (2.0, 2.0), (2.0, 1.0)]:
        explorer.epsilon.value = epsilon
        explorer.sensitivity.value = sensitivity
        scale = sensitivity / epsilon
        assert explorer.view.scale == pytest.approx(scale)
        assert np.std(explorer.view.answers_d) == pytest.approx(math.sqrt(2) * scale, rel=0.03)
        spreads[(epsilon, sensitivity)] = histogram_std(explorer.hist_d)
        assert spreads[(epsilon, sensitivity)] == pytest.approx(math.sqrt(2) * scale, rel=0.05)
    assert spreads[(1.0, 2.0)] / spreads[(1.0, 1.0)] == pytest.approx(2.0, rel=0.02)
    assert spreads[(0.5, 1.0)] / spreads[(1.0, 1.0)] == pytest.approx(2.0, rel=0.02)
    assert spreads[(2.0, 2.0)] == pytest.approx(spreads[(1.0, 1.0)], rel=0.02)


def test_laplace_neighbour_is_one_sensitivity_away():
    """Check that D' is drawn around f(D) + sensitivity, with the exact density curves."""
    explorer = LaplaceExplorer(value=50.0)
    explorer.sensitivity.value = 3.0
    view = explorer.view
    assert (view.value_d, view.value_d_prime) == (50.0, 53.0)
    assert np.median(view.answers_d_prime) - np.median(view.answers_d) == pytest.approx(3.0, abs=0.1)
    outputs = explorer.curve_d_prime.get_xdata()
    assert outputs[np.argmax(explorer.curve_d_prime.get_ydata())] == pytest.approx(53.0, abs=0.06)
    assert explorer.curve_d.get_ydata().max() == pytest.approx(1 / (2 * view.scale), rel=1e-3)
    assert "f(D') = 53" in explorer.scale_text.get_text()


@pytest.mark.parametrize("epsilon, sensitivity", [(0.1, 1.0), (0.7, 2.5), (3.0, 0.5), (10.0, 5.0)])
def test_laplace_privacy_loss_is_bounded_by_epsilon_and_reaches_it(epsilon, sensitivity):
    """Check that the drawn privacy loss lies within +/- epsilon and attains it, and the readout says so."""
    explorer = LaplaceExplorer()
    explorer.epsilon.value = epsilon
    explorer.sensitivity.value = sensitivity
    loss = explorer.loss_line.get_ydata()
    assert np.abs(loss).max() == pytest.approx(epsilon, rel=1e-9)
    assert loss.max() == pytest.approx(epsilon) and loss.min() == pytest.approx(-epsilon)
    assert list(explorer.bound_high.get_ydata()) == [epsilon, epsilon]
    assert f"max privacy loss over all outputs = {epsilon:.3f}" in explorer.readout.value
    assert f"&plusmn;{dplib.laplace_interval(sensitivity, epsilon, 0.05):.3g}" in explorer.readout.value
    low, high = explorer.ax_loss.get_ylim()
    assert low <= -epsilon and high >= epsilon


def test_laplace_view_is_reproducible_and_seeded():
    """Check that the same rng seed gives the same answers and another seed different ones."""
    a, b = laplace_view(1.0, 1.0, rng=np.random.default_rng(7)), laplace_view(1.0, 1.0, rng=7)
    assert np.array_equal(a.answers_d, b.answers_d)
    assert not np.array_equal(a.answers_d, laplace_view(1.0, 1.0, rng=8).answers_d)


def test_laplace_view_draws_what_laplace_mech_draws():
    """Check that the answers on D and D' are laplace_mech's with the same generator."""
    view = laplace_view(0.7, 2.5, value=10.0, samples=1000, rng=3)
    rng = np.random.default_rng(3)
    expected = dplib.laplace_mech(np.repeat([[10.0], [12.5]], 1000, axis=1), 2.5, 0.7, rng=rng)
    assert np.allclose(view.answers_d, expected[0]) and np.allclose(view.answers_d_prime, expected[1])
    assert view.interval_95 == pytest.approx(dplib.laplace_interval(2.5, 0.7, 0.05))


def test_laplace_view_checks_its_parameters_once_with_clear_messages():
    """Check that bad epsilon, sensitivity or samples raise a ValueError naming them."""
    with pytest.raises(ValueError, match="epsilon"):
        laplace_view(0.0, 1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_view(1.0, -1.0)
    with pytest.raises(ValueError, match="samples"):
        laplace_view(1.0, 1.0, samples=0)
