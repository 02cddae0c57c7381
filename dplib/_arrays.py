"""Small helpers for the 'scalar in, scalar out; array in, array of that shape out' rule."""

from __future__ import annotations

import numpy as np


def as_output(result: np.ndarray):
    """Return a 0-d array as a numpy scalar and any other array unchanged."""
    return result[()] if result.ndim == 0 else result
