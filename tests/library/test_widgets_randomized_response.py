"""The image explorer (dplib.widgets.randomized_response): its view and its drawing, driven headlessly."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dplib
from dplib.images import demo_picture
from dplib.widgets.randomized_response import ImageExplorer, image_view


@pytest.mark.parametrize("alpha, beta", [(0.5, 0.5), (0.8, 0.3), (0.2, 0.9), (0.6, 0.0), (1.0, 0.5), (0.05, 0.5)])
def test_image_epsilon_and_estimate_follow_dplib(alpha, beta):
    """Check the displayed epsilon (alpha_beta_epsilon), privatized picture and black-fraction estimate."""
    explorer = ImageExplorer()
    explorer.alpha.value = alpha
    explorer.beta.value = beta
    view = explorer.view
    expected_epsilon = dplib.alpha_beta_epsilon(alpha, beta)
    assert view.epsilon == expected_epsilon
    shown = "inf" if math.isinf(expected_epsilon) else f"{expected_epsilon:.3f}"
    assert f"epsilon = {shown}" in explorer.readout.value
    assert explorer.private_title.get_text() == f"privatized, epsilon = {shown}"
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


def test_image_view_is_seeded_by_rng_and_checks_alpha_beta():
    """Check that image_view draws privatize_image's pixels with the same rng, and names bad parameters."""
    view = image_view(0.3, 0.6, rng=np.random.default_rng(11))
    assert np.array_equal(view.private, dplib.privatize_image(demo_picture(), 0.3, 0.6, rng=np.random.default_rng(11)))
    assert (view.p, view.q) == dplib.alpha_beta_to_p_q(0.3, 0.6)
    with pytest.raises(ValueError, match="alpha"):
        image_view(1.5, 0.5)
    with pytest.raises(ValueError, match="picture"):
        image_view(0.5, 0.5, picture=[[0, 2]])
