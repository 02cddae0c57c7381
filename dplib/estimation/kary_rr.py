"""Estimators for k-ary randomized response: unbiased counts, their spread, and a valid histogram.

k-RR reports the truth with probability p and each of the k-1 other values with
probability q (:func:`dplib.krr_probabilities`); the counts of reports are biased toward
n/k, and :func:`estimate_krr_counts` inverts that bias. The binary estimators are in
:mod:`dplib.estimation.binary_rr`.
"""

from __future__ import annotations

import numpy as np

from dplib._validation import require_categories, require_k, require_nonnegative, require_numeric_array
from dplib.accounting.channels import krr_probabilities

__all__ = ["estimate_krr_counts", "krr_count_std", "project_to_simplex"]


def estimate_krr_counts(reports, k: int, epsilon: float) -> np.ndarray:
    r"""Unbiased counts of each category from k-ary randomized response reports.

    Notes
    -----
    With :math:`c_j` reports of value j out of n,
    :math:`E[c_j] = p\,n_j + q\,(n - n_j)`, hence

    .. math:: \hat n_j = \frac{c_j - q\,n}{p - q}.

    Estimates may be negative; see :func:`project_to_simplex`.

    Examples
    --------
    >>> import math
    >>> estimate_krr_counts([0, 0, 1, 2], k=3, epsilon=math.log(2))
    array([4., 0., 0.])
    """
    p, q = krr_probabilities(k, epsilon)
    k = require_k(k)
    reports = require_categories(reports, k, "reports").ravel()
    return unbias_krr_counts(np.bincount(reports, minlength=k), p, q)


def unbias_krr_counts(observed: np.ndarray, p: float, q: float) -> np.ndarray:
    """``(c_j - q n) / (p - q)`` from the counts of reports ``c`` (checked by the caller)."""
    return (observed - q * observed.sum()) / (p - q)


def krr_count_std(true_counts, epsilon: float) -> np.ndarray:
    r"""Standard deviation of each :func:`estimate_krr_counts` entry for the given true counts.

    Notes
    -----
    :math:`\mathrm{Var}(c_j) = n_j p(1-p) + (n-n_j) q(1-q)` and
    :math:`\mathrm{sd}(\hat n_j) = \sqrt{\mathrm{Var}(c_j)} / (p - q)`.

    Examples
    --------
    >>> import math
    >>> krr_count_std([50, 50], epsilon=math.log(3)).round(3)
    array([8.66, 8.66])
    """
    true_counts = require_numeric_array(true_counts, "true_counts")
    k = require_k(true_counts.size, "len(true_counts)")
    p, q = krr_probabilities(k, epsilon)
    return krr_count_std_unchecked(true_counts, p, q)


def krr_count_std_unchecked(true_counts: np.ndarray, p: float, q: float) -> np.ndarray:
    """The formula of :func:`krr_count_std` for checked arguments."""
    n = true_counts.sum()
    variance = true_counts * p * (1 - p) + (n - true_counts) * q * (1 - q)
    return np.sqrt(variance) / (p - q)


def project_to_simplex(counts, total: float) -> np.ndarray:
    r"""Euclidean projection of ``counts`` onto ``{x : x >= 0, sum(x) = total}``.

    The closest valid histogram to a noisy estimate: unlike clipping negatives to 0,
    it keeps the total and shrinks every entry by the same amount before clipping.

    Notes
    -----
    The solution is :math:`x_i = \max(v_i - \theta, 0)` with the threshold
    :math:`\theta` found by sorting (Held et al. 1974; Duchi et al. 2008;
    Wang & Carreira-Perpiñán 2013, "Projection onto the probability simplex").

    Examples
    --------
    >>> project_to_simplex([5.0, -1.0, 2.0], total=6.0)
    array([4.5, 0. , 1.5])
    """
    values = require_numeric_array(counts, "counts")
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D array, got shape {values.shape}")
    total = require_nonnegative(total, "total")
    descending = np.sort(values)[::-1]
    cumulative = np.cumsum(descending) - total
    ranks = np.arange(1, values.size + 1)
    # Rank 1 always qualifies (its margin is total >= 0), but with total = 0, or a total
    # lost to rounding beside huge entries, the strict test finds none: fall back to it.
    positive = np.nonzero(descending - cumulative / ranks > 0)[0]
    last_positive = positive[-1] if positive.size else 0
    theta = cumulative[last_positive] / (last_positive + 1)
    return np.maximum(values - theta, 0.0)
