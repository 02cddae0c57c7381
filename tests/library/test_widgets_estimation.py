"""The estimation explorer (dplib.widgets.estimation): its view and its drawing, driven headlessly."""

from __future__ import annotations

import numpy as np
import pytest

import dplib
from dplib.estimation.experiments import apportion
from dplib.widgets.estimation import EstimationExplorer, adult_age_sex_counts, estimation_view
from dplib.widgets.laplace import LaplaceExplorer


def test_estimation_sliders_update_on_release():
    """Check that the simulation sliders use continuous_update=False and the cheap ones do not."""
    explorer = EstimationExplorer()
    assert explorer.epsilon.continuous_update is False and explorer.n.continuous_update is False
    assert LaplaceExplorer().epsilon.continuous_update is True


@pytest.mark.parametrize("epsilon, n", [(1.0, 1000), (0.1, 200), (4.0, 20_000)])
def test_estimation_bars_follow_dplib(epsilon, n):
    """Check the drawn true, raw, unbiased, clipped and projected counts and the +/- 2 sd error bars."""
    explorer = EstimationExplorer()
    explorer.epsilon.value = epsilon
    explorer.n.value = n
    view = explorer.view
    truth = apportion(adult_age_sex_counts(), n)
    assert np.array_equal(view.true_counts, truth) and truth.sum() == n
    people = np.repeat(np.arange(4), truth)
    reports = dplib.k_rand_resp(people, 4, epsilon, rng=np.random.default_rng(0))
    expected = dplib.estimate_krr_counts(reports, 4, epsilon)
    heights = [[bar.get_height() for bar in bars] for bars in explorer.bars]
    assert np.allclose(heights[0], truth)
    assert np.allclose(heights[1], np.bincount(reports, minlength=4))
    assert np.allclose(heights[2], expected)
    assert np.allclose(heights[3], np.maximum(expected, 0))
    assert np.allclose(heights[4], dplib.project_to_simplex(expected, n))
    assert sum(heights[4]) == pytest.approx(n)
    std = dplib.krr_count_std(truth, epsilon)
    segments = explorer.error_bars.get_segments()
    assert np.allclose([s[1, 1] - s[0, 1] for s in segments], 4 * std)
    assert np.allclose([(s[1, 1] + s[0, 1]) / 2 for s in segments], expected)
    assert f"projected {n:,}" in explorer.readout.value


def test_estimation_error_bars_shrink_with_epsilon_and_grow_like_sqrt_n():
    """Check that the error bars follow krr_count_std: smaller for larger epsilon, times 2 for 4n."""
    explorer = EstimationExplorer(epsilon=0.5, n=1000)
    wide = explorer.view.std.copy()
    explorer.epsilon.value = 2.0
    assert (explorer.view.std < wide).all()
    explorer.n.value = 4000
    narrow = explorer.view.std
    explorer.n.value = 1000
    assert np.allclose(narrow / explorer.view.std, 2.0, rtol=0.01)  # up to rounding people to categories


def test_estimation_clipping_inflates_the_total_projection_keeps_it():
    """Check, at small n and epsilon, that clipping adds people while projection keeps n."""
    explorer = EstimationExplorer(epsilon=0.1, n=200)
    view = explorer.view
    assert (view.estimates < 0).any(), "expected a negative estimate at n = 200, epsilon = 0.1 (seed 0)"
    assert view.clipped.sum() > view.n
    assert view.projected.sum() == pytest.approx(view.n)
    assert view.errors["projected"] <= view.errors["clipped"]


def test_apportion_sums_to_n():
    """Check that apportion splits n exactly, in proportion to the weights."""
    for n in (50, 999, 45_222):
        counts = apportion([8196, 14831, 6499, 15696], n)
        assert counts.sum() == n
        assert np.abs(counts - n * np.array([8196, 14831, 6499, 15696]) / 45222).max() < 1


def test_default_population_is_adult_age_sex():
    """Check that the default weights are the age x sex counts dplib.datasets gives."""
    counts = dplib.age_sex_categories().value_counts().sort_index().tolist()
    assert list(adult_age_sex_counts()) == counts == [8196, 14831, 6499, 15696]


def test_estimation_view_matches_dplib_and_is_seeded_by_rng():
    """Check the view against k_rand_resp, estimate_krr_counts and krr_count_std with the same rng."""
    view = estimation_view(0.8, 600, weights=[1, 2, 3], rng=np.random.default_rng(5))
    truth = apportion([1, 2, 3], 600)
    reports = dplib.k_rand_resp(np.repeat(np.arange(3), truth), 3, 0.8, rng=np.random.default_rng(5))
    assert np.array_equal(view.report_counts, np.bincount(reports, minlength=3))
    assert np.allclose(view.estimates, dplib.estimate_krr_counts(reports, 3, 0.8))
    assert np.allclose(view.std, dplib.krr_count_std(truth, 0.8))
    assert (view.p, view.q) == dplib.krr_probabilities(3, 0.8)
    with pytest.raises(ValueError, match="epsilon"):
        estimation_view(-1.0, 100)
