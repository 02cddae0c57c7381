r"""The floating-point attack on the textbook Laplace sampler (Mironov 2012).

The textbook sampler turns a uniform number into Laplace noise, :math:`-b\,\mathrm{sgn}(U - \tfrac12)
\ln(1 - 2|U - \tfrac12|)`, and adds it to the true answer. On a computer, ``U`` is one of the
:math:`2^{53}` doubles ``k / 2**53`` that ``numpy``'s ``Generator.random`` draws, and every step rounds.
So the sampler can output only a sparse, input-dependent set of doubles: most outputs produced from
one input cannot be produced from its neighbour, and seeing one reveals the input, whatever ε was
claimed. Because every step is monotone in ``k``, a binary search over ``k`` decides exactly whether
an output is possible (:func:`can_produce`).
The fixes sample on a grid that does not depend on the input: :mod:`dplib.mechanisms.discrete_laplace`.

References
----------
I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
"""

from __future__ import annotations

import numpy as np

from dplib._arrays import as_output
from dplib._validation import require_epsilon, require_finite, require_numeric_array

__all__ = [
    "textbook_laplace",
    "textbook_laplace_output",
    "can_produce",
]

#: ``Generator.random`` returns ``k / 2**53`` for an integer ``k`` in ``0 .. 2**53 - 1``.
UNIFORM_STEPS = 2**53


def _textbook_arithmetic(uniform: np.ndarray, value, scale: float) -> np.ndarray:
    """The textbook sampler's arithmetic, step by step as it rounds: ``value + noise(uniform)``."""
    centred = uniform - 0.5
    with np.errstate(divide="ignore"):  # uniform == 0 gives log(0) = -inf (probability 2**-53)
        noise = -scale * np.sign(centred) * np.log(1.0 - 2.0 * np.abs(centred))
    return value + noise


def textbook_laplace(value, scale: float, size=None, rng=None):
    r"""``value`` plus Laplace noise of scale ``scale``, sampled the textbook way on doubles.

    Parameters
    ----------
    value : float or array_like of float
        True answer(s).
    scale : float
        Laplace scale ``b = sensitivity / epsilon``, finite and > 0.
    size : int or tuple of int, optional
        Number of draws (default: one per entry of ``value``).
    rng : numpy.random.Generator, int or None
        Source of the uniform numbers.

    Notes
    -----
    :math:`U \sim \mathrm{Uniform}[0, 1)`, then
    :math:`\mathrm{value} - b\,\mathrm{sgn}(U - \tfrac12)\ln(1 - 2|U - \tfrac12|)`. The distribution is
    right; the set of doubles it can produce is not (see :func:`can_produce`).

    Examples
    --------
    >>> float(round(textbook_laplace(10.0, 1.0, rng=np.random.default_rng(0)), 4))
    10.3201
    """
    scale = require_epsilon(scale, "scale")
    value = require_numeric_array(value, "value")
    rng = np.random.default_rng(rng)
    uniform = rng.random(value.shape if size is None else size)
    return as_output(_textbook_arithmetic(uniform, value, scale))


def textbook_laplace_output(k, value: float, scale: float):
    """The output of :func:`textbook_laplace` when its uniform number is ``k / 2**53`` (``k`` integer).

    This is the sampler's arithmetic, operation for operation, as a function of the random integer
    ``k``. It is non-decreasing in ``k``: every step (shift, absolute value, log, product, sum)
    keeps or reverses the order on each half, and rounding never breaks the order.

    Examples
    --------
    >>> u = np.random.default_rng(0).random()
    >>> bool(textbook_laplace_output(int(u * 2**53), 10.0, 1.0) == textbook_laplace(10.0, 1.0, rng=np.random.default_rng(0)))
    True
    """
    scale = require_epsilon(scale, "scale")
    value = require_finite(value, "value")
    steps = np.asarray(k)
    if steps.dtype.kind not in "iuf" or (steps.size and (
            (steps < 0).any() or (steps >= UNIFORM_STEPS).any() or (steps != np.floor(steps)).any())):
        raise ValueError(f"k must hold integers in 0 .. 2**53 - 1, got {k!r}")
    return as_output(_textbook_arithmetic(steps.astype(np.float64) * 2.0**-53, value, scale))


def can_produce(outputs, value: float, scale: float):
    """Whether :func:`textbook_laplace` with this ``value`` and ``scale`` can return each of ``outputs``.

    Exact: a binary search over the random integer ``k`` finds the smallest ``k`` whose output is
    at least the target (the output is non-decreasing in ``k``), and the target is possible exactly
    when that output equals it.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> from_zero = textbook_laplace(np.zeros(1_000), 1.0, rng=rng)
    >>> bool(can_produce(from_zero, 0.0, 1.0).all()), float(can_produce(from_zero, 1.0, 1.0).mean()) < 0.5
    (True, True)
    """
    targets = require_numeric_array(outputs, "outputs")
    low = np.zeros(targets.shape, dtype=np.int64)
    high = np.full(targets.shape, UNIFORM_STEPS - 1, dtype=np.int64)
    for _ in range(54):  # 2**53 candidates: 53 halvings
        middle = (low + high) // 2
        reaches = textbook_laplace_output(middle, value, scale) >= targets
        high = np.where(reaches, middle, high)
        low = np.where(reaches, low, np.minimum(middle + 1, high))
    return as_output(textbook_laplace_output(low, value, scale) == targets)
