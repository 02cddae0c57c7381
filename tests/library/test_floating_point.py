"""dplib.attacks.floating_point: the textbook sampler's gaps, found exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dplib.attacks.floating_point import UNIFORM_STEPS, can_produce, textbook_laplace, textbook_laplace_output


def test_the_sampler_is_its_arithmetic_on_the_drawn_integer():
    uniforms = np.random.default_rng(3).random(1_000)
    steps = (uniforms * 2.0**53).astype(np.int64)
    assert np.array_equal(steps * 2.0**-53, uniforms)
    assert np.array_equal(textbook_laplace(np.full(1_000, 2.5), 0.7, rng=3), textbook_laplace_output(steps, 2.5, 0.7))
    assert textbook_laplace(2.5, 0.7, size=(2, 3), rng=0).shape == (2, 3)


def test_the_sampler_follows_the_laplace_distribution():
    noise = textbook_laplace(np.zeros(20_000), 1.5, rng=4)
    assert stats.kstest(noise, stats.laplace(scale=1.5).cdf).pvalue > 1e-3


@pytest.mark.parametrize("value, scale", [(0.0, 1.0), (1.0, 1.0), (40.0, 0.3), (-7.25, 3.3)])
def test_the_output_never_decreases_with_the_random_integer(value, scale):
    """The premise of the binary search, on 200,000 random runs of 8 neighbouring integers (and both ends)."""
    starts = np.random.default_rng(5).integers(0, UNIFORM_STEPS - 8, 200_000)
    outputs = textbook_laplace_output(starts[:, None] + np.arange(8), value, scale)
    assert (np.diff(outputs, axis=1) >= 0).all()
    ends = textbook_laplace_output(np.array([0, 1, UNIFORM_STEPS // 2, UNIFORM_STEPS - 1]), value, scale)
    assert ends[0] == -math.inf and ends[2] == value and (np.diff(ends) > 0).all()


def test_can_produce_agrees_with_a_brute_force_search_around_the_inverse():
    rng = np.random.default_rng(6)
    produced = textbook_laplace(np.zeros(300), 1.0, rng=rng)
    targets = np.concatenate([produced, np.nextafter(produced, np.inf), produced + 1.0])
    for value in (0.0, 1.0):
        noise = targets - value
        uniform = 0.5 + np.sign(noise) * -np.expm1(-np.abs(noise)) / 2
        centre = np.round(uniform * 2.0**53).astype(np.int64)
        window = np.clip(centre[:, None] + np.arange(-64, 65), 0, UNIFORM_STEPS - 1)
        brute = (textbook_laplace_output(window, value, 1.0) == targets[:, None]).any(axis=1)
        assert np.array_equal(can_produce(targets, value, 1.0), brute)


def test_most_outputs_reveal_the_input_next_to_small_answers():
    from_zero = textbook_laplace(np.zeros(4_000), 1.0, rng=7)
    assert can_produce(from_zero, 0.0, 1.0).all()
    revealing = ~can_produce(from_zero, 1.0, 1.0)
    assert 0.75 < revealing.mean() < 0.85  # Mironov's attack: about 80% at scale 1
    assert can_produce(2.5, 0.0, 1.0).shape == ()


def test_bad_random_integers_are_refused():
    with pytest.raises(ValueError, match="k must hold integers in 0 .. 2\\*\\*53 - 1"):
        textbook_laplace_output(np.array([UNIFORM_STEPS]), 0.0, 1.0)
    with pytest.raises(ValueError, match="k must hold integers"):
        textbook_laplace_output(0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        textbook_laplace(0.0, -1.0)
