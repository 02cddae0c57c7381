r"""Eight "vendor" mechanisms that all claim ε-DP: three keep the promise, five break it as real code does.

Each :class:`Vendor` bundles a mechanism ``mechanism(data, size=None, rng=None)`` (``size`` independent
releases on ``data``), the ε it claims, and an audit plan: two neighbouring datasets ``d`` and
``d_prime`` (``d_prime`` adds one record) and the thresholds to try as events. The names are letters,
so that an audit, not the name, says which is which; :data:`DEFECTS` and :data:`TRUE_EPSILON` give
the answers (on the planned pair, under add/remove neighbours):

====  ==========================================  ===========  ==========================================
name  mechanism                                   claimed ε    true ε on the pair
====  ==========================================  ===========  ==========================================
A     count + exact grid Laplace(1/ε)             1            1
B     sum clamped to [0, 2] + Laplace(2·ε)        0.5          2 (scale sensitivity·ε, not sensitivity/ε)
C     count + discrete Laplace, P(k) ∝ e^(−ε|k|)  0.5          0.5
D     count + noise drawn once, reused            1            ∞ (the outputs never change)
E     sum clamped to [0, 1] + exact grid Laplace  0.5          0.5
F     sum "clamped to [0, 1]" + Laplace(1/ε)      0.5          2.5 on this pair; ∞ over all (no clamp)
G     clamped sum + Laplace(max(data)/ε)          1            ∞ (noise scale read off the data)
H     count + textbook float Laplace(1/ε)         1            ∞ (gaps in the doubles; see floating_point)
====  ==========================================  ===========  ==========================================

The three correct vendors are ε-DP on the computer, not only on the reals: their noise is an exact
discrete Laplace number of steps of a power-of-two grid (:func:`dplib.mechanisms.discrete_laplace.exact_grid_laplace`,
the construction OpenDP uses; Canonne, Kamath & Steinke 2020), on answers that lie on that grid (counts;
E rounds each clamped value to the grid, so its sum is exact, and its bound ``upper`` is on the grid),
so every output can come from both neighbours with probabilities within :math:`e^{\varepsilon}` of each
other, exactly. Two assumptions stand under "exactly". The random integers are truly random: they come
from numpy's PCG64, a statistical generator, not a cryptographic one (its state can be recovered from its
outputs, and then the noise is known), where OpenDP uses the operating system's secure generator. And
the input is in the mechanism's domain: records that are NaN or infinite (or not 0/1 for a count) raise
a ``ValueError``, and that error is itself an output, different from a release. numpy's
``Generator.laplace`` would not do: it is the textbook inversion of vendor H (Mironov 2012), and an exact
membership test finds outputs of one neighbour the other cannot produce.

Vendor H counts a rare condition (nobody in ``d`` has it, one person in ``d_prime`` does): the gaps of the
textbook sampler are widest next to small true answers, so that is where its attack is strongest.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from dplib._validation import require_binary, require_epsilon, require_numeric_array
from dplib.mechanisms.discrete_laplace import discrete_laplace_steps, exact_grid_laplace
from dplib.attacks.floating_point import textbook_laplace

__all__ = ["Vendor", "vendor_mechanisms"]

#: The grid of the correct vendors' noise (a power of two: rounding to it and adding steps are exact).
GRID = 2.0**-20

#: What is wrong with each vendor (``None``: nothing).
DEFECTS = {
    "A": None,
    "B": "noise scale sensitivity * epsilon instead of sensitivity / epsilon",
    "C": None,
    "D": "noise drawn once and reused for every release",
    "E": None,
    "F": "the clamp to [0, 1] is missing",
    "G": "noise scale computed from the data (its largest value)",
    "H": "textbook Laplace sampler on doubles: gaps in its outputs reveal the input",
}

#: The true epsilon of each vendor on its planned pair (d, d_prime): |shift| / scale for Laplace noise.
TRUE_EPSILON = {
    "A": 1.0,  # shift 1 = 2**20 grid steps, scale 2**20 steps: P(y) / P'(y) <= e^1 exactly
    "B": 2.0,  # shift 2, scale 2 * 0.5 = 1
    "C": 0.5,  # discrete Laplace: P(k) / P(k + 1) = e^0.5
    "D": math.inf,  # disjoint outputs: count_d + b and count_d_prime + b
    "E": 0.5,  # the record 5.0 is clamped to 1: shift 1 (exact on the grid), scale 2
    "F": 2.5,  # the record 5.0 is not clamped: shift 5, scale 2
    "G": math.inf,  # scales 0.3 and 1.0: the log-ratio of the densities grows without bound
    "H": math.inf,  # an output possible from d but not from d_prime has ratio inf
}


@dataclass(frozen=True, eq=False)
class Vendor:
    """A mechanism that claims ``claimed_epsilon``-DP, with a plan to audit it (a neighbouring pair, thresholds)."""

    name: str
    claim: str
    claimed_epsilon: float
    mechanism: Callable
    d: np.ndarray
    d_prime: np.ndarray
    thresholds: np.ndarray


def _noise_size(size):
    return () if size is None else size


def _release(answer: float, noise):
    released = answer + np.asarray(noise, dtype=float)
    return float(released) if released.ndim == 0 else released


def laplace_count(data, size=None, rng=None, *, epsilon: float):
    """Number of 1s in ``data`` plus Laplace noise of scale 1 / epsilon on the grid 2**-20, sampled exactly (correct).

    A count is a multiple of the grid, so rounding moves nothing: exactly epsilon-DP on doubles
    (:func:`dplib.mechanisms.discrete_laplace.exact_grid_laplace`), given truly random integers (numpy's PCG64 is not
    a cryptographic generator) and 0/1 records (anything else raises a ``ValueError``, itself an output).
    """
    count = float(require_binary(data, "data").sum())
    return _release(0.0, exact_grid_laplace(count, 1.0 / epsilon, GRID, size=_noise_size(size), rng=rng))


def geometric_count(data, size=None, rng=None, *, epsilon: float):
    """Number of 1s plus two-sided geometric noise, P(k) proportional to e^(-epsilon |k|), sampled exactly (correct).

    (:func:`dplib.mechanisms.discrete_laplace.discrete_laplace_steps`; numpy's ``Generator.geometric`` would round every
    probability to a multiple of 2**-53 and cut the tails off at a largest value: a δ of about 1e-15.)
    epsilon-DP given truly random integers (numpy's PCG64 is not a cryptographic generator) and 0/1 records.
    """
    count = float(require_binary(data, "data").sum())
    return _release(count, discrete_laplace_steps(1.0 / epsilon, size=_noise_size(size), rng=rng))


def clamped_sum(data, size=None, rng=None, *, epsilon: float, upper: float):
    """Sum of the values clamped to [0, upper] and rounded to the grid 2**-20, plus exact grid Laplace noise (correct).

    Each value is rounded to the grid after the clamp, so the sum is exact in doubles (fewer than
    2**30 values) and moves by at most ``upper`` when a record is added: exactly
    (upper / scale)-DP with scale upper / epsilon. That needs ``upper`` on the grid (a multiple of
    2**-20, > 0): otherwise a record at ``upper`` rounds to a grid point above it (``upper = 3 * 2**-21``
    rounds to ``2**-19``, and epsilon = 0.5 would really be 2/3), so any other ``upper`` raises a
    ``ValueError``. ε-DP assumes truly random integers (numpy's PCG64 is not a cryptographic generator)
    and finite records (NaN or inf raise a ``ValueError``, itself an output).
    """
    upper = require_epsilon(upper, "upper")
    if upper / GRID != round(upper / GRID):
        raise ValueError(f"upper must be a multiple of the grid 2**-20 (so that a clamped record moves the sum by at "
                         f"most upper), got {upper!r}")
    values = np.clip(require_numeric_array(data, "data"), 0.0, upper)
    total = float((np.round(values / GRID) * GRID).sum())
    return _release(0.0, exact_grid_laplace(total, upper / epsilon, GRID, size=_noise_size(size), rng=rng))


def scale_times_epsilon_sum(data, size=None, rng=None, *, epsilon: float, upper: float):
    """Clamped sum plus Laplace noise of scale upper * epsilon: the sensitivity multiplied instead of divided."""
    rng = np.random.default_rng(rng)
    total = float(np.clip(require_numeric_array(data, "data"), 0.0, upper).sum())
    return _release(total, rng.laplace(0.0, upper * epsilon, _noise_size(size)))


def unclamped_sum(data, size=None, rng=None, *, epsilon: float, upper: float):
    """Sum plus Laplace noise of scale upper / epsilon, calibrated to values in [0, upper] it never clamps to."""
    rng = np.random.default_rng(rng)
    total = float(require_numeric_array(data, "data").sum())
    return _release(total, rng.laplace(0.0, upper / epsilon, _noise_size(size)))


def data_scaled_sum(data, size=None, rng=None, *, epsilon: float):
    """Sum clamped to [0, 1] plus Laplace noise of scale max(data) / epsilon: the sensitivity read off the data."""
    rng = np.random.default_rng(rng)
    values = np.clip(require_numeric_array(data, "data"), 0.0, 1.0)
    return _release(float(values.sum()), rng.laplace(0.0, float(values.max()) / epsilon, _noise_size(size)))


def float_laplace_count(data, size=None, rng=None, *, epsilon: float):
    """Number of 1s plus Laplace noise from the textbook sampler on doubles (:func:`dplib.attacks.floating_point.textbook_laplace`)."""
    count = float(require_binary(data, "data").sum())
    released = textbook_laplace(count, 1.0 / epsilon, size=_noise_size(size), rng=rng)
    return float(released) if np.ndim(released) == 0 else released


class ReusedNoiseCount:
    """Number of 1s plus Laplace noise of scale 1 / epsilon drawn *once*, when the object is made, and reused.

    A real bug (a module-level draw, a cached value, a seed fixed inside the function): every release
    is the same, so two neighbours give two different, certain answers.
    """

    def __init__(self, epsilon: float, rng=None):
        self.epsilon = require_epsilon(epsilon)
        self.noise = float(np.random.default_rng(rng).laplace(0.0, 1.0 / self.epsilon))

    def __call__(self, data, size=None, rng=None):
        return _release(float(require_binary(data, "data").sum()), np.full(_noise_size(size), self.noise))


def _grid(center: float, half_width: float, step: float = 0.25) -> np.ndarray:
    return center + np.arange(-half_width, half_width + step / 2, step)


def vendor_mechanisms(rng=None) -> list[Vendor]:
    """The eight vendors A to H with their audit plans (``rng`` draws the noise vendor D reuses).

    Examples
    --------
    >>> vendors = vendor_mechanisms(rng=0)
    >>> [v.name for v in vendors], vendors[0].claim
    (['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'], 'count of 1s, epsilon = 1')
    >>> float(vendors[0].mechanism(vendors[0].d, rng=1)) != float(vendors[0].mechanism(vendors[0].d, rng=2))
    True
    """
    votes = np.array([1] * 40 + [0] * 60)  # 40 people answer yes
    votes_plus = np.append(votes, 1)  # one more person, who answers yes
    up_to_two = np.linspace(0.1, 1.9, 30)  # 30 values in [0, 2], sum 30
    up_to_one = np.linspace(0.05, 0.95, 30)  # 30 values in [0, 1], sum 15
    small = np.linspace(0.1, 0.3, 21)  # 21 small values, sum 4.2, largest 0.3
    healthy = np.zeros(30, dtype=int)  # nobody has the condition; d_prime adds one person who does
    partial = functools.partial
    return [
        Vendor("A", "count of 1s, epsilon = 1", 1.0, partial(laplace_count, epsilon=1.0), votes, votes_plus, _grid(40.5, 8)),
        Vendor("B", "sum of values clamped to [0, 2], epsilon = 0.5", 0.5,
               partial(scale_times_epsilon_sum, epsilon=0.5, upper=2.0), up_to_two, np.append(up_to_two, 2.0), _grid(31.0, 8)),
        Vendor("C", "count of 1s, integer noise, epsilon = 0.5", 0.5, partial(geometric_count, epsilon=0.5),
               votes, votes_plus, _grid(40.5, 12, step=1.0)),
        Vendor("D", "count of 1s, epsilon = 1", 1.0, ReusedNoiseCount(1.0, rng=rng), votes, votes_plus, _grid(40.5, 40)),
        Vendor("E", "sum of values clamped to [0, 1], epsilon = 0.5", 0.5, partial(clamped_sum, epsilon=0.5, upper=1.0),
               up_to_one, np.append(up_to_one, 5.0), _grid(17.5, 16)),
        Vendor("F", "sum of values clamped to [0, 1], epsilon = 0.5", 0.5, partial(unclamped_sum, epsilon=0.5, upper=1.0),
               up_to_one, np.append(up_to_one, 5.0), _grid(17.5, 16)),
        Vendor("G", "sum of values clamped to [0, 1], epsilon = 1", 1.0, partial(data_scaled_sum, epsilon=1.0),
               small, np.append(small, 1.0), _grid(4.7, 6, step=0.1)),
        Vendor("H", "count of a rare condition, epsilon = 1", 1.0, partial(float_laplace_count, epsilon=1.0), healthy,
               np.append(healthy, 1), _grid(0.5, 8)),
    ]
