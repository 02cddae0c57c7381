r"""Auditing a claim of epsilon-DP: a lower bound on epsilon from running the mechanism many times.

An ε-DP mechanism makes every event ``S`` at most :math:`e^\varepsilon` times likelier on one
dataset than on a neighbour. Run it ``trials`` times on each of two neighbours ``d`` and
``d_prime``, count how often an event happens, and bound both probabilities with exact
(Clopper–Pearson) confidence intervals: then

.. math:: \varepsilon \;\ge\; \ln \frac{\underline p_D}{\overline p_{D'}}

holds with probability at least :math:`1 - \alpha` (each end of the two intervals fails with
probability at most :math:`\alpha/2`). A number above the claimed ε proves the claim false;
a number below it proves nothing about the claim: an audit gives a *lower* bound, never an upper
bound. The bound itself, and the probability that it exceeds a given epsilon, are
:mod:`dplib.auditing.confidence_bounds`.

The events here are thresholds on a numeric output, on either side (``y >= t`` or ``y <= t``) and
in either direction (``d`` or ``d_prime`` in the numerator). The event is chosen on one set of runs
and its probabilities are estimated on fresh runs: choosing and estimating on the same runs
overfits the noise, and the stated confidence no longer holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dplib._validation import require_numeric_array, require_open_probability, require_positive_int
from dplib.auditing.confidence_bounds import clopper_pearson, epsilon_lower_bound
from dplib.estimation.binary_rr import ConfidenceInterval

__all__ = [
    "EventAudit",
    "event_counts",
    "audit_events",
    "audit_threshold",
    "audit_vendors",
]

#: The kinds of threshold events: (side of the threshold, dataset in the numerator of the ratio).
EVENTS = ((">=", "d"), (">=", "d_prime"), ("<=", "d"), ("<=", "d_prime"))

def event_counts(outputs, thresholds) -> tuple[np.ndarray, np.ndarray]:
    """For each threshold t, how many outputs are ``>= t`` and how many are ``<= t``.

    Examples
    --------
    >>> event_counts([1.0, 2.0, 2.0, 5.0], [2.0, 3.0])
    (array([3, 1]), array([3, 3]))
    """
    outputs = np.sort(require_numeric_array(outputs, "outputs").ravel())
    thresholds = require_numeric_array(thresholds, "thresholds").ravel()
    at_least = outputs.size - np.searchsorted(outputs, thresholds, side="left")
    at_most = np.searchsorted(outputs, thresholds, side="right")
    return at_least, at_most


@dataclass(frozen=True)
class EventAudit:
    """The event an audit chose (on selection runs) and what fresh runs say about it.

    The event is ``output >= threshold`` (``side == ">="``) or ``output <= threshold``; its
    probability on the ``numerator`` dataset ("d" or "d_prime") is compared with that on the other.
    ``successes_*`` count it in ``trials`` fresh runs on each; ``interval_*`` are their
    :func:`clopper_pearson` intervals at ``alpha``.
    """

    threshold: float
    side: str
    numerator: str
    trials: int
    alpha: float
    successes_numerator: int
    successes_denominator: int
    interval_numerator: ConfidenceInterval
    interval_denominator: ConfidenceInterval
    epsilon_lower: float
    selection_epsilon_lower: float

    @property
    def epsilon_point(self) -> float:
        """The plug-in log-ratio of the fresh counts: a point estimate, not a bound (inf if the denominator is 0)."""
        if self.successes_numerator == 0:
            return 0.0 if self.successes_denominator == 0 else -math.inf
        if self.successes_denominator == 0:
            return math.inf
        return math.log(self.successes_numerator / self.successes_denominator)

    @property
    def log_ratio_interval(self) -> ConfidenceInterval:
        """Interval for the event's log-ratio ``ln(p_numerator / p_denominator)``, at confidence ``1 - alpha``."""
        low, high = self.interval_numerator.low, self.interval_numerator.high
        den_low, den_high = self.interval_denominator.low, self.interval_denominator.high
        lower = math.log(low / den_high) if low > 0 else -math.inf
        upper = math.log(high / den_low) if den_low > 0 else math.inf
        return ConfidenceInterval(lower, upper)


def _event_table(outputs_d, outputs_d_prime, thresholds) -> np.ndarray:
    """Counts of every event in :data:`EVENTS` order: shape (4, thresholds, 2) = (numerator, denominator)."""
    at_least_d, at_most_d = event_counts(outputs_d, thresholds)
    at_least_p, at_most_p = event_counts(outputs_d_prime, thresholds)
    pairs = ((at_least_d, at_least_p), (at_least_p, at_least_d), (at_most_d, at_most_p), (at_most_p, at_most_d))
    return np.array([np.stack(pair, axis=-1) for pair in pairs])


def _check_pair(outputs_d, outputs_d_prime, stage: str) -> int:
    size_d, size_p = np.size(outputs_d), np.size(outputs_d_prime)
    if size_d != size_p or size_d == 0:
        raise ValueError(f"the {stage} runs on d and d_prime must be equally many (and some), got {size_d} and {size_p}")
    return size_d


def audit_events(selection_d, selection_d_prime, estimation_d, estimation_d_prime, thresholds, alpha: float) -> EventAudit:
    """Choose the threshold event with the largest lower bound on the selection runs; bound it on the estimation runs.

    Every threshold in ``thresholds`` is tried on both sides and in both directions
    (:data:`EVENTS`); ties go to the first. The returned ``epsilon_lower`` uses only the
    estimation runs, which the choice never saw: it holds with probability ``1 - alpha``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> from dplib.mechanisms.discrete_laplace import exact_grid_laplace  # 1-DP on doubles too (rng.laplace is not)
    >>> runs = [exact_grid_laplace(np.full(5_000, float(value)), 1.0, rng=rng) for value in (0, 1, 0, 1)]
    >>> audit = audit_events(*runs, np.linspace(-2, 3, 11), 0.05)
    >>> audit.side, audit.numerator, 0.5 < audit.epsilon_lower < 1.0  # (true epsilon: 1)
    ('<=', 'd', True)
    """
    alpha = require_open_probability(alpha, "alpha")
    trials_selection = _check_pair(selection_d, selection_d_prime, "selection")
    trials = _check_pair(estimation_d, estimation_d_prime, "estimation")
    thresholds = require_numeric_array(thresholds, "thresholds").ravel()
    if thresholds.size == 0:
        raise ValueError("thresholds must hold at least one number")
    table = _event_table(selection_d, selection_d_prime, thresholds)
    bounds = np.array([[epsilon_lower_bound(k_num, k_den, trials_selection, alpha) for k_num, k_den in row] for row in table])
    kind, index = np.unravel_index(int(np.argmax(bounds)), bounds.shape)
    side, numerator = EVENTS[kind]
    k_num, k_den = _event_table(estimation_d, estimation_d_prime, thresholds[index:index + 1])[kind, 0]
    return EventAudit(
        threshold=float(thresholds[index]), side=side, numerator=numerator, trials=trials, alpha=alpha,
        successes_numerator=int(k_num), successes_denominator=int(k_den),
        interval_numerator=ConfidenceInterval(*clopper_pearson(int(k_num), trials, alpha)),
        interval_denominator=ConfidenceInterval(*clopper_pearson(int(k_den), trials, alpha)),
        epsilon_lower=epsilon_lower_bound(int(k_num), int(k_den), trials, alpha),
        selection_epsilon_lower=float(bounds[kind, index]),
    )


def mechanism_outputs(mechanism, data, trials: int, rng) -> np.ndarray:
    """``trials`` outputs of ``mechanism(data, size=trials, rng=rng)`` as a float array (any other shape: an error)."""
    outputs = np.asarray(mechanism(data, size=trials, rng=rng), dtype=float)
    if outputs.shape != (trials,):
        raise ValueError(f"mechanism(data, size={trials}) must return {trials} outputs, got shape {outputs.shape}")
    return outputs


def audit_threshold(mechanism, d, d_prime, thresholds, trials: int, alpha: float, rng=None) -> float:
    """Lower bound on the epsilon of ``mechanism``, with confidence ``1 - alpha``, from threshold events.

    ``mechanism(data, size=n, rng=rng)`` returns ``n`` independent outputs on ``data``. It runs
    ``trials`` times on each of ``d`` and ``d_prime`` to choose the event (:func:`audit_events`),
    and ``trials`` more times on each to estimate it.

    Examples
    --------
    >>> from dplib.mechanisms.discrete_laplace import exact_grid_laplace
    >>> def laplace_count(data, size=None, rng=None):
    ...     return exact_grid_laplace(float(np.sum(data)), 1 / 0.5, size=size, rng=rng)  # 0.5-DP, exactly
    >>> bound = audit_threshold(laplace_count, [1, 0, 1], [1, 0, 1, 1], np.arange(0, 6), 20_000, 0.05, rng=1)
    >>> 0.3 < bound <= 0.5
    True
    """
    trials = require_positive_int(trials, "trials")
    rng = np.random.default_rng(rng)
    selection = mechanism_outputs(mechanism, d, trials, rng), mechanism_outputs(mechanism, d_prime, trials, rng)
    estimation = mechanism_outputs(mechanism, d, trials, rng), mechanism_outputs(mechanism, d_prime, trials, rng)
    return audit_events(*selection, *estimation, thresholds, alpha).epsilon_lower


def audit_vendors(vendors, alpha: float, trials: int, rng=None) -> pd.DataFrame:
    """Audit every vendor's claim; a claim is broken when its lower bound exceeds the claimed epsilon.

    ``vendors`` are :class:`dplib.auditing.vendors.Vendor` objects (anything with ``name``, ``mechanism``,
    ``claimed_epsilon``, ``d``, ``d_prime`` and ``thresholds``). Each is audited at
    ``alpha / len(vendors)`` (Bonferroni), so the probability that *any* correct vendor is called
    broken is at most ``alpha``.

    Returns
    -------
    pandas.DataFrame
        Index ``name``; columns ``claimed_epsilon``, ``epsilon_lower`` and ``broken``.
    """
    vendors = list(vendors)
    if not vendors:
        raise ValueError("vendors must hold at least one vendor")
    alpha = require_open_probability(alpha, "alpha")
    rng = np.random.default_rng(rng)
    rows = []
    for vendor in vendors:
        bound = audit_threshold(vendor.mechanism, vendor.d, vendor.d_prime, vendor.thresholds, trials,
                                alpha / len(vendors), rng=rng)
        rows.append((vendor.name, float(vendor.claimed_epsilon), bound, bound > vendor.claimed_epsilon))
    return pd.DataFrame(rows, columns=["name", "claimed_epsilon", "epsilon_lower", "broken"]).set_index("name")
