"""Estimators that turn randomized reports back into statistics you can trust.

Randomized response distorts the data in a known way, so each estimator inverts the
*expected* distortion: it is unbiased, and its spread is known in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from dplib._validation import (
    check_binary,
    check_categories,
    check_k,
    check_nonnegative,
    check_numeric_array,
    check_open_probability,
    check_positive_int,
    check_probability,
)
from dplib.channels import alpha_beta_to_p_q, krr_probabilities, rr_channel

__all__ = [
    "estimate_proportion_coin",
    "estimate_black_fraction",
    "estimate_count",
    "estimate_count_std",
    "rr_confidence_interval",
    "ConfidenceInterval",
    "estimate_krr_counts",
    "krr_count_std",
    "project_to_simplex",
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
    responses = check_binary(responses, "responses")
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
    alpha = check_probability(alpha, "alpha")
    beta = check_probability(beta, "beta")
    if alpha == 0:
        raise ValueError("alpha must be > 0 to estimate anything (alpha = 0 discards every pixel), got 0")
    pixels = check_binary(private_image, "private_image")
    if pixels.size == 0:
        raise ValueError("private_image must not be empty")
    return (float(pixels.mean()) - (1 - alpha) * beta) / alpha


def _check_informative(p: float, q: float) -> float:
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
    p = check_probability(p, "p")
    q = check_probability(q, "q")
    gain = _check_informative(p, q)
    responses = check_binary(responses, "responses")
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
    n = check_positive_int(n, "n")
    fraction = check_probability(fraction, "fraction")
    p = check_probability(p, "p")
    q = check_probability(q, "q")
    gain = _check_informative(p, q)
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
    alpha = check_open_probability(alpha, "alpha")
    center = estimate_count(responses, p, q)
    n = np.size(responses)
    fraction = min(max(center / n, 0.0), 1.0)
    spread = estimate_count_std(n, fraction, p, q)
    z = stats.norm.isf(alpha / 2)
    return ConfidenceInterval(center - z * spread, center + z * spread)


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
    k = check_k(k)
    reports = check_categories(reports, k, "reports").ravel()
    observed = np.bincount(reports, minlength=k)
    return (observed - q * reports.size) / (p - q)


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
    true_counts = check_numeric_array(true_counts, "true_counts")
    k = check_k(true_counts.size, "len(true_counts)")
    p, q = krr_probabilities(k, epsilon)
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
    values = check_numeric_array(counts, "counts")
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D array, got shape {values.shape}")
    total = check_nonnegative(total, "total")
    descending = np.sort(values)[::-1]
    cumulative = np.cumsum(descending) - total
    ranks = np.arange(1, values.size + 1)
    # Rank 1 always qualifies (its margin is total >= 0), but with total = 0, or a total
    # lost to rounding beside huge entries, the strict test finds none: fall back to it.
    positive = np.nonzero(descending - cumulative / ranks > 0)[0]
    last_positive = positive[-1] if positive.size else 0
    theta = cumulative[last_positive] / (last_positive + 1)
    return np.maximum(values - theta, 0.0)


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
    a = check_binary(reports_a, "reports_a").ravel()
    b = check_binary(reports_b, "reports_b").ravel()
    if a.size != b.size:
        raise ValueError(f"reports_a and reports_b must have the same length, got {a.size} and {b.size}")
    channels = []
    for name, pq in (("pq_a", pq_a), ("pq_b", pq_b)):
        if np.ndim(pq) != 1 or len(pq) != 2:
            raise ValueError(f"{name} must be a pair (p, q), got {pq!r}")
        p, q = (check_probability(v, f"{name}[{i}]") for i, v in enumerate(pq))
        _check_informative(p, q)
        channels.append(rr_channel(p, q))
    observed = np.bincount(2 * a + b, minlength=4).astype(float)
    joint = np.kron(channels[0], channels[1])
    truth = np.linalg.solve(joint.T, observed)
    index = pd.Index([0, 1], name="a")
    columns = pd.Index([0, 1], name="b")
    return pd.DataFrame(truth.reshape(2, 2), index=index, columns=columns)
