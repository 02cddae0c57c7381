"""Randomized response for one bit: Warner's coins, the (p, q) form and the image form.

Each person randomizes their own answer before it leaves their device (the *local*
model), so no curator ever sees the truth. Every function is vectorized: each entry
of the input gets its own, independent coins.
"""

from __future__ import annotations

import numpy as np

from dplib._arrays import as_output
from dplib._validation import require_binary, require_probability
from dplib.accounting.channels import COIN_RR_EPSILON

__all__ = ["coin_rr", "COIN_RR_EPSILON", "rand_resp", "privatize_image"]


def coin_rr(x, rng=None):
    r"""Warner's two-coin protocol, one independent pair of coins per entry.

    Flip a coin: heads, answer truthfully; tails, flip a second coin and answer 1
    (yes) on heads, 0 (no) on tails.

    Parameters
    ----------
    x : int or array_like of {0, 1}
        True answers.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    int or numpy.ndarray of int
        Randomized answers, same shape as ``x``.

    Notes
    -----
    :math:`P(1 \mid 1) = 3/4,\ P(1 \mid 0) = 1/4`, so the protocol is
    :math:`\ln 3`-DP (``COIN_RR_EPSILON``).

    Examples
    --------
    >>> import numpy as np
    >>> coin_rr([1, 1, 0, 0, 1], rng=np.random.default_rng(3))
    array([1, 1, 1, 0, 1])
    """
    x = require_binary(x, "x")
    rng = np.random.default_rng(rng)
    first_heads = rng.random(x.shape) < 0.5
    second_heads = rng.random(x.shape) < 0.5
    return as_output(np.where(first_heads, x, second_heads).astype(np.int64))


def rand_resp(x, p: float, q: float, rng=None):
    r"""Binary randomized response: keep a 1 with probability ``p``, keep a 0 with probability ``q``.

    Notes
    -----
    Channel ``[[q, 1-q], [1-p, p]]`` (rows = true 0/1). Its exact epsilon is
    :func:`dplib.get_epsilon` ``(p, q)``.

    Examples
    --------
    >>> import numpy as np
    >>> rand_resp([1, 1, 0, 0], p=0.9, q=0.8, rng=np.random.default_rng(0))
    array([1, 1, 0, 0])
    """
    p = require_probability(p, "p")
    q = require_probability(q, "q")
    x = require_binary(x, "x")
    rng = np.random.default_rng(rng)
    u = rng.random(x.shape)
    # a 1 stays 1 when u < p; a 0 stays 0 when u < q, i.e. becomes 1 when u >= q
    return as_output(np.where(x == 1, u < p, u >= q).astype(np.int64))


def privatize_image(image, alpha: float, beta: float, rng=None) -> np.ndarray:
    r"""Randomize a black-and-white picture pixel by pixel.

    Each pixel is kept with probability ``alpha``; otherwise it is painted black (1)
    with probability ``beta`` or white (0) with probability ``1 - beta``.

    Notes
    -----
    :math:`P(\text{black}) = \alpha\,t + (1-\alpha)\beta` for a pixel of true value t;
    the channel is :func:`dplib.alpha_beta_epsilon` ``(alpha, beta)``-DP.

    Examples
    --------
    >>> import numpy as np
    >>> privatize_image(np.eye(3, dtype=int), alpha=0.5, beta=0.5, rng=np.random.default_rng(0))
    array([[0, 0, 0],
           [0, 1, 0],
           [1, 0, 0]])
    """
    alpha = require_probability(alpha, "alpha")
    beta = require_probability(beta, "beta")
    image = require_binary(image, "image")
    return as_output(privatize_image_unchecked(image, alpha, beta, np.random.default_rng(rng)))


def privatize_image_unchecked(image: np.ndarray, alpha: float, beta: float, rng: np.random.Generator) -> np.ndarray:
    """The draw of :func:`privatize_image` for checked arguments (the lecture widget calls it too)."""
    keep = rng.random(image.shape) < alpha
    paint_black = rng.random(image.shape) < beta
    return np.where(keep, image, paint_black).astype(np.int64)
