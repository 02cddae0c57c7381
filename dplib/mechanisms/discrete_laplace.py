r"""Laplace noise on a grid: the fixes of the floating-point attack, with no gaps to attack.

Every sampler here outputs grid points ``g * j``, on a grid that does not depend on the input:
:func:`grid_laplace` rounds the input to the grid and adds a whole number of grid steps drawn from
the discrete Laplace distribution. Its steps come from numpy's geometric sampler, itself
floating-point arithmetic: every probability it gives is a multiple of 2**-53 and its tails are cut
off at a largest value, so it is not pure ε-DP but has a δ of about 1e-15, mostly from the rounded
probabilities (:mod:`dplib.mechanisms.numpy_geometric` computes both exactly).
:func:`exact_grid_laplace` draws the steps exactly from integers
(:func:`discrete_laplace_steps`; Canonne, Kamath & Steinke 2020, Algorithm 2) and reaches every
grid point; OpenDP (:func:`opendp_laplace`) does the same with its own secure generator (OpenDP's
documentation: "Floating-point safety" of ``make_laplace``). The attack these fix is
:mod:`dplib.attacks.floating_point`.

References
----------
C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dplib._arrays import as_output
from dplib._validation import require_epsilon, require_finite, require_numeric_array

__all__ = [
    "grid_laplace",
    "discrete_laplace_steps",
    "exact_grid_laplace",
    "on_grid",
    "opendp_laplace",
    "opendp_laplace_epsilon",
]


def grid_laplace(value, scale: float, granularity: float, rng=None):
    r"""``value`` rounded to a multiple of ``granularity``, plus a whole number of grid steps of discrete Laplace noise.

    Parameters
    ----------
    value : float or array_like of float
        True answer(s).
    scale : float
        Laplace scale ``b``, finite and > 0.
    granularity : float
        Grid step ``g``, finite and > 0; a power of two keeps the arithmetic exact.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Notes
    -----
    The noise is :math:`g\,K` with :math:`P(K = j) \propto e^{-|j| g / b}`, drawn as the difference of two
    geometric numbers of success probability :math:`1 - e^{-g/b}`. Every output is a grid point, so
    there are no gaps of the textbook kind to attack. On the reals a query of sensitivity Δ is then
    :math:`(\Delta + g)/b`-DP (rounding the input can move it by one more step). On the computer,
    ``Generator.geometric`` (for :math:`g/b \ge \ln 1.5`, where its success probability is at least 1/3)
    compares one uniform :math:`U = j/2^{53}` with running sums of doubles: every :math:`P(G = k)` is a
    multiple of :math:`2^{-53}`, not :math:`p(1-p)^{k-1}`, and there is a largest value (73 at
    :math:`g/b = 1/2`), so the release is :math:`((\Delta + g)/b, \delta)`-DP, not pure, with
    δ ≈ 1e-15, mostly from the rounded probabilities rather than the cut. Computed exactly
    (:func:`dplib.mechanisms.numpy_geometric.grid_laplace_delta`), inputs 1, 2 and 3 grid steps apart at :math:`g/b = 1/2` give
    δ = 7.9e-16, 1.5e-15 and 2.6e-15 (at ε = 1, 2, 3 times g/b); at :math:`g/b = 1`, up to 7.7e-15.
    numpy's search loop also never ends for the two largest uniforms at :math:`g/b = 1/2`
    (:math:`U > 1 - 3 \cdot 2^{-53}`, where its running sum stops growing): a hang with probability
    about 2.2e-16 per geometric draw (:func:`dplib.mechanisms.numpy_geometric.numpy_geometric_search`). :func:`exact_grid_laplace` samples
    the steps exactly and has neither the δ nor the hang.

    Examples
    --------
    >>> noisy = grid_laplace(np.full(5, 3.1), 1.0, 0.25, rng=np.random.default_rng(0))
    >>> bool(np.all(noisy / 0.25 == np.round(noisy / 0.25)))
    True
    """
    scale = require_epsilon(scale, "scale")
    granularity = require_epsilon(granularity, "granularity")
    value = require_numeric_array(value, "value")
    rng = np.random.default_rng(rng)
    success = -math.expm1(-granularity / scale)
    steps = rng.geometric(success, value.shape) - rng.geometric(success, value.shape)
    return as_output(np.round(value / granularity) * granularity + granularity * steps)


def bernoulli_exp(numerator: np.ndarray, denominator: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""Exact Bernoulli(:math:`e^{-\gamma}`) draws for :math:`\gamma` = numerator / denominator in [0, 1].

    Canonne, Kamath & Steinke (2020), Algorithm 1: draw Bernoulli(γ/1), Bernoulli(γ/2), ... until the
    first 0, at the K-th draw; return K odd. :math:`P(K > k) = \gamma^k / k!`, so
    :math:`P(K \text{ odd}) = \sum_k (-\gamma)^k / k! = e^{-\gamma}`. Each Bernoulli(γ/k) is
    ``integers(0, denominator * k) < numerator``: integer arithmetic only, so the probability is exact.
    """
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, np.int64), np.asarray(denominator, np.int64))
    draws = np.ones(numerator.shape, dtype=np.int64)  # K: the index of the draw under way
    active = np.flatnonzero(np.ones(numerator.shape, dtype=bool))
    while active.size:
        one = rng.integers(0, denominator.flat[active] * draws.flat[active]) < numerator.flat[active]
        draws.flat[active[one]] += 1
        active = active[one]
    return draws % 2 == 1


#: Bernoulli(1/e) draws made at once for each V: all of them succeed with probability e^-3 < 5%, and only then more.
_V_BLOCK = 3


def _geometric_exp_minus_one(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` exact draws of V, P(V = v) = (1 - 1/e) e^(-v): the number of Bernoulli(1/e) successes before a failure.

    The Bernoulli(1/e) draws come in blocks of :data:`_V_BLOCK` per pending V (one call of :func:`bernoulli_exp`
    for all of them): V grows by the successes before the block's first failure, and the few Vs whose whole
    block succeeded draw another block. Same draws, same law, in a few calls instead of one per success.
    """
    successes = np.zeros(count, dtype=np.int64)
    active = np.arange(count)
    while active.size:
        ones = np.ones((active.size, _V_BLOCK), np.int64)
        block = bernoulli_exp(ones, ones, rng)
        run = np.argmin(block, axis=1)  # successes before the first failure (0 if the first fails)
        complete = block.all(axis=1)  # no failure in the block: V is at least the whole block, draw on
        successes[active] += np.where(complete, _V_BLOCK, run)
        active = active[complete]
    return successes


def discrete_laplace_steps(scale_steps, size=None, rng=None):
    r"""Exact draws of the discrete Laplace distribution, :math:`P(K = j) \propto e^{-|j| / t}`, ``t = scale_steps``.

    Parameters
    ----------
    scale_steps : float or fractions.Fraction
        The scale t in grid steps, > 0, with an exact fraction of numerator and denominator below 2**40
        (a power-of-two grid and a scale of few digits have one: 1 / 2**-20 = 2**20).
    size : int or tuple of int, optional
        Shape of the draws (default: one number).
    rng : numpy.random.Generator, int or None
        Source of random integers.

    Notes
    -----
    Canonne, Kamath & Steinke (2020), Algorithm 2, for t = n / s: draw U uniform in {0, ..., n - 1} and
    keep it with probability :math:`e^{-U/n}`; draw V with :math:`P(V = v) \propto e^{-v}`; X = U + nV
    has :math:`P(X = x) \propto e^{-x/n}`; Y = X // s has :math:`P(Y = y) \propto e^{-y s / n}`; a fair
    sign B, rejecting (B = 1, Y = 0) so that 0 is not counted twice, gives (1 - 2B) Y. Every step compares
    uniform random integers, so the distribution is exact: every integer has probability exactly
    :math:`\frac{1 - r}{1 + r} r^{|j|}`, :math:`r = e^{-1/t}`, with no cut-off (V has no largest value
    but the int64 range, reached with probability below :math:`e^{-2^{62}/n}`). Hence a shift of one
    step changes any probability by a factor of at most :math:`e^{1/t}`, exactly.

    Examples
    --------
    >>> steps = discrete_laplace_steps(2.0, size=10_000, rng=0)
    >>> steps.dtype, bool(abs(steps.mean()) < 0.2)
    (dtype('int64'), True)
    """
    scale = Fraction(require_epsilon(float(scale_steps), "scale_steps") if not isinstance(scale_steps, Fraction)
                     else scale_steps)
    if scale <= 0 or scale.numerator >= 2**40 or scale.denominator >= 2**40:
        raise ValueError(f"scale_steps must be > 0 with numerator and denominator below 2**40, got {scale_steps!r}")
    n, s = scale.numerator, scale.denominator
    rng = np.random.default_rng(rng)
    shape = () if size is None else size
    total = int(np.prod(shape, dtype=np.int64))
    result = np.empty(total, dtype=np.int64)
    # A candidate is accepted with probability (1 - 1/e) (1 + r) / 2 or more, r = e^(-s/n) (U kept w.p. >= 1 - 1/e,
    # then (B = 1, Y = 0) rejected w.p. (1 - r) / 2). Each round draws enough independent candidates that it
    # usually fills every missing draw (the expected number plus 6 standard deviations), and keeps the first
    # accepted ones in order: they are independent draws of the law, whatever the others did.
    accept = (1 - math.exp(-1)) * (1 + math.exp(-s / n)) / 2
    filled = 0
    while filled < total:
        missing = total - filled
        candidates = int(missing / accept + 6 * math.sqrt(missing * (1 - accept)) / accept) + 1
        u = rng.integers(0, n, candidates)
        u = u[bernoulli_exp(u, np.full(candidates, n, np.int64), rng)]
        y = (u + n * _geometric_exp_minus_one(u.size, rng)) // s
        negative = rng.integers(0, 2, u.size) == 1
        accepted = np.where(negative, -y, y)[~(negative & (y == 0))][:missing]
        result[filled:filled + accepted.size] = accepted
        filled += accepted.size
    return as_output(result.reshape(shape))


def exact_grid_laplace(value, scale: float, granularity: float = 2.0**-20, size=None, rng=None):
    r"""``value`` rounded to a multiple of ``granularity`` (a power of two), plus exact discrete Laplace grid steps.

    Parameters
    ----------
    value : float or array_like of float
        True answer(s).
    scale : float
        Laplace scale ``b``, finite and > 0; ``scale / granularity`` must be an exact fraction of
        numerator and denominator below 2**40 (see :func:`discrete_laplace_steps`).
    granularity : float
        Grid step ``g``, a power of two (default 2**-20), so that rounding to the grid and adding whole
        steps are exact in doubles (for answers below 2**32 in size).
    size : int or tuple of int, optional
        Number of draws (default: one per entry of ``value``).
    rng : numpy.random.Generator, int or None
        Source of random integers.

    Notes
    -----
    The output is :math:`g\,(\mathrm{round}(v/g) + K)` with :math:`P(K = j) \propto e^{-|j| g / b}`, exactly
    (:func:`discrete_laplace_steps`). Every grid point can come from every input, with probabilities
    whose ratio for inputs :math:`c` steps apart is at most :math:`e^{c g / b}`, exactly: on the
    computer, not only on the reals. A query of sensitivity Δ is :math:`(\Delta + g)/b`-DP, and
    :math:`\Delta/b`-DP when its answers are multiples of g (counts; sums of values on the grid), since
    then rounding moves nothing. This is OpenDP's construction for ``make_laplace`` on floats
    (its grid is finer), driven here by a seedable numpy generator instead of the system's.

    "Exactly" assumes two things. The random integers are truly random: numpy's PCG64 is a statistical
    generator, not a cryptographic one (its state can be recovered from its outputs, and then every
    later draw is known), so the guarantee holds against someone who cannot predict it; OpenDP draws
    from the operating system's secure generator. And the input is finite: a NaN or infinite ``value``
    raises a ``ValueError``, which is itself an output that reveals something about the input.

    Examples
    --------
    >>> noisy = exact_grid_laplace(np.full(5, 3.0), 1.0, rng=0)
    >>> bool(np.all(on_grid(noisy, 3.0)))
    True
    """
    scale = require_epsilon(scale, "scale")
    granularity = require_epsilon(granularity, "granularity")
    if math.frexp(granularity)[0] != 0.5:
        raise ValueError(f"granularity must be a power of two, got {granularity!r}")
    value = require_numeric_array(value, "value")
    steps = discrete_laplace_steps(Fraction(scale) / Fraction(granularity), value.shape if size is None else size, rng)
    return as_output(np.asarray((np.round(value / granularity) + steps) * granularity, dtype=float))


def on_grid(outputs, value, granularity: float = 2.0**-20):
    """Exact membership for :func:`exact_grid_laplace`: whether each output can come from ``value``.

    An output can come from ``value`` exactly when it is ``round(value / g) * g`` plus a whole number of
    grid steps: every grid point has positive probability (no cut-off), and nothing else is possible.

    Examples
    --------
    >>> bool(on_grid(3.0 + 2.0**-20, 2.0)), bool(on_grid(3.0 + 2.0**-21, 2.0))
    (True, False)
    """
    granularity = require_epsilon(granularity, "granularity")
    offset = require_numeric_array(outputs, "outputs") / granularity - np.round(require_finite(value, "value") / granularity)
    return as_output(np.isfinite(offset) & (offset == np.round(offset)))


def _opendp_laplace_measurement(scale: float, k, size=None):
    import opendp.prelude as dp  # about 1 s to import: only when asked for

    dp.enable_features("contrib")
    if size is None:
        space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    else:
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size), dp.l1_distance(T=float)
    return dp.m.make_laplace(*space, scale=scale, k=k)


def opendp_laplace(value: float, scale: float, size: int, k: int | None = None) -> np.ndarray:
    """``size`` independent releases of OpenDP's Laplace measurement of scale ``scale`` on ``value``.

    OpenDP rounds the input to the grid ``2**k`` and adds exactly sampled discrete Laplace noise
    (``k=None``: OpenDP's default, a grid finer than any double). Its randomness comes from the
    operating system's secure generator: it takes no seed. Each entry is distributed as one call of
    the scalar measurement; the vector measurement only draws them faster.

    Examples
    --------
    >>> draws = opendp_laplace(0.3, 2.0, 1_000, k=-10)
    >>> bool(np.all(draws * 2**10 == np.round(draws * 2**10)))
    True
    """
    scale = require_epsilon(scale, "scale")
    value = require_finite(value, "value")
    measurement = _opendp_laplace_measurement(scale, k, size=int(size))
    return np.asarray(measurement([value] * int(size)), dtype=float)


def opendp_laplace_epsilon(sensitivity: float, scale: float, k: int | None = None) -> float:
    """The epsilon OpenDP proves for its (scalar) Laplace measurement on a query of this sensitivity.

    Examples
    --------
    >>> opendp_laplace_epsilon(1.0, 2.0, k=-10)
    0.50048828125
    """
    return float(_opendp_laplace_measurement(require_epsilon(scale, "scale"), k).map(float(sensitivity)))
