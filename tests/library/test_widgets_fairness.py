"""The fairness explorer (dplib.widgets.fairness): its view and its drawing, driven headlessly."""

from __future__ import annotations

import numpy as np
import pytest

import dplib
from dplib.widgets.fairness import FairnessExplorer, fairness_view


def test_fairness_bars_follow_group_outcome_probabilities():
    """Check that the drawn per-group probabilities are dplib.group_outcome_probabilities'."""
    explorer = FairnessExplorer()
    for epsilon in (0.05, 0.3, 2.0):
        explorer.epsilon.value = epsilon
        table = dplib.group_outcome_probabilities({"Blue": 30, "Red": 70}, {"Blue": 1, "Red": 9}, epsilon)
        assert [bar.get_height() for bar in explorer.majority_bars] == pytest.approx(list(table["majority"].iloc[0]))
        assert [bar.get_height() for bar in explorer.minority_bars] == pytest.approx(list(table["minority"].iloc[0]))
        assert list(explorer.epsilon_line.get_xdata()) == pytest.approx([epsilon, epsilon])
        curve_x, curve_y = explorer.curves["Blue"].get_data()
        grid = dplib.group_outcome_probabilities([30], [1], curve_x)["majority"][0]
        assert np.allclose(curve_y, grid)


def test_fairness_small_group_pays_and_equal_groups_do_not():
    """Check that the smaller group is misreported more, and equal groups have no gap."""
    explorer = FairnessExplorer(epsilon=0.1)
    majority = explorer.view.at_epsilon["majority"]
    assert majority["Blue"] < majority["Red"]
    assert f"gap = {explorer.view.gap:.3f}" in explorer.readout.value
    explorer.sizes["Blue"].value = 70
    explorer.base_rates["Blue"].value = 9 / 70
    assert explorer.view.gap == pytest.approx(0.0, abs=1e-12)
    assert explorer.majority_bars[0].get_height() == pytest.approx(explorer.majority_bars[1].get_height())


def test_fairness_group_controls_set_sizes_and_minorities():
    """Check that size and base-rate sliders set n and the (rounded, at most n/2) minority count."""
    explorer = FairnessExplorer()
    explorer.sizes["Red"].value = 200
    explorer.base_rates["Red"].value = 0.5
    assert int(explorer.view.sizes["Red"]) == 200 and int(explorer.view.minority_counts["Red"]) == 100
    assert explorer.view.at_epsilon.loc["Red", "majority"] == pytest.approx(0.5)
    assert "Red: 200 people, 100 with the rarer value" in explorer.readout.value


def test_fairness_sensitivity_mistake_is_shown():
    """Check that proportion scores with sensitivity 1 give near coin flips, and 1/n matches counts."""
    explorer = FairnessExplorer(epsilon=1.0)
    correct = explorer.view.at_epsilon["majority"].copy()
    explorer.scoring.value = "proportion (sensitivity 1/n)"
    assert np.allclose(explorer.view.at_epsilon["majority"], correct)
    explorer.scoring.value = "proportion, sensitivity 1 (a mistake)"
    assert (explorer.view.at_epsilon["majority"] < 0.65).all()


def test_fairness_explorer_rejects_too_many_groups():
    """Check that more groups than colours is an error naming the parameter."""
    with pytest.raises(ValueError, match="groups"):
        FairnessExplorer(groups={name: (10, 0.1) for name in "ABCDE"})


def test_fairness_view_rejects_unknown_scoring():
    """Check that an unknown scoring is an error naming the parameter."""
    with pytest.raises(ValueError, match="scoring"):
        fairness_view({"A": 10}, {"A": 0.1}, 1.0, scoring="median")
