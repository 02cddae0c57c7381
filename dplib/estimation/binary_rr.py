"""Estimators that turn binary randomized reports back into statistics you can trust.

Randomized response distorts the data in a known way, so each estimator inverts the
*expected* distortion: it is unbiased, and its spread is known in closed form. The
k-ary counterparts (k-RR counts, their spread, the projection onto the simplex) are in
:mod:`dplib.estimation.kary_rr`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

from dplib._validation import (
    require_binary,
    require_open_probability,
    require_positive_int,
    require_probability,
)
from dplib.accounting.channels import rr_channel

__all__ = [
    "estimate_proportion_coin",
    "estimate_black_fraction",
    "estimate_count",
    "estimate_count_std",
    "rr_confidence_interval",
    "ConfidenceInterval",
    "estimate_crosstab",
]


def estimate_proportion_coin(responses) -> float:
    r"""Unbiased estimate of the true proportion of 1s from Warner two-coin responses.

    Notes
    -----
    :math:`E[\bar y] = \tfrac12 \pi + \tfrac14`, hence :math:`\hat\pi = 2\bar y - \tfrac12`.

    Examples
    --------
    >>> estimate_proportion_coin([1, 0, 0, 1])
    0.5
    """
    responses = require_binary(responses, "responses")
    if responses.size == 0:
        raise ValueError("responses must not be empty")
    return 2.0 * float(responses.mean()) - 0.5


def estimate_black_fraction(private_image, alpha: float, beta: float) -> float:
    r"""Unbiased estimate of the true black fraction of a privatized picture.

    Notes
    -----
    Inverts :math:`E[\text{observed}] = \alpha\,t + (1-\alpha)\beta`:
    :math:`\hat t = (\text{observed} - (1-\alpha)\beta) / \alpha`, for :math:`\alpha > 0`.

    Examples
    --------
    >>> estimate_black_fraction([[1, 0], [0, 1]], alpha=0.5, beta=0.5)
    0.5
    """
    alpha = require_probability(alpha, "alpha")
    beta = require_probability(beta, "beta")
    if alpha == 0:
        raise ValueError("alpha must be > 0 to estimate anything (alpha = 0 discards every pixel), got 0")
    pixels = require_binary(private_image, "private_image")
    if pixels.size == 0:
        raise ValueError("private_image must not be empty")
    return unbias_black_fraction(float(pixels.mean()), alpha, beta)


def unbias_black_fraction(observed: float, alpha: float, beta: float) -> float:
    """``(observed - (1 - alpha) beta) / alpha`` for checked arguments (used by the image widget too)."""
    return (observed - (1 - alpha) * beta) / alpha


def _require_informative(p: float, q: float) -> float:
    """Return ``p + q - 1``; zero means the output does not depend on the input."""
    gain = p + q - 1.0
    if abs(gain) < 1e-12:
        raise ValueError(f"p + q must differ from 1 (p={p}, q={q} makes the output independent of the input)")
    return gain


def estimate_count(responses, p: float, q: float) -> float:
    r"""Unbiased estimate of the number of 1s behind (p, q)-randomized responses.

    Notes
    -----
    Each response is 1 with probability :math:`\pi = fp + (1-f)(1-q)` for true
    fraction :math:`f`, so

    .. math:: \hat n_1 = n\,\frac{\bar y + q - 1}{p + q - 1}.

    Examples
    --------
    >>> estimate_count([1, 1, 1, 0], p=0.75, q=0.75)
    4.0
    """
    p = require_probability(p, "p")
    q = require_probability(q, "q")
    gain = _require_informative(p, q)
    responses = require_binary(responses, "responses")
    n = responses.size
    if n == 0:
        raise ValueError("responses must not be empty")
    return n * (float(responses.mean()) + q - 1.0) / gain


def estimate_count_std(n: int, fraction: float, p: float, q: float) -> float:
    r"""Standard deviation of :func:`estimate_count` on ``n`` people, a ``fraction`` of them 1s.

    Notes
    -----
    The :math:`nf` ones answer 1 with probability p, the others with probability 1-q,
    independently, so

    .. math:: \mathrm{sd}(\hat n_1) = \frac{\sqrt{n\,[f\,p(1-p) + (1-f)\,q(1-q)]}}{|p + q - 1|}.

    It grows like :math:`\sqrt n`: the *count* gets noisier with n, the *fraction*
    :math:`\hat n_1 / n` more precise.

    Examples
    --------
    >>> round(estimate_count_std(10_000, 0.3, 0.75, 0.75), 3)
    86.603
    """
    n = require_positive_int(n, "n")
    fraction = require_probability(fraction, "fraction")
    p = require_probability(p, "p")
    q = require_probability(q, "q")
    gain = _require_informative(p, q)
    variance = n * (fraction * p * (1 - p) + (1 - fraction) * q * (1 - q))
    return float(np.sqrt(variance) / abs(gain))


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided interval ``(low, high)``; unpacks like a tuple."""

    low: float
    high: float

    def __iter__(self):
        return iter((self.low, self.high))

    def __contains__(self, value) -> bool:
        return self.low <= value <= self.high


def rr_confidence_interval(responses, p: float, q: float, alpha: float = 0.05) -> ConfidenceInterval:
    r"""Normal-approximation ``1 - alpha`` confidence interval for the count of 1s.

    Notes
    -----
    The standard deviation of the count estimate is :func:`estimate_count_std` with
    the estimated fraction :math:`\hat f = \mathrm{clip}(\hat n_1 / n, 0, 1)` plugged in,
    :math:`\sqrt{n[\hat f p(1-p) + (1-\hat f) q(1-q)]} / |p+q-1|`, and the interval is
    :math:`\hat n_1 \pm z_{1-\alpha/2}\,\mathrm{sd}`. (The binomial plug-in
    :math:`\sqrt{n\bar y(1-\bar y)}` would add the variance of drawing the people
    themselves, :math:`n f(1-f)(p+q-1)^2`, and over-cover the count of this dataset.)

    Examples
    --------
    >>> import numpy as np
    >>> from dplib import rand_resp
    >>> truth = np.r_[np.ones(3000, int), np.zeros(7000, int)]
    >>> low, high = rr_confidence_interval(rand_resp(truth, 0.8, 0.8, rng=np.random.default_rng(0)), 0.8, 0.8)
    >>> bool(low < 3000 < high)
    True
    """
    alpha = require_open_probability(alpha, "alpha")
    center = estimate_count(responses, p, q)
    n = np.size(responses)
    fraction = min(max(center / n, 0.0), 1.0)
    spread = estimate_count_std(n, fraction, p, q)
    z = -ndtri(alpha / 2)  # the normal quantile z_{1-alpha/2}, as scipy.stats.norm.isf(alpha / 2)
    return ConfidenceInterval(center - z * spread, center + z * spread)


def estimate_crosstab(reports_a, reports_b, pq_a, pq_b) -> pd.DataFrame:
    r"""Unbiased 2x2 table of two binary attributes, each randomized independently.

    Parameters
    ----------
    reports_a, reports_b : array_like of {0, 1}
        Each person's two reports (same length).
    pq_a, pq_b : tuple of float
        The (p, q) each attribute was randomized with.

    Returns
    -------
    pandas.DataFrame
        Estimated true counts, index ``a`` = 0, 1 and columns ``b`` = 0, 1.

    Notes
    -----
    For the joint cell ``2a + b`` the reports follow the Kronecker channel
    :math:`M = M_a \otimes M_b`: :math:`E[o] = M^\top t`, so
    :math:`\hat t = (M^\top)^{-1} o`. The raw table of reports is biased toward
    uniform and must not be compared with the truth.

    Examples
    --------
    >>> table = estimate_crosstab([1, 0, 1, 1], [1, 1, 0, 1], (0.75, 0.75), (0.75, 0.75))
    >>> table.values.sum()
    np.float64(4.0)
    """
    a = require_binary(reports_a, "reports_a").ravel()
    b = require_binary(reports_b, "reports_b").ravel()
    if a.size != b.size:
        raise ValueError(f"reports_a and reports_b must have the same length, got {a.size} and {b.size}")
    channels = []
    for name, pq in (("pq_a", pq_a), ("pq_b", pq_b)):
        if np.ndim(pq) != 1 or len(pq) != 2:
            raise ValueError(f"{name} must be a pair (p, q), got {pq!r}")
        p, q = (require_probability(v, f"{name}[{i}]") for i, v in enumerate(pq))
        _require_informative(p, q)
        channels.append(rr_channel(p, q))
    observed = np.bincount(2 * a + b, minlength=4).astype(float)
    joint = np.kron(channels[0], channels[1])
    truth = np.linalg.solve(joint.T, observed)
    index = pd.Index([0, 1], name="a")
    columns = pd.Index([0, 1], name="b")
    return pd.DataFrame(truth.reshape(2, 2), index=index, columns=columns)
