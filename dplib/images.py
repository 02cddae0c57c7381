"""A black-and-white demo picture built in code, for the pixel randomized-response exercise."""

from __future__ import annotations

import numpy as np

from dplib._validation import require_positive_int

__all__ = ["demo_picture"]


def demo_picture(size: int = 64) -> np.ndarray:
    """A ``size`` x ``size`` smiley face: 1 is black, 0 is white.

    Drawn from circles on a grid, so it needs no image file and looks the same everywhere.

    Examples
    --------
    >>> picture = demo_picture()
    >>> picture.shape, picture.dtype
    ((64, 64), dtype('int64'))
    >>> round(float(picture.mean()), 3)
    0.27
    """
    size = require_positive_int(size, "size", minimum=16)
    y, x = np.mgrid[0:size, 0:size] / (size - 1) * 2 - 1  # coordinates in [-1, 1]
    radius = np.hypot(x, y)
    ring = (radius > 0.80) & (radius < 0.95)
    eyes = (np.hypot(x + 0.35, y + 0.3) < 0.13) | (np.hypot(x - 0.35, y + 0.3) < 0.13)
    mouth_radius = np.hypot(x, y + 0.05)
    smile = (mouth_radius > 0.45) & (mouth_radius < 0.58) & (y > 0.15)
    return (ring | eyes | smile).astype(np.int64)
