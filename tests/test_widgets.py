"""The lecture explorers, driven headlessly: set ``.value`` on a control, check what is drawn."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

import dplib
from dplib.images import demo_picture
from dplib.widgets import (
    ADULT_AGE_SEX_COUNTS,
    EstimationExplorer,
    FairnessExplorer,
    ImageExplorer,
    LaplaceExplorer,
    apportion,
    fairness_view,
    laplace_privacy_loss,
    laplace_view,
)

EXPLORERS = [LaplaceExplorer, ImageExplorer, EstimationExplorer, FairnessExplorer]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"))


def histogram_std(stairs) -> float:
    """Standard deviation of a density histogram drawn as a StepPatch."""
    values, edges, _ = stairs.get_data()
    mass = values * np.diff(edges)
    centers = (edges[:-1] + edges[1:]) / 2
    mean = np.sum(mass * centers) / mass.sum()
    return float(np.sqrt(np.sum(mass * (centers - mean) ** 2) / mass.sum()))


# --------------------------------------------------------------------------- all explorers


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


# --------------------------------------------------------------------------- Laplace


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


def test_laplace_privacy_loss_formula():
    """Check the privacy loss against the log-ratio of the Laplace densities."""
    outputs = np.linspace(-10, 10, 41)
    scale = 2.0 / 0.8
    expected = (-np.abs(outputs - 1.0) / scale) - (-np.abs(outputs - 3.0) / scale)
    assert np.allclose(laplace_privacy_loss(outputs, 1.0, 3.0, sensitivity=2.0, epsilon=0.8), expected)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_privacy_loss(outputs, 0.0, 1.0, sensitivity=1.0, epsilon=0.0)


def test_laplace_view_is_reproducible_and_seeded():
    """Check that the same seed gives the same answers and another seed different ones."""
    a, b = laplace_view(1.0, 1.0, seed=7), laplace_view(1.0, 1.0, seed=7)
    assert np.array_equal(a.answers_d, b.answers_d)
    assert not np.array_equal(a.answers_d, laplace_view(1.0, 1.0, seed=8).answers_d)


# --------------------------------------------------------------------------- image


@pytest.mark.parametrize("alpha, beta", [(0.5, 0.5), (0.8, 0.3), (0.2, 0.9), (0.6, 0.0), (1.0, 0.5), (0.05, 0.5)])
def test_image_epsilon_and_estimate_follow_dplib(alpha, beta):
    """Check the displayed epsilon (alpha_beta_epsilon), privatized picture and black-fraction estimate."""
    explorer = ImageExplorer()
    explorer.alpha.value = alpha
    explorer.beta.value = beta
    view = explorer.view
    expected_epsilon = dplib.alpha_beta_epsilon(alpha, beta)
    assert view.epsilon == expected_epsilon
    shown = "inf (no privacy)" if math.isinf(expected_epsilon) else f"{expected_epsilon:.3f}"
    assert f"epsilon = {shown}" in explorer.readout.value
    assert explorer.private_title.get_text().endswith(shown.split(" ")[0])
    expected_private = dplib.privatize_image(demo_picture(), alpha, beta, rng=np.random.default_rng(0))
    assert np.array_equal(explorer.private_image.get_array(), expected_private)
    estimate = dplib.estimate_black_fraction(expected_private, alpha, beta)
    assert view.estimated_fraction == pytest.approx(estimate)
    assert f"estimated from the privatized pixels {estimate:.3f}" in explorer.readout.value
    true_bar, estimate_bar = explorer.bars
    assert true_bar.get_height() == pytest.approx(demo_picture().mean())
    assert estimate_bar.get_height() == pytest.approx(estimate)


def test_image_warner_coins_are_ln3_and_estimate_is_close():
    """Check that alpha = beta = 1/2 shows ln 3 and an estimate within 6 sd of the true fraction."""
    explorer = ImageExplorer(alpha=0.5, beta=0.5)
    assert explorer.view.epsilon == pytest.approx(math.log(3))
    truth = explorer.view.true_fraction
    # observed ~ Binomial(4096, 0.5 t + 0.25) / 4096; the estimate is (observed - 0.25) / 0.5
    sd = math.sqrt((0.5 * truth + 0.25) * (0.75 - 0.5 * truth) / 4096) / 0.5
    for seed in range(5):
        explorer.seed.value = seed
        assert abs(explorer.view.estimated_fraction - truth) < 6 * sd


def test_image_alpha_zero_has_no_estimate():
    """Check that alpha = 0 (every pixel replaced) shows no estimate instead of failing."""
    explorer = ImageExplorer()
    explorer.alpha.value = 0.0
    assert math.isnan(explorer.view.estimated_fraction)
    assert "undefined" in explorer.readout.value
    assert explorer.view.epsilon == 0.0


def test_image_keeps_everything_at_alpha_one():
    """Check that alpha = 1 shows the true picture and an infinite epsilon."""
    explorer = ImageExplorer()
    explorer.alpha.value = 1.0
    assert np.array_equal(explorer.private_image.get_array(), demo_picture())
    assert "inf (no privacy)" in explorer.readout.value


# --------------------------------------------------------------------------- estimation


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
    truth = apportion(ADULT_AGE_SEX_COUNTS, n)
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


# --------------------------------------------------------------------------- fairness


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
