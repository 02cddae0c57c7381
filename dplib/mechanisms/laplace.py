"""The Laplace mechanism and the facts about it that the course uses.

The Laplace mechanism answers a numeric query ``f`` with ``f(D) + Lap(b)``, where the
scale ``b = sensitivity / epsilon``. Because the Laplace density is proportional to
``exp(-|z| / b)``, moving the true answer by at most ``sensitivity`` changes the
density of any output by a factor of at most ``exp(sensitivity / b) = exp(epsilon)``.
"""

from __future__ import annotations

import math

import numpy as np

from dplib._arrays import as_output
from dplib._validation import (
    require_epsilon,
    require_finite,
    require_nonnegative,
    require_numeric_array,
    require_open_probability,
    require_positive_int,
    require_sensitivity,
)

__all__ = [
    "laplace_scale",
    "laplace_mech",
    "laplace_tail",
    "laplace_interval",
    "clipped_sum_sensitivity",
    "proportion_sensitivity",
    "noisy_average",
    "uniform_noise_epsilon",
    "laplace_privacy_loss",
]


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale ``b = sensitivity / epsilon`` of the Laplace noise that gives epsilon-DP.

    Examples
    --------
    >>> laplace_scale(2.0, 0.5)
    4.0
    """
    return require_sensitivity(sensitivity) / require_epsilon(epsilon)


def laplace_mech(value, sensitivity: float, epsilon: float, rng=None):
    r"""Add Laplace noise of scale ``sensitivity / epsilon`` to each entry of ``value``.

    Parameters
    ----------
    value : float or array_like of float
        True answer(s). Each entry gets its own, independent noise.
    sensitivity : float
        L1 sensitivity of the query, finite and >= 0.
    epsilon : float
        Privacy parameter, finite and > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness (``None`` gives a fresh ``default_rng()``).

    Returns
    -------
    float or numpy.ndarray
        Noisy answer(s), same shape as ``value``.

    Raises
    ------
    ValueError
        If ``value`` holds NaN or inf, or ``sensitivity`` or ``epsilon`` is out of range.

    Notes
    -----
    .. math:: M(D) = f(D) + Z, \quad Z \sim \mathrm{Lap}(b),\ b = \Delta f / \varepsilon,

    with density :math:`\frac{1}{2b} e^{-|z|/b}`, mean 0 and variance :math:`2b^2`.
    The ratio of output densities on neighbours is at most
    :math:`e^{|f(D)-f(D')|/b} \le e^{\varepsilon}` (Dwork et al., 2006).

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith, "Calibrating noise to sensitivity in
    private data analysis", TCC 2006.

    Examples
    --------
    >>> import numpy as np
    >>> noisy = laplace_mech([10, 20, 30], sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0))
    >>> noisy.shape
    (3,)
    >>> float(np.round(laplace_mech(10.0, 1, 0.5, rng=np.random.default_rng(0)), 3))
    10.64
    """
    scale = laplace_scale(sensitivity, epsilon)
    value = require_numeric_array(value, "value")
    rng = np.random.default_rng(rng)
    noise = laplace_noise(rng, scale, value.shape)
    noise += value
    return as_output(noise)


def laplace_noise(rng: np.random.Generator, scale: float, shape: tuple) -> np.ndarray:
    """``rng.laplace(0.0, scale, shape)`` from the same uniforms, about three times faster.

    numpy's sampler maps each uniform U to ``scale * ln(2U)`` if U < 1/2 and to
    ``-scale * ln(2 - 2U)`` otherwise, one scalar ``log`` at a time. The same arithmetic,
    vectorized, branch-free and in place, uses numpy's SIMD ``log``: the draws consume the
    generator exactly as ``rng.laplace`` does and agree with it to within 2 ulp.
    """
    if scale == 0.0:  # numpy returns +0.0 for every draw; keep its signs of zero too
        return rng.laplace(0.0, scale, size=shape)
    state = rng.bit_generator.state
    u = rng.random(shape)
    noise = np.subtract(2.0, u, out=np.empty(shape))
    noise -= u  # 2 - U - U, rounded as numpy rounds it
    u += u  # 2U, exact
    np.minimum(noise, u, out=noise)  # 2U below 1/2, 2 - 2U from 1/2 on: in [0, 1]
    if not noise.all():  # U == 0 (probability 2**-53): numpy draws again, so let numpy do it all
        rng.bit_generator.state = state
        return rng.laplace(0.0, scale, size=shape)
    np.log(noise, out=noise)  # <= 0
    noise *= scale
    u -= 1.0  # < 0 exactly when U < 1/2
    return np.copysign(noise, u, out=noise)  # negative below 1/2, positive from 1/2 on


def laplace_tail(t: float, sensitivity: float, epsilon: float) -> float:
    r"""Probability that Laplace noise of scale ``sensitivity / epsilon`` is at least ``t`` in size.

    Notes
    -----
    .. math:: P(|Z| \ge t) = e^{-t / b} = e^{-t \varepsilon / \Delta f}, \quad t \ge 0.

    Examples
    --------
    >>> round(laplace_tail(4.0, sensitivity=2.0, epsilon=0.5), 4)
    0.3679
    """
    t = require_nonnegative(t, "t")
    scale = laplace_scale(sensitivity, epsilon)
    if scale == 0.0:
        return 1.0 if t == 0.0 else 0.0
    return math.exp(-t / scale)


def laplace_interval(sensitivity: float, epsilon: float, alpha: float) -> float:
    r"""Half-width ``w`` with ``P(|noise| <= w) = 1 - alpha`` for Laplace noise.

    Notes
    -----
    Solving :math:`e^{-w/b} = \alpha` gives :math:`w = b \ln(1/\alpha)` with
    :math:`b = \Delta f / \varepsilon`.

    Examples
    --------
    >>> round(laplace_interval(sensitivity=1.0, epsilon=0.5, alpha=0.05), 4)
    5.9915
    """
    alpha = require_open_probability(alpha, "alpha")
    return laplace_scale(sensitivity, epsilon) * math.log(1.0 / alpha)


def clipped_sum_sensitivity(lower: float, upper: float) -> float:
    """Sensitivity of a sum whose terms are clipped to ``[lower, upper]``: ``max(|lower|, |upper|)``.

    Adding or removing one person changes the sum by that person's clipped value,
    which is at most ``max(|lower|, |upper|)`` in size.

    Examples
    --------
    >>> clipped_sum_sensitivity(-5, 3)
    5.0
    """
    lower, upper = _require_bounds(lower, upper)
    return max(abs(lower), abs(upper))


def proportion_sensitivity(n: int) -> float:
    """Sensitivity ``1/n`` of a proportion over a dataset of known size ``n``.

    Changing one person's record moves a count by at most 1, so the proportion
    ``count / n`` moves by at most ``1 / n``.

    Examples
    --------
    >>> proportion_sensitivity(200)
    0.005
    """
    return 1.0 / require_positive_int(n, "n")


def noisy_average(values, lower: float, upper: float, epsilon: float, rng=None) -> float:
    r"""Differentially private mean: clip, then a noisy sum over a noisy count.

    Each half uses ``epsilon / 2``; by sequential composition the whole release is
    ``epsilon``-DP.

    Notes
    -----
    .. math:: \hat\mu = \frac{\sum_i \mathrm{clip}(x_i) + \mathrm{Lap}(2 \max(|l|,|u|)/\varepsilon)}
                              {n + \mathrm{Lap}(2/\varepsilon)}

    Examples
    --------
    >>> import numpy as np
    >>> ages = np.random.default_rng(1).integers(18, 90, size=10_000)
    >>> round(noisy_average(ages, 0, 100, epsilon=1.0, rng=np.random.default_rng(2)))
    54
    """
    lower, upper = _require_bounds(lower, upper)
    epsilon = require_epsilon(epsilon)
    values = require_numeric_array(values, "values").ravel()
    rng = np.random.default_rng(rng)
    clipped = np.clip(values, lower, upper)
    noisy_sum = laplace_mech(clipped.sum(), clipped_sum_sensitivity(lower, upper), epsilon / 2, rng=rng)
    noisy_count = laplace_mech(float(clipped.size), 1.0, epsilon / 2, rng=rng)
    return float(noisy_sum / noisy_count)


def uniform_noise_epsilon() -> float:
    """Epsilon of adding bounded (e.g. uniform) noise: always infinite.

    With noise bounded by ``B``, an output within ``B`` of ``f(D)`` but farther than
    ``B`` from ``f(D')`` has positive probability under ``D`` and probability 0 under
    ``D'``: the ratio is unbounded, so no finite epsilon holds.

    Examples
    --------
    >>> uniform_noise_epsilon()
    inf
    """
    return math.inf


def laplace_privacy_loss(outputs, value_d: float, value_d_prime: float, scale: float) -> np.ndarray:
    r"""Privacy loss ``ln(p_D(y) / p_D'(y))`` of each output y, for true answers ``value_d``, ``value_d_prime``.

    Parameters
    ----------
    outputs : array_like of float
        Noisy answers y at which to evaluate the loss.
    value_d, value_d_prime : float
        The true answers f(D) and f(D') on two neighbouring datasets.
    scale : float
        Laplace scale b (e.g. :func:`laplace_scale`), finite and > 0.

    Notes
    -----
    With densities :math:`\frac{1}{2b} e^{-|y - f(D)|/b}` and :math:`b = \Delta f/\varepsilon`,

    .. math:: L(y) = \frac{|y - f(D')| - |y - f(D)|}{b},

    which by the triangle inequality never exceeds :math:`|f(D) - f(D')|/b \le \varepsilon`
    in size, and reaches it for every output outside the interval between the two answers.
    The discrete counterpart is :func:`dplib.accounting.privacy_loss.privacy_loss_per_output`.

    Examples
    --------
    >>> laplace_privacy_loss([-5.0, 0.5, 5.0], 0.0, 1.0, scale=2.0)
    array([ 0.5,  0. , -0.5])
    """
    outputs = require_numeric_array(outputs, "outputs")
    value_d = require_finite(value_d, "value_d")
    value_d_prime = require_finite(value_d_prime, "value_d_prime")
    scale = require_epsilon(scale, "scale")  # the same rule: a finite number > 0
    return (np.abs(outputs - value_d_prime) - np.abs(outputs - value_d)) / scale


def _require_bounds(lower, upper) -> tuple[float, float]:
    lower = require_finite(lower, "lower")
    upper = require_finite(upper, "upper")
    if lower > upper:
        raise ValueError(f"lower must be <= upper, got lower={lower!r}, upper={upper!r}")
    return lower, upper
