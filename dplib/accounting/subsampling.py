r"""Amplification by subsampling: the privacy of a mechanism run on a Poisson sample, and of DP-SGD.

DP-SGD draws each step's batch by including every person
independently with probability q. A step on such a sample is far more private than on everybody:
an (ε, δ)-DP step becomes :math:`(\ln(1 + q(e^\varepsilon - 1)),\ q\delta)`-DP under add/remove
neighbours (Balle, Barthe & Gaboardi 2018), and the T steps of DP-SGD are accounted for with the
Rényi DP of the sampled Gaussian mechanism (Mironov, Talwar & Zhang 2019):
:func:`subsampled_epsilon`, :func:`sampled_gaussian_epsilon`. That account is an upper bound, not
the tight one: the conversion from Rényi DP to (ε, δ) loses some ε, and accountants of the privacy
loss distribution (Koskela, Jälkö & Honkela 2020; Gopi, Lee & Wutschitz 2021) get closer to the
true curve.

References
----------
M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep learning
with differential privacy", CCS 2016.
B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS 2018.
I. Mironov, K. Talwar, L. Zhang, "Rényi differential privacy of the sampled Gaussian mechanism",
arXiv:1908.10530, 2019.
A. Koskela, J. Jälkö, A. Honkela, "Computing tight differential privacy guarantees using FFT",
AISTATS 2020.
S. Gopi, Y. T. Lee, L. Wutschitz, "Numerical composition of differential privacy", NeurIPS 2021.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from dplib._validation import require_epsilon, require_open_probability, require_positive_int, require_probability
from dplib.accounting.dp_gd import require_positive_noise_multiplier

__all__ = ["subsampled_epsilon", "sampled_gaussian_epsilon"]


def subsampled_epsilon(epsilon: float, delta: float, sampling_rate: float) -> tuple[float, float]:
    r"""(epsilon, delta) of an (epsilon, delta)-DP mechanism run on a Poisson sample of rate q.

    Notes
    -----
    Each person is in the sample independently with probability q. Under add/remove neighbours
    the mechanism on the sample is

    .. math:: \big(\ln(1 + q(e^{\varepsilon} - 1)),\ q\delta\big)\text{-DP},

    about :math:`(q\varepsilon, q\delta)` for small ε (Balle, Barthe & Gaboardi 2018, Poisson
    subsampling under the add/remove relation; tight).

    Examples
    --------
    >>> epsilon, delta = subsampled_epsilon(1.0, 1e-6, 0.01)
    >>> round(epsilon, 5), delta
    (0.01704, 1e-08)
    """
    epsilon = require_epsilon(epsilon)
    delta = require_probability(delta, "delta")
    q = require_probability(sampling_rate, "sampling_rate")
    return math.log1p(q * math.expm1(epsilon)), q * delta


def sampled_gaussian_rdp(noise_multiplier: float, q: float, order: int) -> float:
    r"""Rényi DP of one step of the sampled Gaussian mechanism at an integer order α >= 2.

    :math:`\frac{1}{\alpha-1}\ln \sum_{k=0}^{\alpha} \binom{\alpha}{k} (1-q)^{\alpha-k} q^k
    e^{(k^2-k)/(2\sigma^2)}` (Mironov, Talwar & Zhang 2019, Sec. 3.3), in log space. The arguments
    are not validated here: σ > 0, q in (0, 1], as :func:`sampled_gaussian_epsilon` checks them.

    Examples
    --------
    >>> sampled_gaussian_rdp(2.0, 1.0, 4) == 4 / (2 * 2.0**2)  # q = 1: the Gaussian mechanism's alpha / (2 sigma^2)
    True
    """
    if q == 1.0:
        return order / (2 * noise_multiplier**2)  # the Gaussian mechanism itself
    k = np.arange(order + 1)
    log_terms = (special.gammaln(order + 1) - special.gammaln(k + 1) - special.gammaln(order - k + 1)
                 + (order - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * noise_multiplier**2))
    return float(special.logsumexp(log_terms)) / (order - 1)


def sampled_gaussian_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                             orders=range(2, 257)) -> float:
    r"""epsilon of DP-SGD: ``steps`` Gaussian steps (noise multiplier σ), each on a Poisson sample of rate q.

    Parameters
    ----------
    noise_multiplier : float
        σ, finite and > 0 (the noise on a step's clipped sum is σC; add/remove sensitivity C).
    sampling_rate : float
        q in (0, 1]: each person joins each step's batch independently with probability q.
    steps : int
        T >= 1.
    delta : float
        Strictly between 0 and 1.
    orders : iterable of int
        Integer Rényi orders α >= 2 to optimise over.

    Returns
    -------
    float
        :math:`\min_\alpha\ T\,\varepsilon_{\mathrm{RDP}}(\alpha) + \ln(1/\delta)/(\alpha - 1)`: an
        upper bound on epsilon under add/remove neighbours (Mironov 2017, Prop. 3, for the conversion).

    Notes
    -----
    The sampled Gaussian mechanism's Rényi DP (Mironov, Talwar & Zhang 2019) is the accountant of
    DP-SGD (Abadi et al. 2016's moments accountant). It is an upper bound: converting Rényi DP to
    (ε, δ) is lossy, and privacy-loss-distribution accountants (Koskela, Jälkö & Honkela 2020;
    Gopi, Lee & Wutschitz 2021) give a smaller ε for the same steps. With ``sampling_rate = 1`` it is full-batch
    DP-GD, :math:`\alpha/(2\sigma^2)` per step: the same Gaussian noise as :func:`dplib.accounting.dp_gd.dp_gd_rho`'s,
    converted with another (slightly looser) formula.

    Examples
    --------
    >>> round(sampled_gaussian_epsilon(1.0, 0.01, 10_000, 1e-5), 2)
    7.47
    """
    noise_multiplier = require_positive_noise_multiplier(noise_multiplier)
    q = require_probability(sampling_rate, "sampling_rate")
    if q == 0:
        raise ValueError("sampling_rate must be a probability in (0, 1], got 0")
    steps = require_positive_int(steps, "steps")
    delta = require_open_probability(delta, "delta")
    orders = [require_positive_int(order, "orders", minimum=2) for order in orders]
    if not orders:
        raise ValueError("orders must list at least one integer >= 2, got none")
    return min(steps * sampled_gaussian_rdp(noise_multiplier, q, order) + math.log(1 / delta) / (order - 1)
               for order in orders)
