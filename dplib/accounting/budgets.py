"""Composition, budgets and the sparse vector technique: the properties that make DP usable.

Sequential composition adds up the epsilons of mechanisms run on the same data, also
when each mechanism is chosen after seeing the earlier answers; parallel composition over
disjoint parts costs only the largest one under add/remove neighbours. A histogram is
one query whose L1 sensitivity depends on the neighbour notion. Repeating a query and
averaging the answers closes in on the truth, which is why every analysis needs a
budget, enforced by a :class:`PrivacyAccountant`. AboveThreshold answers many queries
and pays only for the first one found above a threshold (:mod:`dplib.mechanisms.sparse_vector`,
re-exported here).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special

from dplib._validation import (
    require_categories,
    require_epsilon,
    require_finite,
    require_k,
    require_nonnegative,
    require_numeric_array,
    require_positive_int,
    require_sensitivity,
)
from dplib.mechanisms.sparse_vector import above_threshold, above_threshold_probabilities

__all__ = [
    "BudgetExceededError",
    "PrivacyAccountant",
    "sequential_epsilon",
    "parallel_epsilon",
    "histogram_sensitivity",
    "noisy_histogram",
    "averaging_attack",
    "averaging_attack_tail",
    "above_threshold",
    "above_threshold_probabilities",
]

HISTOGRAM_SENSITIVITY = {"add_remove": 1, "substitute": 2}


def _check_epsilons(epsilons) -> np.ndarray:
    array = require_numeric_array(epsilons, "epsilons").ravel()
    if (array < 0).any():
        raise ValueError(f"epsilons must be finite numbers >= 0, got {array[array < 0][0].item()!r}")
    return array


def sequential_epsilon(epsilons) -> float:
    r"""Total epsilon of mechanisms run one after another on the same data: their sum.

    Notes
    -----
    If :math:`M_i` is :math:`\varepsilon_i`-DP, releasing all of :math:`M_1(D), \dots, M_k(D)`
    is :math:`(\sum_i \varepsilon_i)`-DP: the density ratios on neighbours multiply
    (Dwork & Roth 2014, Theorem 3.16). This holds **adaptively** too: :math:`M_i` may be
    chosen after seeing the answers of :math:`M_1, \dots, M_{i-1}`, as long as its
    :math:`\varepsilon_i` is fixed in advance. When the epsilons themselves are chosen
    adaptively, the guarantee needs a *privacy filter* (Rogers, Roth, Ullman & Vadhan 2016),
    a rule that stops the analysis before the budget is exceeded; for pure DP, refusing any
    spend that would take the sum over the budget (:class:`PrivacyAccountant`) is one.
    Summed with ``math.fsum``, so no rounding builds up; an empty list costs 0.

    References
    ----------
    R. Rogers, A. Roth, J. Ullman, S. Vadhan, "Privacy odometers and filters: pay-as-you-go
    composition", NeurIPS 2016.

    Examples
    --------
    >>> sequential_epsilon([0.5, 0.25, 1.0])
    1.75
    """
    return math.fsum(_check_epsilons(epsilons).tolist())


def parallel_epsilon(epsilons) -> float:
    r"""Total epsilon of mechanisms each run on a disjoint part of the data: the largest.

    Notes
    -----
    Under **add/remove** neighbours one person is in at most one part, so adding or removing
    them changes the input of one mechanism only: the release is
    :math:`\max_i \varepsilon_i`-DP (McSherry 2009, Theorem 4). An empty list costs 0.

    Under **substitution** (one person's record changes) the person can move from one part
    to another when the split depends on the record: two mechanisms see a different input,
    and the cost is the sum of the two largest :math:`\varepsilon_i`. Only a split on a
    public attribute, one that cannot change between neighbours, keeps the maximum.
    A histogram is the example: under substitution one count falls and another rises, so
    its L1 sensitivity is 2 (:func:`histogram_sensitivity`).

    References
    ----------
    F. McSherry, "Privacy integrated queries", SIGMOD 2009.

    Examples
    --------
    >>> parallel_epsilon([0.5, 0.25, 1.0])
    1.0
    """
    array = _check_epsilons(epsilons)
    return float(array.max()) if array.size else 0.0


def histogram_sensitivity(neighbours: str) -> int:
    """L1 sensitivity of a histogram (the vector of counts) for a neighbour notion.

    ``"add_remove"``: one person added or removed changes one count by 1 (sensitivity 1).
    ``"substitute"``: one person's value changes, so one count drops by 1 and another
    rises by 1 (sensitivity 2).

    Raises
    ------
    ValueError
        If ``neighbours`` is neither ``"add_remove"`` nor ``"substitute"``.

    Examples
    --------
    >>> histogram_sensitivity("substitute")
    2
    """
    if not isinstance(neighbours, str) or neighbours not in HISTOGRAM_SENSITIVITY:
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    return HISTOGRAM_SENSITIVITY[neighbours]


def noisy_histogram(categories, k: int, epsilon: float, rng=None) -> np.ndarray:
    r"""Counts of ``0..k-1`` in ``categories``, each plus independent ``Lap(1/epsilon)`` noise.

    Notes
    -----
    Under add/remove neighbours the vector of counts has L1 sensitivity 1 (one
    person is in one bin), so the Laplace mechanism on the whole vector needs scale
    :math:`1/\varepsilon` per bin, not :math:`k/\varepsilon`. Empty bins get noise too:
    otherwise a zero reveals that nobody has that value (Dwork & Roth 2014, Example 3.2).

    Examples
    --------
    >>> import numpy as np
    >>> noisy_histogram([0, 0, 2], k=3, epsilon=1.0, rng=np.random.default_rng(0)).round(2)
    array([ 2.32, -0.62, -1.5 ])
    """
    k = require_k(k)
    epsilon = require_epsilon(epsilon)
    counts = np.bincount(require_categories(categories, k).ravel(), minlength=k)
    rng = np.random.default_rng(rng)
    return counts + rng.laplace(0.0, 1.0 / epsilon, size=k)


def averaging_attack(true_value: float, sensitivity: float, epsilon: float, k: int, rng=None) -> float:
    r"""Mean of ``k`` independent Laplace-mechanism answers to the same query.

    Notes
    -----
    Each answer is :math:`f(D) + \mathrm{Lap}(b)`, :math:`b = \Delta f / \varepsilon`; their mean
    has standard deviation :math:`\sqrt{2}\, b / \sqrt{k}`, so it closes in on the truth.
    By sequential composition the k answers together are only :math:`k\varepsilon`-DP.

    Examples
    --------
    >>> import numpy as np
    >>> round(averaging_attack(40.0, 1.0, 0.5, k=10_000, rng=np.random.default_rng(0)), 2)
    40.0
    """
    true_value = require_finite(true_value, "true_value")
    scale = require_sensitivity(sensitivity) / require_epsilon(epsilon)
    k = require_positive_int(k, "k")
    rng = np.random.default_rng(rng)
    return float(true_value + rng.laplace(0.0, scale, size=k).mean())


def averaging_attack_tail(t: float, sensitivity: float, epsilon: float, k: int) -> float:
    r"""Probability that the mean of ``k`` noisy answers is at least ``t`` away from the truth.

    Notes
    -----
    A Laplace variable of scale :math:`b` is the difference of two exponentials, so the
    sum of :math:`k` of them is :math:`G_1 - G_2` with :math:`G_i \sim \mathrm{Gamma}(k, b)`
    independent, and

    .. math:: P(|\bar Z| \ge t) = 2 \int_0^\infty P(G_1 \ge kt + g)\, f_{G_2}(g)\, dg, \quad t > 0.

    For :math:`k = 1` this is the Laplace tail :math:`e^{-t/b}`.

    Examples
    --------
    >>> round(averaging_attack_tail(2.0, 1.0, 0.5, k=1), 4)
    0.3679
    """
    t = require_nonnegative(t, "t")
    scale = require_sensitivity(sensitivity) / require_epsilon(epsilon)
    k = require_positive_int(k, "k")
    if t == 0.0 or scale == 0.0:
        return 1.0 if t == 0.0 else 0.0
    # Gamma(k, b): survival function Q(k, x / b), density exp((k - 1) ln x - x / b - ln Gamma(k) - k ln b).
    sf = lambda x: special.gammaincc(k, x / scale)  # noqa: E731
    pdf = lambda x: math.exp((k - 1) * math.log(x) - x / scale - special.gammaln(k) - k * math.log(scale))  # noqa: E731
    low, high = scale * special.gammaincinv(k, 1e-16), scale * special.gammainccinv(k, 1e-16)  # G_2 is outside w.p. 2e-16
    one_side, _ = integrate.quad(lambda g: sf(k * t + g) * pdf(g), low, high, points=[k * scale], epsabs=1e-13, limit=200)
    return min(1.0, 2.0 * one_side)


class BudgetExceededError(ValueError):
    """Raised by :meth:`PrivacyAccountant.spend` when a spend would exceed the budget."""


class PrivacyAccountant:
    """Keep track of the epsilon spent on a dataset and refuse spends beyond a budget.

    By sequential composition the total privacy cost of all answers is the sum of their
    epsilons; the accountant refuses any query that would take that sum over ``budget``.
    A refused query costs nothing and leaves the accountant unchanged. The analyst may choose
    each query, and its epsilon, after seeing the earlier answers: refusing what would exceed
    the budget makes the accountant a privacy filter for pure DP (Rogers et al. 2016), so the
    whole interaction is ``budget``-DP. The total is compared
    with the budget up to a relative tolerance ``TOLERANCE`` (1e-9), so three spends of 0.1 fit
    a budget of 0.3 although ``0.1 + 0.1 + 0.1 > 0.3`` in floats (even with ``math.fsum``); the
    rounding of n additions is about n units in the last place, far below that tolerance.

    Parameters
    ----------
    budget : float
        Total epsilon allowed, finite and > 0.

    Examples
    --------
    >>> accountant = PrivacyAccountant(0.3)
    >>> for _ in range(3):
    ...     accountant.spend(0.1)
    >>> accountant.remaining
    0.0
    >>> accountant.spend(0.01)
    Traceback (most recent call last):
    ...
    dplib.accounting.budgets.BudgetExceededError: spending epsilon 0.01 would exceed the budget 0.3 (0.3 spent, 0.0 left)
    """

    TOLERANCE = 1e-9

    def __init__(self, budget: float):
        self.budget = require_epsilon(budget, "budget")
        self._spent = 0.0

    @property
    def spent(self) -> float:
        """Total epsilon spent so far (accepted spends only)."""
        return self._spent

    @property
    def remaining(self) -> float:
        """Epsilon still available, never negative."""
        return max(0.0, self.budget - self.spent)

    def spend(self, epsilon: float) -> None:
        """Charge ``epsilon`` to the budget, or raise :class:`BudgetExceededError` and charge nothing.

        Returns ``None``: the effect is on :attr:`spent` and :attr:`remaining`.
        """
        epsilon = require_epsilon(epsilon)
        total = self._spent + epsilon
        if total > self.budget * (1 + self.TOLERANCE):
            raise BudgetExceededError(
                f"spending epsilon {epsilon!r} would exceed the budget {self.budget!r} "
                f"({round(self.spent, 12)!r} spent, {round(self.remaining, 12)!r} left)"
            )
        self._spent = total

    def __repr__(self) -> str:
        return f"PrivacyAccountant(budget={self.budget!r}, spent={self.spent!r})"

