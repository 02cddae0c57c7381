"""Approximate (epsilon, delta)-DP: the Gaussian mechanism, classic and analytic, and its exact delta.

A mechanism is (epsilon, delta)-DP when ``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta``
for all neighbours and all sets of outputs S. The Gaussian mechanism adds
``N(0, sigma^2)`` noise calibrated to the **L2** sensitivity of the query. Its privacy
composes best in zero-concentrated DP (zCDP): :mod:`dplib.accounting.zcdp`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from dplib._arrays import as_output
from dplib._validation import require_epsilon, require_numeric_array, require_open_probability, require_sensitivity

__all__ = [
    "gaussian_sigma",
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_mech",
    "l2_sensitivity_of_histogram",
]

#: L2 sensitivity of a histogram (one count per category) under each notion of neighbours.
NEIGHBOURS = {"add_remove": 1.0, "substitute": math.sqrt(2.0)}


def gaussian_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    r"""Classic noise scale of the Gaussian mechanism: ``sigma = Delta_2 sqrt(2 ln(1.25 / delta)) / epsilon``.

    Parameters
    ----------
    l2_sensitivity : float
        L2 sensitivity of the query, finite and >= 0.
    epsilon : float
        Privacy parameter, strictly between 0 and 1 (the bound is proven only there).
    delta : float
        Privacy parameter, strictly between 0 and 1.

    Returns
    -------
    float
        The standard deviation sigma of the noise.

    Raises
    ------
    ValueError
        If a parameter is out of range; for ``epsilon >= 1`` the message points to
        :func:`analytic_gaussian_sigma`, which is exact for every epsilon.

    Notes
    -----
    .. math:: \sigma = \frac{\Delta_2 \sqrt{2 \ln(1.25/\delta)}}{\varepsilon}, \qquad 0 < \varepsilon < 1.

    References
    ----------
    C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014,
    Theorem A.1 (Appendix A).

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 0.5, 1e-5), 4)
    9.6896
    """
    l2_sensitivity = require_sensitivity(l2_sensitivity, "l2_sensitivity")
    epsilon = require_epsilon(epsilon)
    if epsilon >= 1:
        raise ValueError(
            f"epsilon must be < 1 for the classic Gaussian bound (Dwork & Roth, Thm A.1), got {epsilon!r}; "
            "for any epsilon use the analytic Gaussian mechanism, dplib.analytic_gaussian_sigma (Balle & Wang 2018)"
        )
    delta = require_open_probability(delta, "delta")
    return l2_sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def gaussian_delta(sigma: float, l2_sensitivity: float, epsilon: float) -> float:
    r"""Smallest delta for which ``N(0, sigma^2)`` noise is (epsilon, delta)-DP (exact).

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise, finite and >= 0.
    l2_sensitivity : float
        L2 sensitivity of the query, finite and >= 0.
    epsilon : float
        Privacy parameter, finite and > 0.

    Notes
    -----
    Balle & Wang (2018), Theorem 8: with :math:`a = \Delta_2 / (2\sigma)` and
    :math:`b = \varepsilon \sigma / \Delta_2`,

    .. math:: \delta(\sigma) = \Phi(a - b) - e^{\varepsilon} \Phi(-a - b).

    The second term is computed as ``exp(epsilon + log Phi(-a - b))`` so that a large
    epsilon does not overflow.

    delta is **not** the probability that the privacy loss exceeds epsilon. With
    :math:`L` the privacy loss, (epsilon, delta)-DP holds exactly when
    :math:`E[(1 - e^{\varepsilon - L})_+] \le \delta` (the exact condition behind Balle & Wang 2018), so
    :math:`P(L > \varepsilon) \le \delta` is sufficient but not necessary. For Gaussian
    noise :math:`L \sim \mathcal N(\mu, 2\mu)`, :math:`\mu = \Delta_2^2 / (2\sigma^2)`: at
    :math:`\Delta_2 = \sigma = \varepsilon = 1` the mechanism is (1, 0.127)-DP, yet
    :math:`P(L > 1) = P(Z > 0.5) = 0.309`.

    Examples
    --------
    >>> round(gaussian_delta(1.0, 1.0, 0.5), 4)
    0.2384
    >>> round(gaussian_delta(1.0, 1.0, 1.0), 4)
    0.1269
    """
    sigma = require_sensitivity(sigma, "sigma")
    l2_sensitivity = require_sensitivity(l2_sensitivity, "l2_sensitivity")
    epsilon = require_epsilon(epsilon)
    if sigma == 0 or l2_sensitivity == 0:
        return 1.0 if l2_sensitivity > 0 else 0.0
    a, b = l2_sensitivity / (2 * sigma), epsilon * sigma / l2_sensitivity
    return float(special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b)))


def analytic_gaussian_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    r"""Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP, for every epsilon > 0.

    Parameters
    ----------
    l2_sensitivity : float
        L2 sensitivity of the query, finite and >= 0.
    epsilon : float
        Privacy parameter, finite and > 0 (no upper limit).
    delta : float
        Privacy parameter, strictly between 0 and 1.

    Returns
    -------
    float
        sigma solving :math:`\Phi(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta})
        - e^{\varepsilon}\Phi(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}) = \delta`.

    Notes
    -----
    The left-hand side (:func:`gaussian_delta`) is the exact delta of Gaussian noise and
    decreases in sigma (Balle & Wang 2018, Theorem 8), so the root is unique; it is
    found with ``scipy.optimize.brentq`` for ``Delta = 1`` (sigma scales with Delta).
    Always below the classic :func:`gaussian_sigma`.

    References
    ----------
    B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising", ICML 2018.

    Examples
    --------
    >>> round(analytic_gaussian_sigma(1.0, 0.5, 1e-5), 4)
    7.0318
    >>> round(analytic_gaussian_sigma(1.0, 4.0, 1e-5), 4)
    1.0812
    """
    l2_sensitivity = require_sensitivity(l2_sensitivity, "l2_sensitivity")
    epsilon = require_epsilon(epsilon)
    delta = require_open_probability(delta, "delta")
    if l2_sensitivity == 0:
        return 0.0

    def excess(log_sigma: float) -> float:
        return gaussian_delta(math.exp(log_sigma), 1.0, epsilon) - delta

    low, high = -1.0, 1.0
    while excess(low) < 0:  # delta(sigma) -> 1 as sigma -> 0
        low -= 1.0
    while excess(high) > 0:  # delta(sigma) -> 0 as sigma -> inf
        high += 1.0
    log_sigma = optimize.brentq(excess, low, high, xtol=1e-14, rtol=1e-14)
    return l2_sensitivity * math.exp(log_sigma)


def gaussian_mech(value, l2_sensitivity: float, epsilon: float, delta: float, rng=None, *, analytic: bool = False):
    r"""Add ``N(0, sigma^2)`` noise to each entry of ``value``, sigma calibrated to (epsilon, delta).

    Parameters
    ----------
    value : float or array_like of float
        True answer(s); each entry gets its own, independent noise.
    l2_sensitivity : float
        L2 sensitivity of the whole (vector) query, finite and >= 0.
    epsilon, delta : float
        Privacy parameters; ``0 < epsilon < 1`` for the classic bound.
    rng : numpy.random.Generator, int or None
        Source of randomness.
    analytic : bool
        Use :func:`analytic_gaussian_sigma` (exact, any epsilon) instead of the classic
        :func:`gaussian_sigma`.

    Returns
    -------
    float or numpy.ndarray
        Noisy answer(s), same shape as ``value``.

    Notes
    -----
    .. math:: M(D) = f(D) + Z, \quad Z \sim \mathcal N(0, \sigma^2 I), \quad
              \sigma = \Delta_2 \sqrt{2 \ln(1.25/\delta)} / \varepsilon

    (Dwork & Roth 2014, Theorem A.1).

    Examples
    --------
    >>> import numpy as np
    >>> gaussian_mech(np.zeros((2, 3)), 1.0, 0.5, 1e-5, rng=np.random.default_rng(0)).shape
    (2, 3)
    """
    sigma = (analytic_gaussian_sigma if analytic else gaussian_sigma)(l2_sensitivity, epsilon, delta)
    value = require_numeric_array(value, "value")
    rng = np.random.default_rng(rng)
    return as_output(value + rng.normal(0.0, sigma, size=value.shape))


def l2_sensitivity_of_histogram(neighbours: str) -> float:
    r"""L2 sensitivity of a histogram: 1 for ``"add_remove"``, sqrt(2) for ``"substitute"``.

    Notes
    -----
    Adding or removing a person changes one count by 1: :math:`\|\cdot\|_2 = 1`.
    Changing a person's category moves one count down by 1 and another up by 1:
    :math:`\sqrt{1^2 + 1^2} = \sqrt 2` (the L1 sensitivity is 2).

    Examples
    --------
    >>> l2_sensitivity_of_histogram("add_remove")
    1.0
    >>> round(l2_sensitivity_of_histogram("substitute"), 4)
    1.4142
    """
    if neighbours not in NEIGHBOURS:
        raise ValueError(f"neighbours must be one of {sorted(NEIGHBOURS)}, got {neighbours!r}")
    return NEIGHBOURS[neighbours]
