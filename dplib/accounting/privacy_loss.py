"""The privacy loss between two output distributions, and the epsilon-DP check.

The loss of one output y is ``ln(P[M(D)=y] / P[M(D')=y])`` (:func:`privacy_loss_per_output`);
epsilon-DP bounds its size by epsilon for every output and pair of neighbours
(:func:`max_privacy_loss`, :func:`satisfies_dp`). The Laplace mechanism's loss on a
continuum of outputs is :func:`dplib.mechanisms.laplace.laplace_privacy_loss`.
"""

from __future__ import annotations

import numpy as np

from dplib._validation import require_epsilon, require_probability_vector

__all__ = ["privacy_loss_per_output", "max_privacy_loss", "satisfies_dp"]

#: Slack for floating-point rounding when comparing a loss with epsilon.
DP_TOLERANCE = 1e-12


def _require_pair(p_d, p_d_prime) -> tuple[np.ndarray, np.ndarray]:
    p_d = require_probability_vector(p_d, "p_d")
    p_d_prime = require_probability_vector(p_d_prime, "p_d_prime")
    if p_d.shape != p_d_prime.shape:
        raise ValueError(f"p_d and p_d_prime must cover the same outputs, got lengths {p_d.size} and {p_d_prime.size}")
    return p_d, p_d_prime


def privacy_loss_per_output(p_d, p_d_prime) -> np.ndarray:
    r"""Privacy loss ``ln(P[M(D)=y] / P[M(D')=y])`` of each output y.

    Outputs impossible under both give NaN (they carry no loss); an output possible
    under exactly one gives +inf or -inf.

    Examples
    --------
    >>> privacy_loss_per_output([0.75, 0.25], [0.25, 0.75]).round(4)
    array([ 1.0986, -1.0986])
    """
    p_d, p_d_prime = _require_pair(p_d, p_d_prime)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(p_d) - np.log(p_d_prime)


def max_privacy_loss(p_d, p_d_prime) -> float:
    r"""Largest absolute privacy loss over all outputs, in both directions.

    Notes
    -----
    .. math:: \max_y \left|\ln\frac{P[M(D)=y]}{P[M(D')=y]}\right|

    Outputs with probability 0 under both are ignored; probability 0 under exactly
    one gives ``inf``. epsilon-DP requires this to be <= epsilon for every pair of
    neighbours (and so in both directions).

    Examples
    --------
    >>> round(max_privacy_loss([0.5, 0.5, 0.0], [0.25, 0.75, 0.0]), 4)
    0.6931
    >>> max_privacy_loss([1.0, 0.0], [0.5, 0.5])
    inf
    """
    losses = privacy_loss_per_output(p_d, p_d_prime)
    losses = np.abs(losses[~np.isnan(losses)])
    return float(losses.max(initial=0.0))


def satisfies_dp(p_d, p_d_prime, epsilon: float) -> bool:
    """Whether the pair of output distributions is within ``epsilon`` (tolerance 1e-12).

    Examples
    --------
    >>> import math
    >>> satisfies_dp([0.75, 0.25], [0.25, 0.75], math.log(3))
    True
    >>> satisfies_dp([0.75, 0.25], [0.25, 0.75], math.log(2.999))
    False
    """
    epsilon = require_epsilon(epsilon)
    return max_privacy_loss(p_d, p_d_prime) <= epsilon + DP_TOLERANCE
