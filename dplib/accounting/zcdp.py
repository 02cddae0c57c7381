"""Composing approximate DP: zero-concentrated DP (zCDP) and advanced composition.

Many Gaussian releases compose best in zCDP: each is rho-zCDP (:func:`zcdp_rho`), k releases
are the sum of their rhos, converted to (epsilon, delta) only once, at the end
(:func:`zcdp_to_epsilon`). Advanced composition (:func:`advanced_composition_epsilon`) composes
(epsilon, delta)-DP mechanisms directly; it is the baseline zCDP beats. The Gaussian mechanism
itself is :mod:`dplib.mechanisms.gaussian`.
"""

from __future__ import annotations

import math

from dplib._validation import require_epsilon, require_open_probability, require_positive_int, require_sensitivity

__all__ = ["zcdp_rho", "zcdp_to_epsilon", "advanced_composition_epsilon"]


def zcdp_rho(l2_sensitivity: float, sigma: float) -> float:
    r"""zCDP parameter of the Gaussian mechanism: ``rho = Delta_2^2 / (2 sigma^2)``.

    Notes
    -----
    Bun & Steinke (2016), Proposition 1.6. k Gaussian releases with parameters
    :math:`\rho_1, \dots, \rho_k` are :math:`(\sum_i \rho_i)`-zCDP (Lemma 2.3).

    References
    ----------
    M. Bun, T. Steinke, "Concentrated differential privacy: simplifications,
    extensions, and lower bounds", TCC 2016.

    Examples
    --------
    >>> zcdp_rho(2.0, 4.0)
    0.125
    """
    l2_sensitivity = require_sensitivity(l2_sensitivity, "l2_sensitivity")
    sigma = require_epsilon(sigma, "sigma")
    return l2_sensitivity**2 / (2 * sigma**2)


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    r"""epsilon of a rho-zCDP mechanism at a given delta: ``rho + 2 sqrt(rho ln(1/delta))``.

    Notes
    -----
    Bun & Steinke (2016), Proposition 1.3: rho-zCDP implies
    :math:`(\rho + 2\sqrt{\rho \ln(1/\delta)}, \delta)`-DP for every :math:`\delta > 0`.

    The conversion is a bound, not the exact epsilon. rho is exact for Gaussian noise, but
    the epsilon it converts to is larger than the mechanism's true one: k Gaussian releases
    of sensitivity :math:`\Delta_2` and noise sigma are together one Gaussian release of
    sensitivity :math:`\sqrt k\,\Delta_2`, whose exact epsilon :func:`dplib.mechanisms.gaussian.gaussian_delta` gives.
    For k = 1000, sigma = ``gaussian_sigma(1, 0.1, 1e-7)`` (57.17) and delta = 1e-6 this
    function gives 3.06, the exact epsilon is 2.52. Canonne, Kamath & Steinke (2020) give a
    tighter conversion.

    Examples
    --------
    >>> round(zcdp_to_epsilon(0.125, 1e-5), 4)
    2.5243
    """
    rho = require_sensitivity(rho, "rho")
    delta = require_open_probability(delta, "delta")
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def advanced_composition_epsilon(epsilon: float, k: int, delta_prime: float) -> float:
    r"""Total epsilon of k (epsilon, delta)-DP mechanisms under advanced composition.

    Notes
    -----
    .. math:: \varepsilon' = \sqrt{2k \ln(1/\delta')}\,\varepsilon + k\varepsilon(e^{\varepsilon} - 1),

    with total delta :math:`k\delta + \delta'` (Dwork, Rothblum, Vadhan 2010; Dwork & Roth
    2014, Theorem 3.20): the slack :math:`\delta'` comes on top of the k mechanisms' own
    deltas. It beats the basic :math:`k\varepsilon` only when k is large and epsilon small.

    References
    ----------
    C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and differential privacy", FOCS 2010.

    Examples
    --------
    >>> round(advanced_composition_epsilon(0.1, 100, 1e-5), 4)
    5.8502
    """
    epsilon = require_epsilon(epsilon)
    k = require_positive_int(k, "k")
    delta_prime = require_open_probability(delta_prime, "delta_prime")
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon + k * epsilon * math.expm1(epsilon)
