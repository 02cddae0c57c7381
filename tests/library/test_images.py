"""Tests for dplib.images: the demo picture for the pixel randomized-response exercise."""

import math

import numpy as np
import pytest

from dplib.images import demo_picture
from dplib.mechanisms.randomized_response import privatize_image


def test_default_picture():
    picture = demo_picture()
    assert picture.shape == (64, 64)
    assert picture.dtype == np.int64
    assert set(np.unique(picture)) == {0, 1}
    assert round(float(picture.mean()), 3) == 0.27


@pytest.mark.parametrize("size", [16, 17, 32, 100, 16.0])
def test_size(size):
    picture = demo_picture(size)
    assert picture.shape == (int(size), int(size))
    assert 0.2 < picture.mean() < 0.3  # the same drawing at any resolution


def test_picture_is_deterministic_and_a_fresh_array():
    first = demo_picture()
    np.testing.assert_array_equal(first, demo_picture())
    first[:] = 0
    assert demo_picture().any()


@pytest.mark.parametrize("size", [16, 33, 64])
def test_smiley_is_left_right_symmetric_with_white_corners(size):
    picture = demo_picture(size)
    np.testing.assert_array_equal(picture, picture[:, ::-1])
    assert picture[0, 0] == picture[0, -1] == picture[-1, 0] == picture[-1, -1] == 0
    assert not np.array_equal(picture, picture[::-1])  # a smile is not a frown


def test_picture_feeds_the_image_mechanism():
    private = privatize_image(demo_picture(), 0.5, 0.5, rng=0)
    assert private.shape == (64, 64)


@pytest.mark.parametrize("size", [15, 0, -64, 20.5, True, math.nan, "64", None])
def test_rejects_bad_size(size):
    with pytest.raises(ValueError, match="size must be an integer >= 16"):
        demo_picture(size)
