"""Privacy parameters of randomized-response channels, and conversions between them.

A local randomizer with finitely many inputs and outputs is a *channel matrix*
``M[x, y] = P(output y | input x)`` (rows = inputs, columns = outputs, each row sums
to 1). It is epsilon-DP exactly when, within every output column, no two entries are
more than a factor ``e^epsilon`` apart:

    epsilon(M) = max_y  max_{x, x'}  ln( M[x, y] / M[x', y] ).

For binary randomized response "keep a 1 with probability p, keep a 0 with probability
q" the matrix is ``[[q, 1 - q], [1 - p, p]]`` (row 0 = input 0).

Names: the exact epsilon of a mechanism is ``<mechanism>_epsilon`` (:func:`channel_epsilon`
of a matrix, :func:`alpha_beta_epsilon` of the image channel, ``COIN_RR_EPSILON``, and
:func:`dplib.uniform_noise_epsilon`); converters read ``<a>_to_<b>``
(:func:`alpha_beta_to_p_q`); ``<mechanism>_channel`` builds a matrix and
:func:`krr_probabilities` its two entries. :func:`get_epsilon` (binary randomized
response, ``rr_channel``'s epsilon) and :func:`get_p_q` keep the names the 04 exercise API
gives them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from dplib._validation import require_epsilon, require_k, require_numeric_array, require_probability

__all__ = [
    "rr_channel",
    "channel_epsilon",
    "get_epsilon",
    "get_p_q",
    "krr_probabilities",
    "krr_channel",
    "alpha_beta_to_p_q",
    "alpha_beta_epsilon",
    "COIN_RR_EPSILON",
]

#: Epsilon of Warner's two-coin protocol: P(yes | yes) / P(yes | no) = (3/4) / (1/4) = 3.
COIN_RR_EPSILON: float = math.log(3.0)


def rr_channel(p: float, q: float) -> np.ndarray:
    """Channel matrix of binary randomized response (keep 1 w.p. ``p``, keep 0 w.p. ``q``).

    Examples
    --------
    >>> rr_channel(0.75, 0.6)
    array([[0.6 , 0.4 ],
           [0.25, 0.75]])
    """
    p = require_probability(p, "p")
    q = require_probability(q, "q")
    return np.array([[q, 1.0 - q], [1.0 - p, p]])


def channel_epsilon(matrix) -> float:
    r"""Exact epsilon of a row-stochastic channel matrix (rows = inputs, columns = outputs).

    Parameters
    ----------
    matrix : array_like, shape (n_inputs, n_outputs)
        ``matrix[x, y] = P(y | x)``; entries in [0, 1], rows summing to 1.

    Returns
    -------
    float
        :math:`\max_y \ln(\max_x M_{xy} / \min_x M_{xy})`; columns that are all zero
        are ignored (that output never happens); a column holding both a zero and a
        positive entry gives ``inf``.

    Examples
    --------
    >>> round(channel_epsilon([[0.75, 0.25], [0.25, 0.75]]), 6) == round(math.log(3), 6)
    True
    >>> channel_epsilon([[1.0, 0.0], [0.5, 0.5]])
    inf
    """
    matrix = require_numeric_array(matrix, "matrix")
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(f"matrix must be 2-D (rows = inputs, columns = outputs), got shape {matrix.shape}")
    if (matrix < 0).any() or (matrix > 1).any():
        raise ValueError("matrix must hold probabilities in [0, 1]")
    if not np.allclose(matrix.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError(f"matrix rows must each sum to 1, got row sums {matrix.sum(axis=1)}")
    column_max = matrix.max(axis=0)
    column_min = matrix.min(axis=0)
    used = column_max > 0
    if (column_min[used] == 0).any():
        return math.inf
    return float(np.max(np.log(column_max[used]) - np.log(column_min[used]), initial=0.0))


def get_epsilon(p: float, q: float) -> float:
    r"""Exact epsilon of binary randomized response, for any p and q in [0, 1].

    Notes
    -----
    With :math:`P(1|1) = p,\ P(1|0) = 1-q,\ P(0|0) = q,\ P(0|1) = 1-p`,

    .. math:: \varepsilon = \max\left(\left|\ln\frac{p}{1-q}\right|,\ \left|\ln\frac{q}{1-p}\right|\right).

    The familiar :math:`\ln\frac{p}{1-q}` alone is only right when :math:`1/2 \le p \le q`
    (e.g. it gives :math:`\ln 2.25` instead of :math:`\ln 6` for :math:`p = 0.9,\ q = 0.6`),
    and :math:`\max(\ln\frac{p}{1-q}, \ln\frac{q}{1-p})` only when :math:`p + q \ge 1`
    (it is negative for :math:`p, q < 1/2`).

    Examples
    --------
    >>> round(get_epsilon(0.75, 0.75), 12) == round(math.log(3), 12)
    True
    >>> round(get_epsilon(0.25, 0.25), 12) == round(math.log(3), 12)
    True
    """
    return channel_epsilon(rr_channel(p, q))


def get_p_q(epsilon: float) -> tuple[float, float]:
    r"""The symmetric choice ``p = q = e^eps / (1 + e^eps)`` that gives exactly ``epsilon``.

    Examples
    --------
    >>> get_p_q(math.log(3))
    (0.75, 0.75)
    """
    epsilon = require_epsilon(epsilon)
    p = float(expit(epsilon))  # e^eps / (1 + e^eps), computed without overflow
    return p, p


def krr_probabilities(k: int, epsilon: float) -> tuple[float, float]:
    r"""Truth probability and per-value lie probability of k-ary randomized response.

    Notes
    -----
    .. math:: p = \frac{e^\varepsilon}{e^\varepsilon + k - 1}, \qquad
              q = \frac{1}{e^\varepsilon + k - 1},

    so :math:`p / q = e^\varepsilon` and :math:`p + (k-1) q = 1`. Computed with
    :math:`e^{-\varepsilon}` so a large epsilon does not overflow.

    Examples
    --------
    >>> krr_probabilities(4, math.log(3))
    (0.5, 0.16666666666666666)
    """
    k = require_k(k)
    epsilon = require_epsilon(epsilon)
    shrink = math.exp(-epsilon)
    denominator = 1.0 + (k - 1) * shrink
    return 1.0 / denominator, shrink / denominator


def krr_channel(k: int, epsilon: float) -> np.ndarray:
    """k x k channel matrix of k-ary randomized response: ``p`` on the diagonal, ``q`` elsewhere.

    Examples
    --------
    >>> krr_channel(3, math.log(2))
    array([[0.5 , 0.25, 0.25],
           [0.25, 0.5 , 0.25],
           [0.25, 0.25, 0.5 ]])
    """
    p, q = krr_probabilities(k, epsilon)
    matrix = np.full((k, k), q)
    np.fill_diagonal(matrix, p)
    return matrix


def alpha_beta_to_p_q(alpha: float, beta: float) -> tuple[float, float]:
    r"""The (p, q) of the image channel: keep w.p. ``alpha``, else paint black (1) w.p. ``beta``.

    Notes
    -----
    .. math:: p = P(1|1) = \alpha + (1-\alpha)\beta, \qquad q = P(0|0) = \alpha + (1-\alpha)(1-\beta).

    Examples
    --------
    >>> alpha_beta_to_p_q(0.5, 0.5)
    (0.75, 0.75)
    """
    alpha = require_probability(alpha, "alpha")
    beta = require_probability(beta, "beta")
    return alpha + (1 - alpha) * beta, alpha + (1 - alpha) * (1 - beta)


def alpha_beta_epsilon(alpha: float, beta: float) -> float:
    """Exact epsilon of the image channel (``ln 3`` at alpha = beta = 1/2).

    Examples
    --------
    >>> round(alpha_beta_epsilon(0.5, 0.5), 12) == round(math.log(3), 12)
    True
    >>> alpha_beta_epsilon(1.0, 0.5)
    inf
    """
    return get_epsilon(*alpha_beta_to_p_q(alpha, beta))
