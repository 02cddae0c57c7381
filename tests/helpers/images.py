"""Reading the figures the lecture explorers draw: a PNG as an array of pixels."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def pixels(png: bytes) -> np.ndarray:
    """The RGB pixels of a PNG, as integers (so two figures can be subtracted as well as compared)."""
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB")).astype(int)
