"""k-ary (generalized) randomized response for a value in ``0..k-1``."""

from __future__ import annotations

import numpy as np

from dplib._arrays import as_output
from dplib._validation import require_categories, require_k
from dplib.accounting.channels import krr_probabilities

__all__ = ["k_rand_resp"]


def k_rand_resp(categories, k: int, epsilon: float, rng=None):
    r"""Report the true category with probability ``p``, else a uniformly random *other* one.

    Parameters
    ----------
    categories : int or array_like of int
        True values, each in ``0..k-1``.
    k : int
        Number of categories, >= 2.
    epsilon : float
        Privacy parameter, finite and > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    int or numpy.ndarray of int
        Reports, same shape as ``categories``.

    Notes
    -----
    .. math:: P(y \mid x) = \begin{cases} p = \frac{e^\varepsilon}{e^\varepsilon + k - 1} & y = x \\
                                           q = \frac{1}{e^\varepsilon + k - 1} & y \ne x \end{cases}

    A lie is ``(x + U) mod k`` with ``U`` uniform on ``1..k-1``: uniform over the
    ``k - 1`` other values and never the truth. The ratio ``p / q = e^epsilon``.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for
    frequency estimation", USENIX Security 2017.

    Examples
    --------
    >>> import numpy as np
    >>> k_rand_resp([0, 1, 2, 3], k=4, epsilon=2.0, rng=np.random.default_rng(0))
    array([0, 1, 2, 3])
    """
    p, _ = krr_probabilities(k, epsilon)
    k = require_k(k)
    categories = require_categories(categories, k)
    return as_output(k_rand_resp_unchecked(categories, k, p, np.random.default_rng(rng)))


def k_rand_resp_unchecked(categories: np.ndarray, k: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """The draw of :func:`k_rand_resp` for checked arguments (the lecture widget calls it too)."""
    truthful = rng.random(categories.shape) < p
    shift = rng.integers(1, k, size=categories.shape)
    return np.where(truthful, categories, (categories + shift) % k)
