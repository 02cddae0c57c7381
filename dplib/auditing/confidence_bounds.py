r"""The bounds of an audit: exact binomial intervals, the lower bound on epsilon from one event, its power.

An ε-DP mechanism makes every event ``S`` at most :math:`e^\varepsilon` times likelier on one
dataset than on a neighbour. Run it ``trials`` times on each of two neighbours ``d`` and
``d_prime``, count how often an event happens, and bound both probabilities with exact
(Clopper–Pearson) confidence intervals (:func:`clopper_pearson`): then

.. math:: \varepsilon \;\ge\; \ln \frac{\underline p_D}{\overline p_{D'}}

holds with probability at least :math:`1 - \alpha` (:func:`epsilon_lower_bound`). How likely that
bound is to exceed a given epsilon, i.e. an audit's false-alarm rate or its power against a false
claim, is :func:`detection_probability`, computed exactly. Choosing the event and running the
mechanism is :mod:`dplib.auditing.event_audit`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from dplib._validation import require_nonnegative, require_open_probability, require_positive_int

__all__ = ["clopper_pearson", "epsilon_lower_bound", "detection_probability", "miss_probability"]


def _check_counts(successes, trials, name: str) -> tuple[int, int]:
    trials = require_positive_int(trials, "trials")
    successes = require_positive_int(successes, name, minimum=0)
    if successes > trials:
        raise ValueError(f"{name} must be an integer in 0..trials = {trials}, got {successes!r}")
    return successes, trials


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    r"""Exact (Clopper–Pearson) ``1 - alpha`` confidence interval for a binomial probability.

    Each end fails with probability at most ``alpha / 2``: the interval holds the true
    probability with probability at least ``1 - alpha``, whatever it is.

    Notes
    -----
    With :math:`k` successes out of :math:`n`, the ends are quantiles of Beta distributions,

    .. math:: \underline p = B^{-1}(\alpha/2;\ k,\ n-k+1), \qquad \overline p = B^{-1}(1-\alpha/2;\ k+1,\ n-k),

    with :math:`\underline p = 0` when :math:`k = 0` and :math:`\overline p = 1` when :math:`k = n`.
    Unlike the normal approximation, it never collapses to a point at :math:`k = 0`.

    References
    ----------
    C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in the
    case of the binomial", Biometrika 26 (1934).

    Examples
    --------
    >>> low, high = clopper_pearson(0, 100, 0.05)
    >>> low, round(high, 4)
    (0.0, 0.0362)
    >>> [round(end, 4) for end in clopper_pearson(30, 100, 0.05)]
    [0.2124, 0.3998]
    """
    successes, trials = _check_counts(successes, trials, "successes")
    alpha = require_open_probability(alpha, "alpha")
    return _low_end(successes, trials, alpha), _high_end(successes, trials, alpha)


# Beta quantiles through scipy.special (stats.beta.ppf costs 30 times more per call), for valid arguments.
def _low_end(successes: int, trials: int, alpha: float) -> float:
    """The low end of the Clopper-Pearson interval: B^-1(alpha / 2; k, n - k + 1), 0 at k = 0."""
    return 0.0 if successes == 0 else float(special.betaincinv(successes, trials - successes + 1, alpha / 2))


def _high_end(successes: int, trials: int, alpha: float) -> float:
    """The high end, as 1 - (low quantile of Beta(n - k, k + 1)), which keeps its precision for tiny alpha; 1 at k = n."""
    failures = trials - successes
    return 1.0 if failures == 0 else 1.0 - float(special.betaincinv(failures, successes + 1, alpha / 2))


def epsilon_lower_bound(successes_d: int, successes_d_prime: int, trials: int, alpha: float) -> float:
    r"""Lower bound on epsilon from an event seen ``successes_d`` times on d and ``successes_d_prime`` on d'.

    Both counts are out of ``trials`` independent runs on each dataset. The bound holds with
    probability at least ``1 - alpha``; it is 0 when the event gives no evidence.

    Notes
    -----
    .. math:: \hat\varepsilon_{\mathrm{low}} = \max\Big(0,\ \ln \frac{\underline p_D}{\overline p_{D'}}\Big),

    with :math:`\underline p_D` the low end of :func:`clopper_pearson` for d and
    :math:`\overline p_{D'}` the high end for d', both at ``alpha``: the two ends fail with
    probability at most :math:`\alpha/2` each, so both hold together with probability at least
    :math:`1 - \alpha`, and then :math:`e^\varepsilon \ge p_D / p_{D'} \ge \underline p_D / \overline p_{D'}`.

    Examples
    --------
    >>> round(epsilon_lower_bound(3_000, 1_000, 10_000, 0.05), 3)
    1.01
    >>> epsilon_lower_bound(10, 12, 1_000, 0.05)
    0.0
    """
    # The two ends it needs, not both intervals: half the Beta quantiles (an audit calls this for every event it tries).
    successes_d, trials = _check_counts(successes_d, trials, "successes_d")
    successes_d_prime, _ = _check_counts(successes_d_prime, trials, "successes_d_prime")
    alpha = require_open_probability(alpha, "alpha")
    low_d, high_d_prime = _low_end(successes_d, trials, alpha), _high_end(successes_d_prime, trials, alpha)
    if low_d <= high_d_prime:
        return 0.0
    return math.log(low_d / high_d_prime)


def _bound_table(p_numerator, p_denominator, trials: int, alpha: float, epsilon: float):
    """For each count k of the numerator (axis 0) and each pair of probabilities (the other axes): the numerator's pmf,
    the largest denominator count m(k) whose bound exceeds epsilon, and the denominator's probability."""
    from scipy import stats  # not at import: ``import dplib`` stays light
    trials = require_positive_int(trials, "trials")
    alpha = require_open_probability(alpha, "alpha")
    epsilon = require_nonnegative(epsilon, "epsilon")
    p_numerator, p_denominator = np.broadcast_arrays(np.asarray(p_numerator, dtype=float),
                                                     np.asarray(p_denominator, dtype=float))
    counts = np.arange(trials + 1)
    with np.errstate(invalid="ignore", divide="ignore"):  # the ends k = 0 and k = trials are set by hand
        low = np.where(counts > 0, special.betaincinv(counts, trials - counts + 1, alpha / 2), 0.0)
        high = np.where(counts < trials, 1.0 - special.betaincinv(trials - counts, counts + 1, alpha / 2), 1.0)
    # bound > epsilon  <=>  high(k_den) < low(k_num) e^-epsilon, and high() increases with the count
    largest = np.searchsorted(high, low * math.exp(-epsilon), side="left") - 1
    axis = (slice(None),) + (None,) * p_numerator.ndim  # counts along axis 0, the pairs along the others
    return stats.binom.pmf(counts[axis], trials, p_numerator), largest[axis], p_denominator


def _per_pair(total: np.ndarray):
    """A float for one pair of probabilities, an array for arrays of them."""
    return float(total) if total.ndim == 0 else total


def detection_probability(p_numerator, p_denominator, trials: int, alpha: float, epsilon: float):
    """Exact probability that :func:`epsilon_lower_bound` of one fixed event exceeds ``epsilon``.

    The counts are Binomial(trials, p_numerator) and Binomial(trials, p_denominator), independent.
    With ``epsilon`` the true epsilon this is the audit's false-alarm rate on that event; with
    ``epsilon`` a (false) claim, its power to refute the claim. Arrays of probabilities (of one
    shape, or broadcastable) give an array: one probability per event, in one pass.

    Examples
    --------
    >>> detection_probability(0.5, 0.5, 1_000, 0.05, 0.0) < 0.05
    True
    >>> detection_probability([0.5, 0.5], [0.5, 0.05], 1_000, 0.05, 1.0).round(3)
    array([0., 1.])
    """
    pmf, largest, p_denominator = _bound_table(p_numerator, p_denominator, trials, alpha, epsilon)
    detected = np.where(largest >= 0, special.bdtr(np.maximum(largest, 0), trials, p_denominator), 0.0)
    return _per_pair(np.sum(pmf * detected, axis=0))


def miss_probability(p_numerator, p_denominator, trials: int, alpha: float, epsilon: float):
    """``1 - detection_probability(...)``, computed directly so that tiny values keep their precision.

    Examples
    --------
    >>> miss_probability(0.5, 0.05, 20_000, 1e-6, 1.0) < 1e-12
    True
    """
    pmf, largest, p_denominator = _bound_table(p_numerator, p_denominator, trials, alpha, epsilon)
    missed = np.where(largest >= 0, special.bdtrc(np.maximum(largest, 0), trials, p_denominator), 1.0)
    return _per_pair(np.sum(pmf * missed, axis=0))
