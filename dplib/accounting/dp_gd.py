r"""Privacy accounting of full-batch DP-GD: the sensitivity of a clipped sum, zCDP over T steps, epsilon, sigma.

Each step of DP-GD (:mod:`dplib.learning.noisy_gd`) clips every person's gradient to L2 norm C
(step 2), adds Gaussian noise of standard deviation σC to their sum S (step 3) and moves the
weights by η S / n (step 4).

**Privacy, and under which neighbours.** Step 3 is the Gaussian mechanism on the clipped sum. Its
L2 sensitivity is C under **add/remove** neighbours (one person's clipped gradient is in the sum or
not) and 2C under **substitution** (one clipped gradient replaced by another, both of norm at most C).
So each step is :math:`\rho = \Delta_2^2 / (2\sigma^2 C^2)`-zCDP: :math:`1/(2\sigma^2)` or
:math:`2/\sigma^2` (Bun & Steinke 2016, Prop. 1.6); C cancels. Every step looks at the data
again: T steps are :math:`T\rho`-zCDP (Lemma 2.3), and
:math:`\varepsilon = T\rho + 2\sqrt{T\rho \ln(1/\delta)}` (Prop. 1.3).

**Dividing by n.** Step 4 is post-processing of the noisy sum only when n is public. Under
substitution it is (both neighbours hold n people), so :func:`dplib.learning.noisy_gd.noisy_gradient`,
which divides by ``len(X)``, is exactly as private as the noisy sum. Under add/remove it is not: the averages on the
two neighbours are :math:`\mathcal N(S/n, \sigma^2C^2/n^2)` and
:math:`\mathcal N((S + \bar g)/(n+1), \sigma^2C^2/(n+1)^2)`, Gaussians of different variances,
whose Rényi divergence (of the wider from the narrower) is infinite for every order
:math:`\alpha \ge (n+1)^2/(2n+1) \approx (n+1)/2` (it is finite only while
:math:`\alpha\sigma_Q^2 + (1-\alpha)\sigma_P^2 > 0`; Gil, Alajaji & Linder 2013): no ρ bounds it, so the
step divided by ``len(X)`` is not zCDP under add/remove. The add/remove ρ of :func:`dp_gd_rho` holds
only when every step divides by a size fixed and published in advance, as Abadi et al. (2016) divide by
their fixed lot size L: with ``len(X)``, each later step's clipped sum is taken at a point θ_t that
depends on n through the earlier steps, so not even the T noisy sums are Tρ-zCDP.

References
----------
M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep learning
with differential privacy", CCS 2016.
M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions, and lower
bounds", TCC 2016.
M. Gil, F. Alajaji, T. Linder, "Rényi divergence measures for commonly used univariate continuous
distributions", Information Sciences 249, 2013.
"""

from __future__ import annotations

import math

from scipy import optimize

from dplib._validation import require_epsilon, require_open_probability, require_positive_int
from dplib.accounting.zcdp import zcdp_rho, zcdp_to_epsilon

__all__ = [
    "gradient_sum_sensitivity",
    "dp_gd_rho",
    "dp_gd_epsilon",
    "noise_multiplier_for",
]

#: The two notions of neighbouring datasets, and the L2 sensitivity of a sum of clipped gradients in clip norms.
SENSITIVITY_IN_CLIP_NORMS = {"add_remove": 1.0, "substitute": 2.0}


# --------------------------------------------------------------------------- validation


def require_neighbours(neighbours) -> str:
    """``neighbours``, one of the keys of :data:`SENSITIVITY_IN_CLIP_NORMS`."""
    if neighbours not in SENSITIVITY_IN_CLIP_NORMS:
        raise ValueError(f"neighbours must be one of {sorted(SENSITIVITY_IN_CLIP_NORMS)}, got {neighbours!r}")
    return neighbours


def require_clip_norm(clip_norm) -> float:
    """The clip norm C as a float, finite and > 0."""
    return require_epsilon(clip_norm, "clip_norm")  # finite and > 0, as epsilon


def require_positive_noise_multiplier(noise_multiplier) -> float:
    """The noise multiplier σ as a float, finite and > 0 (what an epsilon is computed for)."""
    return require_epsilon(noise_multiplier, "noise_multiplier")  # finite and > 0: sigma = 0 is no privacy


# --------------------------------------------------------------------------- sensitivity and accounting


def gradient_sum_sensitivity(clip_norm: float, neighbours: str = "add_remove") -> float:
    r"""L2 sensitivity of a sum of gradients each clipped to norm ``clip_norm``: C (add/remove) or 2C (substitute).

    Notes
    -----
    Add or remove one person: the sum gains or loses one vector of norm at most C. Substitute one
    person: one vector :math:`\bar g` is replaced by another :math:`\bar g'`, and
    :math:`\|\bar g - \bar g'\|_2 \le 2C`, reached by two opposite gradients.

    Examples
    --------
    >>> gradient_sum_sensitivity(0.5, "add_remove"), gradient_sum_sensitivity(0.5, "substitute")
    (0.5, 1.0)
    """
    return SENSITIVITY_IN_CLIP_NORMS[require_neighbours(neighbours)] * require_clip_norm(clip_norm)


def dp_gd_rho(noise_multiplier: float, steps: int, neighbours: str = "add_remove") -> float:
    r"""zCDP of ``steps`` steps of DP-GD with noise multiplier σ: :math:`T \Delta^2 / (2\sigma^2 C^2)`.

    Parameters
    ----------
    noise_multiplier : float
        σ, finite and > 0.
    steps : int
        T >= 1.
    neighbours : {"add_remove", "substitute"}
        Neighbouring datasets differ by one person added or removed (:math:`\Delta = C`), or by one
        person's record replaced (:math:`\Delta = 2C`).

    Returns
    -------
    float
        ρ: :math:`T/(2\sigma^2)` under add/remove, :math:`2T/\sigma^2` under substitution.

    Notes
    -----
    Each step releases the clipped sum through the Gaussian mechanism with standard deviation σC:
    :math:`\rho_1 = \Delta^2/(2\sigma^2C^2)` (Bun & Steinke 2016, Prop. 1.6), where C cancels. The
    T releases compose to :math:`T\rho_1` (Lemma 2.3): every step is charged, even though only the
    last model is published, because each step's input depends on the data afresh.

    Under add/remove this holds only when every step divides by a size fixed and published in advance:
    :func:`dplib.learning.noisy_gd.noisy_gradient` divides by ``len(X)``, which keeps it only under
    substitution (under add/remove every later step's sum is taken at a point that depends on n; see the
    module's notes).

    Examples
    --------
    >>> dp_gd_rho(10.0, 100), dp_gd_rho(10.0, 100, "substitute")
    (0.5, 2.0)
    """
    noise_multiplier = require_positive_noise_multiplier(noise_multiplier)
    steps = require_positive_int(steps, "steps")
    per_step = zcdp_rho(gradient_sum_sensitivity(1.0, neighbours), noise_multiplier)  # C = 1: the noise is sigma
    return steps * per_step


def dp_gd_epsilon(noise_multiplier: float, steps: int, delta: float, neighbours: str = "add_remove") -> float:
    r"""epsilon of ``steps`` steps of DP-GD at ``delta``: :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}` with ρ = :func:`dp_gd_rho`.

    Examples
    --------
    >>> round(dp_gd_epsilon(10.0, 100, 1e-6), 4)
    5.7565
    """
    return zcdp_to_epsilon(dp_gd_rho(noise_multiplier, steps, neighbours), delta)


def noise_multiplier_for(epsilon: float, delta: float, steps: int, neighbours: str = "add_remove") -> float:
    r"""The noise multiplier σ for which ``steps`` steps of DP-GD are (epsilon, delta)-DP by the zCDP bound.

    Parameters
    ----------
    epsilon : float
        Target epsilon of the whole training, finite and > 0.
    delta : float
        Target delta, strictly between 0 and 1.
    steps : int
        T >= 1.
    neighbours : {"add_remove", "substitute"}

    Returns
    -------
    float
        σ with ``dp_gd_epsilon(σ, steps, delta, neighbours) == epsilon`` (to about 1e-12 relative).

    Notes
    -----
    :func:`dp_gd_epsilon` falls continuously and strictly from :math:`+\infty` (σ → 0) to 0
    (σ → ∞), so the equation has exactly one root; ``scipy.optimize.brentq`` finds it in
    :math:`\log\sigma`, on a bracket widened until it changes sign. (Solving
    :math:`\rho + 2\sqrt{\rho L} = \varepsilon` for :math:`\sqrt\rho` gives the same answer in
    closed form, :math:`\rho = (\sqrt{L + \varepsilon} - \sqrt L)^2` with :math:`L = \ln(1/\delta)`.)

    The conversion from zCDP is a bound, not the exact ε of the Gaussian steps, which is smaller (for
    1,000 Gaussian releases the bound gives 3.06 where the exact ε is 2.52:
    :func:`dplib.accounting.zcdp.zcdp_to_epsilon`): this σ is enough, not the least that would do.

    Examples
    --------
    >>> sigma = noise_multiplier_for(1.0, 1e-6, 100, "substitute")
    >>> round(sigma, 2), round(dp_gd_epsilon(sigma, 100, 1e-6, "substitute"), 9)
    (107.0, 1.0)
    """
    epsilon = require_epsilon(epsilon)
    delta = require_open_probability(delta, "delta")
    steps = require_positive_int(steps, "steps")
    neighbours = require_neighbours(neighbours)

    def excess(log_sigma: float) -> float:
        return dp_gd_epsilon(math.exp(log_sigma), steps, delta, neighbours) - epsilon

    low, high = 0.0, 1.0
    while excess(low) < 0:  # epsilon -> inf as sigma -> 0
        low -= 1.0
    while excess(high) > 0:  # epsilon -> 0 as sigma -> inf
        high += 1.0
    return math.exp(optimize.brentq(excess, low, high, xtol=1e-14, rtol=1e-14))
